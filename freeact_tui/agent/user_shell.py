"""The user's own shell commands (a prompt starting with ``!``): run at once, shown, kept for the model.

The command runs verbatim as a ``%%bash`` cell in the agent's kernel (same working dir and
environment as the model's actions), with no approval: the user typed it. Its output is shown as it
comes and is added to the next prompt sent to the model, so the model knows what the user saw.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import AsyncIterator
from dataclasses import dataclass, field

from freeact_tui.events import AgentEvent, CodeExecutionOutput, CodeExecutionOutputChunk
from freeact_tui.execution.base import ExecApproval, ExecChunk, ExecResult, Executor
from freeact_tui.store.prompt_record import shell_context

CONTEXT_MAX_CHARS = 4000  # of one command's output in the next prompt (head and tail kept)

# What IPython's %%bash adds after "Process was interrupted." when a signal (Esc) ended the command:
# a traceback of the magic, which says nothing the user does not know.
_SIGNAL_TRACEBACK = re.compile(r"-{20,}\nCalledProcessError\b.*died with <Signals\.\w+: \d+>\.\n?", re.S)
# After Esc, a command that ignores SIGINT is killed by the magic, which then fails to describe its
# own CalledProcessError (exit status None): everything from that traceback on is the magic's.
_MAGIC_TRACEBACK = re.compile(r"-{20,}\nCalledProcessError\b.*", re.S)


@dataclass
class UserShell:
    """Runs the user's commands and remembers them until the next prompt takes them."""

    pending: list[str] = field(default_factory=list)
    _count: int = 0
    _running: Executor | None = None  # the executor of the command that runs now
    _interrupts: set[asyncio.Task[None]] = field(default_factory=set)
    _stop_asked: bool = False  # an interrupt before the cell started (the kernel was warming up)
    _cut: bool = False  # the magic's traceback began in the output streamed so far

    def interrupt(self) -> bool:
        """Stop the running command (the kernel is interrupted; restarted if that does not stop it).

        Its output ends with a note saying so. Returns False when no command runs.
        """
        executor = self._running
        if executor is None:
            return False
        self._stop_asked = True
        task = asyncio.ensure_future(executor.interrupt())
        self._interrupts.add(task)
        task.add_done_callback(self._interrupts.discard)
        return True

    async def run(
        self, executor: Executor, command: str, *, agent_id: str, limit: float | None
    ) -> AsyncIterator[AgentEvent]:
        self._count += 1
        corr_id = f"user-shell-{self._count}"
        result: ExecResult | None = None
        self._running, self._stop_asked, self._cut = executor, False, False
        try:
            async for item in executor.stream(f"%%bash\n{command}\n", timeout=limit):
                match item:
                    case ExecApproval() if self._stop_asked:
                        await item.reject()  # stopped before it began: it never runs
                    case ExecApproval():
                        await item.accept()  # the user's own command: nothing to ask
                    case ExecChunk(text=text):
                        text = self._clean(text)
                        if text:
                            yield CodeExecutionOutputChunk(text, agent_id=agent_id, corr_id=corr_id)
                    case ExecResult():
                        result = item
        finally:
            self._running = None
        text = self._clean(result.text, whole=True) if result is not None else ""
        failed = result is None or result.is_error or result.timed_out or result.cancelled
        yield CodeExecutionOutput(text, is_error=failed, agent_id=agent_id, corr_id=corr_id)
        self.pending.append(context_entry(command, text, failed))

    def _clean(self, text: str, *, whole: bool = False) -> str:
        """``text`` without the %%bash magic's own traceback (only after a stop the user asked for);
        once one was cut, the streamed chunks after it are the magic's too (``whole``: the full output)."""
        text = _SIGNAL_TRACEBACK.sub("", text)
        if not self._stop_asked:
            return text
        if self._cut and not whole:
            return ""
        found = _MAGIC_TRACEBACK.search(text)
        if found is None:
            return text
        self._cut = True
        return text[: found.start()]

    def take_context(self) -> str:
        """The commands run since the last prompt, as text to put before it ("" when none)."""
        entries, self.pending = self.pending, []
        return "\n\n".join(entries)


def context_entry(command: str, output: str, failed: bool) -> str:
    if len(output) > CONTEXT_MAX_CHARS:
        half = CONTEXT_MAX_CHARS // 2
        output = (
            f"{output[:half]}\n[… {len(output) - CONTEXT_MAX_CHARS} characters left out …]\n{output[-half:]}"
        )
    return shell_context(command, output, failed)
