"""A tool call that repeats the call that just failed is not run again (``auto``).

Small models often send the same failing call over and over (an edit with an empty ``old_text``
to delete a file, eight times) until the turn's request limit. Running it again can only fail the
same way, so the model is told that instead, with a hint to act another way. Only the previous
step counts: the same call after other steps (a fix in between) runs.
"""

from __future__ import annotations

from collections.abc import Sequence

from pydantic_ai.messages import ModelMessage, ModelRequest, ModelResponse, ToolCallPart, ToolReturnPart

from freeact_tui.store.transcript import content_text
from freeact_tui.toolcalls import CODE_TOOL


def _args(call: ToolCallPart) -> object:
    try:
        return call.args_as_dict()
    except ValueError:
        return call.args


def failed_before(call: ToolCallPart, history: Sequence[ModelMessage]) -> str | None:
    """The error of the same call (tool and arguments) in the step before, if it failed; else ``None``.

    ``history[-1]`` is the response ``call`` belongs to.
    """
    returns: dict[str, ToolReturnPart] = {}
    for message in reversed(history[:-1]):
        if isinstance(message, ModelRequest):
            returns.update({p.tool_call_id: p for p in message.parts if isinstance(p, ToolReturnPart)})
        elif isinstance(message, ModelResponse):
            calls = [p for p in message.parts if isinstance(p, ToolCallPart)]
            if not calls:
                return None  # the step before was no tool call
            for before in calls:
                result = returns.get(before.tool_call_id)
                meta = result.metadata if result is not None and isinstance(result.metadata, dict) else {}
                if (
                    before.tool_name == call.tool_name
                    and _args(before) == _args(call)
                    and meta.get("outcome") == "error"
                ):
                    return content_text(result.content) if result is not None else ""
            return None
    return None


def repeat_message(call: ToolCallPart, error: str) -> str:
    """What the model is told instead of running the call again."""
    first = error.strip().splitlines()[0] if error.strip() else "an error"
    if call.tool_name == CODE_TOOL:
        return f"This is the code that just failed ({first[:300]}). Do not repeat it: change it to fix the cause."
    return (
        f"This `{call.tool_name}` call just failed the same way ({first[:300]}). Do not repeat it: do it "
        f"another way, with Python code in `{CODE_TOOL}`."
    )


__all__ = ["failed_before", "repeat_message"]
