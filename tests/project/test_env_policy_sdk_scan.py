"""Every environment variable the installed model SDKs read is decided by ``env_policy``: refused for a
project's ``.env`` and ``kernel_env`` (where a key or the conversation goes, or how) or allowed with a
reason (a provider's key itself, a few harmless names). A new SDK variable fails here until decided;
a new provider (a new ``*_API_KEY``) until its prefix is in ``PROVIDER_PREFIXES`` (issue #39, F3/F4)."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from freeact_tui.project.env_policy import PROVIDER_PREFIXES, allowance, refusal

_SDKS = ("pydantic_ai", "openai", "anthropic", "google.genai", "groq", "mistralai", "cohere")
_READ = re.compile(r"""(?:environ\.get|getenv|environ\[|environ\.setdefault)\(?\s*["']([A-Z][A-Z0-9_]+)["']""")


def _read_names() -> set[str]:
    names: set[str] = set()
    for module in _SDKS:
        try:
            spec = importlib.util.find_spec(module)
        except ModuleNotFoundError:
            continue
        if spec is None or not spec.submodule_search_locations:
            continue
        for root in spec.submodule_search_locations:
            for source in Path(root).rglob("*.py"):
                names.update(_READ.findall(source.read_text(encoding="utf-8", errors="replace")))
    return names


NAMES = sorted(_read_names())


def test_the_scan_finds_the_providers_variables() -> None:
    assert {"OPENAI_API_KEY", "OPENAI_BASE_URL", "ANTHROPIC_BASE_URL"} <= set(NAMES)  # the scan works


@pytest.mark.parametrize("name", NAMES)
def test_every_variable_an_sdk_reads_is_decided(name: str) -> None:
    assert refusal(name) is not None or allowance(name) is not None, (
        f"{name}: decide it in env_policy (a refusing row, or ALLOWED_ENV with a reason)"
    )


def test_every_provider_with_a_key_has_its_prefix_in_the_table() -> None:
    for name in NAMES:
        if name.endswith("_API_KEY"):
            assert any(name.startswith(f"{prefix}_") for prefix in PROVIDER_PREFIXES), name


REPORTED = [
    "HEROKU_INFERENCE_URL", "ANTHROPIC_VERTEX_PROJECT_ID", "ANTHROPIC_GOOGLE_CLOUD_PROJECT",
    "ANTHROPIC_GOOGLE_CLOUD_LOCATION", "GOOGLE_GENAI_CLIENT_MODE", "GOOGLE_GENAI_REPLAYS_DIRECTORY",
    "GOOGLE_GENAI_REPLAY_ID", "ANTHROPIC_CUSTOM_HEADERS", "GOOGLE_GENAI_DEFAULT_HEADERS", "NETRC", "TMP",
    "TEMP", "LOCALDOMAIN", "RES_OPTIONS", "HOSTALIASES", "MPLBACKEND", "MPLCONFIGDIR", "PYTEST_ADDOPTS",
    "PYTEST_PLUGINS", "COVERAGE_PROCESS_START", "CC", "CXX", "RUSTC_WRAPPER", "GOFLAGS", "NODE_OPTIONS",
    "PERL5OPT", "RUBYOPT",
]  # fmt: skip


@pytest.mark.parametrize("name", REPORTED)
def test_the_reported_variables_are_refused(name: str) -> None:
    assert refusal(name) is not None


_SETTING = st.sampled_from(["_BASE_URL", "_ENDPOINT", "_HOST", "_PROJECT_ID", "_LOCATION", "_HEADERS", "_MODE",
                            "_DIRECTORY", "_REGION", "_API_VERSION", "_ORG_ID", "_CLIENT_MODE", "_RESOURCE"])  # fmt: skip


@given(prefix=st.sampled_from(PROVIDER_PREFIXES), middle=st.sampled_from(["", "_VERTEX", "_GOOGLE_CLOUD", "_GENAI"]),
       setting=_SETTING)  # fmt: skip
def test_a_providers_setting_other_than_its_key_is_refused(prefix: str, middle: str, setting: str) -> None:
    assert refusal(f"{prefix}{middle}{setting}") is not None
    assert refusal(f"{prefix}{middle}_API_KEY") is None  # its key is the project's own to bring
