"""What a failed request's message tells the user to do, decided by what the failure is (its HTTP
status or pydantic-ai's class), never by the provider's words: "try again" only where another try can
go through. A request the server refused as it is (a context overflow, a bad parameter) failed the same
way on every retry, and the message said "try again" (the model-fault attack, F7)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st
from pydantic_ai.exceptions import (
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
