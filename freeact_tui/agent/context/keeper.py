"""The context of one agent: how full the window is, the history as sent, and compaction.

``ContextKeeper`` is composed into the agent and handed to each turn. Before every model request
it brings the prepared history up to date (``PreparedHistory``), reports how full the window is
(``ContextUpdate``) and, past ``compact_threshold`` of the window, compacts first (``compaction.py``
holds the pure parts: where to cut, what the summariser reads). ``compact()`` does the same by hand
(``/compact [focus]``). The summary is written to the session file as a compaction record (see
``store/compaction.py``); the earlier messages stay in the file.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import Any, Literal

from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    SystemPromptPart,
    ToolReturnPart,
    UserPromptPart,
)
from pydantic_ai.models import ModelRequestParameters
from pydantic_ai.tools import ToolDefinition

from freeact_tui.agent.context.compaction import (
    CHUNK_FRACTION,
    KEEP_FRACTION,
    SQUEEZE_CHARS,
    SUMMARY_INSTRUCTION,
    CompactionError,
    choose_cut,
    chunks,
    plausible,
    render_for_summary,
)
from freeact_tui.agent.context.window import (
    CHARS_PER_TOKEN,
    ContextBreakdown,
    PreparedHistory,
    estimate_tokens,
    message_tokens,
    resolve_window,
    tools_tokens,
)
from freeact_tui.agent.model_call import ModelCallError, request_response
from freeact_tui.agent.recorder import Recorder
from freeact_tui.agent.runtime import Runtime
from freeact_tui.agent.usage import SentRequests, UsageMeter
from freeact_tui.events import AgentEvent, Compacted, Compacting, ContextUpdate, ModelRetry, UsageUpdate
from freeact_tui.store.compaction import SUMMARY_HEADER, CompactionInfo, CompactionTiming, head_message


class ContextKeeper:
    """Context gauge, trimming and compaction of one agent.

    Args:
        runtime: the agent's runtime (model, settings).
        recorder: the agent's history and session.
        publish: reports an event (into the running turn, or to the listeners).
        add_usage: counts the summariser's tokens into the session totals.
        tools: the tool definitions the next request offers.
        system_prompt: the system prompt the first request sends.
        busy: whether a turn is running (``compact()`` waits for it to end).
    """

    def __init__(
        self,
        runtime: Runtime,
        recorder: Recorder,
        *,
        publish: Callable[[AgentEvent], None],
        add_usage: Callable[[UsageUpdate], None],
        tools: Callable[[], Sequence[ToolDefinition]],
        system_prompt: Callable[[], str],
        busy: Callable[[], bool],
    ) -> None:
        self.runtime = runtime
        self.agent_id = runtime.agent_id
        self.recorder = recorder
        self.publish = publish
        self.add_usage = add_usage
        self._tools = tools
        self._system_prompt = system_prompt
        self._busy = busy
        self._prepared = PreparedHistory(
            trim_chars=runtime.settings.trim_result_chars, where=self._trim_where
        )
        self._tools_tokens_cache: tuple[tuple[str, ...], int] | None = None

    def _trim_where(self, part: ToolReturnPart) -> str:
        text = part.content if isinstance(part.content, str) else ""
        if "the full output is in " in text:  # already saved as a file by the recorder's overflow
            return "the full output is in the file named above"
        session = self.recorder.session
        if session is None or not isinstance(part.content, str):
            return "the full text stays in the session"
        path = session.save_tool_result(part.content, "txt")
        return f"the full text is in {path}"

    @property
    def transcript(self) -> list[ModelMessage]:
        """Every message of the session, compaction records included (the history the model sees is shorter)."""
        stored, history = self.recorder.stored, self.recorder.history
        return stored if len(stored) >= len(history) else history

    @property
    def context_window(self) -> tuple[int, str]:
        """The model's window in tokens and where the figure comes from."""
        return resolve_window(self.runtime.model, self.runtime.settings.context_window)

    def _tool_definitions(self) -> list[ToolDefinition]:
        try:
            return list(self._tools())
        except Exception:  # MCP tools not ready: the gauge counts what it can
            return []

    def _tools_tokens(self, tools: Sequence[ToolDefinition] | None = None) -> int:
        """Estimated tokens of the tool definitions (counted again only when the set of tools changes)."""
        tools = self._tool_definitions() if tools is None else tools
        key = tuple(t.name for t in tools)
        cached = self._tools_tokens_cache
        if cached is None or cached[0] != key:
            cached = (key, tools_tokens(tools))
            self._tools_tokens_cache = cached
        return cached[1]

    def prepared_history(self) -> list[ModelMessage]:
        """The history as the next request sends it (trimmed, adjacent requests merged)."""
        return self._prepared.update(self.recorder.history, self.recorder.generation)

    def context_usage(self) -> ContextUpdate:
        """How full the window is: the provider's count of the last answer plus estimates of what came after."""
        prepared = self._prepared
        messages = prepared.update(self.recorder.history, self.recorder.generation)
        window, source = self.context_window
        last = prepared.last_response_index()
        response = messages[last] if last >= 0 else None
        fresh = last >= 0 and self._index_is_fresh(last)
        estimate = prepared.total.total + self._tools_tokens() + self._pending_system_tokens()
        if isinstance(response, ModelResponse) and fresh and plausible(response, estimate):
            used = response.usage.input_tokens + response.usage.output_tokens + prepared.tokens_after(last)
            return ContextUpdate(used, window, estimated=False, source=source, agent_id=self.agent_id)
        return ContextUpdate(estimate, window, estimated=True, source=source, agent_id=self.agent_id)

    def request_estimate(self, tools: Sequence[ToolDefinition]) -> int:
        """Estimated input tokens of the request just sent (the prepared history's running total and
        ``tools``): O(1) in the history's length, unlike counting the messages again."""
        return self._prepared.total.total + self._tools_tokens(tools)

    def _index_is_fresh(self, prepared_index: int) -> bool:
        """Whether a prepared message was recorded since the history was last rewritten (its usage is current)."""
        return self._prepared.sources[prepared_index] >= self.recorder.fresh_from

    def context_breakdown(self) -> ContextBreakdown:
        """Estimated tokens of the next request by kind: system prompt, tools, history, tool results, images."""
        prepared = self._prepared
        prepared.update(self.recorder.history, self.recorder.generation)
        out = ContextBreakdown(tools=self._tools_tokens(), system=self._pending_system_tokens())
        out.add(prepared.total)
        return out

    def _pending_system_tokens(self) -> int:
        """Before the first turn the system prompt is not in the history yet; the first request sends it."""
        if self.recorder.history:
            return 0
        try:
            return estimate_tokens(self._system_prompt())
        except Exception:  # the prompt cannot be built yet (e.g. MCP APIs still being generated)
            return 0

    # -- around each model request of a turn ------------------------------------------------------------------------

    async def prepare(self) -> list[ModelMessage]:
        """Before a model request: compact if the window is full enough, report the gauge, return the history."""
        usage = self.context_usage()
        threshold = self.runtime.settings.compact_threshold
        if usage.fraction >= threshold:
            await self._compact("auto", None)
            usage = self.context_usage()
        if usage.fraction >= threshold:  # the recent turns alone fill it: cut their large results too
            limit = int(usage.window * threshold)
            keep = min(self.runtime.settings.trim_result_chars or SQUEEZE_CHARS, limit * CHARS_PER_TOKEN // 8)
            if self._prepared.squeeze(usage.used - limit, keep):
                usage = self.context_usage()
        self.publish(usage)
        return self._prepared.messages

    def report(self, response: ModelResponse) -> None:
        """After a model response (not yet recorded): its own count is the context's size now."""
        window, source = self.context_window
        before = self.context_usage()
        if plausible(response, before.used if before.estimated else 0):
            used, estimated = response.usage.input_tokens + response.usage.output_tokens, False
        else:
            used, estimated = before.used + message_tokens(response), True
        self.publish(ContextUpdate(used, window, estimated=estimated, source=source, agent_id=self.agent_id))

    # -- compaction ------------------------------------------------------------------------------------

    async def compact(self, focus: str | None = None) -> Compacted | None:
        """Summarise the older turns now (``/compact``); ``None`` when there is too little to compact.

        Raises:
            CompactionError: the model could not summarise (the history is unchanged).
        """
        if self._busy():
            raise CompactionError("A turn is running: compact when it has ended.")
        try:
            return await self._compact("manual", focus)
        finally:
            self.recorder.settle()
            self.publish(self.context_usage())

    async def _compact(self, reason: Literal["auto", "manual"], focus: str | None) -> Compacted | None:
        history = self.recorder.history
        window, _ = self.context_window
        cut = choose_cut(history, int(window * KEEP_FRACTION))
        if cut <= 0:
            return None
        before = self.context_usage().used
        ids: dict[str, Any] = {"agent_id": self.agent_id}
        self.publish(Compacting(reason, cut, before, **ids))
        started = time.perf_counter()
        length = len(history)
        summary, tokens_in, tokens_out = await self._summarise(history[:cut], focus, window)
        if self.recorder.history is not history or len(history) != length:
            raise CompactionError("The history changed while it was being compacted; nothing was changed.")
        part = UserPromptPart(f"{SUMMARY_HEADER}\n\n{summary}")
        positions = self.recorder.positions
        # The record keeps the figures the log shows, so that a resumed session shows the same line.
        timing = CompactionTiming(reason, time.perf_counter() - started, tokens_in, tokens_out)
        info = CompactionInfo(
            kept_from=positions[cut] if len(positions) == len(history) else cut,
            replaced=cut,
            tokens_before=before,
            tokens_after=message_tokens(head_message(history[0], ModelRequest(parts=[part])))
            + sum(message_tokens(m) for m in history[cut:])
            + self._tools_tokens(),  # counted in ``before`` too
            focus=focus,
            timing=timing,
        )
        record = ModelRequest(parts=[part], metadata=info.as_metadata())
        head = head_message(history[0], record)
        self.recorder.compact(record, head, cut)
        self._prepared.rebuild()
        event = Compacted(
            reason,
            replaced=cut,
            kept=len(history) - cut,
            tokens_before=before,
            tokens_after=info.tokens_after,
            seconds=timing.seconds,
            summary=summary,
            summary_input_tokens=tokens_in,
            summary_output_tokens=tokens_out,
            **ids,
        )
        self.publish(event)
        return event

    async def _summarise(
        self, older: Sequence[ModelMessage], focus: str | None, window: int
    ) -> tuple[str, int, int]:
        """The model's summary of ``older`` (in several passes when it is longer than half the window)."""
        text = render_for_summary(older)
        max_chars = max(2000, int(window * CHUNK_FRACTION) * 4)
        summary = ""
        tokens_in = tokens_out = 0
        pieces = chunks(text, max_chars)
        for number, piece in enumerate(pieces, start=1):
            ask = f"Conversation to summarise (part {number} of {len(pieces)}):\n\n{piece}"
            if summary:
                ask = f"Summary of the parts before:\n\n{summary}\n\n{ask}"
            if focus:
                ask += f"\n\nFocus the summary on: {focus}"
            messages: list[ModelMessage] = [
                ModelRequest(parts=[SystemPromptPart(SUMMARY_INSTRUCTION), UserPromptPart(ask)])
            ]
            sent = SentRequests()
            try:
                response = await request_response(
                    self.runtime.model,
                    messages,
                    settings=self.runtime.settings.model_settings,
                    parameters=ModelRequestParameters(),
                    emit=self._forward_retry,
                    ids={"agent_id": self.agent_id},
                    on_progress=lambda _: None,
                    on_sent=sent,
                )
            except BaseException as exc:  # what was sent is counted all the same
                if sent.count:  # the tokens sent, estimated where the provider reported none
                    self.add_usage(sent.unanswered(exc, sum(message_tokens(m) for m in messages)))
                if isinstance(exc, ModelCallError):
                    raise CompactionError(f"The context could not be compacted: {exc}") from exc
                raise
            usage = UsageMeter.of_response(response, requests=sent.count)
            self.add_usage(usage)
            tokens_in += usage.input_tokens
            tokens_out += usage.output_tokens
            summary = response.text or ""
        if not summary.strip():
            raise CompactionError("The context could not be compacted: the model returned an empty summary.")
        return summary.strip(), tokens_in, tokens_out

    def _forward_retry(self, event: AgentEvent) -> None:
        if isinstance(event, ModelRetry):
            self.publish(event)


__all__ = ["ContextKeeper"]
