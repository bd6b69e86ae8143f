"""A FIFO, socket, device, directory or huge file standing where a project file is expected never hangs
or floods the app, and is named (issue #39).

Every reader of project files goes through ``projectfiles`` (regular files only, bounded): an attack
corpus of file kinds under each project file name, driven through the real CLI (``run --trust``, which
prints the trust listing, reads the config, the rules, the skills and ``AGENTS.md`` and runs a turn),
with a timeout; and the same corpus against the reader itself.
"""

from __future__ import annotations

import os
import socket
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from freeact_tui.project import files as projectfiles
from freeact_tui.project import trust
from freeact_tui.project.review import review
from tests.fake_openai import FakeOpenAI, Reply
from tests.helpers import cli, fake_args


def _fifo(path: Path) -> None:
    os.mkfifo(path)


def _socket(path: Path) -> None:
    here = os.getcwd()
    os.chdir(path.parent)  # a socket's path is bounded (108 bytes): bound by its name alone
    try:
        sock = socket.socket(socket.AF_UNIX)
        sock.bind(path.name)
        sock.close()
    finally:
        os.chdir(here)


def _link_to(target: str) -> Callable[[Path], None]:
    return lambda path: path.symlink_to(target)


def _sparse(path: Path) -> None:
    with path.open("wb") as fh:
        fh.truncate(2 * 1024**3)  # 2 GB of holes: nothing on disk, everything to a reader


def _directory(path: Path) -> None:
    path.mkdir()
    (path / "x").write_text("x = 1\n")


KINDS: dict[str, Callable[[Path], None]] = {
    "fifo": _fifo,
    "socket": _socket,
    "dev-zero": _link_to("/dev/zero"),
    "dev-stdin": _link_to("/dev/stdin"),
    "sparse-2gb": _sparse,
    "directory": _directory,
}
# Each project file the app reads; the configs stop a run with one line, so they go in folders of their own.
ALONE = [".freeact-tui.toml", ".freeact/config.toml"]
TOGETHER = [
    "AGENTS.md",
    ".env",
    ".freeact/permissions.toml",
    ".freeact/skills/x/SKILL.md",
    ".agents/skills/x/SKILL.md",
]


def _plant(folder: Path, name: str, kind: str) -> None:
    path = folder / name
    path.parent.mkdir(parents=True, exist_ok=True)
    KINDS[kind](path)


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_the_reader_refuses_every_kind_but_a_regular_file_at_once(tmp_path: Path, kind: str) -> None:
    path = tmp_path / "AGENTS.md"
    KINDS[kind](path)
    with pytest.raises(OSError) as caught:
        projectfiles.read_bytes(path)
    assert "AGENTS.md" in str(caught.value) and "\n" not in str(caught.value)


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_run_trust_with_odd_files_as_project_files_finishes_and_names_them(
    tmp_path: Path, fake_openai: FakeOpenAI, kind: str
) -> None:
    folders: list[tuple[Path, list[str]]] = [(tmp_path / "together", TOGETHER)]
    folders += [(tmp_path / f"alone{i}", [name]) for i, name in enumerate(ALONE)]
    for folder, names in folders:
        folder.mkdir()
        for name in names:
            _plant(folder, name, kind)
        listing = review(trust.check(folder)).text()  # in-process: the dialog's listing
        fake_openai.script(Reply("done"))
        try:
            done = cli(
                "run",
                "--trust",
                *fake_args(fake_openai),
                "hi",
                cwd=folder,
                timeout=90,
            )
        except subprocess.TimeoutExpired:
            pytest.fail(f"run --trust hangs on {kind} as {names}")
        assert "Traceback" not in done.stderr, done.stderr[-3000:]
        assert done.returncode in (0, 1), done.stderr[-3000:]
        for name in names:
            top = name.split("/")[0]
            assert top in listing and top in done.stderr, (name, done.stderr[-3000:])
        if done.returncode:  # a config the run cannot use: one line naming it
            last = done.stderr.strip().splitlines()[-1]
            assert any(name in last for name in names) and "not" in last, done.stderr[-3000:]
