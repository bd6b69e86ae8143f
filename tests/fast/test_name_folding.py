"""Every check on a protected, secret or code-configuring name compares names as a file system may (#39).

The class: the app's name equality differs from the file system's. On macOS (APFS, HFS+), Windows, a mounted
FAT/exFAT or ciopfs folder, ``.GIT/config``, ``.Git/hooks/x``, ``AGENTS.MD``, ``.ENV``, ``.Freeact/…``, an NFD
spelling or a name ending in a dot open the very file the app protects. The mechanism: one comparison
(``filenames.fold``) used by every check. The property: a generated variant (case, Unicode look-alikes that
fold alike, normal form, trailing dots and spaces) of every name of every table, at any depth, is judged
exactly like the canonical name by every check (one property over all of them).
"""

from __future__ import annotations

import os
import shlex
import tempfile
import unicodedata
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from freeact_tui.effects import read_effects
from freeact_tui.execution.isolation.planted import configures
from freeact_tui.execution.isolation.protect import ProtectedNames, protected_variants
from freeact_tui.execution.isolation.secret_files import is_secret_entry
from freeact_tui.filenames import fold, same_name
from freeact_tui.permissions.rules import PermissionRules
from freeact_tui.project import paths
from freeact_tui.project.policy import outside_refusal, project_path_refusal
from freeact_tui.project.trusted import Registration
from freeact_tui.reach.gitnames import reaches
from freeact_tui.shell.gitreads import SECRET_NAMES, is_secret_name, secret_reference
from freeact_tui.toolcalls import CodeAction, ShellAction

# Every name of every table, as a path at the top of the folder (and below a plain folder: ``sub/``).
_CANONICAL = sorted(
    {
        *paths.PROTECTED_NAMES,
        ".git/config",
        ".git/hooks/pre-commit",
        ".freeact/config.toml",
        ".freeact/generated/sitecustomize.py",
        ".agents/skills/x/SKILL.md",
        *paths.CONFIGURES_CODE,
        "helper.py",
        "pkg/__init__.py",
        "x.pth",
        *(g.replace("**", "x").replace("*", "x") for g in SECRET_NAMES),
    }
)
# Characters some file system may take for another (``casefold`` makes them one): the Kelvin sign, long s.
_ALIKE = {"k": ["K", "\u212a"], "s": ["S", "\u017f"], "K": ["k", "\u212a"], "S": ["s", "\u017f"]}


@st.composite
def _variant(draw: st.DrawFn, path: str) -> str:
    """``path`` with each name spelled as a case-insensitive, normalising file system may take it."""
    parts = []
    for part in path.split("/"):
        chars = [draw(st.sampled_from([c, c.upper(), c.lower(), *_ALIKE.get(c, [])])) for c in part]
        name = unicodedata.normalize(draw(st.sampled_from(["NFC", "NFD"])), "".join(chars))
        name += draw(st.sampled_from(["", "", "", ".", " ", ". "]))  # Windows drops what ends a name
        parts.append(name)
    return "/".join(parts)


def _walked_secret(path: str) -> bool:
    """The sandbox's walk: some name of the path, in its folder, is a secret entry."""
    parts = path.split("/")
    return any(
        is_secret_entry(name, k < len(parts) - 1, parts[k - 1] if k else "") for k, name in enumerate(parts)
    )


def _checks(root: Path) -> dict[str, Callable[[str], object]]:
    """Every check that decides on a protected, secret or code-configuring name, by its name."""
    rules = PermissionRules(None, working_dir=root)
    registration = Registration(root, True)
    return {
        "paths.runs_later (effects modes, effects reader)": paths.runs_later,
        "policy.project_path_refusal (project rules, permissions.match)": lambda p: (
            project_path_refusal(p) is None
        ),
        "policy.outside_refusal (images_dir)": lambda p: outside_refusal(p, root)[0] is None,
        "gitreads.is_secret_name (secret table, reach.search, gitnames)": is_secret_name,
        "gitreads.secret_reference (git reads)": lambda p: (
            secret_reference(["git", "show", "HEAD:" + p]) is None
        ),
        "planted.configures (sandbox/docker planted-name guard)": lambda p: configures("sub/" + p),
        "secret_files.is_secret_entry (sandbox's hidden secrets)": _walked_secret,
        "trusted.Registration.covers (trust digest)": lambda p: registration.covers(str(root / p)),
        "permissions: default rules on `cat PATH`": lambda p: rules.check(
            ShellAction("cat " + shlex.quote(p))
        ),
        "effects reader: code writing PATH": lambda p: (
            read_effects(CodeAction(f"open({p!r}, 'w').write('x')"), root).kinds
        ),
        "effects reader: code reading PATH": lambda p: (
            read_effects(CodeAction(f"print(open({p!r}).read())"), root).kinds
        ),
    }


_ROOT = Path(tempfile.mkdtemp(prefix="fold-")).resolve()
_CHECKS = _checks(_ROOT)


@pytest.mark.parametrize("check", sorted(_CHECKS))
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data(), canonical=st.sampled_from(_CANONICAL), depth=st.sampled_from(["", "sub/", "a/b/"]))
def test_a_variant_of_every_name_is_judged_like_the_name_by_every_check(
    check: str, data: st.DataObject, canonical: str, depth: str
) -> None:
    variant = data.draw(_variant(canonical), label="variant")
    judge = _CHECKS[check]
    assert judge(depth + variant) == judge(depth + canonical), (check, depth + variant)


# The reported spellings, each the file the app protects on a case-insensitive or normalising file system.
REPORTED = [
    (".GIT/config", ".git/config"),
    (".Git/hooks/x", ".git/hooks/x"),
    ("AGENTS.MD", "AGENTS.md"),
    (".ENV", ".env"),
    (".Freeact/config.toml", ".freeact/config.toml"),
    ("Pytest.INI", "pytest.ini"),
    (".env.", ".env"),
    ("Cafe\u0301/.env", "Caf\u00e9/.env"),
]


@pytest.mark.parametrize(("variant", "canonical"), REPORTED)
def test_the_reported_spellings_are_refused_like_the_names(variant: str, canonical: str) -> None:
    assert same_name(variant.rsplit("/", 1)[0], canonical.rsplit("/", 1)[0])
    assert paths.runs_later(variant) == paths.runs_later(canonical)
    assert (project_path_refusal(variant) is None) == (project_path_refusal(canonical) is None)
    assert is_secret_name(variant) == is_secret_name(canonical)
    assert configures("sub/" + variant) == configures("sub/" + canonical)
    assert project_path_refusal(".GIT/config") is not None
    assert PermissionRules(None, working_dir=_ROOT).check(ShellAction("cat .ENV")) == "ask"


def test_a_git_pathspec_in_any_spelling_reaches_the_stored_name() -> None:
    assert reaches(".ENV", ".env", "")
    assert reaches("CONFIG/.Env", "config/.env", "")


def test_fold_keeps_dot_names_and_folds_what_a_file_system_may() -> None:
    assert [fold(n) for n in (".", "..", "...")] == [".", "..", "..."]
    assert fold(".GIT. ") == ".git"
    assert fold("\u212aey.pem") == fold("key.pem")
    assert fold("Cafe\u0301") == fold("caf\u00e9")
    assert not same_name("src", "scr")


def test_the_sandbox_binds_an_existing_variant_of_a_protected_name(tmp_path: Path) -> None:
    """A ``.GIT`` or ``Agents.MD`` the folder holds (on macOS: the very ``.git`` and ``AGENTS.md``) is bound
    read-only like the name itself."""
    for name in (".GIT", "Agents.MD", "src"):
        (tmp_path / name).mkdir()
    assert protected_variants(tmp_path) == [tmp_path / ".GIT", tmp_path / "Agents.MD"]
    protected = ProtectedNames(tmp_path)
    try:
        targets = {target for _, target in protected.binds()}
        assert {tmp_path / ".GIT", tmp_path / "Agents.MD"} <= targets
        assert tmp_path / "src" not in targets
    finally:
        protected.cleanup()
    assert sorted(os.listdir(tmp_path)) == [".GIT", "Agents.MD", "src"]  # its placeholders went with it
