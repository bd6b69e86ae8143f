"""One model request of a turn: the context brought up to date first, usage and gauge reported after."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from pydantic_ai.messages import ModelMessage, ModelResponse

from freeact_tui.actions.ports import EventPorts
from freeact_tui.agent.context.keeper import ContextKeeper
from freeact_tui.agent.model_call import request_response
from freeact_tui.agent.offered_tools import OfferedTools
from freeact_tui.agent.reply_stops import stopped_event
from freeact_tui.agent.runtime import Runtime
from freeact_tui.agent.turn.actions import MAX_ACTIONS_PER_REPLY
from freeact_tui.agent.turn.call_ids import CallIds
from freeact_tui.agent.turn.state import TurnState
from freeact_tui.agent.usage import SentRequests, UsageMeter, usage_record
from freeact_tui.events import UsageUpdate


@dataclass
class ModelStep:
    """Sends the history to the model and streams its reply (events through ``ports``)."""

    runtime: Runtime
    ports: EventPorts
    context: ContextKeeper
    tools: OfferedTools
    meter: UsageMeter
    add_usage: Callable[[UsageUpdate], None]
    call_ids: CallIds
    history: Callable[[], list[ModelMessage]]

    async def __call__(self, state: TurnState) -> ModelResponse:
        state.in_model = True
        messages = await self.context.prepare()  # may compact first
        parameters = self.tools.parameters()
        sent = SentRequests()
        try:  # a failed request (``ModelCallError``) ends the turn as a model error: ``failures.py``
            response = await request_response(
                self.runtime.model,
                messages,
                settings=self.runtime.settings.model_settings,
                parameters=parameters,
                emit=self.ports.emit,
                ids=self.ports.ids(""),
                on_progress=state.streamed,
                idle_timeout=self.runtime.settings.model_idle_timeout,
                max_calls=MAX_ACTIONS_PER_REPLY,  # a reply of more calls is cut at the next one
                on_sent=sent,
            )
        except BaseException as exc:  # cut, failed, cancelled: what was sent is counted all the same
            if sent.count:  # the tokens sent, estimated where the provider reported none (it never does here)
                state.unanswered = sent.unanswered(exc, self.context.request_estimate(parameters.function_tools))
                self.add_usage(state.unanswered)
            raise
        finally:
            state.in_model = False
        response = self.call_ids.fresh(response, self.history())  # before anything keys a call by its id
        stopped = stopped_event(response.finish_reason, self.ports.ids(""))  # cut short: never a whole answer
        if stopped is not None:
            self.ports.emit(stopped)
        estimate = self.context.request_estimate(parameters.function_tools)  # used if the server reports none
        usage = self.meter.of_response(response, estimate, requests=sent.count)
        response.metadata = {**(response.metadata or {}), **usage_record(usage)}  # restored on resume
        self.add_usage(usage)
        self.context.report(response)
        return response


__all__ = ["ModelStep"]
