"""Before the agent opens: ask whether the folder's project files may apply (if there are any and
they are not trusted as they are); on trust, the config is loaded again with them."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from textual.app import App

from freeact_tui.project.sources import ConfigError

if TYPE_CHECKING:
    from freeact_tui.project.config import Config


async def ask_trust(app: App[Any], config: Config) -> Config:
    """The config to go on with: ``config`` as it is (nothing to ask, not trusted, or trusting failed:
    a notice says so) or reloaded with the project's files once they are trusted."""
    from freeact_tui.project import trust
    from freeact_tui.project.review import review
    from freeact_tui.tui.screens.trust import TrustScreen

    state = config.trust_state
    if state is None or state.trusted:
        return config
    if not await app.push_screen_wait(TrustScreen(review(state))):
        app.notify(
            f"Project files ignored for this session: {', '.join(state.labels)}.",
            severity="warning",
            timeout=10,
        )
        return config
    try:
        trust.trust(state)
        reloaded = config.reloaded()
    except (trust.TrustStoreError, ConfigError) as exc:
        app.notify(str(exc), severity="error", timeout=15)
        return config
    shown = set(config.notices)
    for notice in reloaded.notices:
        if notice not in shown:  # the user config's notices were shown at start already
            app.notify(notice, severity="warning", timeout=10)
    return reloaded


__all__ = ["ask_trust"]
