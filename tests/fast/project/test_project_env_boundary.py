"""A trusted project's ``.env`` never enters the app's own process (issue #39).

The class: project data mutates the app's process environment (and every child it starts), so each
variable a table misses changes the app. The mechanism: the project's ``.env`` is read once into a frozen
mapping on the config (``Config.project_env``); ``${VAR}`` in the config and the model's provider keys
read it explicitly (``project_env.lookup``, ``Config.provider_keys``); ``os.environ`` is never written.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from freeact_tui.agent.models import resolve_model
from freeact_tui.agent.settings import Settings
from freeact_tui.project import paths
from freeact_tui.project.config import Config, load_config
from freeact_tui.project.env_policy import allowance, refusal

# Names a project would plant to change a process: its start-up, loader, terminal library, home, proxies,
# where keys go; and the providers' keys, which a project may bring.
NAMED = [
    "HOME", "PATH", "PYTHONPATH", "PYTHONSTARTUP", "PYTHONHOME", "LD_PRELOAD", "LD_LIBRARY_PATH",
    "TEXTUAL_PRESS", "TEXTUAL_DRIVER", "TEXTUAL", "HTTP_PROXY", "https_proxy", "ALL_PROXY", "NO_PROXY",
    "SSLKEYLOGFILE", "OPENAI_BASE_URL", "OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GIT_CONFIG_GLOBAL",
    "JUPYTER_GATEWAY_VALIDATE_CERT", "REQUESTS_CA_BUNDLE", "FREEACT_TUI_HOME", "TMPDIR", "SHELL",
]  # fmt: skip
NAMES = st.one_of(
    st.sampled_from(NAMED),
    st.from_regex(r"\A(PYTHON|LD_|TEXTUAL_|GIT_|XDG_|OPENAI_|RICH_|HTTPS?_)[A-Za-z0-9_]{0,12}\Z"),
    st.from_regex(r"\A[A-Za-z_][A-Za-z0-9_]{0,20}\Z"),
)
# Values as a ``.env`` holds them in single quotes (python-dotenv takes them verbatim).
VALUES = st.text(
    st.characters(codec="utf-8", exclude_characters="'\\\n\r\x00", exclude_categories=("Cs",)), max_size=30
)


def _write_env(folder: Path, variables: list[tuple[str, str]]) -> None:
    (folder / ".env").write_text("".join(f"{name}='{value}'\n" for name, value in variables), encoding="utf-8")


def _load(folder: Path) -> Config:
    """``load_config`` of the trusted ``folder``; whatever it did to ``os.environ`` is undone afterwards
    (the assertions come first), so each generated example starts from the same environment."""
    before = dict(os.environ)
    try:
        return load_config(cwd=folder, trust_project=True)
    finally:
        after = dict(os.environ)
        if after != before:
            _LEAKED.append({k: v for k, v in after.items() if before.get(k) != v})
            for name in set(after) - set(before):
                del os.environ[name]
            os.environ.update(before)


_LEAKED: list[dict[str, str]] = []
"""What a load put into ``os.environ`` (it must stay empty)."""


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(variables=st.lists(st.tuples(NAMES, VALUES), min_size=1, max_size=12))
def test_any_env_leaves_the_process_environment_byte_for_byte(variables: list[tuple[str, str]]) -> None:
    before, before_bytes = dict(os.environ), dict(os.environb)
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp).resolve()
        _write_env(folder, variables)
        _LEAKED.clear()
        config = _load(folder)
        settings_ = Settings.from_config(config)
    assert _LEAKED == []
    assert dict(os.environ) == before
    assert dict(os.environb) == before_bytes
    expected = dict(variables)  # the last line of a name wins, as python-dotenv reads it
    assert dict(config.project_env) == {n: v for n, v in expected.items() if refusal(n) is None}
    assert dict(settings_.provider_keys) == {n: v for n, v in expected.items() if allowance(n) is not None}
    for name in expected:
        if refusal(name) is not None:
            assert any(f": {name} is ignored" in notice for notice in config.notices)


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    name=st.from_regex(r"\AENV8_[A-Z0-9_]{1,12}\Z").filter(lambda n: refusal(n) is None),  # ENV8_X_DIR: refused
    value=VALUES.filter(lambda v: v.strip() == v),
)
def test_the_kernel_still_sees_an_allowed_name_through_kernel_env(name: str, value: str) -> None:
    """``${VAR}`` in a project's ``kernel_env`` reads the project's ``.env`` (the kernel is the project's
    code), the process's own variable first; the app's process never holds it."""
    assert name not in os.environ
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp).resolve()
        _write_env(folder, [(name, value)])
        (folder / ".freeact-tui.toml").write_text(f'[kernel_env]\nPROBE = "${{{name}}}"\n', encoding="utf-8")
        paths.user_config_file().parent.mkdir(parents=True, exist_ok=True)
        paths.user_config_file().write_text('project_kernel_env = ["PROBE"]\n')  # the user lets PROBE through
        _LEAKED.clear()
        config = _load(folder)
    assert _LEAKED == []
    assert config.kernel_env == {"PROBE": value}
    assert Settings.from_config(config).kernel_env == {"PROBE": value}


def test_a_project_key_reaches_the_model_client_and_never_the_process(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("ENV8_SERVER_KEY", raising=False)
    _write_env(tmp_path, [("OPENAI_API_KEY", "sk-from-the-project"), ("OPENAI_BASE_URL", "http://127.0.0.1:9")])
    config = load_config(cwd=tmp_path, trust_project=True)
    assert "OPENAI_API_KEY" not in os.environ and "OPENAI_BASE_URL" not in os.environ
    assert dict(config.provider_keys) == {"OPENAI_API_KEY": "sk-from-the-project"}  # never the address

    model = resolve_model("openai:gpt-4o", project_keys=config.provider_keys)
    assert model.client.api_key == "sk-from-the-project"  # type: ignore[attr-defined]
    assert "127.0.0.1:9" not in str(model.client.base_url)  # type: ignore[attr-defined]
    served = resolve_model(
        "fake-model", base_url="http://127.0.0.1:1/v1", api_key_env="OPENAI_API_KEY", project_keys=config.provider_keys
    )
    assert served.client.api_key == "sk-from-the-project"  # type: ignore[attr-defined]

    # The variable the user's own ``api_key_env`` names may come from the project's .env too.
    (tmp_path / "user.toml").write_text('api_key_env = "ENV8_SERVER_KEY"\n', encoding="utf-8")
    _write_env(tmp_path, [("ENV8_SERVER_KEY", "sk-server")])
    config = load_config(tmp_path / "user.toml", cwd=tmp_path, trust_project=True)
    assert "ENV8_SERVER_KEY" not in os.environ
    served = resolve_model(
        "fake-model", base_url="http://127.0.0.1:1/v1", api_key_env="ENV8_SERVER_KEY", project_keys=config.provider_keys
    )
    assert served.client.api_key == "sk-server"  # type: ignore[attr-defined]

    # The user's own variable wins over the project's.
    monkeypatch.setenv("OPENAI_API_KEY", "sk-the-users-own")
    model = resolve_model("openai:gpt-4o", project_keys=config.provider_keys)
    assert model.client.api_key == "sk-the-users-own"  # type: ignore[attr-defined]
