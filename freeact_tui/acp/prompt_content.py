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


def uri_path(uri: str) -> str:
    """A ``file://`` URI's path (other URIs as they are)."""
    parsed = urlparse(uri)
    return unquote(parsed.path) if parsed.scheme == "file" else uri


def _fenced(text: str) -> str:
    fence = "```"
    while fence in text:
        fence += "`"
    return f"{fence}\n{text.rstrip()}\n{fence}"


def user_content(blocks: Sequence[PromptBlock]) -> list[UserContent]:
    """The prompt as user content, in the order of its blocks.

    Raises:
        PromptError: an audio block, or an image or blob whose data is not base64.
    """
    out: list[UserContent] = []
    for block in blocks:
        match block:
            case TextContentBlock(text=text):
                out.append(text)
            case ImageContentBlock(data=data, mime_type=mime):
                out.append(BinaryContent(data=_decode(data, "image"), media_type=mime))
            case EmbeddedResourceContentBlock(
                resource=BlobResourceContents(uri=uri, blob=blob, mime_type=mime)
            ):
                media = mime or "application/octet-stream"
                if media.startswith("image/"):
                    out.append(BinaryContent(data=_decode(blob, uri), media_type=media))
                else:
                    out.append(f"[attached file {uri_path(uri)} ({media}): binary, not shown]")
            case EmbeddedResourceContentBlock(resource=resource):
                text = getattr(resource, "text", "")
                out.append(f"Contents of {uri_path(resource.uri)}:\n{_fenced(text)}")
            case ResourceContentBlock(uri=uri, name=name):
                out.append(f"[file: {uri_path(uri) or name}]")
            case AudioContentBlock():
                raise PromptError("audio prompts are not supported (promptCapabilities.audio is false)")
    return out


def _decode(data: str, what: str) -> bytes:
    try:
        return base64.b64decode(data, validate=True)
    except (binascii.Error, ValueError):
        raise PromptError(f"the data of {what} is not base64") from None


__all__ = ["PromptBlock", "PromptError", "uri_path", "user_content"]
