"""Config loading: precedence, and clear one-paragraph errors for broken files."""

from __future__ import annotations

from pathlib import Path

import pytest

from freeact_tui.project import paths
from freeact_tui.project.config import Config, ConfigError, load_config, read_toml, save_user_setting

ROOT = Path(__file__).resolve().parents[3]


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def test_defaults_without_any_file(tmp_path: Path) -> None:
    config = load_config(cwd=tmp_path)
    assert config.model is None and config.execution == "local" and config.execution_timeout == 300
    assert config.resolved_sessions_dir() == paths.default_sessions_dir()


def test_example_config_is_valid() -> None:
    data = read_toml(ROOT / "config.example.toml")
    assert Config.model_validate(data).theme == "freeact-dark"


def test_precedence_cli_over_file_over_project_over_user(tmp_path: Path) -> None:
    write(paths.user_config_file(), 'model = "user:m"\ntheme = "nord"\nmax_subagents = 2\n')
    write(tmp_path / ".freeact-tui.toml", 'model = "project:m"\nmax_subagents = 3\n')
    explicit = write(tmp_path / "explicit.toml", 'model = "file:m"\n')
    config = load_config(explicit, {"model": None}, cwd=tmp_path, trust_project=True)
    assert (config.model, config.max_subagents, config.theme) == ("file:m", 3, "nord")
    config = load_config(explicit, {"model": "cli:m"}, cwd=tmp_path)
    assert config.model == "cli:m"


def test_syntax_error_names_file_and_line(tmp_path: Path) -> None:
    bad = write(tmp_path / "bad.toml", 'model = "a"\nexecution_timeout = = 3\n')
    with pytest.raises(ConfigError) as info:
        load_config(bad, cwd=tmp_path)
    message = str(info.value)
    assert str(bad) in message and "not valid TOML" in message and "line 2" in message


def test_unknown_key_is_named(tmp_path: Path) -> None:
    bad = write(tmp_path / "bad.toml", 'modle = "anthropic:x"\n')
    with pytest.raises(ConfigError) as info:
        load_config(bad, cwd=tmp_path)
    assert "`modle`" in str(info.value) and "unknown" in str(info.value) and str(bad) in str(info.value)


def test_wrong_type_says_what_is_expected(tmp_path: Path) -> None:
    bad = write(tmp_path / "bad.toml", 'execution_timeout = "soon"\nexecution = "mars"\n')
    with pytest.raises(ConfigError) as info:
        load_config(bad, cwd=tmp_path)
    message = str(info.value)
    assert "`execution_timeout`" in message and "number" in message and "'soon'" in message
    assert "`execution`" in message and "'local'" in message


def test_mcp_server_needs_exactly_one_transport(tmp_path: Path) -> None:
    bad = write(tmp_path / "bad.toml", '[mcp_servers.x]\nargs = ["a"]\n')
    with pytest.raises(ConfigError) as info:
        load_config(bad, cwd=tmp_path)
    assert "mcp_servers.x" in str(info.value) and "command" in str(info.value)


def test_env_references_are_resolved(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MY_TOKEN", "s3cret")
    f = write(
        tmp_path / "c.toml", '[mcp_servers.gh]\nurl = "http://x"\nheaders = { A = "Bearer ${MY_TOKEN}" }\n'
    )
    assert load_config(f, cwd=tmp_path).mcp_servers["gh"].headers == {"A": "Bearer s3cret"}


def test_missing_explicit_file_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="not found"):
        load_config(tmp_path / "nope.toml", cwd=tmp_path)


def test_save_user_setting_keeps_other_keys(tmp_path: Path) -> None:
    write(paths.user_config_file(), 'model = "anthropic:x"\n')
    save_user_setting("theme", "nord")
    config = load_config(cwd=tmp_path)
    assert (config.model, config.theme) == ("anthropic:x", "nord")
