"""Every credential store of the secret table is asked, by every default-allowed read and by in-folder code (#42 F4).

The class: a file that holds credentials but is not a row of the one secret table (``gitreads.SECRET_NAMES``):
a submodule's git config (``.git/modules/<name>/config``, where a remote URL may carry a token), a bare
or mirror clone's (``x.git/config``), direnv's ``.envrc``, tools' stored logins. The mechanism: one table,
which the default ask rules (``cat``, ``head``, ``grep`` …) and the reading of code (``open(...)``) both
judge by. The test takes an instance of EVERY row and reads it by every default-allowed reading program,
plainly and through a glob, and by code in the in-folder mode.
"""

from __future__ import annotations

import re
import tempfile
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from freeact_tui.effects import read_effects
from freeact_tui.effects.modes import ApprovalMode, judge
from freeact_tui.permissions.rules import PermissionRules
from freeact_tui.shell.gitreads import (
    CREDENTIAL_DATA_WORDS,
    CREDENTIAL_WORDS,
    DATA_SUFFIXES,
    SECRET_NAMES,
    is_secret_name,
)
from freeact_tui.toolcalls import CodeAction, ShellAction

_WORD = st.text(alphabet="abcdefghijklmnopqrstuvwxyz0123456789_-", min_size=1, max_size=8)
_READERS = ("cat {p}", "head -n 5 {p}", "tail {p}", "nl {p}", "grep -r url {p}", "sort {p}", "cut -c1-80 {p}")


def _instance(glob: str) -> st.SearchStrategy[str]:
    return st.lists(_WORD, min_size=1, max_size=2).map(
        lambda words: re.sub(r"\[[^]]*\]", "_", glob).replace("**", "/".join(words)).replace("*", words[0])
    )


def _globbed(path: str) -> str:
    """The path with its last name's last letter a wildcard (a leading dot is matched by no wildcard)."""
    head, _, name = path.rpartition("/")
    return (head + "/" if head else "") + name[:-1] + "?"


@settings(max_examples=300, deadline=None)
@given(
    secret=st.sampled_from(SECRET_NAMES).flatmap(_instance),
    where=st.sampled_from(["", "sub/", "a/b/"]),
    reader=st.sampled_from(_READERS),
    globbed=st.booleans(),
)
def test_every_row_is_asked_by_every_default_allowed_read(
    secret: str, where: str, reader: str, globbed: bool
) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        path = where + secret
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text("url = https://bob:ghp_SECRET@github.com/x\n")
        assert is_secret_name(path)
        command = reader.format(p=_globbed(path) if globbed else path)
        assert PermissionRules(None, working_dir=root).check(ShellAction(command)) == "ask", command
        code = CodeAction(f"print(open({path!r}).read())")
        verdict = judge(
            ApprovalMode.IN_FOLDER,
            code,
            read_effects(code, root),
            rule=None,
            sandboxed=False,
            working_dir=root,
        )
        assert verdict is None, (path, verdict)


REPORTED = [
    # atk9e (#42 F4): version control's and tools' credential stores
    ".hg/hgrc",
    ".my.cnf",
    "auth.json",
    "credentials.json",
    "service-account.json",
    "service-account-prod.json",
    "terraform.tfstate",
    "secrets.yaml",
    ".gnupg/secring.gpg",
    ".svn/auth/svn.simple/0ab1",
    "token.txt",
    ".pgpass",
    ".docker/config.json",
    ".kube/config",
    "tls.pem",
    "tls.key",
    "a.p12",
    "a.pfx",
    "a.jks",
    "a.keystore",
    "vault.kdbx",
    ".condarc",
    ".git/modules/sub/config",
    ".git/modules/a/modules/b/config",
    "x.git/config",
    "mirror.git/modules/sub/config",
    ".envrc",
    ".git/config.worktree",
    ".config/git/credentials",
    ".config/gh/hosts.yml",
]


@pytest.mark.parametrize("path", REPORTED)
def test_the_reported_credential_stores_are_secret(tmp_path: Path, path: str) -> None:
    (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
    (tmp_path / path).write_text("export OPENAI_API_KEY=sk-x\n")
    rules = PermissionRules(None, working_dir=tmp_path)
    assert rules.check(ShellAction(f"cat {path}")) == "ask"
    assert rules.check(ShellAction("head -n 5 .git/modules/*/config")) == "ask" or not path.startswith(
        ".git/m"
    )
    assert read_effects(CodeAction(f"print(open({path!r}).read())"), tmp_path).effect_class is None


def test_an_ordinary_file_of_the_folder_is_still_read_unasked(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("x")
    (tmp_path / ".git").mkdir()
    (tmp_path / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    rules = PermissionRules(None, working_dir=tmp_path)
    assert rules.check(ShellAction("cat notes.txt")) == "allow"
    assert read_effects(CodeAction("print(open('notes.txt').read())"), tmp_path).effect_class == "reads"


_SEPARATORS = st.sampled_from("-_.")
_PLAIN = st.text(alphabet="abcdefghijklmnopqrstuvwxyz0123456789", min_size=1, max_size=6)


@settings(max_examples=200, deadline=None)
@given(
    word=st.sampled_from(CREDENTIAL_WORDS),
    before=st.lists(st.tuples(_PLAIN, _SEPARATORS), max_size=2),
    after=st.lists(st.tuples(_SEPARATORS, _PLAIN), max_size=2),
    suffix=st.sampled_from(DATA_SUFFIXES),
    folder=st.sampled_from(["", "config/", "deploy/prod/"]),
)
def test_a_data_file_with_a_credential_word_part_is_secret(
    word: str, before: list[tuple[str, str]], after: list[tuple[str, str]], suffix: str, folder: str
) -> None:
    """By structure, not by a longer list: a data file's name one of whose parts (between ``-``, ``_``, ``.``)
    is a credential word (``prod-secrets.yaml``, ``db_password``, ``my.apikey.txt``); a name without a data
    suffix has the word as its last part."""
    tail = "".join(a + b for a, b in after) if suffix else ""
    name = "".join(a + b for a, b in before) + word + tail + suffix
    assert is_secret_name(folder + name), name
    assert is_secret_name((folder + name).upper()), name


@settings(max_examples=100, deadline=None)
@given(
    word=st.sampled_from(CREDENTIAL_WORDS),
    before=st.lists(st.tuples(_PLAIN, _SEPARATORS), max_size=2),
    after=st.lists(st.tuples(_SEPARATORS, _PLAIN), max_size=2),
    suffix=st.sampled_from([".py", ".pyi", ".js", ".ts", ".rb", ".go", ".rs", ".c", ".h", ".so", ".pyc"]),
)
def test_a_module_named_by_a_credential_word_is_code_not_a_secret(
    word: str, before: list[tuple[str, str]], after: list[tuple[str, str]], suffix: str
) -> None:
    """Python's own ``secrets.py`` (the sandboxed kernel imports it), ``password_reset.py``: code, not a store."""
    name = "".join(a + b for a, b in before) + word + "".join(a + b for a, b in after) + suffix
    assert not is_secret_name("lib/python3.11/" + name), name


@settings(max_examples=100, deadline=None)
@given(
    word=st.sampled_from(CREDENTIAL_DATA_WORDS),
    before=st.lists(st.tuples(_PLAIN, _SEPARATORS), max_size=2),
    suffix=st.sampled_from(DATA_SUFFIXES),
)
def test_a_data_file_named_by_a_login_word_is_secret_and_code_is_not(
    word: str, before: list[tuple[str, str]], suffix: str
) -> None:
    """``auth.json``, ``github_token.txt``, ``token``: a login's store; ``auth.py``, ``token_utils.py``: code."""
    prefix = "".join(a + b for a, b in before)
    assert is_secret_name(prefix + word + suffix), prefix + word + suffix
    assert not is_secret_name(f"src/{prefix}{word}.py") and not is_secret_name(f"src/{word}_utils.py")


@pytest.mark.parametrize(
    "name", ["author.txt", "tokenizer.py", "src/auth/views.py", "notes.txt", "README.md"]
)
def test_a_word_inside_a_word_is_not_a_credential_word(name: str) -> None:
    assert not is_secret_name(name)
