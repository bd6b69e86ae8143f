"""The footer of key bindings, rebuilt only when the set of shown keys changes.

A footer wider than the terminal drops whole keys, never half a word, and never the essential ones
(quit and help): those are placed first, the others in their order while they fit.
"""

from __future__ import annotations

from collections.abc import Sequence

from textual import events
from textual.screen import Screen
from textual.widgets import Footer
from textual.widgets._footer import FooterKey

KeyState = tuple[tuple[str, str, str], ...]

ESSENTIAL_ACTIONS = frozenset({"request_quit", "app.request_quit", "slash('/help')", "app.slash('/help')"})
"""Actions whose keys the footer keeps at any width."""


def fit_keys(widths: Sequence[int], essential: Sequence[bool], room: int) -> list[bool]:
    """Which keys to show in ``room`` cells: the essential ones first, then the others in order while they fit.

    Args:
        widths: Cells each key takes (with its margin), in footer order.
        essential: Whether each key must stay.
        room: The cells there are.
    """
    left = room - sum(w for w, e in zip(widths, essential, strict=True) if e)
    shown: list[bool] = []
    for width, must in zip(widths, essential, strict=True):
        keep = must or width <= left
        if keep and not must:
            left -= width
        shown.append(keep)
    return shown


class KeyFooter(Footer):
    """A ``Footer`` that updates enabled/disabled keys in place.

    Textual's footer recomposes on every bindings refresh; each recompose mounts new widgets and
    forces a full layout of the screen (every block of a long conversation), twice per turn.
    Here a refresh that only enables or disables keys restyles the existing keys instead.
    """

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self._shown: KeyState | None = None
        self._widths: dict[int, int] = {}  # cells of each key, measured while it was shown

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
            self._widths = {}
            self.call_after_refresh(self._fit, again=True)
            return
        for key in self.query(FooterKey):
            state = enabled.get((key.key, key.action))
            if state is not None and key._disabled == state:  # FooterKey keeps its state privately
                key._disabled = not state
                key.set_class(not state, "-disabled")

    def on_resize(self, event: events.Resize) -> None:
        self._fit()

    def _fit(self, again: bool = False) -> None:
        """Show the keys that fit the footer's width whole (the palette key, docked right, aside)."""
        if not self.is_attached:
            return
        keys = [k for k in self.query(FooterKey) if not k.has_class("-command-palette")]
        for key in keys:
            if key.display and key.outer_size.width:
                self._widths[id(key)] = key.outer_size.width + key.styles.margin.width
        if any(id(key) not in self._widths for key in keys):
            if again:  # not laid out yet: measured after the next refresh
                self.call_after_refresh(self._fit)
            return
        room = self.size.width - sum(
            k.outer_size.width for k in self.query(FooterKey) if k.has_class("-command-palette")
        )
        shown = fit_keys(
            [self._widths[id(k)] for k in keys], [k.action in ESSENTIAL_ACTIONS for k in keys], room
        )
        for key, show in zip(keys, shown, strict=True):
            key.display = show
