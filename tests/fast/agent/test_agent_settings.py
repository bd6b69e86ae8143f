"""``Agent(model, settings=None, **overrides)``: every ``Settings`` field can be passed, unknown keys are
clear errors, the old keywords keep working (#27). No kernel: constructing an agent starts nothing."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from freeact_tui.agent.agent import Agent
from freeact_tui.agent.settings import Settings
from freeact_tui.project.config import Config


def test_every_settings_field_can_be_passed(tmp_path: Path) -> None:
    agent = Agent(
        "test",
        working_dir=tmp_path,
        checkpoint_max_file_bytes=1234,
        checkpoint_max_binary_bytes=567,
        checkpoint_max_files=89,
        max_model_requests=7,
    )
    s = agent.runtime.settings
    assert (s.checkpoint_max_file_bytes, s.checkpoint_max_binary_bytes, s.checkpoint_max_files) == (
        1234,
        567,
        89,
    )
    assert s.max_model_requests == 7 and agent.working_dir == tmp_path.resolve()


def test_an_unknown_keyword_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(
        TypeError, match=r"unknown agent setting\(s\): chekpoints\. Known settings: .*checkpoints"
    ):
        Agent("test", working_dir=tmp_path, chekpoints=False)


def test_settings_and_overrides(tmp_path: Path) -> None:
    base = Settings(working_dir=tmp_path, execution_timeout=12.0, action_protocol="auto")
    agent = Agent("test", base, execution_timeout=3.0)
    assert agent.runtime.settings == dataclasses.replace(base, execution_timeout=3.0)
    assert agent.policy.name == "auto" and agent.execution_timeout == 3.0


def test_the_old_keywords_keep_working(tmp_path: Path) -> None:
    agent = Agent(
        "test",
        model_settings={},
        system_prompt="be brief",
        agent_id="main",
        session_id=None,
        sessions_dir=tmp_path / "s",
        working_dir=None,
        mcp_servers=None,
        kernel_env=None,
        execution="local",
        execution_timeout=5,
        approval_timeout=None,
        enable_subagents=False,
        skip_permissions=True,
        eager_kernel=False,
        checkpoints=False,
        action_protocol="text",
    )
    s = agent.runtime.settings
    assert s.model_settings is None and s.working_dir == Path.cwd().resolve() and s.mcp_servers == {}
    assert agent.skip_permissions and agent.permissions.skip_permissions and agent.policy.in_text
    assert agent.sessions_dir == tmp_path / "s" and not agent.enable_subagents


def test_every_config_field_of_settings_has_the_config_default() -> None:
    defaults = Settings()
    for f in dataclasses.fields(Settings):
        if f.name in Config.model_fields and f.name not in ("sessions_dir", "working_dir", "mcp_servers"):
            config_default = Config.model_fields[f.name].get_default(call_default_factory=True)
            assert getattr(defaults, f.name) == (
                config_default or None if f.name == "model_settings" else config_default
            )


def test_from_config_refuses_unknown_overrides(tmp_path: Path) -> None:
    config = Config(model="test", working_dir=str(tmp_path))
    with pytest.raises(TypeError, match="unknown agent settings: nope"):
        Agent.from_config(config, nope=1, permissions=None)
