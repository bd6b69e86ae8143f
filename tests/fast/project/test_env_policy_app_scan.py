"""A trusted project's ``.env`` never changes the app's own process (issue #39 F3): every variable the
libraries the app runs on read (Textual, Rich, prompt-toolkit, Typer, Click, the HTTP and websocket
clients, the Jupyter client, platformdirs …) is refused by ``env_policy``, whole families by prefix. The
installed sources are scanned, so a library's new variable fails here until it is decided."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from freeact_tui.project.env_policy import refusal

# The libraries loaded into the app's process (the kernel's own are the kernel policy's business).
APP_LIBRARIES = (
    "textual", "rich", "prompt_toolkit", "typer", "click", "pygments", "markdown_it", "httpx", "httpcore",
    "anyio", "platformdirs", "mcp", "ipybox", "jupyter_client", "tornado", "websockets", "aiohttp",
    "pydantic", "psutil",
)  # fmt: skip
# A read of an environment variable, direct or through a library's helper (Textual's ``get_environ_*``).
_READ = re.compile(
    r"""(?:environ\.get|getenv|environ\[|environ\.setdefault|get_environ\w*)\(?\s*["']([A-Z][A-Z0-9_]*[A-Z0-9])["']"""
)
# Names a scan finds that are no variable the library reads in the app: test fixtures and CGI examples.
NOT_READ_IN_THE_APP = frozenset(
    {"FOO", "HTTP_", "CONTENT_LENGTH", "CONTENT_TYPE", "EMULATION", "HYPOTHESIS_PROFILE", "TESTAPP_STARTED"}
)


def _read_names() -> dict[str, set[str]]:
    found: dict[str, set[str]] = {}
    for module in APP_LIBRARIES:
        try:
            spec = importlib.util.find_spec(module)
        except ModuleNotFoundError:
            continue
        if spec is None or not spec.submodule_search_locations:
            continue
        for root in spec.submodule_search_locations:
            for source in Path(root).rglob("*.py"):
                for name in _READ.findall(source.read_text(encoding="utf-8", errors="replace")):
                    found.setdefault(name, set()).add(module)
    return found


READ = _read_names()


def test_the_scan_finds_what_textual_reads() -> None:
    assert {"TEXTUAL_PRESS", "TEXTUAL_DRIVER", "TEXTUAL_LOG", "NO_COLOR", "TERM"} <= set(READ)


@pytest.mark.parametrize("name", sorted(set(READ) - NOT_READ_IN_THE_APP))
def test_every_variable_the_apps_libraries_read_is_refused(name: str) -> None:
    assert refusal(name) is not None, f"{name} (read by {sorted(READ[name])}): refuse it in env_policy"


REPORTED = [
    "TEXTUAL_PRESS", "TEXTUAL_DRIVER", "TEXTUAL_LOG", "TEXTUAL_SCREENSHOT", "TEXTUAL_SCREENSHOT_LOCATION",
    "TEXTUAL", "TEXTUAL_DEVTOOLS_PORT", "DISPLAY", "WAYLAND_DISPLAY", "DBUS_SESSION_BUS_ADDRESS", "LC_ALL",
    "LANG", "TZ",
]  # fmt: skip


@pytest.mark.parametrize("name", REPORTED)
def test_the_reported_variables_are_refused(name: str) -> None:
    assert refusal(name) is not None


@given(
    st.from_regex(r"\A(TEXTUAL|PROMPT_TOOLKIT|TYPER|WEBSOCKETS|AIOHTTP|LC|DBUS|WAYLAND)_[A-Z0-9_]{1,20}\Z")
)
def test_a_family_is_refused_whole(name: str) -> None:
    assert refusal(name) is not None  # a library's next variable is refused before anyone names it


def test_a_trusted_projects_env_never_reaches_textual(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The reported case: ``TEXTUAL_PRESS`` in a trusted project's ``.env`` pressed ``y`` in an approval."""
    import os

    from freeact_tui.project.project_env import read_project_env

    for name in REPORTED:
        monkeypatch.delenv(name, raising=False)
    env = tmp_path / ".env"
    env.write_text(
        "".join(f"{name}=wait:7000,g,o,enter,wait:6000,y\n" for name in REPORTED) + "MY_SETTING=1\n"
    )
    monkeypatch.delenv("MY_SETTING", raising=False)
    notices: list[str] = []
    project = read_project_env(env, notices)
    assert not [name for name in REPORTED if name in os.environ or name in project]
    assert "MY_SETTING" not in os.environ  # a project's .env never enters the app's process
    assert project.get("MY_SETTING") == "1"  # the project's own settings still apply where read
    assert len([n for n in notices if "is ignored" in n]) == len(REPORTED)
