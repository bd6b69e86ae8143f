"""Shared test setup: user directories are temporary for the whole session, and each test gets its own app home."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
import pytest_asyncio

from tests.fake_openai import FakeOpenAI
from tests.user_dirs import IsolatedDirs

if TYPE_CHECKING:
    from freeact_tui.execution.kernel.executor import KernelExecutor

_DIRS = pytest.StashKey[IsolatedDirs]()


def pytest_configure(config: pytest.Config) -> None:
    # Before test modules are imported and module-scoped kernels start (see tests/user_dirs.py).
    config.stash[_DIRS] = IsolatedDirs()


def pytest_unconfigure(config: pytest.Config) -> None:
    dirs = config.stash.get(_DIRS, None)
    if dirs is not None:
        dirs.restore()


@pytest.fixture(scope="session")
def user_dirs(pytestconfig: pytest.Config) -> IsolatedDirs:
    """The session's temporary user directories."""
    return pytestconfig.stash[_DIRS]


@pytest.fixture(autouse=True)
def isolated_home(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> Iterator[Path]:
    home = tmp_path_factory.mktemp("home")
    monkeypatch.setenv("FREEACT_TUI_HOME", str(home))
    for var in ("ANTHROPIC_API_KEY", "OPENAI_API_KEY", "GEMINI_API_KEY", "GOOGLE_API_KEY"):
        monkeypatch.delenv(var, raising=False)
    yield home


@pytest.fixture(autouse=True)
def approvals_armed_at_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """Approval dialogs take keys at once; tests of the arming delay set it back themselves."""
    from freeact_tui.tui.screens.approval import ApprovalScreen

    monkeypatch.setattr(ApprovalScreen, "ARMING_SECONDS", 0.0)


@pytest.fixture
def home_is_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """HOME is the test's temporary dir, so the welcome line shows ``~/work``: a temporary path differs
    in length from machine to machine and would wrap (and move a snapshot's scrollbar) differently."""
    monkeypatch.setenv("HOME", str(tmp_path))


@pytest.fixture
def fake_openai() -> Iterator[FakeOpenAI]:
    """A fake OpenAI-compatible server on 127.0.0.1 (see ``tests/fake_openai.py``); script it per test."""
    with FakeOpenAI() as server:
        yield server


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def executor(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[KernelExecutor]:
    """One real kernel per test module (modules that need another kind define their own ``executor``)."""
    from freeact_tui.execution.kernel.executor import KernelExecutor

    work = tmp_path_factory.mktemp("work")
    ex = KernelExecutor(working_dir=work, images_dir=work / "images")
    await ex.start()
    yield ex
    await ex.stop()
