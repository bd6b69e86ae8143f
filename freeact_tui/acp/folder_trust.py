"""An editor's folder is untrusted like any other: before its project files apply, the client is asked
with ``session/request_permission`` showing what trust covers (the listing of the app's trust dialog,
``project_review``). Refused, not answered or failed: the session goes on untrusted, and is not asked
again. ``--trust`` on the command line covers only the folder it printed (``cli``); a folder trusted
before (its digests recorded, ``trust.py``) and unchanged since is not asked about."""

from __future__ import annotations

import asyncio
import logging

from acp.interfaces import Client
from acp.schema import (
    AllowedOutcome,
    PermissionOption,
    TextContentBlock,
    ToolCallUpdate,
)
from acp.schema import ContentToolCallContent as ToolCallContent

from freeact_tui.acp.client_requests import ask_client, decision_bound
from freeact_tui.project import trust
from freeact_tui.project.config import Config, ConfigError

logger = logging.getLogger(__name__)

TRUST = "trust_folder"
DONT_TRUST = "ignore_project_files"


def trust_options() -> list[PermissionOption]:
    return [
        PermissionOption(
            option_id=TRUST, name="Trust this folder: apply its project files", kind="allow_always"
        ),
        PermissionOption(
            option_id=DONT_TRUST, name="Do not trust: ignore its project files", kind="reject_once"
        ),
    ]


def trust_question(state: trust.TrustState, listing: str) -> ToolCallUpdate:
    verb = "changed since you trusted it" if state.status == "changed" else "not trusted"
    return ToolCallUpdate(
        tool_call_id="trust-folder",
        title=f"This folder ({state.folder}) is {verb}: trust it?",
        kind="read",
        status="pending",
        content=[ToolCallContent(type="content", content=TextContentBlock(type="text", text=listing))],
        raw_input={"folder": str(state.folder), "files": state.labels},
    )


async def ask_trust(client: Client, session_id: str, config: Config) -> Config:
    """The config to go on with: ``config`` as it is (nothing to ask, refused, or trusting failed) or
    reloaded with the project's files once the client trusted them."""
    from freeact_tui.project.review import review

    state = config.trust_state
    if state is None or state.trusted:
        return config
    listing = await asyncio.to_thread(lambda: review(state).text())
    try:
        answer = await ask_client(
            client.request_permission(
                session_id=session_id, tool_call=trust_question(state, listing), options=trust_options()
            ),
            decision_bound(config),
            "the question whether to trust the folder",
        )
    except asyncio.CancelledError:
        raise
    except Exception as exc:  # a client that cannot ask: nobody trusted it
        logger.warning("the trust question failed: %s", exc)
        return config
    outcome = answer.outcome
    if not (isinstance(outcome, AllowedOutcome) and outcome.option_id == TRUST):
        logger.info("folder %s not trusted by the client", state.folder)
        return config
    try:
        await asyncio.to_thread(trust.trust, state)
        return await asyncio.to_thread(config.reloaded)
    except (trust.TrustStoreError, ConfigError) as exc:
        logger.warning("trusting %s failed: %s", state.folder, exc)
        return config


__all__ = ["DONT_TRUST", "TRUST", "ask_trust", "trust_options", "trust_question"]
