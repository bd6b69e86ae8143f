"""Every file the app reads from a project's store or its own data dir, swapped for something that is no
plain file, is answered at once with nothing read (issue #39, F4).

The class: a store file read with a plain read. A FIFO at ``.freeact/sessions/.index.json`` hung every
listing (``sessions list``, ``run --resume``, the side panel, ACP ``session/list``). The mechanism: the one
reader (``project.files``, wrapped by ``store.checked_read``). The corpus swaps each file (the listing's
cache, a session's ``meta.json`` and history, a lock, the checkpoint action log, a generated package's
marker and modules, the trusted-folders file, the user config) for each hostile stand-in (a FIFO with no
writer, a link to ``/dev/zero``, a sparse file past every bound) and runs the reader under an alarm.

And the listing's cache is a cache: in a project's store (which the trust digest leaves it out of) it is
never used, so a planted one can neither hang nor retitle a session.
"""

from __future__ import annotations

import json
import os
import uuid
from collections.abc import Callable
from pathlib import Path

import pytest

from freeact_tui.checkpoints.action_log import ActionLog
from freeact_tui.checkpoints.limits import is_binary
from freeact_tui.mcp import ptc_marker
from freeact_tui.project import config as config_module
from freeact_tui.project import paths, trust
from freeact_tui.store import index as index_module
from freeact_tui.store import lock
from freeact_tui.store.envelope import encode_envelope, utc_now_ts
from freeact_tui.store.index import INDEX_FILE, META_FILE, SessionIndex
from tests.hostile_files import STANDINS, within


def _session(root: Path, prompt: str) -> Path:
    directory = root / str(uuid.uuid4())
    directory.mkdir(parents=True)
    with (directory / "main.jsonl").open("ab") as fh:
        fh.write(encode_envelope({"kind": "request", "parts": [{"part_kind": "user-prompt", "content": prompt}]}, utc_now_ts()))
        fh.write(encode_envelope({"kind": "response", "parts": [{"part_kind": "text", "content": "ok"}]}, utc_now_ts()))
    return directory


def _replace(path: Path, plant: Callable[[Path], None]) -> None:
    if path.exists() or path.is_symlink():
        path.unlink()
    plant(path)


def _titles(root: Path) -> list[str]:
    return sorted(info.title for info in SessionIndex(root).infos(sizes=False))


# Each case: (name, set up and plant, read) -> what the reader returned, checked by the case itself.
def _index_in(root: Path, plant: Callable[[Path], None]) -> None:
    _session(root, "kept task")
    _titles(root)
    _replace(root / INDEX_FILE, plant)
    assert _titles(root) == ["kept task"]


def _user_store_index(tmp: Path, plant: Callable[[Path], None]) -> None:
    _index_in(tmp / "data" / "sessions", plant)


def _project_store_index(tmp: Path, plant: Callable[[Path], None]) -> None:
    _index_in(tmp / "proj" / paths.FREEACT_DIR_NAME / "sessions", plant)


def _meta(tmp: Path, plant: Callable[[Path], None]) -> None:
    root = tmp / "sessions"
    directory = _session(root, "kept task")
    _session(root, "other task")
    _titles(root)
    _replace(directory / META_FILE, plant)
    (root / INDEX_FILE).unlink()
    assert "other task" in _titles(root)


def _history(tmp: Path, plant: Callable[[Path], None]) -> None:
    root = tmp / "sessions"
    directory = _session(root, "gone task")
    _session(root, "other task")
    _replace(directory / "main.jsonl", plant)
    assert "other task" in _titles(root)


def _lock(tmp: Path, plant: Callable[[Path], None]) -> None:
    plant(tmp / "lock")
    assert lock._holder(tmp / "lock") is None


def _action_log(tmp: Path, plant: Callable[[Path], None]) -> None:
    plant(tmp / "checkpoints.log")
    assert ActionLog(tmp / "checkpoints.log").entries == []


def _sniffed(tmp: Path, plant: Callable[[Path], None]) -> None:
    plant(tmp / "blob")
    # a FIFO or a device is no file a checkpoint stores; a sparse file's first bytes are NULs
    assert is_binary(tmp / "blob") is (plant is STANDINS["sparse_5gb"])


def _marker(tmp: Path, plant: Callable[[Path], None]) -> None:
    package = tmp / "pkg"
    package.mkdir()
    plant(package / ptc_marker.DIGEST_FILE)
    assert ptc_marker.read_marker(package) is None


def _module(tmp: Path, plant: Callable[[Path], None]) -> None:
    package = tmp / "pkg"
    package.mkdir()
    (package / ptc_marker.DIGEST_FILE).write_text("digest\nhash\n")
    plant(package / "__init__.py")
    assert ptc_marker.ours_unedited(package) is False
    assert ptc_marker.baked_params(package) is None


def _trust_file(tmp: Path, plant: Callable[[Path], None]) -> None:
    trust.trust_file().parent.mkdir(parents=True, exist_ok=True)
    plant(trust.trust_file())
    assert trust._read_raw() == {}


def _user_config(tmp: Path, plant: Callable[[Path], None]) -> None:
    path = paths.user_config_file()
    path.parent.mkdir(parents=True, exist_ok=True)
    plant(path)
    before = os.lstat(path)
    config_module.save_user_setting("theme", "x")  # never overwrites a file the user must fix by hand
    after = os.lstat(path)
    assert (after.st_ino, after.st_mode, after.st_size) == (before.st_ino, before.st_mode, before.st_size)


CASES: dict[str, Callable[[Path, Callable[[Path], None]], None]] = {
    "user store .index.json": _user_store_index,
    "project store .index.json": _project_store_index,
    "meta.json": _meta,
    "main.jsonl": _history,
    "session lock": _lock,
    "checkpoint action log": _action_log,
    "checkpoint binary sniff": _sniffed,
    "generated package marker": _marker,
    "generated package module": _module,
    "trusted-folders file": _trust_file,
    "user config": _user_config,
}


@pytest.mark.parametrize("standin", sorted(STANDINS))
@pytest.mark.parametrize("case", sorted(CASES))
def test_each_store_reader_answers_at_once(case: str, standin: str, tmp_path: Path) -> None:
    with within(10):
        CASES[case](tmp_path, STANDINS[standin])


def test_a_planted_index_never_retitles_a_project_session(tmp_path: Path) -> None:
    """The digest leaves the cache out, so the cache is never used in a project's store: a planted one whose
    keys match the real files (a clone can read them) changes nothing a listing shows."""
    root = tmp_path / "proj" / paths.FREEACT_DIR_NAME / "sessions"
    directory = _session(root, "the real task")
    assert _titles(root) == ["the real task"]
    meta = index_module.refresh_meta(directory)
    meta.title = "PLANTED TITLE"
    key = index_module._files_key(str(directory))
    planted = {"version": index_module._INDEX_VERSION, "sessions": {directory.name: {"key": key, "meta": meta.to_dict()}}}
    (root / INDEX_FILE).write_text(json.dumps(planted))
    assert _titles(root) == ["the real task"]


def test_the_user_store_still_lists_from_its_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Outside a project the cache keeps its purpose: a second listing reads no ``meta.json``."""
    root = tmp_path / "data" / "sessions"
    _session(root, "a task")
    _titles(root)
    reads: list[Path] = []
    monkeypatch.setattr(index_module, "read_meta", lambda d: reads.append(d))
    assert _titles(root) == ["a task"]
    assert reads == []
