"""The settings objects the reading understands by key: a known library's in-process settings, and the
environment (``known`` re-exports them; ``freeact_tui.effects.settings`` reads their forms)."""

from __future__ import annotations

from dataclasses import dataclass

from freeact_tui.effects.classes import Kind

MODULE_NAME_OPTIONS = ("plotting.backend",)
"""Options whose value names a module to import."""


@dataclass(frozen=True)
class Settings:
    """A process-wide settings object a cell may read and change by key (``rcParams["font.size"] = 12``).

    A key is judged by what its value is to the library: a module it imports (``backend``: only the
    ``PLOT_BACKENDS``), a path it reads or writes later (checked as a write), a program or code it runs
    (cannot be told), or else, in one of ``groups``, a setting of how the library computes and draws
    (only computes). A key in no group cannot be told, and so can a key or value given at run time.
    Only the forms of ``freeact_tui.effects.settings`` are understood; the object as a value is not.
    """

    groups: frozenset[str] = frozenset()
    module_keys: frozenset[str] = frozenset()
    path_keys: frozenset[str] = frozenset()
    program_keys: frozenset[str] = frozenset()
    attributes: bool = False
    """Keys are attribute paths (``pd.options.display.max_rows``), not items."""
    read: Kind | None = None
    """What reading it is (``Kind.ENVIRONMENT`` for ``os.environ``; ``None``: it only computes)."""
    writable: bool = True
    """Whether a cell may change it (the environment: no, later code reads it)."""


_RC = Settings(
    groups=frozenset(
        "axes axes3d boxplot contour date errorbar figure font grid hatch hist image legend lines markers "
        "mathtext patch pcolor pcolormesh polaraxes scatter savefig text xaxis xtick yaxis ytick pdf svg agg "
        "path keymap timezone".split()
    ),
    module_keys=frozenset({"backend"}),
    path_keys=frozenset({"savefig.directory"}),
    # LaTeX and ghostscript run as programs on the next draw, with the preamble as their input
    program_keys=frozenset("text.usetex text.latex.preamble pdf.preamble ps.usedistiller".split()),
)
_ENVIRON = Settings(read=Kind.ENVIRONMENT, writable=False)

SETTINGS: dict[str, Settings] = {
    "matplotlib.rcParams": _RC,
    "matplotlib.pyplot.rcParams": _RC,
    "pandas.options": Settings(
        groups=frozenset("display mode compute plotting styler future".split()),
        module_keys=frozenset(MODULE_NAME_OPTIONS),
        attributes=True,
    ),
    "os.environ": _ENVIRON,
    "os.environb": _ENVIRON,
}
"""Settings objects by their full dotted name: a known library's in-process settings, and the environment."""

SETTINGS_READS = frozenset({"get", "copy", "keys", "values", "items"})
"""Methods that read a settings object (``update`` changes it: each key is judged)."""


__all__ = ["MODULE_NAME_OPTIONS", "SETTINGS", "SETTINGS_READS", "Settings"]
