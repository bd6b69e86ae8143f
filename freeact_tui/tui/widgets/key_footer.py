"""The footer of key bindings, rebuilt only when the set of shown keys changes."""

from __future__ import annotations

from textual.screen import Screen
from textual.widgets import Footer
from textual.widgets._footer import FooterKey

KeyState = tuple[tuple[str, str, str], ...]


class KeyFooter(Footer):
    """A ``Footer`` that updates enabled/disabled keys in place.

    Textual's footer recomposes on every bindings refresh; each recompose mounts new widgets and
    forces a full layout of the screen (every block of a long conversation), twice per turn.
    Here a refresh that only enables or disables keys restyles the existing keys instead.
    """

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self._shown: KeyState | None = None

    def _current(self) -> tuple[KeyState, dict[tuple[str, str], bool]]:
        """The shown keys (key, action, description) in order, and whether each is enabled."""
        shown: list[tuple[str, str, str]] = []
        enabled: dict[tuple[str, str], bool] = {}
        for _node, binding, is_enabled, _tooltip in self.screen.active_bindings.values():
            if binding.show:
                shown.append((binding.key, binding.action, binding.description))
                enabled[(binding.key, binding.action)] = is_enabled
        return tuple(shown), enabled

    def bindings_changed(self, screen: Screen[object]) -> None:
        self._bindings_ready = True
        if not screen.app.app_focus:
            return
        if self.is_attached and screen is self.screen:
            self.call_after_refresh(self._update_keys)

    async def _update_keys(self) -> None:
        if not self.is_attached:
            return
        shown, enabled = self._current()
        if shown != self._shown or not self.children:
            self._shown = shown
            await self.recompose()
            return
        for key in self.query(FooterKey):
            state = enabled.get((key.key, key.action))
            if state is not None and key._disabled == state:  # FooterKey keeps its state privately
                key._disabled = not state
                key.set_class(not state, "-disabled")
