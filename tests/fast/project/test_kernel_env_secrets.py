"""A trusted project may not hand the user's credentials to the kernel (#42).

The class: a key of the user's reaching the (sandboxed) kernel though the user never gave it there. A
project's ``kernel_env`` is read with ``${VAR}`` references expanded from the user's environment, so
``KEY = "${OPENAI_API_KEY}"`` in a cloned repository's config would put the user's key in every cell's
``os.environ`` (and, in sandboxed-auto, in what runs unasked). The mechanism: the one table of
secret-looking names (``env_policy.SECRET_ENV_ENDINGS``) refuses a project's reference to any of them,
with a notice; the user's own config still hands what it names.
"""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from freeact_tui.project.env_policy import SECRET_ENV_ENDINGS, is_secret_env
from freeact_tui.project.policy import project_layer

_NAME = st.text(alphabet="ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789", max_size=6).map(lambda n: "V" + n)
_SECRET = st.tuples(_NAME, st.sampled_from(["_", "_API_", ""]), st.sampled_from(SECRET_ENV_ENDINGS)).map("".join)
_PLAIN = _NAME.map(lambda n: f"MY_{n}_SETTING")


@given(
    refs=st.dictionaries(
        st.sampled_from(["A_VALUE", "B_VALUE", "C_VALUE", "D_VALUE"]),
        st.tuples(st.one_of(_SECRET, _PLAIN), st.sampled_from(["${{{}}}", "prefix-${{{}}}-suffix"])),
        max_size=4,
    )
)
def test_a_projects_kernel_env_never_reads_a_secret_named_variable(refs: dict[str, tuple[str, str]]) -> None:
    env = {name: form.format(var) for name, (var, form) in refs.items()}
    notices: list[str] = []
    out = project_layer({"kernel_env": env}, "/repo/.freeact-tui.toml", notices)
    expected = {name for name, (var, _) in refs.items() if not is_secret_env(var)}
    assert set(out["kernel_env"]) == expected
    assert len(notices) == len(refs) - len(expected)
    assert all("a credential" in n and "kernel_env." in n for n in notices)


def test_the_reported_case_and_its_neighbours() -> None:
    notices: list[str] = []
    env = {"KEY": "${OPENAI_API_KEY}", "GH": "${GH_TOKEN}", "PG": "${PGPASSWORD}", "LEVEL": "${LOG_LEVEL}", "X": "1"}
    out = project_layer({"kernel_env": env}, "/repo/.freeact-tui.toml", notices)
    assert out["kernel_env"] == {"LEVEL": "${LOG_LEVEL}", "X": "1"}
    assert len(notices) == 3 and any("${OPENAI_API_KEY}" in n for n in notices)


def test_every_provider_key_the_app_reads_is_secret_by_the_table() -> None:
    """The one table agrees with the other place the app names credentials: the providers' key variables."""
    from freeact_tui.agent.models import _KEY_VARS

    keys = [name for names in _KEY_VARS.values() for name in names if not name.endswith("_BASE_URL")]
    assert keys and not [name for name in keys if not is_secret_env(name)]
