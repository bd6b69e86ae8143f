"""A project's environment may set only names shaped like application settings (issue #39, F3).

The class: a deny-table of names for a project's ``.env`` and ``kernel_env``. A trusted project's
``kernel_env`` set ``_PYTHON_SYSCONFIGDATA_NAME`` (every Python of the kernel imports the module it names at
start: the kernel never came up) and ~35 other program-configuring names passed the table. The mechanism:
``env_policy`` decides by the shape of a name first (a leading underscore, a tool family's first word, a
last word that names a program or start-up code, a word that names configuration), whatever the program.
Tested with the attacker's names, with names generated in each refused shape, and with generated ordinary
settings that must still pass; and the trust dialog names a refused ``kernel_env`` name under "Never applied".
"""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from freeact_tui.project import trust
from freeact_tui.project.env_policy import (
    CONFIG_WORDS,
    PROGRAM_ENDINGS,
    PROGRAM_WORDS,
    TOOL_FAMILIES,
    TOOL_PREFIXES,
    refusal,
)
from freeact_tui.project.review import review

REPORTED = [
    "_PYTHON_SYSCONFIGDATA_NAME", "_PYTHON_HOST_PLATFORM", "_PYTHON_PROJECT_BASE", "__PYVENV_LAUNCHER__",
    "VIRTUAL_ENV", "PYENV_VERSION", "PYENV_ROOT", "GLIBC_TUNABLES", "MALLOC_CHECK_", "LUA_INIT",
    "PHP_INI_SCAN_DIR", "R_PROFILE_USER", "R_ENVIRON_USER", "EXINIT", "VIMINIT", "DOTNET_STARTUP_HOOKS",
    "PERL5DB", "MAKEFILES", "RSYNC_RSH", "CVS_RSH", "SVN_SSH", "LESSKEY", "LESSKEYIN", "SYSTEMD_PAGER",
    "GH_PAGER", "BAT_PAGER", "DELTA_PAGER", "SUDO_EDITOR", "KUBE_EDITOR", "FCEDIT", "GCC_EXEC_PREFIX",
    "DEBUGINFOD_URLS", "BUNDLE_GEMFILE", "MAGIC",
]  # fmt: skip


@pytest.mark.parametrize("name", REPORTED)
def test_every_reported_name_is_refused(name: str) -> None:
    assert refusal(name) is not None
    assert refusal(name.lower()) is not None


_WORD = st.from_regex(r"\A[A-Z][A-Z0-9]{0,7}\Z")
_WORDS = st.lists(_WORD, min_size=0, max_size=3).map(lambda words: "_".join(words))


@given(rest=st.from_regex(r"\A[A-Za-z0-9_]{0,20}\Z"))
def test_a_leading_underscore_is_refused(rest: str) -> None:
    assert refusal("_" + rest) is not None


@given(family=st.sampled_from(TOOL_FAMILIES), rest=_WORDS)
def test_a_tool_familys_first_word_is_refused(family: str, rest: str) -> None:
    assert refusal(f"{family}_{rest}" if rest else family) is not None


@given(prefix=st.sampled_from(TOOL_PREFIXES), rest=st.from_regex(r"\A[A-Z0-9_]{0,12}\Z"))
def test_a_runtimes_prefix_is_refused(prefix: str, rest: str) -> None:
    assert refusal(prefix + rest) is not None


@given(head=_WORDS, ending=st.sampled_from(PROGRAM_ENDINGS))
def test_a_last_word_naming_a_program_or_start_up_code_is_refused(head: str, ending: str) -> None:
    assert refusal(f"{head}_{ending}" if head else ending) is not None
    assert refusal(f"{head}{ending}" if head else ending) is not None  # EXINIT, LESSKEYIN, PERL5DB: no "_"


@given(head=_WORDS, word=st.sampled_from(PROGRAM_WORDS))
def test_a_last_word_that_is_a_program_is_refused(head: str, word: str) -> None:
    assert refusal(f"{head}_{word}" if head else word) is not None


@given(head=_WORDS, word=st.sampled_from(CONFIG_WORDS), tail=_WORDS)
def test_a_word_naming_configuration_anywhere_is_refused(head: str, word: str, tail: str) -> None:
    assert refusal("_".join(p for p in (head, word, tail) if p)) is not None


# Words of ordinary application settings: none is a tool, a program, a place or a provider's setting.
_APP_WORDS = ["APP", "MY", "FEATURE", "DATABASE", "URL", "LEVEL", "LOG", "NAME", "COUNT", "ENABLED", "SIZE",
              "MAX", "TIMEOUT", "DEBUG", "WORKERS", "RETRIES", "FLAG", "THEME", "COLOUR", "BATCH", "SEED", "MODE"]  # fmt: skip


@given(words=st.lists(st.sampled_from(_APP_WORDS), min_size=1, max_size=4))
def test_ordinary_application_settings_still_pass(words: list[str]) -> None:
    """The shapes are not so broad that a project's own settings go: ``APP_LOG_LEVEL``, ``MAX_WORKERS``."""
    name = "_".join(words)
    assert refusal(name) is None, (name, refusal(name))


@pytest.mark.parametrize("name", ["_PYTHON_SYSCONFIGDATA_NAME", "GLIBC_TUNABLES", "KUBE_EDITOR"])
def test_the_trust_dialog_names_a_refused_kernel_env_name_under_never_applied(tmp_path: Path, name: str) -> None:
    folder = tmp_path / "proj"
    folder.mkdir()
    (folder / ".freeact-tui.toml").write_text(f'[kernel_env]\n{name} = "x"\nAPP_MODE = "fast"\n', encoding="utf-8")
    text = review(trust.check(folder)).text()
    settings, _, never = text.partition("Never applied, even if trusted:")
    assert name in never
    assert name not in settings.split("Settings it would change:")[-1]
    # an ordinary name is not refused by its shape: it waits for the user's word (``project_kernel_env``)
    assert "APP_MODE is not applied: a project hands the kernel only the variables your own config names" in never
    assert "its first word" not in never.split("APP_MODE")[1].split("\n")[0]
