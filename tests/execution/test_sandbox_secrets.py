"""The sandbox holds no secrets (#42, the effects reader's leftovers).

In the ``sandboxed-auto`` mode code runs unasked and its output goes to the model's provider, so the
sandbox, not the reading of the code, must keep secrets in. The class of defect: a secret the sandboxed
kernel can read — a secret-named file of the folder (``.env``, ``*.pem``, ``.ssh/``…), one of the user's
home, or a key the app holds in some process environment of the sandbox. The mechanisms: an empty
placeholder bound over every file the permission rules' one secret table names (``secret_files``), a home
of the sandbox's own, and an environment that holds only what the user handed to the kernel (the gateway's
token goes on its stdin). Checked with real bubblewrap sandboxes over generated secret paths and
generated secret-looking variables (Hypothesis over the two tables), and an agent in sandboxed-auto.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import uuid
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from freeact_tui.agent.agent import Agent
from freeact_tui.effects.modes import ApprovalMode
from freeact_tui.events import ApprovalRequest, CodeExecutionOutput
from freeact_tui.execution.isolation.sandbox import SandboxExecutor
from freeact_tui.project.env_policy import SECRET_ENV_ENDINGS, is_secret_env
from freeact_tui.shell.gitreads import SECRET_NAMES
from tests.execution.test_sandbox import needs_tools
from tests.executor_checks import run
from tests.scripted import Code, script

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(600), needs_tools]

_WORD = st.text(alphabet="abcdefghijklmnopqrstuvwxyz0123456789_-", min_size=1, max_size=8)


def _instance(glob: str) -> st.SearchStrategy[str]:
    """A path the secret glob names (``*.pem`` → ``k3.pem``, ``.ssh/**`` → ``.ssh/x/id``)."""
    return st.lists(_WORD, min_size=1, max_size=2).flatmap(
        lambda words: st.just(re.sub(r"\[[^]]*\]", "_", glob).replace("**", "/".join(words)).replace("*", words[0]))
    )


def _secret_paths() -> st.SearchStrategy[list[str]]:
    """Each row of the secret table once, at the top or in generated subfolders (any case of it)."""
    placed = [
        st.tuples(st.lists(_WORD.map(lambda w: "dir-" + w), max_size=2), _instance(g), st.booleans())
        for g in SECRET_NAMES
    ]
    return st.tuples(*placed).map(
        lambda rows: [
            "/".join([*folders, name.upper() if upper and "/" not in name else name])
            for folders, name, upper in rows
        ]
    )


_READ_ALL = """
import json, os
out = {}
for p in json.loads(PATHS):
    q = os.path.expanduser(p)
    try:
        out[p] = os.listdir(q) if os.path.isdir(q) else open(q, errors='replace').read()
    except OSError as e:
        out[p] = type(e).__name__
print('READ ' + json.dumps(out))
"""


def _kernel_env(factory: pytest.TempPathFactory) -> Path:
    """One kernel environment for the module's sandboxes (made on first use)."""
    return factory.getbasetemp() / "secrets-kernel-env"


def _made(work: Path, rel: str, marker: str) -> None:
    path = work / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.is_dir():
        path = path / "inner"
    path.write_text(marker)


@settings(max_examples=2, deadline=None, suppress_health_check=list(HealthCheck), database=None)
@given(paths=_secret_paths())
async def test_no_secret_file_of_the_folder_or_the_home_is_readable_inside(
    paths: list[str], tmp_path_factory: pytest.TempPathFactory
) -> None:
    root = tmp_path_factory.mktemp("secrets")
    work, home = root / "work", root / "home"
    work.mkdir()
    marker = f"secret-{uuid.uuid4().hex}"
    paths = sorted({p for p in paths if not p.startswith("/")})
    for rel in paths:
        _made(work, rel, marker)
    (work / "notes.txt").write_text("plain")
    for rel in (".ssh/id_ed25519", ".netrc", ".aws/credentials", ".config/gh/hosts.yml"):
        (home / rel).parent.mkdir(parents=True, exist_ok=True)
        (home / rel).write_text(marker)
    before = os.environ.get("HOME")
    os.environ["HOME"] = str(home)  # the user's home: none of it is the sandbox's
    executor = SandboxExecutor(
        working_dir=work, images_dir=root / "images", kernel_venv_dir=_kernel_env(tmp_path_factory)
    )
    try:
        await executor.start()
        everything = [*paths, "notes.txt", *(str(home / r) for r in (".ssh/id_ed25519", ".netrc", ".aws"))]
        everything += ["~/.ssh/id_ed25519", "~/.netrc"]
        code = f"PATHS = {json.dumps(json.dumps(everything))}\n" + _READ_ALL
        _, result = await run(executor, code + "\nget_ipython().system('cat .env 2>&1; echo HOME=$HOME')")
    finally:
        await executor.stop()
        if before is not None:
            os.environ["HOME"] = before
    assert marker not in result.text, result.text
    seen = json.loads(re.search(r"READ (\{.*\})", result.text).group(1))  # type: ignore[union-attr]
    assert seen["notes.txt"] == "plain"  # the folder's own files stay readable
    assert "HOME=/tmp/home" in result.text


def _secret_names() -> st.SearchStrategy[list[str]]:
    """Generated secret-looking names (a prefix and an ending of the table, any case)."""
    name = st.tuples(
        st.text(alphabet="ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789", min_size=1, max_size=6),
        st.sampled_from(["_", "", "_API_", "_ACCESS_"]),
        st.sampled_from(SECRET_ENV_ENDINGS),
        st.booleans(),
    ).map(lambda t: (t[0] + t[1] + t[2]).lower() if t[3] else t[0] + t[1] + t[2])
    return st.lists(name, min_size=3, max_size=8, unique=True)


_DUMP_ENV = """
import glob, json, os
procs = {}
for p in glob.glob('/proc/[0-9]*/environ'):
    try:
        procs[p] = open(p, 'rb').read().decode(errors='replace')
    except OSError as e:
        procs[p] = type(e).__name__
print('ENV ' + json.dumps({'environ': dict(os.environ), 'procs': procs}))
"""


@settings(max_examples=2, deadline=None, suppress_health_check=list(HealthCheck), database=None)
@given(names=_secret_names())
async def test_no_key_the_app_holds_is_in_any_environment_inside(
    names: list[str], tmp_path_factory: pytest.TempPathFactory
) -> None:
    root = tmp_path_factory.mktemp("environ")
    work = root / "work"
    work.mkdir()
    held = {name: f"held-{uuid.uuid4().hex}" for name in [*names, "OPENAI_API_KEY", "ANTHROPIC_API_KEY", "HF_TOKEN"]}
    before = {name: os.environ.get(name) for name in held}
    os.environ.update(held)
    executor = SandboxExecutor(
        working_dir=work,
        images_dir=root / "images",
        kernel_venv_dir=_kernel_env(tmp_path_factory),
        kernel_env={"HANDED_API_TOKEN": "handed-by-the-user"},
    )
    try:
        await executor.start()
        _, result = await run(executor, _DUMP_ENV + "get_ipython().system('env')")
        token = executor._gateway.token if executor._gateway is not None else ""  # noqa: SLF001
    finally:
        await executor.stop()
        for name, value in before.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
    dumped = json.loads(re.search(r"ENV (\{.*\})", result.text).group(1))  # type: ignore[union-attr]
    for value in held.values():
        assert value not in result.text
    assert token and token not in result.text  # the gateway's key: on its stdin, in no environment
    assert dumped["environ"].get("HANDED_API_TOKEN") == "handed-by-the-user"  # the user's own hand-over
    everywhere = [dumped["environ"], *(dict(v.split("=", 1) for v in text.split("\0") if "=" in v)
                                      for text in dumped["procs"].values())]
    secret_named = {name for env in everywhere for name in env if is_secret_env(name)}
    assert secret_named <= {"HANDED_API_TOKEN"}, secret_named


async def test_sandboxed_auto_sends_the_model_no_secret_and_still_does_the_folder_work(tmp_path: Path) -> None:
    """The reported case: a cell reading .env and dumping os.environ runs unasked in sandboxed-auto; what
    goes back to the model holds no secret, and in-folder work of the corpus runs as before."""
    assert shutil.which("bwrap")
    work = tmp_path / "work"
    (work / "data").mkdir(parents=True)
    marker = f"secret-{uuid.uuid4().hex}"
    (work / ".env").write_text(f"OPENAI_API_KEY={marker}\n")
    (work / ".env.local").write_text(marker)
    (work / "server.pem").write_text(marker)
    (work / "data" / "a.csv").write_text("x,y\n1,2\n3,4\n")
    os.environ["FREEACT_TEST_PROVIDER_KEY"] = marker
    code = (
        # no secret named in the code (a named one is asked by the secret rules): listed, then read
        "import os, json, csv, pathlib\n"
        "for name in sorted(os.listdir('.')):\n"
        "    if os.path.isfile(name):\n"
        "        print(name, repr(open(name).read()))\n"
        "print(dict(os.environ))\n"
        "rows = list(csv.reader(open('data/a.csv')))\n"
        "pathlib.Path('out').mkdir(exist_ok=True)\n"
        "json.dump(rows, open('out/rows.json', 'w'))\n"
        "open('notes.md', 'w').write('# notes\\n')\n"
        "print('rows', len(rows))"
    )
    s = script([Code(code)], ["Done."])
    asked: list[ApprovalRequest] = []
    outputs: list[str] = []
    try:
        async with Agent(
            s.model(), execution="sandbox", working_dir=work, sessions_dir=tmp_path / "sessions", enable_subagents=False
        ) as agent:
            agent.permissions.mode = ApprovalMode.SANDBOXED_AUTO
            async for event in agent.stream("look around"):
                if isinstance(event, ApprovalRequest) and not event.decided:
                    asked.append(event)
                    event.approve(False)
                elif isinstance(event, CodeExecutionOutput):
                    outputs.append(event.text or "")
    finally:
        os.environ.pop("FREEACT_TEST_PROVIDER_KEY", None)
    assert asked == []
    text = "\n".join(outputs)
    assert "rows 3" in text, text
    assert marker not in text
    assert s.tool_returns() and not any(marker in str(r.content) for r in s.tool_returns())  # nor to the model
    assert json.loads((work / "out" / "rows.json").read_text()) == [["x", "y"], ["1", "2"], ["3", "4"]]
    assert (work / "notes.md").read_text() == "# notes\n"
    assert (work / ".env").read_text() == f"OPENAI_API_KEY={marker}\n"  # hidden inside, untouched outside
