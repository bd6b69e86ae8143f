"""Reads of files that carry credentials are never work inside the folder (#42, round 6).

The class of defect: "a secret file read as an ordinary file of the folder" (``open('.git/config').read()``
ran unasked in-folder; a remote URL may carry a token). The mechanism: the one secret table
(``gitreads.SECRET_NAMES``, the ask rules' too) is consulted by the reading for every path it judges,
so every read spelling the reading understands names the secret as "reads stored credentials". Also
a keyword named as a setting that runs a program (``usetex=True``) runs a program.
"""

from __future__ import annotations

import os
import re
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from freeact_tui.effects import Kind, describe, known, read_effects
from freeact_tui.permissions.patterns import FOLDER_CLASSES
from freeact_tui.shell.gitreads import SECRET_NAMES
from freeact_tui.toolcalls import CodeAction

_SETTINGS = settings(
    max_examples=250, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)


@pytest.fixture()
def folder(tmp_path: Path) -> Path:
    work = tmp_path / "work"
    work.mkdir()
    return work


_EXAMPLES = sorted({re.sub(r"\[[^]]*\]", "_", g).replace("/**", "/x").replace("**", "x").replace("*", "x") for g in SECRET_NAMES})

_READS = [
    "print(open({p!r}).read())",
    "print(open({p!r}, 'rb').read())",
    "print(open(file={p!r}).read())",
    "print(open(**{{'file': {p!r}}}).read())",
    "with open({p!r}, encoding='utf-8') as f:\n    print(f.read())",
    "from pathlib import Path\nprint(Path({p!r}).read_text())",
    "from pathlib import Path\nprint(Path({p!r}).read_bytes())",
    "from pathlib import Path\nprint((Path('.') / {p!r}).read_text())",
    "from pathlib import Path\nprint(Path(*{parts!r}).read_text())",
    "import os\nprint(open(os.path.join(*{parts!r})).read())",
    "import numpy as np\nprint(np.loadtxt({p!r}, dtype=str))",
    "import numpy as np\nprint(np.genfromtxt({p!r}))",
    "import pandas as pd\nprint(pd.read_csv({p!r}))",
    "import shutil\nshutil.copy({p!r}, 'copy.txt')",
    "import shutil\nshutil.copyfile(src={p!r}, dst='copy.txt')",
    "p = {p!r}\nprint(open(p).read())",
]


@_SETTINGS
@given(
    secret=st.sampled_from(_EXAMPLES),
    read=st.sampled_from(_READS),
    where=st.sampled_from(["", "sub/", "a/b/"]),
    linked=st.booleans(),
)
def test_any_read_of_a_secret_file_is_not_in_folder_work(secret: str, read: str, where: str, linked: bool) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        _secret_read_is_not_in_folder_work(Path(tmp), secret, read, where, linked)


def _secret_read_is_not_in_folder_work(folder: Path, secret: str, read: str, where: str, linked: bool) -> None:
    path = where + secret
    (folder / path).parent.mkdir(parents=True, exist_ok=True)
    (folder / path).write_text("token")
    if linked:  # a link of the folder that leads to the secret: judged where it leads
        os.symlink(folder / path, folder / "notes.txt")
        path = "notes.txt"
    code = read.format(p=path, parts=path.split("/"))
    found = read_effects(CodeAction(code), folder)
    assert found.effect_class not in FOLDER_CLASSES, (code, describe(found))
    assert Kind.ENVIRONMENT in found.kinds or Kind.UNKNOWN in found.kinds, (code, describe(found))


REPORTED = ["open('.git/config').read()", "print(open('.git/config').read())"]


@pytest.mark.parametrize("code", REPORTED)
def test_reading_the_repositorys_config_reads_stored_credentials(code: str, folder: Path) -> None:
    (folder / ".git").mkdir()
    (folder / ".git" / "config").write_text('[remote "o"]\n\turl = https://user:tok@example.com/r\n')
    found = read_effects(CodeAction(code), folder)
    assert Kind.ENVIRONMENT in found.kinds, describe(found)
    assert ".git/config" in describe(found)


def test_other_files_of_the_folder_still_read_as_in_folder_work(folder: Path) -> None:
    found = read_effects(CodeAction("print(open('notes/config').read())\nprint(open('git.txt').read())"), folder)
    assert found.effect_class == "reads", describe(found)


# -- a keyword named as a setting that runs a program ------------------------------------------------

_CALLS = [
    "plt.text(0, 0, 'x', {k}={v})",
    "plt.figure().text(0, 0, 'x', {k}={v})",
    "plt.title('x', **{{'{k}': {v}}})",
    "plt.xlabel('x', {k}={v})",
    "fig, ax = plt.subplots()\nax.set_title('x', {k}={v})",
]


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    keyword=st.sampled_from(sorted(known.PROGRAM_KEYWORDS)),
    call=st.sampled_from(_CALLS),
    value=st.sampled_from(["True", "'pdflatex'", "1", "flag"]),
)
def test_a_keyword_that_sets_a_program_setting_runs_a_program(
    keyword: str, call: str, value: str, folder: Path
) -> None:
    code = "import matplotlib.pyplot as plt\nflag = True\n" + call.format(k=keyword, v=value) + "\nplt.savefig('a.png')"
    found = read_effects(CodeAction(code), folder)
    assert Kind.PROGRAMS in found.kinds or Kind.UNKNOWN in found.kinds, (code, describe(found))
    assert found.effect_class not in FOLDER_CLASSES


def test_usetex_runs_latex_and_its_absence_does_not(folder: Path) -> None:
    code = "import matplotlib.pyplot as plt\nplt.text(0, 0, 'x', usetex={})\nplt.savefig('a.png')"
    assert Kind.PROGRAMS in read_effects(CodeAction(code.format("True")), folder).kinds
    assert read_effects(CodeAction(code.format("False")), folder).effect_class == "in-folder"
    pgf = "import matplotlib.pyplot as plt\nplt.plot([1])\nplt.savefig('a.pdf', backend='pgf')"
    assert read_effects(CodeAction(pgf), folder).effect_class not in FOLDER_CLASSES
