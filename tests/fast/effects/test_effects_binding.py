"""A rule about a function's parameter judges the BOUND parameter, whatever the spelling (#42, round 6).

The class of defect: "a function's dangerous parameter checked by one spelling" (``np.load(f, None,
True)`` unpickled: only ``allow_pickle=`` was looked at; ``os.walk('.', True, None, True)`` followed
links; ``matplotlib.use(**{'backend': 'module://helper'})`` imported a folder module), and its neighbour
"a judged function used as a value is judged pure" (``map(matplotlib.use, …)``). The mechanism is one
binder (``effects.signatures``) every rule goes through, and ``pycode.has_rule`` for every use of a ruled
function that is not a call the binder binds. Tested over every rule of the tables, in every spelling.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from freeact_tui.effects import Kind, describe, known, read_effects
from freeact_tui.effects.signatures import SIGNATURES, Signature
from freeact_tui.permissions.patterns import FOLDER_CLASSES
from freeact_tui.toolcalls import CodeAction

_SETTINGS = settings(
    max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)


@pytest.fixture()
def folder(tmp_path: Path) -> Path:
    work = tmp_path / "work"
    work.mkdir()
    return work


def _reading(code: str, folder: Path) -> str:
    found = read_effects(CodeAction(code), folder)
    return "cannot tell" if Kind.UNKNOWN in found.kinds else str(found.effect_class)


# -- the table is the functions' own parameter lists -----------------------------------------------


def _ruled() -> list[str]:
    """Every function the reading judges by its arguments: a file it touches, a module it imports."""
    names = [f"{module}.{name}" for module, rule in known.MODULES.items() for name in (rule.touches or {})]
    return sorted({*names, *known.MODULE_NAME_ARGS})


def test_every_function_with_a_rule_has_a_parameter_list() -> None:
    missing = [name for name in _ruled() if name not in SIGNATURES]
    assert not missing


# -- every spelling of one binding is judged the same ----------------------------------------------

_DANGEROUS_VALUES = {"backend": "'module://helper'"}


def _path_parameters(dotted: str) -> set[str]:
    if dotted in known.MODULE_NAME_ARGS:
        return set()
    module, _, name = dotted.rpartition(".")
    touch = (known.MODULES[module].touches or {})[name]
    signature = SIGNATURES[dotted]
    return {
        signature.positional[p] if 0 <= p < len(signature.positional) else k
        for p, k in (*touch.reads, *touch.writes)
    }


def _value(dotted: str, parameter: str, paths: set[str], *, dangerous: bool) -> str:
    if parameter in paths:
        return "'data.txt'"
    if parameter == known.MODULE_NAME_ARGS.get(dotted) or parameter == "backend":
        return "'module://helper'" if dangerous else "'agg'"
    return "True" if dangerous else "None"


def _harmless(dotted: str, parameter: str, paths: set[str]) -> bool:
    return (
        parameter in paths
        or parameter in known.SAFE_KEYWORDS
        or parameter in known.DATA_PARAMETERS
        or parameter == known.MODULE_NAME_ARGS.get(dotted)
    )


def _spellings(dotted: str, positional: list[tuple[str, str]], keywords: list[tuple[str, str]]) -> list[str]:
    """One binding (positional prefix, keyword-only) written every way Python allows."""
    module = dotted.rpartition(".")[0]
    head = f"import {module}\n"
    pos = [v for _, v in positional]
    kw = [*positional, *keywords]
    as_keywords = ", ".join(f"{n}={v}" for n, v in kw)
    as_dict = "{" + ", ".join(f"{n!r}: {v}" for n, v in kw) + "}"
    tail = ", ".join(f"{n}={v}" for n, v in keywords)
    star = f"*[{', '.join(pos)}]" + (f", {tail}" if tail else "")
    plain = ", ".join(pos) + (f", {tail}" if tail else "")
    out = [
        f"{head}{dotted}({plain})",
        f"{head}{dotted}({star})",
        f"{head}{dotted}({as_keywords})",
        f"{head}{dotted}(**{as_dict})",
        f"{head}options = {as_dict}\n{dotted}(**options)",
    ]
    if pos:
        out.append(f"{head}args = ({', '.join(pos)},)\n{dotted}(*args" + (f", {tail})" if tail else ")"))
    if len(pos) > 1:
        first, rest = pos[0], ", ".join(f"{n}={v}" for n, v in [*positional[1:], *keywords])
        out.append(f"{head}{dotted}({first}, {rest})")
    return out


@_SETTINGS
@given(dotted=st.sampled_from(_ruled()), data=st.data())
def test_every_spelling_of_one_binding_is_judged_the_same(
    dotted: str, data: st.DataObject, folder: Path
) -> None:
    signature: Signature = SIGNATURES[dotted]
    paths = _path_parameters(dotted)
    dangerous = data.draw(st.booleans(), label="dangerous")
    length = data.draw(
        st.integers(min(1, len(signature.positional)), len(signature.positional)), label="positional"
    )
    names = list(signature.positional[:length])
    extra = sorted(signature.keyword_only) + (["backend"] if signature.keywords else [])
    keyword_names = (
        data.draw(st.lists(st.sampled_from(extra), unique=True, max_size=2), label="keywords")
        if extra
        else []
    )
    positional = [(n, _value(dotted, n, paths, dangerous=dangerous)) for n in names]
    keywords = [(n, _value(dotted, n, paths, dangerous=dangerous)) for n in keyword_names]
    verdicts = {code: _reading(code, folder) for code in _spellings(dotted, positional, keywords)}
    assert len(set(verdicts.values())) == 1, verdicts
    risky = any(not _harmless(dotted, n, paths) for n, _ in [*positional, *keywords])
    if dangerous and (
        risky
        or any(n == "backend" or n == known.MODULE_NAME_ARGS.get(dotted) for n, _ in [*positional, *keywords])
    ):
        assert set(verdicts.values()) == {"cannot tell"}, verdicts


# -- a ruled function used as a value is that call with arguments never seen -----------------------

_VALUE_USES = [
    "list(map({f}, ['module://helper']))",
    "list(filter({f}, ['x']))",
    "sorted(['module://helper'], key={f})",
    "fs = [{f}]",
    "table = {{'k': {f}}}",
    "def g(a={f}):\n    return a",
    "@{f}\ndef g():\n    return 1",
    "def g():\n    return {f}",
    "h = lambda: {f}",
    "import functools\np = functools.partial({f}, 'module://helper')",
    "x = {f} if True else None",
    "pair = ({f}, 1)",
]


def _value_spellings(dotted: str) -> list[tuple[str, str]]:
    """``(import line, the name as a value)``: by its module and by ``from module import name``."""
    module, _, name = dotted.rpartition(".")
    return [
        (f"import {module}\n", dotted),
        (f"from {module} import {name}\n", name),
        (f"from {module} import {name} as alias\n", "alias"),
    ]


@_SETTINGS
@given(
    dotted=st.sampled_from(
        [n for n in SIGNATURES if n not in ("open", "pathlib.Path.open")] + sorted(known.MODULE_NAME_ARGS)
    ),
    use=st.sampled_from(_VALUE_USES),
    spelling=st.integers(0, 2),
)
def test_any_ruled_function_used_as_a_value_cannot_be_told(
    dotted: str, use: str, spelling: int, folder: Path
) -> None:
    head, name = _value_spellings(dotted)[spelling]
    code = head + use.format(f=name)
    assert _reading(code, folder) == "cannot tell", (code, describe(read_effects(CodeAction(code), folder)))


# -- the reported cases -------------------------------------------------------------------------------

REPORTED = [
    "import numpy as np; print(np.load('data2.npy', None, True))",
    "import numpy as np\nnp.load('data.npy', mmap_mode=None, allow_pickle=True)",
    "import numpy as np\nnp.load(*['data.npy', None, True])",
    "import numpy as np\nnp.load('data.npy', **{'allow_pickle': True})",
    "import os\nprint(list(os.walk('.', True, None, True)))",
    "import os\nlist(os.walk(**{'top': '.', 'followlinks': True}))",
    "import matplotlib\nmatplotlib.use(**{'backend': 'module://helper'}); print('x')",
    "import matplotlib\nlist(map(matplotlib.use, ['module://helper']))",
    "import matplotlib\nsorted(['module://helper'], key=matplotlib.use)",
    "from matplotlib import use\nlist(map(use, ['module://helper']))",
    "import matplotlib\nmatplotlib.use(*['module://helper'])",
    "import pandas as pd\npd.DataFrame({'a': [1]}).plot(**{'backend': 'module://helper'})",
    "import matplotlib.pyplot as plt\nopts = {'backend': 'module://helper'}\nplt.savefig('a.pdf', **opts)",
    "import matplotlib.pyplot as plt\nplt.figure().savefig('a.pdf', **dict(backend='module://helper'))",
    "open('a.txt', 'r', -1, None, None, None, True, print)",
    "open(*['a.txt', 'r'], **{'opener': print})",
]


@pytest.mark.parametrize("code", REPORTED)
def test_each_reported_spelling_cannot_be_told(code: str, folder: Path) -> None:
    assert _reading(code, folder) == "cannot tell", code


STILL_IN_FOLDER = [
    "import numpy as np\nnp.load('data.npy')",
    "import numpy as np\nnp.save('out.npy', np.zeros(3))",
    "import numpy as np\nnp.savetxt('out.txt', np.zeros(3), fmt='%d')",
    "import os\nos.makedirs('d', exist_ok=True)",
    "import os\nlist(os.walk('.'))",
    "import matplotlib\nmatplotlib.use('agg')",
    "import matplotlib\nmatplotlib.use(**{'backend': 'agg'})",
    "import matplotlib.pyplot as plt\nstyle = {'color': 'red'}\nplt.plot([1, 2], **style)",
    "with open('a.txt', 'w', encoding='utf-8') as f:\n    f.write('x')",
    "print(open(*['a.txt']).read())",
]


@pytest.mark.parametrize("code", STILL_IN_FOLDER)
def test_plain_in_folder_spellings_still_read_as_in_folder_work(code: str, folder: Path) -> None:
    found = read_effects(CodeAction(code), folder)
    assert found.effect_class in FOLDER_CLASSES, (code, describe(found))


# -- keywords judged by name on any call are judged in every keyword spelling --------------------------

_KEYWORD_RULES = [
    ("backend", "'module://helper'"),
    ("format", "'{asctime.__class__}'"),
    ("format", "'{x.y}'"),
    *[(k, "True") for k in sorted(known.PROGRAM_KEYWORDS)],
]
_CALLEES = [
    "import matplotlib.pyplot as plt\nplt.savefig('a.pdf', {kw})",
    "import matplotlib.pyplot as plt\nplt.text(0, 0, 'x', {kw})",
    "import logging\nlogging.basicConfig(style='{{', {kw})",
    "import pandas as pd\npd.DataFrame({{'a': [1]}}).plot({kw})",
]


@_SETTINGS
@given(rule=st.sampled_from(_KEYWORD_RULES), callee=st.sampled_from(_CALLEES))
def test_a_keyword_judged_by_name_is_judged_in_every_spelling(
    rule: tuple[str, str], callee: str, folder: Path
) -> None:
    name, value = rule
    spellings = [f"{name}={value}", f"**{{{name!r}: {value}}}", f"**dict({name}={value})"]
    codes = [callee.format(kw=kw) for kw in spellings]
    codes.append(callee.format(kw="**opts").replace("\n", f"\nopts = {{{name!r}: {value}}}\n", 1))
    verdicts = {code: _reading(code, folder) for code in codes}
    assert all(v in ("cannot tell", "programs") for v in verdicts.values()), verdicts


# -- a literal spread into a call is its binding's only while nothing else can change it ---------------

_CHANGES = [
    "{n}[{k!r}] = {v}",
    "{n}.update({{{k!r}: {v}}})",
    "{n}.setdefault({k!r}, {v})",
    "alias = {n}\nalias[{k!r}] = {v}",
    "def change():\n    {n}[{k!r}] = {v}\nchange()",
    "[{n}.__setitem__({k!r}, {v})]",
]
_SPREAD = [
    ("import matplotlib\nopts = {{'backend': 'agg'}}\n{change}\nmatplotlib.use(**opts)", "opts", "backend", "'module://helper'"),
    ("import logging\nopts = {{'format': '%(x)s'}}\n{change}\nlogging.basicConfig(style='{{', **opts)", "opts", "format", "'{x.y}'"),
    ("import numpy as np\nopts = {{'file': 'd.npy'}}\n{change}\nnp.load(**opts)", "opts", "allow_pickle", "True"),
    ("import numpy as np\nargs = ['d.npy', None, False]\n{change}\nnp.load(*args)", "args", 2, "True"),
]


@_SETTINGS
@given(spread=st.sampled_from(_SPREAD), change=st.sampled_from(_CHANGES))
def test_a_spread_literal_the_cell_changes_cannot_be_told(
    spread: tuple[str, str, object, str], change: str, folder: Path
) -> None:
    template, name, key, value = spread
    code = template.format(change=change.format(n=name, k=key, v=value))
    assert _reading(code, folder) == "cannot tell", code


# -- a path's own reads and writes bind their arguments too ------------------------------------------

_PATH_RISKY = [
    ("rglob", "'*'", "recurse_symlinks", "True"),
    ("glob", "'*'", "recurse_symlinks", "True"),
    ("exists", None, "follow_symlinks", "False"),
    ("stat", None, "follow_symlinks", "False"),
    ("samefile", None, "other_path", "'b.txt'"),
    ("chmod", "0o644", "follow_symlinks", "False"),
]


@pytest.mark.parametrize(("method", "first", "parameter", "value"), _PATH_RISKY)
def test_a_path_methods_risky_parameter_cannot_be_told_in_any_spelling(
    method: str, first: str | None, parameter: str, value: str, folder: Path
) -> None:
    lead = f"{first}, " if first else ""
    spellings = [f"{lead}{parameter}={value}", f"{lead}**{{{parameter!r}: {value}}}"]
    if parameter == "other_path":
        spellings.append(value)
    for arguments in spellings:
        code = f"from pathlib import Path\nprint(Path('a.txt').{method}({arguments}))"
        assert _reading(code, folder) == "cannot tell", code


@pytest.mark.parametrize(
    "code",
    [
        "from pathlib import Path\nprint(list(Path('.').rglob('*')))",
        "from pathlib import Path\nprint(Path('a.txt').read_text(**{'encoding': 'utf-8'}))",
        "from pathlib import Path\nPath('a.txt').write_text('x', 'utf-8', 'strict')",
        "from pathlib import Path\nPath('d').mkdir(parents=True, exist_ok=True)",
        "from pathlib import Path\nPath('a.txt').unlink(missing_ok=True)",
    ],
)
def test_plain_path_reads_and_writes_still_read_as_in_folder_work(code: str, folder: Path) -> None:
    found = read_effects(CodeAction(code), folder)
    assert found.effect_class in FOLDER_CLASSES, (code, describe(found))
