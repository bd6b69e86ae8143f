"""Every private pydantic-ai name this package uses, in one place, imported without a fallback.

``model_stream.py`` opens a model request the way ``pydantic_ai.direct.model_request_stream`` does,
without its whole-history passes, and needs four of its internals. A pydantic-ai release that moves
one makes this import fail at once (and ``tests/fast/agent/test_pydantic_private.py`` names which one), rather
than quietly taking a slower route.
"""

from __future__ import annotations

from pydantic_ai._special_tokens import break_special_tokens_in_messages
from pydantic_ai.direct import _prepare_model  # pyright: ignore[reportPrivateUsage]
from pydantic_ai.models._batch_model import check_resumable
from pydantic_ai.models._request_timeout import open_request_stream

prepare_model = _prepare_model

__all__ = ["break_special_tokens_in_messages", "check_resumable", "open_request_stream", "prepare_model"]
