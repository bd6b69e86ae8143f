"""An ACP prompt (content blocks) → the user content ``Agent.stream()`` takes.

Text stays text; images become ``BinaryContent``; an embedded text resource (a file the editor
attached, possibly unsaved) is quoted in full under its path; a resource link is named by its path,
for the agent to read itself. Audio is refused (``promptCapabilities.audio`` is false).
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Sequence
from urllib.parse import unquote, urlparse

from acp.schema import (
    AudioContentBlock,
    BlobResourceContents,
    EmbeddedResourceContentBlock,
    ImageContentBlock,
    ResourceContentBlock,
    TextContentBlock,
)
from pydantic_ai.messages import BinaryContent, UserContent

PromptBlock = (
    TextContentBlock
    | ImageContentBlock
    | AudioContentBlock
    | ResourceContentBlock
    | EmbeddedResourceContentBlock
)


class PromptError(ValueError):
    """A prompt block cannot be given to the model; ``str(error)`` says which and why."""


SHOWN = 120
"""At most this many characters of a refused URI in its message (a hostile one may be megabytes)."""


def uri_path(uri: str) -> str:
    """A ``file://`` URI's path (other URIs as they are).

    Raises:
        PromptError: a URI ``urlparse`` refuses (``file://[x``: an unclosed IPv6 host).
    """
    try:
        parsed = urlparse(uri)
    except ValueError as exc:
        shown = uri if len(uri) <= SHOWN else uri[:SHOWN] + "…"
        raise PromptError(f"the uri {shown!r} cannot be read ({exc})") from None
    return unquote(parsed.path) if parsed.scheme == "file" else uri


def _fenced(text: str) -> str:
    fence = "```"
    while fence in text:
        fence += "`"
    return f"{fence}\n{text.rstrip()}\n{fence}"


def user_content(blocks: Sequence[PromptBlock]) -> list[UserContent]:
    """The prompt as user content, in the order of its blocks: the one checked reading of a client's
    prompt content, whose every refusal (a ``ValueError`` of any parser it uses) is a ``PromptError``
    naming the block.

    Raises:
        PromptError: an audio block, an image or blob whose data is not base64, a URI that cannot be
            parsed, anything else in a block that cannot be read.
    """
    out: list[UserContent] = []
    for n, block in enumerate(blocks, 1):
        try:
            out.append(_content(block))
        except ValueError as exc:  # PromptError included: said with the block it is about
            raise PromptError(f"prompt block {n} ({getattr(block, 'type', '?')}): {exc}") from None
    return out


def _content(block: PromptBlock) -> UserContent:
    """One block as user content (its refusals raised as ``ValueError``s, ``user_content`` names it)."""
    match block:
        case TextContentBlock(text=text):
            return text
        case ImageContentBlock(data=data, mime_type=mime):
            return BinaryContent(data=_decode(data, "image"), media_type=mime)
        case EmbeddedResourceContentBlock(resource=BlobResourceContents(uri=uri, blob=blob, mime_type=mime)):
            media = mime or "application/octet-stream"
            if media.startswith("image/"):
                return BinaryContent(data=_decode(blob, "the blob"), media_type=media)
            return f"[attached file {uri_path(uri)} ({media}): binary, not shown]"
        case EmbeddedResourceContentBlock(resource=resource):
            text = getattr(resource, "text", "")
            return f"Contents of {uri_path(resource.uri)}:\n{_fenced(text)}"
        case ResourceContentBlock(uri=uri, name=name):
            return f"[file: {uri_path(uri) or name}]"
        case AudioContentBlock():
            raise PromptError("audio prompts are not supported (promptCapabilities.audio is false)")
    raise PromptError(f"a content block of type {getattr(block, 'type', '?')!r} is not supported")


def _decode(data: str, what: str) -> bytes:
    try:
        return base64.b64decode(data, validate=True)
    except (binascii.Error, ValueError):
        raise PromptError(f"the data of {what} is not base64") from None


__all__ = ["PromptBlock", "PromptError", "uri_path", "user_content"]
