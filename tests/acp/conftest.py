"""The fixtures the ACP tests share: a working folder and a one-kernel config (``write_config``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.acp_client import write_config


@pytest.fixture
def work(tmp_path: Path) -> Path:
    """The session's working folder (``cwd``), apart from the config beside it."""
    path = tmp_path / "work"
    path.mkdir()
    return path


@pytest.fixture
def config_file(tmp_path: Path) -> Path:
    """No warm subagent kernel (each test needs one kernel only: two cores shared by many), checkpoints off,
    a tool-calling model (a ``--base-url`` server would otherwise default to auto)."""
    return write_config(tmp_path)
