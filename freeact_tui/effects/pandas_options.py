"""Every pandas option, by what its value is to pandas: the one table ``pd.options`` and ``pd.set_option``
are judged by, key by key (never by group: ``io.parquet.engine`` and ``io.hdf.default_format`` share one).

Data checked in, so the reading needs no pandas: enumerated from pandas 2.3 and 3.1 (their
``pandas._config.config._registered_options``; ``tests/effects/test_pandas_options.py`` fails on a key the
installed pandas has and this table does not). A key not here (a later pandas's) cannot be told. No
option of those versions names a path pandas writes or a program it runs; the ones that are more than
how pandas computes and shows make it import a library:

- ``MODULE``: the value names the module to import (``plotting.backend``): only a known plot backend is
  taken (``known.PLOT_BACKENDS``), any other value cannot be told;
- ``IMPORTS``: the value chooses, or switches on, an optional library pandas then imports by name (an I/O
  engine, the string storage, an accelerator, matplotlib's converters). The folder is on the kernel's
  ``sys.path``, so a ``pyarrow.py`` or ``numba.py`` there would be the code imported: cannot be told.

``set_option``/``option_context`` take a regular expression; pandas searches it (ignoring case) in the
option names and sets the one option it matches (``selected``). The reading cannot know which options
the kernel's pandas has, so a pattern is judged by every option of the table it matches: it only
computes if it matches at least one and each it matches only computes (``refusal``).
"""

from __future__ import annotations

import re
from enum import StrEnum


class OptionUse(StrEnum):
    """What setting a pandas option does, beyond storing its value."""

    COMPUTES = "computes"
    MODULE = "module"
    IMPORTS = "imports"


_COMPUTES = (
    # how frames are shown (text, HTML, LaTeX through the Styler): pandas only formats
    "display.chop_threshold display.colheader_justify display.date_dayfirst display.date_yearfirst "
    "display.encoding display.expand_frame_repr display.float_format display.html.border "
    "display.html.table_schema display.html.use_mathjax display.large_repr display.max_categories "
    "display.max_columns display.max_colwidth display.max_dir_items display.max_info_columns "
    "display.max_info_rows display.max_rows display.max_seq_items display.memory_usage display.min_rows "
    "display.multi_sparse display.notebook_repr_html display.pprint_nest_depth display.precision "
    "display.show_dimensions display.unicode.ambiguous_as_wide display.unicode.east_asian_width display.width "
    "styler.format.decimal styler.format.escape styler.format.formatter styler.format.na_rep "
    "styler.format.precision styler.format.thousands styler.html.mathjax styler.latex.environment "
    "styler.latex.hrules styler.latex.multicol_align styler.latex.multirow_align styler.render.encoding "
    "styler.render.max_columns styler.render.max_elements styler.render.max_rows styler.render.repr "
    "styler.sparse.columns styler.sparse.index "
    # how it computes: warnings, copies, threads, NaN handling, later behaviour switched on early
    "mode.chained_assignment mode.copy_on_write mode.max_threads mode.performance_warnings "
    "mode.sim_interactive mode.data_manager mode.use_inf_as_na "
    "future.distinguish_nan_and_na future.infer_freq_returns_offset future.no_silent_downcasting "
    "future.python_scalars "
    # how an HDF file is laid out (the write itself is judged where the cell writes it)
    "io.hdf.default_format io.hdf.dropna_table"
).split()
_IMPORTS = (
    # the engine that reads or writes a format: a library imported by the name given
    "io.excel.ods.reader io.excel.ods.writer io.excel.xls.reader io.excel.xls.writer io.excel.xlsb.reader "
    "io.excel.xlsm.reader io.excel.xlsm.writer io.excel.xlsx.reader io.excel.xlsx.writer io.parquet.engine "
    "io.sql.engine "
    # string storage by pyarrow; numba, bottleneck and numexpr switched on
    "mode.string_storage future.infer_string compute.use_bottleneck compute.use_numba compute.use_numexpr "
    # registers pandas's converters with matplotlib (imports it)
    "plotting.matplotlib.register_converters"
).split()

PANDAS_OPTIONS: dict[str, OptionUse] = {
    **dict.fromkeys(_COMPUTES, OptionUse.COMPUTES),
    **dict.fromkeys(_IMPORTS, OptionUse.IMPORTS),
    "plotting.backend": OptionUse.MODULE,
}
"""Every option of pandas 2.3 and 3.1, by what setting it does."""


def keys_of(use: OptionUse) -> frozenset[str]:
    """The options of the table that ``use`` says."""
    return frozenset(key for key, u in PANDAS_OPTIONS.items() if u == use)


_PLAIN = re.compile(r"\^?[\w.]*\$?")
"""A pattern of name characters (``.`` matching any), anchored or not: no repetition, so searching it is
cheap; any other pattern (``p.*d$``) is not followed (a crafted one could take the app's time)."""


def selected(pattern: str) -> list[str] | None:
    """The options of the table ``pattern`` selects the way pandas does (``None``: a pattern not followed).

    An option's own name selects it; ``"all"`` selects every one; else every name the pattern is found in,
    ignoring case (pandas then refuses more than one, but which ones the kernel's pandas has is not known).
    """
    if pattern in PANDAS_OPTIONS:
        return [pattern]
    if pattern == "all":
        return sorted(PANDAS_OPTIONS)
    if not _PLAIN.fullmatch(pattern):
        return None
    compiled = re.compile(pattern, re.IGNORECASE)
    return sorted(key for key in PANDAS_OPTIONS if compiled.search(key))


def refusal(pattern: str | None, value: str | None, module_ok: frozenset[str]) -> str | None:
    """Why setting the options ``pattern`` selects to ``value`` cannot be told (``None``: it only computes).

    Args:
        pattern: the pattern as written (``None``: built at run time).
        value: the value as written, when it is a constant string (``None``: any other value).
        module_ok: the module names a ``MODULE`` option may name (the known plot backends).
    """
    if pattern is None:
        return "a pandas option given at run time"
    keys = selected(pattern)
    if keys is None:
        return f"a pandas option pattern the reading does not follow: {pattern!r}"
    if not keys:
        return f"a pandas option the reading does not know: {pattern!r}"
    for key in keys:
        use = PANDAS_OPTIONS[key]
        if use == OptionUse.IMPORTS:
            return f"the pandas option {key!r}, which makes pandas import a library by name"
        if use == OptionUse.MODULE and (value is None or value.lower() not in module_ok):
            return f"the pandas option {key!r}, which names a module to import: {value!r}"
    return None


__all__ = ["PANDAS_OPTIONS", "OptionUse", "keys_of", "refusal", "selected"]
