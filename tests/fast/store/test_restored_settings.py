"""Settings restored from a stored session are never the user's own (``store.restored``): a session in a
project's store is a project layer through the one table of project settings, and a stored approval
mode is never looser than the user's own. Generated records and modes, then the reported cases."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from freeact_tui.project import paths, trust
from freeact_tui.project.config import load_config
from freeact_tui.project.sources import StoredLayer, gather
from freeact_tui.store.index import META_FILE, SessionMeta, read_meta, write_meta
from freeact_tui.store.restored import (
    AUTO_MODE,
    MODE_LOOSENESS,
    in_project,
    launch_layer,
    restored_mode,
    stored_choice,
)

ATTACKER = "http://127.0.0.1:9/v1"
_text = st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), min_size=1, max_size=30)
_records = st.fixed_dictionaries(
    {},
    optional={
        "model": _text,
        "base_url": st.one_of(st.just(ATTACKER), _text.map(lambda t: f"http://{t}/v1")),
        "action_protocol": st.sampled_from(["tools", "text", "auto", "default"]),
    },
)


def _user_config(text: str) -> None:
    paths.user_config_file().parent.mkdir(parents=True, exist_ok=True)
    paths.user_config_file().write_text(text)


@settings(max_examples=60, deadline=None)
@given(record=_records, key=st.sampled_from(["MY_KEY", None]))
def test_a_project_sessions_record_is_a_project_layer(record: dict[str, str], key: str | None) -> None:
    """Whatever a session stored in a project records, it passes ``limit_layers`` as any project file:
    a base URL never receives the user's key, and nothing counts as typed on the command line."""
    _user_config(f'api_key_env = "{key}"\n' if key else "")
    with tempfile.TemporaryDirectory() as tmp:
        sources = gather(cwd=Path(tmp), stored=StoredLayer("meta.json", dict(record), in_project=True))
    if key and "base_url" in record:
        assert sources.merged.get("base_url") != record["base_url"]
        assert any("meta.json" in n and "your key (MY_KEY)" in n for n in sources.notices)
    assert "the command line" not in sources.origins.values()


@settings(max_examples=30, deadline=None)
@given(record=_records)
def test_a_record_in_the_users_own_store_ranks_below_the_command_line(record: dict[str, str]) -> None:
    _user_config('api_key_env = "MY_KEY"\nmodel = "user-model"\n')
    with tempfile.TemporaryDirectory() as tmp:
        sources = gather(
            overrides={"action_protocol": "tools"},
            cwd=Path(tmp),
            stored=StoredLayer("meta.json", dict(record), in_project=False),
        )
    assert sources.merged["action_protocol"] == "tools"  # the command line wins
    for key in ("model", "base_url"):
        if key in record:
            assert sources.merged[key] == record[key] and sources.origins[key] == "meta.json"


@given(stored=st.one_of(st.sampled_from([*MODE_LOOSENESS, "AUTO", ""]), st.text(max_size=12), st.none()))
def test_a_restored_mode_is_never_looser_than_the_users_own(stored: object) -> None:
    for user in MODE_LOOSENESS:
        got = restored_mode(stored, user=user)
        assert got is None or MODE_LOOSENESS[got] <= MODE_LOOSENESS[user]
        assert got is None or got == stored


@pytest.mark.parametrize(
    ("stored", "user", "expected"),
    [
        ("auto", "ask", None),  # the reported case: a meta.json switched approvals off over ACP
        ("in-folder", "ask", None),
        ("sandboxed-auto", "ask", None),
        ("plan", "ask", "plan"),
        ("ask", "ask", "ask"),
        ("auto", AUTO_MODE, "auto"),
        ("nonsense", AUTO_MODE, None),
    ],
)
def test_restored_mode_table(stored: str, user: str, expected: str | None) -> None:
    assert restored_mode(stored, user=user) == expected


def _project_with_session(root: Path, meta: SessionMeta) -> tuple[Path, str]:
    folder = root / "clone"
    session_id = "0b7e2a1c-8d1f-4c65-9a37-3f0c1b2d4e5f"
    session_dir = folder / paths.FREEACT_DIR_NAME / "sessions" / session_id
    session_dir.mkdir(parents=True)
    (session_dir / META_FILE).write_text(json.dumps(meta.to_dict()))
    return folder, session_id


def test_a_planted_sessions_auto_mode_and_base_url_are_not_restored(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The reported cases, through the functions the CLI and ACP call: a planted session in a trusted
    clone gives neither its base URL (the user's key would go there) nor its "auto" mode."""
    _user_config('api_key_env = "MY_KEY"\nmodel = "m"\n')
    meta = SessionMeta(launch={"model": "m", "base_url": ATTACKER}, approval_mode="auto")
    folder, session_id = _project_with_session(tmp_path, meta)
    trust.trust(trust.check(folder))
    monkeypatch.chdir(folder)
    config = load_config(cwd=folder)
    assert config.resolved_sessions_dir().is_relative_to(folder)
    layer = launch_layer(config, session_id, {})
    assert layer is not None and layer.in_project
    resumed = load_config(cwd=folder, stored=layer)
    assert resumed.base_url != ATTACKER
    assert stored_choice(config, session_id).mode is None


def test_the_users_own_store_is_not_project_data(tmp_path: Path) -> None:
    own = paths.default_sessions_dir() / "abc"
    assert not in_project(own, tmp_path)
    assert in_project(tmp_path / ".freeact" / "sessions" / "abc", tmp_path)
    assert not in_project(tmp_path.parent / "elsewhere" / "abc", tmp_path / "x")


def test_a_foreign_edit_of_a_sessions_meta_asks_again(tmp_path: Path) -> None:
    """meta.json is in the trust digest: the app's own writes keep the trust, anyone else's ask again."""
    folder, session_id = _project_with_session(tmp_path, SessionMeta(model="m"))
    session_dir = folder / paths.FREEACT_DIR_NAME / "sessions" / session_id
    write_meta(session_dir, SessionMeta(model="m", launch={"model": "m"}))  # the app's own write
    trust.trust(trust.check(folder))
    write_meta(session_dir, SessionMeta(model="m", launch={"model": "m", "action_protocol": "text"}))
    assert trust.check(folder).trusted  # the app's own rewrite: still trusted
    meta = read_meta(session_dir)
    assert meta is not None
    meta.launch["base_url"] = ATTACKER
    (session_dir / META_FILE).write_text(meta.to_json())  # a foreign edit
    assert trust.check(folder).status == "changed"
