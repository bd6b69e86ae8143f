"""Parallel code calls of one reply are read right before each runs (#42, F1: time of check = time of use).

One reply, two code calls: the first moves a folder holding a relative symlink (allowed by an exact-cell
rule, as a user's hand approval would), the second writes through the moved link. Read at once, both judged
the folder as it was (the link led inside) and the write ran unasked, outside the folder. Read in order,
after the first has run, the second's path leads outside: refused.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from freeact_tui.permissions.cells import cell_pattern
from tests.fake_openai import FakeOpenAI, Reply, ToolCallReply
from tests.helpers import cli, fake_args

CODE_TOOL = "ipybox_execute_ipython_cell"

MOVE = "import os\nos.rename('deep/x/y', 'y')\nprint('moved')"
WRITE = "f = open('y/lnk/planted.txt', 'a')\nf.write('PWNED\\n')\nf.close()\nprint('written')"


def _layout(tmp_path: Path) -> tuple[Path, Path]:
    """``work/deep/x/y/lnk -> ../../outside``: inside the folder where it is, outside once ``y`` moves up."""
    work, outside = tmp_path / "work", tmp_path / "outside"
    (work / "deep" / "outside").mkdir(parents=True)
    (work / "deep" / "x" / "y").mkdir(parents=True)
    outside.mkdir()
    os.symlink("../../outside", work / "deep" / "x" / "y" / "lnk")
    return work, outside


@pytest.mark.kernel
def test_a_parallel_call_is_read_after_the_earlier_one_ran(fake_openai: FakeOpenAI, tmp_path: Path) -> None:
    work, outside = _layout(tmp_path)
    fake_openai.script(
        Reply(
            tool_calls=[
                ToolCallReply(CODE_TOOL, {"code": MOVE}, call_id="call_1"),
                ToolCallReply(CODE_TOOL, {"code": WRITE}, call_id="call_2"),
            ]
        ),
        Reply("done"),
    )
    done = cli(
        "run", *fake_args(fake_openai), "--action-protocol", "tools",
        "--allow", "effects:in-folder", "--allow", f"code:{cell_pattern(MOVE)}",
        "-o", "json", "tidy up", cwd=work,
    )  # fmt: skip
    assert (work / "y" / "lnk").is_symlink()  # the first call ran
    assert not (outside / "planted.txt").exists(), done.stdout
    result = json.loads(done.stdout)
    assert done.returncode == 2 and result["status"] == "refused", done.stderr
    (refusal,) = result["refusals"]
    assert "outside this folder" in done.stderr and str(outside) in done.stderr
    assert refusal["allow"] != "code:effects:in-folder"
