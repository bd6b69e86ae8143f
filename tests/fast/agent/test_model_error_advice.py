"""What a failed request's message tells the user to do, decided by what the failure is (its HTTP
status or pydantic-ai's class), never by the provider's words: "try again" only where another try can
go through. A request the server refused as it is (a context overflow, a bad parameter) failed the same
way on every retry, and the message said "try again" (the model-fault attack, F7)."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic_ai.exceptions import (
    ModelAPIError,
    ModelConnectionError,
    ModelContextWindowExceededError,
    ModelHTTPError,
    ModelRequestRejectedError,
)

from freeact_tui.agent.model_call import advice, describe_model_error, is_retryable


@given(status=st.integers(400, 599), body=st.text(max_size=40))
def test_try_again_only_where_another_try_can_go_through(status: int, body: str) -> None:
    exc = ModelHTTPError(status, "m", {"error": {"message": body}})
    said = describe_model_error(exc)
    assert said.endswith(".") and "\n" not in said
    if is_retryable(exc):  # 408, 429, 5xx
        assert advice(exc) == "try again"
    else:
        assert "try again" not in advice(exc) and "fails the same way" in advice(exc)


def test_the_reported_context_overflow_says_what_changes_it() -> None:
    overflow = ModelHTTPError(400, "m", {"error": {"message": "This model's maximum context length is 8192 tokens"}})
    assert "try again" not in describe_model_error(overflow)
    assert "compact" in describe_model_error(ModelContextWindowExceededError("m", "prompt is too long"))
    assert "fails the same way" in advice(ModelRequestRejectedError("m", "refused"))
    assert advice(ModelConnectionError("m", "reset")) == "try again"
    assert "API key" in advice(ModelHTTPError(401, "m", {"error": "unauthorized"}))


@pytest.mark.parametrize("body", [b"\xff\xfe\xc3(", b"<html>nginx</html>", b'{"choices": [', b"\x00\x80"])
def test_a_reply_that_is_not_text_or_json_is_named_for_what_it_is(body: bytes) -> None:
    """model10 F4: a stream delta of invalid UTF-8 (or a body that is no JSON) said "Model error
    (ModelAPIError): Failed to decode response as JSON: …" — an internal class name; by the error's
    cause it is the server's reply that is not valid text or JSON."""
    try:
        try:
            json.loads(body.decode())
        except (UnicodeDecodeError, json.JSONDecodeError) as cause:
            raise ModelAPIError(model_name="m", message=f"Failed to decode response as JSON: {cause}") from cause
    except ModelAPIError as error:
        said = describe_model_error(error, rolled_back=False)
    assert said.startswith("The server sent a reply that is not valid text or JSON: "), said
    assert "ModelAPIError" not in said and "Failed to decode" not in said
