"""pandas options judged by key, never by group (#42, the effects reader's leftovers).

The class of defect: a library setting judged by the group its key starts with, so that one harmless
key (``compute.use_bottleneck``... ``display.max_rows``) vouches for a neighbour that makes the library
import code by name (``compute.use_numba``, ``mode.string_storage``, ``io.parquet.engine``). The mechanism:
one table of every pandas option (``effects.pandas_options``, data checked in), the attribute form
(``pd.options.x.y = v``) and the pattern form (``pd.set_option(regex, v)``, ``option_context``, a dict)
both judged by it, a pattern by every option it selects. Checked here: the table holds every option the
installed pandas has (skipped without pandas), and, generated, no cell that sets an option that is more
than how pandas computes reads as "computes" — compared with the options real pandas selects.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from freeact_tui.effects import Kind, describe, known, read_effects
from freeact_tui.effects.pandas_options import PANDAS_OPTIONS, OptionUse, selected
from freeact_tui.toolcalls import CodeAction


def _installed_options() -> list[str] | None:
    try:
        from pandas._config import config
    except ImportError:
        return None
    return sorted(config._registered_options)


def _read(code: str, folder: Path):  # type: ignore[no-untyped-def]
    return read_effects(CodeAction("import pandas as pd\n" + code), folder)


def test_every_option_of_the_installed_pandas_is_in_the_table() -> None:
    options = _installed_options()
    if options is None:
        pytest.skip("pandas is not installed here: the table is checked where it is (pip install pandas)")
    missing = [key for key in options if key not in PANDAS_OPTIONS]
    assert not missing, f"pandas options the table does not decide (add each to pandas_options): {missing}"


ROWS = [
    # (code, the cell only computes) — each row names the option that motivated it
    ("pd.options.display.max_rows = 5", True),
    ("pd.options.styler.render.max_rows = 5", True),
    ("pd.options.mode.copy_on_write = True", True),
    ("pd.options.io.hdf.default_format = 'table'", True),
    ("pd.options.plotting.backend = 'matplotlib'", True),
    ("pd.set_option('display.max_rows', 5)", True),
    ("pd.set_option('max_rows', 5)", True),  # one option, found by part of its name
    ("pd.set_option('display.max_rows', 5, 'display.width', 120)", True),
    ("pd.set_option({'display.max_rows': 5, 'display.width': 120})", True),
    ("pd.set_option('plotting.backend', 'matplotlib')", True),
    ("with pd.option_context('display.max_rows', 5):\n    pass", True),
    # an accelerator, a storage, an engine, matplotlib's converters: pandas imports a library by name
    ("pd.options.compute.use_numba = True", False),
    ("pd.options.compute.use_bottleneck = True", False),
    ("pd.options.mode.string_storage = 'pyarrow'", False),
    ("pd.options.future.infer_string = True", False),
    ("pd.options.plotting.matplotlib.register_converters = True", False),
    ("pd.options.io.parquet.engine = 'fastparquet'", False),
    ("pd.set_option('io.parquet.engine', 'fastparquet')", False),
    ("pd.set_option('compute.use_numba', True)", False),
    ("pd.set_option('use_numba', True)", False),
    ("pd.set_option('string_storage', 'pyarrow')", False),
    ("pd.set_option('display.max_rows', 5, 'io.sql.engine', 'sqlalchemy')", False),
    ("pd.set_option({'display.max_rows': 5, 'io.excel.xlsx.writer': 'helper'})", False),
    ("with pd.option_context('mode.string_storage', 'pyarrow'):\n    pass", False),
    ("pd.set_option('engine', 'x')", False),  # a pattern selecting engines
    ("pd.set_option('', 1)", False),  # every option
    ("pd.set_option('all', 1)", False),
    ("pd.set_option('p.*d$', 'x')", False),  # repetition: not followed
    ("pd.set_option('display.no_such_option', 1)", False),  # a later pandas's option
    ("pd.options.display.no_such_option = 1", False),
    ("pd.set_option('plotting.backend', 'helper')", False),
    ("pd.set_option('backend', 'module://helper')", False),
    ("pd.set_option({'plotting.backend': 'helper'})", False),
    ("k = input()\npd.set_option(k, 1)", False),
    ("pd.set_option('display.max_rows')", False),  # odd arguments: not followed
    ("pd.set_option(**{'display.max_rows': 5})", False),
    ("d = {'io.sql.engine': 'x'}\npd.set_option(d)", False),
]


@pytest.mark.parametrize(("code", "computes"), ROWS)
def test_a_pandas_option_is_judged_by_its_own_key(code: str, computes: bool, tmp_path: Path) -> None:
    found = _read(code, tmp_path)
    assert (found.effect_class == "computes") == computes, describe(found)
    if not computes:
        assert Kind.UNKNOWN in found.kinds, describe(found)


_KEYS = sorted(PANDAS_OPTIONS)


def _patterns() -> st.SearchStrategy[str]:
    """A key, a part of one, a part with anchors or a wildcard dot, or any text."""
    part = st.sampled_from(_KEYS).flatmap(
        lambda k: st.tuples(st.integers(0, len(k)), st.integers(0, len(k))).map(lambda ab: k[min(ab) : max(ab)])
    )
    return st.one_of(
        st.sampled_from(_KEYS),
        part,
        part.map(lambda p: "^" + p),
        part.map(lambda p: p + "$"),
        part.map(lambda p: p.replace("_", ".")),
        st.text(alphabet="abcdefgimnoprstuwx._^$*+?()[]|", max_size=12),
    )


_VALUES = st.sampled_from(["5", "True", "'matplotlib'", "'helper'", "'pyarrow'", "None", "input()"])
_FORMS = st.sampled_from(
    ["pd.set_option({p!r}, {v})", "pd.set_option({{{p!r}: {v}}})", "with pd.option_context({p!r}, {v}):\n    pass"]
)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(pattern=_patterns(), value=_VALUES, form=_FORMS)
def test_a_pattern_reads_as_computing_only_when_every_option_it_selects_computes(
    pattern: str, value: str, form: str, tmp_path: Path
) -> None:
    found = _read(form.format(p=pattern, v=value), tmp_path)
    if found.effect_class != "computes":
        return
    keys = selected(pattern)
    assert keys, (pattern, "selects no option the table knows")
    for key in keys:
        use = PANDAS_OPTIONS[key]
        assert use != OptionUse.IMPORTS, (pattern, key)
        if use == OptionUse.MODULE:
            assert value.strip("'").lower() in known.PLOT_BACKENDS, (pattern, value)
    installed = _installed_options()
    if installed is not None:
        # what real pandas selects: the same options (its own matching, not this module's)
        from pandas._config import config

        real = config._select_options(pattern)
        assert set(real) <= set(keys), (pattern, real, keys)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(key=st.sampled_from(_KEYS), value=st.sampled_from(["5", "True", "'matplotlib'", "'helper'", "None"]))
def test_the_attribute_form_and_the_call_agree(key: str, value: str, tmp_path: Path) -> None:
    by_attribute = _read(f"pd.options.{key} = {value}", tmp_path).effect_class == "computes"
    by_call = _read(f"pd.set_option({key!r}, {value})", tmp_path).effect_class == "computes"
    assert by_attribute == by_call, (key, value)
    assert by_attribute == (
        PANDAS_OPTIONS[key] == OptionUse.COMPUTES
        or (PANDAS_OPTIONS[key] == OptionUse.MODULE and value.strip("'") in known.PLOT_BACKENDS)
    ), (key, value)
