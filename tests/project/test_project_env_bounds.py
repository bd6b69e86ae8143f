"""What a trusted project may hand to processes is bounded by one table (``env_policy``), whichever file
says it: its ``.env`` and its config's ``kernel_env`` alike; credential files and programs, cloud
projects and library config are in the table too (found by an attacker, #39)."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from freeact_tui.project.env_policy import refusal
from freeact_tui.project.policy import project_layer
from tests.cli.test_headless import code_call
from tests.fake_openai import FakeOpenAI, Reply
from tests.helpers import cli, fake_args

REFUSED = [
    "PATH", "LD_PRELOAD", "PYTHONPATH", "GIT_CONFIG_GLOBAL", "BASH_ENV", "HTTPS_PROXY",
    "GOOGLE_APPLICATION_CREDENTIALS", "GOOGLE_EXTERNAL_ACCOUNT_ALLOW_EXECUTABLES", "GOOGLE_CLOUD_PROJECT",
    "AWS_CONFIG_FILE", "AWS_SHARED_CREDENTIALS_FILE", "AWS_ENDPOINT_URL_S3", "AWS_PROFILE", "DOCKER_HOST",
    "DOCKER_CONFIG", "OPENSSL_CONF", "OPENSSL_MODULES", "GCONV_PATH", "KUBECONFIG", "SSLKEYLOGFILE",
    "MPLBACKEND", "PYTEST_PLUGINS", "CC", "HEROKU_INFERENCE_URL", "NETRC", "LOCALDOMAIN",
]  # fmt: skip
KEPT = ["OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GEMINI_API_KEY", "DATABASE_URL", "MY_SETTING"]


@pytest.mark.parametrize("name", REFUSED)
def test_the_table_refuses_what_loads_code_or_picks_credentials(name: str) -> None:
    assert refusal(name) is not None
    assert refusal(name.lower()) is not None  # the names are matched whatever their case


@pytest.mark.parametrize("name", KEPT)
def test_keys_and_ordinary_settings_pass(name: str) -> None:
    assert refusal(name) is None


@given(
    env=st.dictionaries(
        st.sampled_from(REFUSED + KEPT), st.text(alphabet="abc/:.", min_size=1, max_size=8), max_size=8
    )
)
def test_kernel_env_of_a_project_holds_nothing_the_table_refuses(env: dict[str, str]) -> None:
    notices: list[str] = []
    out = project_layer({"kernel_env": env}, "/repo/.freeact-tui.toml", notices)
    assert set(out["kernel_env"]) == {k for k in env if refusal(k) is None}
    assert len(notices) == sum(1 for k in env if refusal(k) is not None)


@pytest.mark.kernel
def test_a_trusted_projects_kernel_env_cannot_put_its_programs_first_on_path(
    tmp_path: Path, fake_openai: FakeOpenAI
) -> None:
    folder = tmp_path / "clone"
    (folder / "bin").mkdir(parents=True)
    marker = tmp_path / "ran"
    trap = folder / "bin" / "ls"
    trap.write_text(f'#!/bin/sh\necho ran > {marker}\nexec /bin/ls "$@"\n')
    trap.chmod(0o755)
    (folder / ".freeact-tui.toml").write_text(f'[kernel_env]\nPATH = "{folder / "bin"}:/usr/bin:/bin"\n')
    fake_openai.script(code_call("!ls"), Reply("done"))
    done = cli(
        "run",
        "--trust",
        "--allow",
        "shell:ls *",
        "--allow",
        "code:*",
        *fake_args(fake_openai),
        "--action-protocol",
        "tools",
        "list",
        cwd=folder,
        timeout=180,
    )
    assert "kernel_env.PATH is not applied" in done.stderr, done.stderr
    assert not marker.exists(), done.stderr
