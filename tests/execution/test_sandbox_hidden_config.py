"""A real bubblewrap sandbox undoes and tells hidden tool configuration, named or not (issue #39, F2).

The attacker's sandboxed cell wrote ``.cargo/config.toml`` (a ``rustc-wrapper``), ``.hg/hgrc``, ``.mise.toml``
and more; none was undone (the same run undid ``x.pth``), and the host's ``cargo`` ran the wrapper. Now any
hidden name but the inert ones is undone and named (``paths.configures_part``): the reported names, and a
few dot-names generated at random depths (seeded, so the run is repeatable); ordinary work and an inert
``.gitignore`` stay.
"""

from __future__ import annotations

import json
import random
import shutil
from pathlib import Path

import pytest

from tests.fake_openai import FakeOpenAI, Reply, ToolCallReply
from tests.helpers import cli, fake_args

CODE_TOOL = "ipybox_execute_ipython_cell"
REPORTED = (".cargo/config.toml", ".hg/hgrc", ".mise.toml", ".devcontainer/devcontainer.json", "sub/.irbrc",
            ".tool-versions")  # fmt: skip


def _generated(count: int) -> list[str]:
    rng = random.Random(39)
    letters = "abcdefghijklmnopqrstuvwxyz"
    found = []
    for _ in range(count):
        name = "." + "".join(rng.choice(letters) for _ in range(rng.randint(3, 9)))
        above = ["d" + "".join(rng.choice(letters) for _ in range(3)) for _ in range(rng.randint(0, 2))]
        found.append("/".join([*above, name, "conf"] if rng.random() < 0.5 else [*above, name]))
    return found


@pytest.mark.kernel
@pytest.mark.timeout(300)
def test_hidden_tool_configuration_is_undone_and_told(fake_openai: FakeOpenAI, tmp_path: Path) -> None:
    if shutil.which("bwrap") is None or shutil.which("socat") is None:
        pytest.skip("bwrap or socat not installed (Debian packages: bubblewrap, socat)")
    planted = [*REPORTED, *_generated(4)]
    work = tmp_path / "w9"
    work.mkdir()
    (work / "README.txt").write_text("hello\n")
    code = "import os\n" + "".join(
        f"os.makedirs(os.path.dirname({rel!r}) or '.', exist_ok=True); open({rel!r}, 'w').write('x')\n"
        for rel in planted
    ) + "open('out.txt', 'w').write('work\\n')\nopen('.gitignore', 'w').write('out.txt\\n')\nprint('all ' + 'written')\n"
    fake_openai.script(Reply(tool_calls=[ToolCallReply(CODE_TOOL, {"code": code}, call_id="c1")]), Reply("done"))
    done = cli(
        "run", "--execution", "sandbox", "--skip-permissions", "-o", "json", *fake_args(fake_openai), "go",
        cwd=work, timeout=240,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    assert "all written" in json.loads(done.stdout)["actions"][0]["output"]
    told = fake_openai.requests[1].tool_results()[0]
    for rel in planted:
        assert not (work / rel).exists(), rel
        parts = rel.split("/")
        # the model is told (a folder the action created is undone, and named, whole)
        assert any("/".join(parts[:k]) + sep in told for k in range(1, len(parts) + 1) for sep in (",", ".", ";")), (
            rel,
            told,
        )
    assert "undone" in done.stderr and "outside the sandbox" in done.stderr  # the user too, and how to write them
    assert (work / "out.txt").read_text() == "work\n"  # ordinary work stays
    assert (work / ".gitignore").read_text() == "out.txt\n"  # an inert name too
