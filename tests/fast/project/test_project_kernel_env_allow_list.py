"""Every route by which a trusted project's variables reach a process is an allow-list (#39).

The class: a variable that configures a program (``POSIXLY_CORRECT``, ``LUA_INIT``, ``LESSKEY``, ``MAKEFILES``,
``RSYNC_RSH``, and every one no table lists yet) handed by a project to the kernel, where every program the
kernel runs (``!make``, ``!rsync``, ``!lua``) reads it. The routes of a project's values:

- its ``.env`` never enters the app's process (``project_env``); its provider keys reach the model client
  only when ``env_policy.allowance`` names them (an allow-list);
- ``${VAR}`` in the user's own config: the user's file names where each value goes (the user's allow-list);
- a project's MCP servers may not read ``${VAR}`` at all (``policy.project_layer``); their own ``env`` goes to
  the program the project names, which the trust dialog lists and which runs the project's code anyway;
- a project's ``kernel_env`` (and the ``.env`` values its ``${NAME}`` reads): was a deny-list
  (``env_policy.refusal``); now the names the user's own ``project_kernel_env`` lists, and only those
  (``policy.limit_layers``), the deny-list still refusing what it names.

The property: for generated names (any spelling, the reported ones among them) and a generated allow-list,
the kernel's whole environment holds a project's name only when the user's allow-list names it.
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from freeact_tui.agent.settings import Settings
from freeact_tui.execution.kernel.gateway_process import kernel_environment
from freeact_tui.project import paths
from freeact_tui.project.config import load_config
from freeact_tui.project.env_policy import refusal

REPORTED = ["POSIXLY_CORRECT", "LUA_INIT", "LESSKEY", "MAKEFILES", "RSYNC_RSH", "DATABASE_URL", "GREETING"]
NAMES = st.one_of(st.sampled_from(REPORTED), st.from_regex(r"\A[A-Z][A-Z0-9_]{0,10}\Z"))


def _kernel_environment(folder: Path, allowed: list[str]) -> tuple[dict[str, str], list[str]]:
    """The whole environment the kernels of ``folder`` (trusted) start with, and the config's notices."""
    user = paths.user_config_file()
    user.parent.mkdir(parents=True, exist_ok=True)
    user.write_text(f"project_kernel_env = {json.dumps(allowed)}\n" if allowed else "")  # none: the default
    config = load_config(cwd=folder, trust_project=True)
    return kernel_environment(Settings.from_config(config).kernel_env, [], "127.0.0.1", 1), config.notices


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    literal=st.lists(NAMES, max_size=4, unique=True),
    from_env=st.lists(NAMES, max_size=3, unique=True),
    allowed=st.lists(NAMES, max_size=4, unique=True),
)
def test_a_project_name_reaches_the_kernel_only_when_the_user_names_it(
    literal: list[str], from_env: list[str], allowed: list[str]
) -> None:
    from_env = [n for n in from_env if n not in literal]
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp).resolve()
        (folder / ".env").write_text("".join(f"P_{k}=v{k}\n" for k in range(len(from_env))))
        kernel_env = {name: "x" for name in literal} | {n: f"${{P_{k}}}" for k, n in enumerate(from_env)}
        (folder / ".freeact-tui.toml").write_text(
            "[kernel_env]\n" + "".join(f"{name} = {json.dumps(value)}\n" for name, value in kernel_env.items())
        )
        baseline, _ = _kernel_environment(folder, [])  # what the kernel holds with no project name let through
        environ, notices = _kernel_environment(folder, allowed)
    project = set(kernel_env)
    reached = {n for n in project if environ.get(n) != baseline.get(n)}
    assert reached == {n for n in project if n in allowed and refusal(n) is None}
    for name in project - set(allowed):
        assert any(f"kernel_env.{name} is not applied" in n for n in notices), (name, notices)


def test_the_reported_names_are_not_applied_without_the_users_word(tmp_path: Path) -> None:
    (tmp_path / ".freeact-tui.toml").write_text(
        "[kernel_env]\n" + "".join(f'{name} = "1"\n' for name in REPORTED)
    )
    environ, notices = _kernel_environment(tmp_path, [])
    assert not set(REPORTED) & set(environ)
    assert all(any(f"kernel_env.{name} is not applied" in n for n in notices) for name in REPORTED)
    environ, notices = _kernel_environment(tmp_path, ["GREETING", "POSIXLY_CORRECT", "MAKEFILES"])
    # the user's word lets a name through; a name refused by the table or its shape stays refused
    assert {n for n in REPORTED if n in environ} == {"GREETING", "POSIXLY_CORRECT"}


def test_a_project_cannot_name_its_own_allow_list(tmp_path: Path) -> None:
    (tmp_path / ".freeact-tui.toml").write_text('project_kernel_env = ["LUA_INIT"]\n[kernel_env]\nLUA_INIT = "x"\n')
    environ, notices = _kernel_environment(tmp_path, [])
    assert "LUA_INIT" not in environ
    assert any("project_kernel_env" in n and "is ignored" in n for n in notices)
