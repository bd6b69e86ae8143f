"""A project's session store changed after the trust check is not used, whatever the change keeps.

The class: a file the app uses known only by a key that a swap can keep (size and modification time).
Hypothesis picks which session file of a trusted project's store (``meta.json``, ``main.jsonl``, a subagent's
history) is swapped, and how (rewritten in place or renamed over, same size, the modification time set
back), after the trust check: the store's one reader (``store.checked_read``) refuses it at use (the
resumed settings, the history, the listing show nothing of it), and the next check says "changed".
"""

from __future__ import annotations

import itertools
import os
import tempfile
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic_ai.messages import ModelMessagesTypeAdapter, ModelRequest, UserPromptPart

from freeact_tui.project import trust, trusted
from freeact_tui.store.envelope import encode_envelope
from freeact_tui.store.history import read_history
from freeact_tui.store.index import read_meta, refresh_meta
from freeact_tui.store.sessions import SessionStore

_count = itertools.count()


def _line(prompt: str) -> bytes:
    message = ModelMessagesTypeAdapter.dump_python([ModelRequest(parts=[UserPromptPart(prompt)])], mode="json")[0]
    return encode_envelope(message, "2026-01-01T00:00:00Z") + b"\n"


def _meta(session: Path) -> str:
    """The meta the app would write for ``session``, with a launch record (as a clone brings it)."""
    meta = refresh_meta(session, write=False)
    meta.launch = {"model": "openai:aaaa"}
    return meta.to_json()


@contextmanager
def _trusted_store() -> Iterator[tuple[Path, Path]]:
    """A trusted freeact project with one session a clone brought; yields (folder, session dir)."""
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp).resolve() / f"proj{next(_count)}"
        session = folder / ".freeact" / "sessions" / str(uuid.uuid4())
        session.mkdir(parents=True)
        (session / "main.jsonl").write_bytes(_line("hello AAAA"))
        (session / "sub-1a2b3c4d.jsonl").write_bytes(_line("task AAAA"))
        (session / "meta.json").write_text(_meta(session))
        trust.trust(trust.check(folder))
        try:
            yield folder, session
        finally:
            trusted.forget(folder)


def _swap(path: Path, data: bytes, how: str) -> None:
    """Put ``data`` (as long as what is there) in ``path``, the modification time set back as it was."""
    before = path.stat()
    assert len(data) == before.st_size
    if how == "in place":
        path.write_bytes(data)
        target = path
    else:
        target = path.with_name(path.name + ".new")
        target.write_bytes(data)
    os.utime(target, ns=(before.st_atime_ns, before.st_mtime_ns))
    if target != path:
        os.replace(target, path)
    assert (path.stat().st_size, path.stat().st_mtime_ns) == (before.st_size, before.st_mtime_ns)


def _planted(path: Path) -> bytes:
    """What is swapped in: the same bytes with ``AAAA`` made ``BBBB`` (the prompt, the title, the model)."""
    return path.read_bytes().replace(b"AAAA", b"BBBB").replace(b"aaaa", b"bbbb")


_NAMES = ["main.jsonl", "meta.json", "sub-1a2b3c4d.jsonl"]


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(name=st.sampled_from(_NAMES), how=st.sampled_from(["in place", "renamed over"]))
def test_a_same_size_same_mtime_swap_is_refused_at_use_and_asked_about(name: str, how: str) -> None:
    with _trusted_store() as (folder, session):
        store = SessionStore(session.parent)
        assert [i.title for i in store.list()] == ["hello AAAA"]  # listed (and cached) before the swap
        _swap(session / name, _planted(session / name), how)
        meta = read_meta(session)
        assert meta is None or meta.launch == {"model": "openai:aaaa"}
        if name == "meta.json":
            assert meta is None
        history = read_history(session / "main.jsonl")
        texts = [str(p.content) for m in history.messages for p in m.parts]
        sub = read_history(session / "sub-1a2b3c4d.jsonl")
        texts += [str(p.content) for m in sub.messages for p in m.parts]
        assert not any("BBBB" in t for t in texts)
        if name != "meta.json":
            swapped = history if name == "main.jsonl" else sub
            assert swapped.damage is not None and "not used" in str(swapped.damage)
        listed = SessionStore(session.parent).list()
        assert not any("BBBB" in (i.title or "") or "bbbb" in str(i.model) for i in listed)
        assert trust.check(folder).status == "changed"


def test_the_trusted_store_is_used_as_it_was() -> None:
    with _trusted_store() as (_folder, session):
        assert read_meta(session) is not None
        assert read_meta(session).launch == {"model": "openai:aaaa"}  # type: ignore[union-attr]
        history = read_history(session / "main.jsonl")
        assert history.damage is None and len(history.messages) == 1
        assert [i.title for i in SessionStore(session.parent).list()] == ["hello AAAA"]
