"""The config validated after the first frame when the very same sources validated before.

Validating imports pydantic and builds the models, more than the rest of the first frame's own work;
the command line therefore draws the first frame from the raw values (``LaunchView``) when the sources'
fingerprint is among those that validated (``ValidSources``), and validates right after that frame.
Sources never seen valid are validated before the app starts: a broken config stays one clear line.
Checked here: the view equals the validated config's for the same values; the fingerprint follows
the values; the file of valid fingerprints survives damage; the real command line's second launch
draws without pydantic; and sources that fail after all still end with the same message and code.
"""

from __future__ import annotations

import contextlib
import os
import pty
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from freeact_tui.project.config import Config, ConfigError, load_config, validate
from freeact_tui.project.sources import DeferredConfig, LaunchView, ValidSources, gather
from freeact_tui.tui.app import FreeactApp
from tests.cli.test_quick_launch import QUICK, _run
from tests.tui.test_first_paint import at_first_frame

ROOT = Path(__file__).resolve().parents[2]

VALUES: list[dict[str, Any]] = [
    {},
    {"theme": "freeact-light", "notify_after": 5, "notify_bell": False, "keymap": {"app.quit": "ctrl+x"}},
    {"execution": "remote", "remote_url": "https://gw.example:8888", "remote_insecure": True},
    {"working_dir": "/tmp/somewhere", "notify_desktop": False, "model": "test", "execution": "docker"},
    # What pydantic's lax mode turns into a bool or a float: the view must read them the same.
    {"notify_bell": "no", "notify_desktop": "Off", "remote_insecure": "f", "notify_after": "2.5"},
    {"notify_bell": "YES", "notify_desktop": 1, "remote_insecure": "on", "notify_after": 0},
    {"notify_bell": 0, "notify_desktop": "t", "remote_insecure": "1"},
]


@pytest.mark.parametrize("values", VALUES, ids=range(len(VALUES)))
def test_the_first_frame_s_view_is_the_validated_config_s(values: dict[str, Any]) -> None:
    notices = ["a notice"]
    config = Config.model_validate(values)
    config.notices.extend(notices)
    assert LaunchView.from_values(values, notices) == LaunchView.of(config)


def test_the_view_s_defaults_are_the_config_s() -> None:
    assert LaunchView() == LaunchView.of(Config())


def _home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "home"
    monkeypatch.setenv("FREEACT_TUI_HOME", str(home / "app"))
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.chdir(tmp_path)
    return home


def test_the_fingerprint_follows_the_values_wherever_they_come_from(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _home(tmp_path, monkeypatch)
    file = tmp_path / "c.toml"
    file.write_text('theme = "freeact-light"\n')
    first = gather(file, {"model": "test", "execution": None}).fingerprint()
    assert gather(file, {"model": "test"}).fingerprint() == first  # an option not given is no value
    assert gather(file, {"model": "other"}).fingerprint() != first
    file.write_text('theme = "freeact-dark"\n')
    assert gather(file, {"model": "test"}).fingerprint() != first
    file.write_text("notify_after = 5\n")
    int_valued = gather(file, {}).fingerprint()
    file.write_text('notify_after = "5"\n')  # another type, the same text
    assert gather(file, {}).fingerprint() != int_valued


def test_what_gather_reads_validates_as_load_config_does(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _home(tmp_path, monkeypatch)
    good = tmp_path / "good.toml"
    good.write_text('theme = "freeact-light"\nexecution_timeout = 9\n')
    deferred, at_once = validate(gather(good, {"model": "test"})), load_config(good, {"model": "test"})
    assert deferred.model_dump() == at_once.model_dump() and deferred.theme == "freeact-light"
    assert (deferred.notices, deferred.trust_state) == (at_once.notices, at_once.trust_state)
    bad = tmp_path / "bad.toml"
    bad.write_text("execution_timeout = 'soon'\n")
    sources = gather(bad, {})  # reading is not validating
    with pytest.raises(ConfigError) as deferred:
        validate(sources)
    with pytest.raises(ConfigError) as at_once:
        load_config(bad)
    assert str(deferred.value) == str(at_once.value) and "execution_timeout" in str(at_once.value)


def test_the_valid_fingerprints_keep_the_latest_and_survive_damage(tmp_path: Path) -> None:
    known = ValidSources(tmp_path / "cache" / "valid-configs")
    assert "a" not in known  # no file yet
    for n in range(ValidSources.KEEP + 5):
        known.add(f"f{n}")
    assert "f0" not in known and f"f{ValidSources.KEEP + 4}" in known and "f5" in known
    known.add("f5")  # again: now the latest, kept once
    assert known.path.read_text().split().count("f5") == 1 and known.path.read_text().split()[-1] == "f5"
    known.path.write_bytes(b"\xff\xfe not text")
    assert "f5" not in known
    known.add("g")
    assert "g" in known


async def test_the_app_draws_from_the_view_and_validates_after_its_first_frame(tmp_path: Path) -> None:
    loaded: list[float] = []
    real = Config(sessions_dir=tmp_path / "s", working_dir=tmp_path, theme="freeact-light", model="test")

    def load() -> Config:
        loaded.append(time.monotonic())
        return real

    view = LaunchView(theme="freeact-light", working_dir=tmp_path, notices=("from the view",))
    app = FreeactApp(DeferredConfig(view, load))
    assert loaded == [] and app.theme == "freeact-light"
    async with app.run_test(size=(100, 30)) as pilot:
        for _ in range(200):
            if loaded:
                break
            await pilot.pause(0.02)
        assert len(loaded) == 1 and app.config is real
        assert app.main_screen.work_dir == tmp_path
        assert "from the view" in [n.message for n in app._notifications]
        await app.action_quit()
    assert len(loaded) == 1 and app.config_failure is None


async def test_sources_that_fail_after_all_end_the_app_with_the_reason(tmp_path: Path) -> None:
    def load() -> Config:
        raise ConfigError("Invalid configuration in x.toml:\n  key `theme`: input should be a valid string")

    app = FreeactApp(DeferredConfig(LaunchView(working_dir=tmp_path), load))
    async with app.run_test(size=(100, 30)) as pilot:
        for _ in range(200):
            if app.config_failure is not None:
                break
            await pilot.pause(0.02)
    assert app.config_failure is not None and "key `theme`" in app.config_failure
    assert app.return_code == 2 and app.agent is None


@pytest.mark.timeout(180)
def test_a_second_launch_draws_its_first_frame_without_pydantic(tmp_path: Path) -> None:
    home = tmp_path / "home"
    first = at_first_frame(tmp_path / "first", home=home)["modules"]
    assert "freeact_tui.tui.screens.main" in first
    assert "pydantic" in first  # never seen valid: validated before the app started
    second = at_first_frame(tmp_path / "second", home=home)["modules"]
    assert "freeact_tui.tui.screens.main" in second
    assert [m for m in second if m == "pydantic" or m.startswith(("pydantic.", "pydantic_core"))] == []


def test_a_broken_config_is_still_refused_before_the_app_starts(tmp_path: Path) -> None:
    bad = tmp_path / "bad.toml"
    bad.write_text("execution_timeout = 'soon'\n")
    for _ in range(2):  # a failure is never remembered as valid
        ran = _run(QUICK, ["--config", str(bad), "--model", "test"], tmp_path)
        assert ran.returncode == 2 and "execution_timeout" in ran.stderr and "Traceback" not in ran.stderr
    assert not list((tmp_path / "home").rglob("valid-configs"))


@pytest.mark.timeout(120)
def test_sources_known_valid_that_fail_after_all_end_with_the_same_message(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # As if an older version of the app had found these sources valid.
    work = tmp_path / "work"
    work.mkdir()
    bad = tmp_path / "bad.toml"
    bad.write_text("execution_timeout = 'soon'\n")
    _home(tmp_path, monkeypatch)
    monkeypatch.chdir(work)
    ValidSources().add(gather(bad, {"model": "test"}).fingerprint())
    env = {**os.environ, "PYTHONPATH": str(ROOT), "TERM": "xterm-256color"}
    master, slave = pty.openpty()
    app = subprocess.Popen(
        [sys.executable, "-c", QUICK, "--config", str(bad), "--model", "test"],
        stdin=slave, stdout=slave, stderr=slave, cwd=work, env=env, start_new_session=True,
    )  # fmt: skip
    os.close(slave)
    shown = b""
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            try:
                chunk = os.read(master, 65536)
            except OSError:
                break
            if not chunk:
                break
            shown += chunk
        code = app.wait(30)
    finally:
        if app.poll() is None:
            with contextlib.suppress(OSError):
                os.killpg(app.pid, signal.SIGKILL)
            app.wait()
        os.close(master)
    text = shown.decode(errors="replace")
    assert code == 2, text[-2000:]
    assert "freeact-tui: Invalid configuration in" in text and "execution_timeout" in text
    assert "Traceback" not in text


@pytest.mark.parametrize(
    "module", ["freeact_tui.tui.app", "freeact_tui.tui.trust_prompt", "freeact_tui.project.sources"]
)
def test_what_the_first_frame_and_the_boot_import_before_validating_needs_no_pydantic(module: str) -> None:
    # The boot imports the trust prompt on the UI thread while the deferred validation imports
    # pydantic in a thread: pydantic imported there too would hold the UI for a tenth of a second.
    code = f"import sys; import {module}; print(sorted(m for m in sys.modules if m.startswith('pydantic')))"
    ran = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    assert ran.returncode == 0, ran.stderr
    assert ran.stdout.strip() == "[]"
