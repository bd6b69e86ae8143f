"""A tool call that repeats the call that just failed is not run again (``auto``).

Small models often send the same failing call over and over (an edit with an empty ``old_text``
to delete a file, eight times) until the turn's request limit. Running it again can only fail the
same way, so the model is told that instead, with a hint to act another way. Only the previous
step counts: the same call after other steps (a fix in between) runs.

The message is a function of the current fault only (#40): a call refused before carries the error
it was refused for in its return's metadata (``GUARDED_KEY``), and that error, never the refusal's
own text, is what the next refusal names — so corrective text never nests. A broken call (bad
arguments, an unknown tool) is never refused: it did not run, and the dispatcher answers it as broken.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from pydantic_ai.messages import ModelMessage, ModelRequest, ModelResponse, ToolCallPart, ToolReturnPart

from freeact_tui.agent.policy.errors import error_line
from freeact_tui.store.step_record import StepRecord
from freeact_tui.store.transcript import content_text
from freeact_tui.toolcalls import CODE_TOOL


def _args(call: ToolCallPart) -> object:
    try:
        return call.args_as_dict()
    except ValueError:
        return call.args


def failed_before(call: ToolCallPart, history: Sequence[ModelMessage]) -> str | None:
    """The error of the same call (tool and arguments) in the step before, if it failed; else ``None``.

    A refused call's error is the one it was refused for (not the refusal's text); a broken call's
    is none. ``history[-1]`` is the response ``call`` belongs to.
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
                record = StepRecord.of_part(result)
                if (
                    before.tool_name == call.tool_name
                    and _args(before) == _args(call)
                    and record.failed
                    and not record.malformed
                ):
                    if isinstance(record.guarded, str):
                        return record.guarded
                    return content_text(result.content) if result is not None else ""
            return None
    return None


@dataclass(frozen=True)
class GuardedCall:
    """A call not run: what the model is told, and the error it was refused for (stored with its return)."""

    message: str
    error: str


def guard_call(call: ToolCallPart, history: Sequence[ModelMessage]) -> GuardedCall | None:
    """The refusal of ``call`` when it repeats the call that just failed (``history[-1]`` holds it), else ``None``."""
    error = failed_before(call, history)
    return GuardedCall(repeat_message(call, error), error) if error is not None else None


def repeat_message(call: ToolCallPart, error: str) -> str:
    """What the model is told instead of running the call again."""
    first = error_line(error)[:300] or "an error"
    if call.tool_name == CODE_TOOL:
        return f"This is the code that just failed ({first}). Do not repeat it: change it to fix the cause."
    return (
        f"This `{call.tool_name}` call just failed the same way ({first}). Do not repeat it: do it "
        f"another way, with Python code in `{CODE_TOOL}`."
    )


__all__ = ["GuardedCall", "failed_before", "guard_call", "repeat_message"]
