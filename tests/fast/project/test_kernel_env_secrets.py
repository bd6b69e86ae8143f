"""Project data never reads the user's environment (#39, #42).

The class: a value of a trusted project (its ``.env``, ``kernel_env``, any config string) interpolated
from the app's process environment copies the user's key, database URL or password under a harmless name
into the kernel (``LAUNDER=${OPENAI_API_KEY}`` in ``.env``, ``PROJECT_MODE = "${PROJECT_MODE}"`` in
``kernel_env``; ``URL = "${DATABASE_URL}"``, whose name does not say it is a secret). Recognising secrets
by their names cannot close it. The mechanism (``project.env_refs``): project files are read with no
interpolation, and a ``${NAME}`` in a project value resolves only among the project's own ``.env`` names;
anything else is refused and named. These tests generate references to the user's environment (any name,
secret-looking or not, with dotenv's ``:-default`` form) and to the project's own names.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from freeact_tui.project import env_refs, paths
from freeact_tui.project.config import load_config
from freeact_tui.project.env_policy import refusal
from freeact_tui.project.policy import project_env, project_layer

_NAME = (
    st.text(alphabet="ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_", min_size=1, max_size=6)
    .map(lambda n: "V" + n)
    .filter(lambda n: refusal(n) is None)  # a name refused by the table or its shape (``VPATH``, ``VRC``) is another test's
)
_USER = {"OPENAI_API_KEY": "sk-USERSECRET123", "DATABASE_URL": "postgres://u:pw-USERSECRET@h/db"}
_FORMS = ("${{{}}}", "pre-${{{}}}-post", "${{{}:-fallback}}")


def _leaks(value: object) -> bool:
    return any(secret in str(value) for secret in _USER.values())


@given(
    names=st.lists(_NAME, min_size=1, max_size=5, unique=True),
    refs=st.lists(st.tuples(st.integers(0, 10), st.sampled_from(_FORMS)), min_size=1, max_size=5),
    user_names=st.lists(_NAME, max_size=2),
)
def test_a_env_file_resolves_only_its_own_names(
    names: list[str], refs: list[tuple[int, str]], user_names: list[str]
) -> None:
    """Each value refers to an earlier name of the file (resolved), or to one of the user's (refused)."""
    user = {**_USER, **dict.fromkeys(user_names, "u-USERSECRET")}
    raw: dict[str, str | None] = {}
    expected: dict[str, str] = {}
    for k, name in enumerate(names):
        index, form = refs[k % len(refs)]
        if k and index < k and names[index] in expected and names[index] != name:
            target = names[index]
            raw[name] = form.format(target)
            expected[name] = form.format(target).replace("${" + target + ":-fallback}", expected[target])
            expected[name] = expected[name].replace("${" + target + "}", expected[target])
        else:
            target = sorted(user)[index % len(user)]
            raw[name] = form.format(target)
        if name not in expected and "${" not in raw[name]:
            expected[name] = raw[name]
    kept, refused = env_refs.resolve_env_file(raw)
    assert kept == expected
    assert set(refused) == set(raw) - set(expected)
    assert not any("USERSECRET" in str(v) for v in kept.values())
    assert all("does not set" in why for why in refused.values())


@given(
    env=st.dictionaries(
        _NAME, st.tuples(st.sampled_from([*_USER, "HOME", "PATH", "LOG_LEVEL"]), st.sampled_from(_FORMS)), max_size=4
    )
)
def test_a_projects_kernel_env_never_reads_the_users_environment(env: dict[str, tuple[str, str]]) -> None:
    kernel_env = {name: form.format(var) for name, (var, form) in env.items()}
    notices: list[str] = []
    out = project_layer({"kernel_env": kernel_env}, "/repo/.freeact-tui.toml", notices, own_env={"MODE": "dev"})
    assert out["kernel_env"] == {}
    assert len(notices) == len(env)
    assert all("kernel_env." in n and "does not set" in n for n in notices)


def test_the_reported_case_and_its_neighbours() -> None:
    notices: list[str] = []
    env = {
        "KEY": "${OPENAI_API_KEY}",
        "DB": "${DATABASE_URL}",  # O3: a secret whose name does not end like one
        "MODE": "${PROJECT_MODE}",
        "BOTH": "${PROJECT_MODE}-${HOME}",
        "X": "1",
    }
    out = project_layer(
        {"kernel_env": env}, "/repo/.freeact-tui.toml", notices, own_env={"PROJECT_MODE": "dev"}
    )
    assert out["kernel_env"] == {"MODE": "dev", "X": "1"}  # the project's own value, resolved by the project
    assert len(notices) == 3 and any("${DATABASE_URL}" in n for n in notices)


@settings(max_examples=25, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(form=st.sampled_from(_FORMS), var=st.sampled_from(sorted(_USER)))
def test_a_trusted_project_cannot_launder_a_user_variable(
    form: str, var: str, tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The attack end to end through ``load_config``: ``.env`` and ``kernel_env`` both read the user's key."""
    folder = tmp_path_factory.mktemp("clone")
    for name, value in _USER.items():
        monkeypatch.setenv(name, value)
    for name in ("LAUNDER", "PROJECT_MODE", "PLAIN"):
        monkeypatch.delenv(name, raising=False)
    (folder / ".env").write_text(f"LAUNDER={form.format(var)}\nPROJECT_MODE=dev-{form.format(var)}\nPLAIN=p\n")
    (folder / ".freeact-tui.toml").write_text(
        '[kernel_env]\nPROJECT_MODE = "${PROJECT_MODE}"\n'
        f'DIRECT = "{form.format(var)}"\nPLAIN = "${{PLAIN}}"\nDB = "${{DATABASE_URL}}"\n'
    )
    paths.user_config_file().parent.mkdir(parents=True, exist_ok=True)
    names = '"PROJECT_MODE", "DIRECT", "PLAIN", "DB"'
    paths.user_config_file().write_text(f"project_kernel_env = [{names}]\n")  # the user allows every name
    config = load_config(cwd=folder, trust_project=True)
    assert config.kernel_env == {"PLAIN": "p"}
    assert not _leaks(config.kernel_env)
    assert "LAUNDER" not in os.environ and "PROJECT_MODE" not in os.environ
    assert "PLAIN" not in os.environ and config.project_env.get("PLAIN") == "p"  # the app's process: never
    notices = " ".join(config.notices)
    assert "LAUNDER is ignored" in notices and "kernel_env.DIRECT is not applied" in notices


def test_the_trust_review_shows_what_a_env_value_would_read(tmp_path: Path) -> None:
    from freeact_tui.project import trust
    from freeact_tui.project.review import review

    (tmp_path / ".env").write_text("LAUNDER=${OPENAI_API_KEY}\nOK=1\nMODE=dev-${OK}\n")
    text = review(trust.check(tmp_path)).text()
    assert "environment variables: LAUNDER = '${OPENAI_API_KEY}', MODE = 'dev-${OK}', OK" in text
    never = text.split("Never applied, even if trusted:")[1]
    assert "LAUNDER = '${OPENAI_API_KEY}'" in never and "does not set" in never and "MODE" not in never


def test_a_env_file_read_for_the_project_is_not_interpolated(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-USERSECRET123")
    (tmp_path / ".env").write_text("A=${OPENAI_API_KEY}\nB=b\nC=${B}x\n")
    notices: list[str] = []
    assert project_env(tmp_path / ".env", notices) == {"B": "b", "C": "bx"}
    assert len(notices) == 1 and "A is ignored" in notices[0] and "sk-USER" not in notices[0]


_OWN = st.sampled_from(["VA", "VB", "VC", "VD"])


@given(
    lines=st.lists(
        st.tuples(_OWN, st.lists(st.one_of(st.sampled_from(["x", "-", "/"]), _OWN.map("${{{}}}".format)), max_size=3)),
        min_size=1,
        max_size=4,
        unique_by=lambda line: line[0],
    )
)
def test_own_names_resolve_as_python_dotenv_resolves_them(lines: list[tuple[str, list[str]]]) -> None:
    """Where a file reads only its own names (defined above), the project's reading is python-dotenv's own
    (its interpolation with none of the names in the environment); a name not yet defined is refused. (A name
    defined twice is read once, its last value where it first stood: a file that redefines a name may read
    differently from python-dotenv, never from the user's environment.)"""
    import io

    from dotenv import dotenv_values

    text = "".join(f"{name}={''.join(parts)}\n" for name, parts in lines)
    for name in ("VA", "VB", "VC", "VD"):
        os.environ.pop(name, None)
    kept, refused = env_refs.resolve_env_file(dotenv_values(stream=io.StringIO(text), interpolate=False))
    theirs = dotenv_values(stream=io.StringIO(text), interpolate=True)
    defined: set[str] = set()
    for name, parts in lines:
        reads = {p[2:-1] for p in parts if p.startswith("${")}
        if reads <= defined:
            defined.add(name)
        else:
            defined.discard(name)
    assert set(kept) == defined and set(refused) == set(theirs) - defined
    assert all(kept[name] == theirs[name] for name in kept)
