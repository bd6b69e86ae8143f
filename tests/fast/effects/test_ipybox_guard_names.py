"""No decision of the app leans on ipybox's shell-escape guard (#42): its state is reachable from user code.

ipybox keeps the guard's switches in the kernel's globals (``_ipybox_magic_allowed``, an Event;
``_ipybox_shell_allowed``, a ContextVar) and deletes ``_ipybox_orig_os_system``, which its own wrapper
needs. The class: an approval that counts on the guard. Checked for every name the guard's source
defines (read from ipybox itself, so a new one is covered): a cell that reaches it (called, set, through
``globals()``/``vars()``/``get_ipython().user_ns``) cannot be told; a cell that rebinds it reads as
computing (it does, to the reading), and a program run after the guard is disarmed is still read as
running a program, which only a rule that allows programs (or sandboxed-auto) lets run: the reading
never looks at the guard (``init_code``'s docstring says what the app relies on instead).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from freeact_tui.effects import Kind, describe, read_effects
from freeact_tui.execution.kernel.init_code import _ipybox_init
from freeact_tui.permissions.patterns import FOLDER_CLASSES
from freeact_tui.toolcalls import CodeAction

_SOURCE = "\n".join(
    value for name, value in vars(_ipybox_init()).items() if name.isupper() and isinstance(value, str)
)
GUARD_NAMES = sorted(set(re.findall(r"\b_ipybox_\w+", _SOURCE)))
FORMS = [
    "{n}.set()",
    "{n}.set(True)",
    "{n}.clear()",
    "x = {n}",
    "print({n})",
    "globals()[{q}].set()",
    "vars()[{q}] = 1",
    "get_ipython().user_ns[{q}].set()",
    "import __main__\ngetattr(__main__, {q}).set()",
]


def test_the_guard_defines_the_names_the_report_named() -> None:
    assert {"_ipybox_magic_allowed", "_ipybox_shell_allowed", "_ipybox_orig_os_system"} <= set(GUARD_NAMES)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    name=st.sampled_from(GUARD_NAMES),
    form=st.sampled_from(FORMS),
    before=st.sampled_from(["", "x = 1\n", "import json\n"]),
    after=st.sampled_from(["", "\nimport os\nos.system('id')", "\nprint('ok')"]),
)
def test_no_cell_that_reaches_the_guard_reads_as_allowable_work(
    name: str, form: str, before: str, after: str, tmp_path: Path
) -> None:
    code = before + form.format(n=name, q=repr(name)) + after
    found = read_effects(CodeAction(code), tmp_path)
    assert found.effect_class is None and Kind.UNKNOWN in found.kinds | {Kind.PROGRAMS}, (code, describe(found))


@pytest.mark.parametrize("code", ["_ipybox_magic_allowed.set()\nimport subprocess\nsubprocess.run(['id'])"])
def test_the_reported_case(code: str, tmp_path: Path) -> None:
    found = read_effects(CodeAction(code), tmp_path)
    assert found.effect_class is None and Kind.UNKNOWN in found.kinds, describe(found)


DISARM = [
    "class _ipybox_magic_allowed:\n    @staticmethod\n    def is_set():\n        return True",
    "_ipybox_shell_allowed = None",
]
PROGRAMS = [
    "import subprocess\nsubprocess.run(['id'])",
    "import os\nos.system('id')",
    "import pty\npty.spawn('sh')",
    "!id",
]


@pytest.mark.parametrize("disarm", DISARM)
@pytest.mark.parametrize("program", PROGRAMS)
def test_a_disarmed_guard_changes_no_reading(disarm: str, program: str, tmp_path: Path) -> None:
    """What a cell does is read from its text alone: disarming the guard first (same cell or an earlier
    one) leaves a program a program."""
    alone = read_effects(CodeAction(program), tmp_path)
    after = read_effects(CodeAction(disarm + "\n" + program), tmp_path)
    for found in (alone, after):
        assert found.effect_class not in FOLDER_CLASSES and found.kinds & {Kind.PROGRAMS, Kind.UNKNOWN}, describe(found)
