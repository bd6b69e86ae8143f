"""The real CLI with a FIFO, a device or a huge file standing as the sessions index (issue #39, F4).

The attacker trusted a folder with ``.freeact/``, then put a FIFO at ``.freeact/sessions/.index.json``:
``sessions list`` and ``run --resume`` hung for good. The index is a cache the trust digest leaves out; in a
project's store it is now never read (each session's ``meta.json`` is read as the check read it), and in
the user's own store it is read by the one checked reader (a FIFO is no regular file: rebuilt). Each
command must finish within a bound, and list or resume the real session.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.fake_openai import FakeOpenAI, Reply

APP = Path(sys.executable).parent / "freeact-tui"


def _fifo(path: Path) -> None:
    os.mkfifo(path)


def _dev_zero(path: Path) -> None:
    path.symlink_to("/dev/zero")


STANDINS: dict[str, Callable[[Path], None]] = {"fifo": _fifo, "dev_zero": _dev_zero}


def _app(args: list[str], folder: Path, home: Path, timeout: int = 60) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(APP), *args], cwd=folder, input="", capture_output=True, text=True, timeout=timeout,
        env={**os.environ, "HOME": str(home)},
    )  # fmt: skip


def _plant(index: Path, plant: Callable[[Path], None]) -> None:
    if index.exists() or index.is_symlink():
        index.unlink()
    plant(index)


@pytest.mark.parametrize("standin", sorted(STANDINS))
def test_a_hostile_project_index_neither_hangs_nor_hides_a_session(
    standin: str, tmp_path: Path, fake_openai: FakeOpenAI
) -> None:
    folder = (tmp_path / "proj").resolve()
    (folder / ".freeact").mkdir(parents=True)
    fake_openai.script(Reply("first answer"))
    model = ["--base-url", fake_openai.url, "--model", "fake-model"]
    done = _app(["run", "--trust", *model, "kumquat"], folder, tmp_path, timeout=180)
    assert done.returncode == 0, done.stderr
    sessions = folder / ".freeact" / "sessions"
    assert [p for p in sessions.iterdir() if p.is_dir()], "the session is in the project's store"
    _plant(sessions / ".index.json", STANDINS[standin])

    listed = _app(["sessions", "list"], folder, tmp_path)  # hung for good before
    fake_openai.script(Reply("resumed answer"))
    resumed = _app(["run", "--resume", *model, "and now?"], folder, tmp_path, timeout=180)
    assert "Traceback" not in listed.stderr + resumed.stderr
    if standin == "dev_zero":
        # a link is no file the digest leaves out: the folder changed, so its store is not used (asked again)
        assert listed.returncode == 0 and "kumquat" not in listed.stdout, listed
        assert resumed.returncode == 0, resumed.stderr
        assert "changed since it was trusted" in resumed.stderr and ".freeact/sessions/" in resumed.stderr
        return
    assert listed.returncode == 0, listed.stderr
    assert "kumquat" in listed.stdout
    assert resumed.returncode == 0, resumed.stderr
    assert resumed.stdout.strip() == "resumed answer"
    assert "kumquat" in str(fake_openai.requests[-1].body), "the resumed history was sent"


def test_a_fifo_index_in_the_users_store_is_rebuilt(tmp_path: Path, fake_openai: FakeOpenAI) -> None:
    folder = (tmp_path / "plain").resolve()
    folder.mkdir()
    fake_openai.script(Reply("first answer"))
    done = _app(["run", "--base-url", fake_openai.url, "--model", "fake-model", "papaya"], folder, tmp_path, 180)
    assert done.returncode == 0, done.stderr
    index = next(Path(os.environ["FREEACT_TUI_HOME"]).rglob("sessions"))
    _plant(index / ".index.json", _fifo)
    listed = _app(["sessions", "list"], folder, tmp_path)
    assert listed.returncode == 0, listed.stderr
    assert "papaya" in listed.stdout
