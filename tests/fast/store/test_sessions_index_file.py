"""The listing's one-file index (``.index.json`` in the sessions dir): a second listing reads no
``meta.json``, and what other processes do to the sessions (add, append, damage, remove, retitle,
break the index itself) shows in the very next listing."""

from __future__ import annotations

import json
import shutil
import uuid
from pathlib import Path

import pytest

from freeact_tui.store import index as index_module
from freeact_tui.store.envelope import encode_envelope, utc_now_ts
from freeact_tui.store.index import INDEX_FILE, SessionIndex, write_meta


def _add(root: Path, prompt: str) -> str:
    session_id = str(uuid.uuid4())
    directory = root / session_id
    directory.mkdir(parents=True)
    _append(directory, {"kind": "request", "parts": [{"part_kind": "user-prompt", "content": prompt}]})
    _append(directory, {"kind": "response", "parts": [{"part_kind": "text", "content": "done"}]})
    return session_id


def _append(directory: Path, message: dict[str, object]) -> None:
    with (directory / "main.jsonl").open("ab") as fh:
        fh.write(encode_envelope(message, utc_now_ts()))


def _listing(root: Path) -> dict[str, tuple[str, int, str | None]]:
    return {i.id: (i.title, i.message_count, i.damaged) for i in SessionIndex(root).infos(sizes=False)}


@pytest.fixture
def root(tmp_path: Path) -> Path:
    root = tmp_path / "sessions"
    for n in range(12):
        _add(root, f"task {n}")
    return root


def test_a_second_listing_reads_one_index_file_not_each_meta(
    root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    first = _listing(root)
    assert (root / INDEX_FILE).is_file()
    reads: list[Path] = []
    original = index_module.read_meta

    def counted(session_dir: Path) -> object:
        reads.append(session_dir)
        return original(session_dir)

    monkeypatch.setattr(index_module, "read_meta", counted)
    assert _listing(root) == first
    assert reads == []
    assert sorted(t for t, _, _ in first.values()) == sorted(f"task {n}" for n in range(12))


def test_what_other_processes_do_shows_in_the_next_listing(root: Path) -> None:
    before = _listing(root)
    appended, removed, damaged, retitled = sorted(before)[:4]
    _append(root / appended, {"kind": "request", "parts": [{"part_kind": "user-prompt", "content": "more"}]})
    shutil.rmtree(root / removed)
    with (root / damaged / "main.jsonl").open("ab") as fh:
        fh.write(b"{not json}\n")
    meta = index_module.read_meta(root / retitled)
    assert meta is not None
    meta.title = "renamed elsewhere"
    write_meta(root / retitled, meta)
    added = _add(root, "a new one")

    after = _listing(root)
    assert after[appended][1] == before[appended][1] + 1
    assert removed not in after
    assert after[damaged][2] is not None and "line 3" in after[damaged][2]
    assert after[retitled][0] == "renamed elsewhere"
    assert after[added][0] == "a new one"
    stored = json.loads((root / INDEX_FILE).read_text())["sessions"]
    assert set(stored) == set(after)


@pytest.mark.parametrize("content", [b"", b"{broken", b'{"version": 99, "sessions": {}}', b"[1, 2]"])
def test_a_broken_index_is_rebuilt(root: Path, content: bytes) -> None:
    expected = _listing(root)
    (root / INDEX_FILE).write_bytes(content)
    assert _listing(root) == expected
    assert json.loads((root / INDEX_FILE).read_text())["version"] == 1


def test_a_stale_entry_with_the_right_key_shape_is_not_trusted_blindly(root: Path) -> None:
    expected = _listing(root)
    data = json.loads((root / INDEX_FILE).read_text())
    for entry in data["sessions"].values():
        entry["key"][0] += 1  # as if main.jsonl had another size when indexed
        entry["meta"]["title"] = "stale"
    (root / INDEX_FILE).write_text(json.dumps(data))
    assert _listing(root) == expected


def test_the_index_is_not_a_session(root: Path) -> None:
    _listing(root)
    assert INDEX_FILE not in SessionIndex(root).ids()
