"""Working in a freeact project: shared sessions, relative paths, ``.env`` (issue: freeact parity)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from freeact_tui.cli.main import load_env_file
from freeact_tui.project import paths, trust
from freeact_tui.project.config import Config, load_config
from freeact_tui.store.index import META_FILE
from freeact_tui.store.sessions import SessionStore

FIXTURES = Path(__file__).parents[1] / "fixtures" / "freeact_sessions"
FREEACT_ID = "3f1c2b9e-5d47-4a8e-9c21-7b6f0e4d8a10"


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A freeact project whose ``.freeact/sessions`` holds sessions written by freeact 0.11."""
    root = tmp_path / "proj"
    shutil.copytree(FIXTURES, root / ".freeact" / "sessions")
    (root / "src" / "pkg").mkdir(parents=True)
    return root


def test_a_freeact_project_is_found_from_a_subdirectory(project: Path) -> None:
    assert paths.find_freeact_project(project / "src" / "pkg") == project
    assert paths.find_freeact_project(project.parent) is None


def test_home_freeact_dir_does_not_capture_projects_under_home(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "home"
    (home / ".freeact").mkdir(parents=True)
    (home / "work").mkdir()
    monkeypatch.setenv("HOME", str(home))
    assert paths.find_freeact_project(home / "work") is None
    assert paths.find_freeact_project(home) == home


def test_sessions_go_to_the_projects_freeact_sessions(project: Path) -> None:
    config = Config(working_dir=project / "src")
    assert config.resolved_sessions_dir() == project / ".freeact" / "sessions"
    store = SessionStore(config.resolved_sessions_dir())
    assert FREEACT_ID in {info.id for info in store.list()}


def test_an_explicit_sessions_dir_wins_over_the_project(project: Path, tmp_path: Path) -> None:
    config = Config(working_dir=project, sessions_dir=tmp_path / "elsewhere")
    assert config.resolved_sessions_dir() == tmp_path / "elsewhere"


def test_relative_sessions_dir_is_resolved_against_the_config_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cfg_dir = tmp_path / "cfg"
    cfg_dir.mkdir()
    (cfg_dir / "c.toml").write_text('sessions_dir = "store"\nimages_dir = "~/pics"\n')
    monkeypatch.chdir(tmp_path)
    config = load_config(Path("cfg/c.toml"))
    assert config.resolved_sessions_dir() == cfg_dir / "store"
    assert config.images_dir == Path("~/pics").expanduser()


def test_relative_sessions_dir_on_the_command_line_is_resolved_against_cwd(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    config = load_config(None, {"sessions_dir": Path("here")})
    assert config.resolved_sessions_dir() == tmp_path / "here"


def test_relative_store_root_records_the_project_dir_and_resume_finds_it(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(project)
    store = SessionStore(Path(".freeact/sessions"))
    latest = store.latest(project)
    assert latest is not None
    meta = json.loads((project / ".freeact" / "sessions" / latest.id / META_FILE).read_text())
    assert meta["cwd"] == str(project)


def test_an_index_entry_cached_with_a_relative_cwd_is_corrected(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(project)
    sessions = project / ".freeact" / "sessions"
    SessionStore(sessions).list()  # writes meta.json for each session
    meta_file = sessions / FREEACT_ID / META_FILE
    broken = json.loads(meta_file.read_text())
    broken["cwd"] = "."  # what an earlier version cached for sessions_dir = ".freeact/sessions"
    meta_file.write_text(json.dumps(broken))

    found = {info.id: info for info in SessionStore(sessions).list()}
    assert found[FREEACT_ID].cwd == str(project)
    assert json.loads(meta_file.read_text())["cwd"] == str(project)
    assert SessionStore(sessions).latest(project) is not None


def test_env_file_is_loaded_from_the_working_dir_up_without_overriding(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / ".env").write_text("FREEACT_TUI_T_NEW=from-file\nFREEACT_TUI_T_SET=from-file\n")
    (tmp_path / "a" / "b").mkdir(parents=True)
    monkeypatch.chdir(tmp_path / "a" / "b")
    monkeypatch.delenv("FREEACT_TUI_T_NEW", raising=False)
    monkeypatch.setenv("FREEACT_TUI_T_SET", "from-shell")
    assert load_env_file() is None  # a project's .env waits for the folder to be trusted
    assert "FREEACT_TUI_T_NEW" not in os.environ
    config = load_config(trust_project=True)
    assert config.project_env["FREEACT_TUI_T_NEW"] == "from-file"  # read, up from the working dir
    assert "FREEACT_TUI_T_NEW" not in os.environ  # never written into the app's own process
    assert os.environ["FREEACT_TUI_T_SET"] == "from-shell"


def test_cli_lists_and_refuses_unknown_ids_in_a_freeact_project(project: Path) -> None:
    env = {**os.environ, "NO_COLOR": "1", "COLUMNS": "200"}
    cli = [sys.executable, "-c", "from freeact_tui.cli import main; main()"]
    listed = subprocess.run(
        [*cli, "sessions", "list"], cwd=project / "src", env=env, capture_output=True, text=True, timeout=60
    )
    assert listed.returncode == 0, listed.stderr
    # Not trusted yet: the sessions in the folder are not the store (a clone could plant one).
    assert FREEACT_ID[:8] not in listed.stdout
    for folder in (project / "src", project):
        trust.trust(trust.check(folder))
    listed = subprocess.run(
        [*cli, "sessions", "list"], cwd=project / "src", env=env, capture_output=True, text=True, timeout=60
    )
    assert listed.returncode == 0, listed.stderr
    assert FREEACT_ID[:8] in listed.stdout

    unknown = "00000000-0000-4000-8000-000000000000"
    refused = subprocess.run(
        [*cli, "--session-id", unknown, "--model", "test"],
        cwd=project,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert refused.returncode != 0
    assert f"no session {unknown}" in refused.stderr
    assert str(project / ".freeact" / "sessions") in refused.stderr


FREEACT_CONFIG = """\
[agent]
model = "openai:gpt-4o-mini"
execution_timeout = 0
approval_timeout = 0
max_subagents = 2
images_dir = "pics"
tool_result_inline_max_bytes = 10

[agent.model_settings]
temperature = 0.2

[agent.provider_settings]
base_url = "http://127.0.0.1:9/v1"
api_key = "${MY_PROVIDER_KEY}"

[agent.tools]
search = true

[agent.kernel_env]
GREETING = "hi"

[agent.mcp_servers.calc]
command = "python"
args = ["-m", "calc"]
exclude_tools = ["divide"]

[agent.ptc_servers.github]
command = "docker"
args = ["run", "-i", "--rm"]
env = { GITHUB_TOKEN = "${GITHUB_TOKEN}" }

[terminal]
collapse_tool_outputs = false
"""


def test_a_freeact_projects_config_is_read_and_own_settings_win(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (project / ".freeact" / "config.toml").write_text(FREEACT_CONFIG)
    monkeypatch.setenv("GITHUB_TOKEN", "t0k")
    paths.user_config_file().parent.mkdir(parents=True, exist_ok=True)
    paths.user_config_file().write_text('project_kernel_env = ["GREETING"]\n')  # the user lets it through
    config = load_config(
        cwd=project / "src", trust_project=True
    )  # found from a subdirectory, like the sessions
    assert config.model == "openai:gpt-4o-mini"
    assert config.model_settings == {"temperature": 0.2}
    # A project may not name the key sent to its server: the base_url stays (freeact keeps its model
    # server in the project), keyless.
    assert (config.base_url, config.api_key_env) == ("http://127.0.0.1:9/v1", None)
    assert any("provider_settings] api_key" in n and "config.toml" in n for n in config.notices)
    assert config.execution_timeout >= 1e9 and config.approval_timeout is None  # freeact's 0: no limit
    # where images go: the project's choice inside its own folder (outside ones: test_project_images_dir)
    assert (config.max_subagents, config.images_dir) == (2, project.resolve() / "pics")
    assert not any("images_dir" in n for n in config.notices)
    assert config.tool_result_inline_max_bytes == 256  # freeact allows smaller; ours has a floor
    assert config.kernel_env == {"GREETING": "hi"}
    calc, github = config.mcp_servers["calc"], config.mcp_servers["github"]
    assert (calc.mode, calc.excluded_tools) == ("json", ["divide"])
    assert (github.mode, github.env) == ("ptc", {})  # ${GITHUB_TOKEN} from a project file: refused
    assert any("mcp_servers.github.env.GITHUB_TOKEN" in n for n in config.notices)
    assert any("search/fetch" in n for n in config.notices)  # said, not silently dropped

    own = project / "own.toml"
    own.write_text('model = "anthropic:claude-sonnet-4-5"\nmax_subagents = 4\n')
    config = load_config(own, {"execution": "local"}, cwd=project, trust_project=True)
    assert (config.model, config.max_subagents) == ("anthropic:claude-sonnet-4-5", 4)
    assert config.kernel_env == {"GREETING": "hi"}  # what freeact-tui does not set still comes from freeact


def test_a_broken_freeact_config_is_a_clear_error(project: Path) -> None:
    from freeact_tui.project.config import ConfigError

    path = project / ".freeact" / "config.toml"
    path.write_text("[agent\nmodel = 1\n")
    with pytest.raises(ConfigError, match=r"freeact config .*config\.toml is not valid TOML"):
        load_config(cwd=project, trust_project=True)
    path.write_text("[agent]\nmax_subagents = 0\n")
    with pytest.raises(ConfigError) as info:
        load_config(cwd=project, trust_project=True)
    assert str(path) in str(info.value) and "max_subagents" in str(info.value)


def test_headless_run_prints_freeact_notices(project: Path) -> None:
    (project / ".freeact" / "config.toml").write_text('[agent]\nenable_persistence = false\nmodel = "test"\n')
    env = {**os.environ, "NO_COLOR": "1"}
    cli = [sys.executable, "-c", "from freeact_tui.cli import main; main()"]
    done = subprocess.run(
        [*cli, "run", "--trust", "--output-format", "json", "hello"],
        cwd=project,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert "enable_persistence = false is ignored" in done.stderr
    assert "Traceback" not in done.stderr


def test_a_freeact_projects_permissions_apply_in_the_app(project: Path) -> None:
    from freeact_tui.agent.agent import Agent
    from freeact_tui.toolcalls import CodeAction, FileWrite, ShellAction

    (project / ".freeact" / "permissions.toml").write_text(
        'ask = [{type = "FileRead", tool_name = "filesystem_*", path = "**/.env"}]\n'
        "allow = [\n"
        '  {type = "ShellAction", tool_name = "bash", command = "make test"},\n'
        '  {type = "ShellAction", tool_name = "bash", command = "make test *"},\n'
        '  {type = "ShellAction", tool_name = "bash", command = "make *"},\n'
        '  {type = "FileWrite", tool_name = "filesystem_*", path = "docs/**"},\n'
        '  {type = "Teleport", tool_name = "x"},\n'
        "]\n"
    )
    agent = Agent.from_config(Config(working_dir=project), model="test", eager_kernel=False)
    rules = agent.permissions
    assert rules.check(ShellAction("make test")) == "ask"  # runs the Makefile the agent may write: never a project's
    assert rules.check(ShellAction("make test CC=evil")) == "ask"  # ``make test *`` may run any code
    assert rules.check(ShellAction("make deploy")) == "ask"  # ``make *`` runs any code: never from a project
    assert rules.check(FileWrite("docs/guide.md", "x")) == "allow"
    assert rules.check(ShellAction("rm -rf build")) == "ask"
    assert rules.check(CodeAction("print(1)")) == "ask"  # freeact's file allows no code: asked
    assert (project / ".freeact" / "permissions.toml").read_text().count(
        "make test *"
    ) == 1  # never rewritten


def test_a_broken_freeact_permissions_file_stops_the_agent_with_its_name(project: Path) -> None:
    from freeact_tui.agent.agent import Agent
    from freeact_tui.project.freeact_dir import FreeactConfigError

    path = project / ".freeact" / "permissions.toml"
    path.write_text("allow = [\n")
    with pytest.raises(FreeactConfigError, match="permissions.toml"):
        Agent.from_config(Config(working_dir=project), model="test", eager_kernel=False)
