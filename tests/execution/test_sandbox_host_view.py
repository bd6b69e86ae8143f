"""The sandbox's view of the host is nothing not included (#42, item 2 of the approvals leftovers).

The class: a host path outside the folder that sandboxed code can read (the folder's siblings, the rest
of the home, ``/etc``, ``/opt``, ``/var``…). The old view was the whole host minus a list of hidden
places, so every place not on the list (a sibling project, ``/etc``'s files, ``/opt``) was readable. The
mechanism now: the sandbox binds a table (``SYSTEM_DIRS``, ``SYSTEM_ETC``) and what the kernel runs from
(``needed_paths``), nothing else. Checked with a real sandboxed kernel over generated host paths: files
planted in generated places outside the folder (siblings, cousins, the parents' other entries), and
existing host entries not in the table; none exists inside, and the folder's own work still runs.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import subprocess
import tempfile
import uuid
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from freeact_tui.execution.isolation.sandbox import SYSTEM_DIRS, SYSTEM_ETC, SandboxExecutor, needed_paths
from tests.execution.test_sandbox import needs_tools
from tests.executor_checks import run

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(600), needs_tools]

_WORD = st.text(alphabet="abcdefghijklmnopqrstuvwxyz0123456789_-", min_size=1, max_size=8)


def _visible_by_design(path: Path, work: Path, env: dict[str, str]) -> bool:
    """The table, what the kernel runs from, the folder, and the folders above a bind (bubblewrap makes
    them, holding only the bind)."""
    bound = [Path(d).resolve() for d in SYSTEM_DIRS] + [Path("/etc", e) for e in SYSTEM_ETC]
    bound += [*needed_paths(env), work, Path("/tmp"), Path("/proc"), Path("/dev")]
    real = path.resolve()
    return any(real.is_relative_to(b) or b.is_relative_to(path) for b in bound)


def _host_entries(work: Path, env: dict[str, str]) -> list[str]:
    """Existing host entries outside the folder and the table: the root's, /etc's, the homes'."""
    found: list[str] = []
    for top in ("/", "/etc", "/home", "/root", "/var", "/opt", str(work.parent.parent)):
        try:
            names = sorted(os.listdir(top))
        except OSError:
            continue
        found += [p for n in names if not _visible_by_design(Path(p := os.path.join(top, n)), work, env)]
    return found


_CHECK = """
import json, os
out = {}
for p in json.loads(PATHS):
    try:
        out[p] = sorted(os.listdir(p)) if os.path.isdir(p) else open(p, errors='replace').read(200)
    except OSError as e:
        out[p] = type(e).__name__
print('SEEN ' + json.dumps(out))
print('MINE ' + open('mine.txt').read())
"""


@settings(max_examples=2, deadline=None, suppress_health_check=list(HealthCheck), database=None)
@given(
    planted=st.lists(st.tuples(st.integers(0, 1), st.lists(_WORD, min_size=1, max_size=3)), min_size=3, max_size=8),
    data=st.data(),
)
async def test_no_host_path_outside_the_folder_is_readable_inside(
    planted: list[tuple[int, list[str]]], data: st.DataObject, tmp_path_factory: pytest.TempPathFactory
) -> None:
    root = _scratch_outside_tmp() or tmp_path_factory.mktemp("hostview")
    try:
        await _check_host_view(root, planted, data)
    finally:
        if not root.is_relative_to(tmp_path_factory.getbasetemp()):
            shutil.rmtree(root, ignore_errors=True)


def _scratch_outside_tmp() -> Path | None:
    """A scratch folder outside ``/tmp`` where the host lets us write (the sandbox has a ``/tmp`` of its own,
    so siblings there would be absent for that reason alone)."""
    for base in ("/srv", "/mnt", "/opt", "/var/lib"):
        with contextlib.suppress(OSError):
            return Path(tempfile.mkdtemp(prefix="freeact-hostview-", dir=base))
    return None


async def _check_host_view(root: Path, planted: list[tuple[int, list[str]]], data: st.DataObject) -> None:
    work = root / "projects" / "work"
    work.mkdir(parents=True)
    (work / "mine.txt").write_text("the folder's own")
    marker = f"host-{uuid.uuid4().hex}"
    # a file planted in generated folders beside the folder and beside its parent: siblings, cousins
    places = []
    for up, words in planted:
        base = [work.parent, root][up]
        path = base.joinpath("x-" + words[0], *words[1:], "secret.txt")
        if work.is_relative_to(path.parent) or path.parent == work:
            continue
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(marker)
        places.append(str(path))
    executor = SandboxExecutor(working_dir=work, images_dir=root / "images")
    try:
        await executor.start()
        env = executor._gateway.env if executor._gateway is not None else {}  # noqa: SLF001
        existing = _host_entries(work, env)
        sampled = data.draw(st.lists(st.sampled_from(existing), max_size=25, unique=True)) if existing else []
        everything = [*places, *sampled, "/etc/shadow", "/etc/environment", "/etc/gitconfig"]
        code = f"PATHS = {json.dumps(json.dumps(everything))}\n" + _CHECK
        _, result = await run(executor, code)
    finally:
        await executor.stop()
    assert marker not in result.text, result.text
    seen = json.loads(re.search(r"SEEN (\{.*\})", result.text).group(1))  # type: ignore[union-attr]
    readable = {p: v for p, v in seen.items() if v != "FileNotFoundError"}
    assert not readable, readable
    assert "MINE the folder's own" in result.text


def _git(repo: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True)


_HISTORY = """
import glob, zlib
print('GIT ' + ' '.join(get_ipython().getoutput('git show HEAD~1:.env 2>&1')))
print('LOG ' + ' '.join(get_ipython().getoutput('git log --format=%s 2>&1')))
blobs = []
for p in glob.glob('.git/objects/*/*'):
    try:
        blobs.append(zlib.decompress(open(p, 'rb').read()).decode(errors='replace'))
    except (OSError, zlib.error):
        pass
print('STORE ' + ' '.join(blobs))
"""


@pytest.mark.parametrize("committed_secret", [True, False])
async def test_a_secret_in_git_history_is_not_readable_inside(committed_secret: bool, tmp_path: Path) -> None:
    """A ``.env`` committed once and deleted: neither ``git show`` nor the object store gives it back;
    a history without a secret keeps git working inside."""
    work = tmp_path / "work"
    work.mkdir()
    marker = f"history-{uuid.uuid4().hex}"
    _git(work, "init", "-q", ".")
    _git(work, "config", "user.email", "a@example.com")
    _git(work, "config", "user.name", "a")
    secret = work / (".env" if committed_secret else "notes.txt")
    secret.write_text(f"KEY={marker}\n")
    _git(work, "add", secret.name)
    _git(work, "commit", "-qm", "first")
    secret.unlink()
    _git(work, "commit", "-qam", "second")
    executor = SandboxExecutor(working_dir=work, images_dir=tmp_path / "images")
    try:
        await executor.start()
        _, result = await run(executor, _HISTORY)
    finally:
        await executor.stop()
    if committed_secret:
        assert marker not in result.text, result.text
        assert "LOG second first" not in result.text  # the whole store is hidden: git sees no repository
    else:
        assert "LOG second first" in result.text, result.text  # git works inside for a clean history
