"""Ambient secrets and a library's own settings, in the reading of code (#42, round 3).

Two classes of defect:

- reading the process environment (or stored credentials) read as "computes only": it is its own
  effect, ``Kind.ENVIRONMENT``, that no class allows, named in the one set of words; changing the
  environment cannot be told (later code reads it). Every understood name is checked against the
  objects that expose the environment, so no pure name leads there.
- configuring a known library's in-process settings (``rcParams``, ``pd.options``) read as "cannot
  tell": a table (``known.SETTINGS``) now judges each key, by what its value is to the library (a
  module it imports, a path, a program, or a setting of how it draws); an object as a value, a key
  given at run time, and any object not in the table still cannot be told.
"""

from __future__ import annotations

import getpass
import importlib
import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from freeact_tui.effects import Kind, describe, known, read_effects
from freeact_tui.effects.classes import ALLOWS
from freeact_tui.permissions.patterns import FOLDER_CLASSES
from freeact_tui.permissions.rules import PermissionRules
from freeact_tui.toolcalls import CodeAction


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    work = tmp_path / "work"
    work.mkdir()
    return work


def _read(code: str, folder: Path):  # type: ignore[no-untyped-def]
    return read_effects(CodeAction(code), folder)


READS_ENVIRONMENT = [
    "import os\nkey = os.getenv('OPENAI_API_KEY')",
    "import os\nprint(os.getenv('HOME', ''))",
    "from os import getenv\ngetenv('TOKEN')",
    "import os\nkey = os.environ['OPENAI_API_KEY']",
    "import os\nkey = os.environ.get('ANTHROPIC_API_KEY')",
    "import os\nall_of_it = os.environ.copy()",
    "import os\nprint(list(os.environ.keys()))",
    "import os\nfor k, v in os.environ.items():\n    print(k, v)",
    "import os\nraw = os.environb[b'TOKEN']",
    "import os.path\nos.path.expandvars('$OPENAI_API_KEY')",
    "import getpass\nprint(getpass.getuser())",
    "import netrc\nprint(netrc.netrc().hosts)",
    "import keyring\nkeyring.get_password('svc', 'me')",
    "from dotenv import load_dotenv\nload_dotenv()",
]

CANNOT_TELL = [
    "import os\nos.environ['MPLBACKEND'] = 'module://helper'",  # later code reads it
    "import os\nos.environ.update({'PATH': '.'})",
    "import os\nos.environ.setdefault('X', '1')",
    "import os\ndel os.environ['HOME']",
    "import os\nos.putenv('X', '1')",
    "import os\nos.unsetenv('X')",
    "import os\ne = os.environ\ne['X'] = '1'",
    "import os\nprint(dict(os.environ))",
    "import os\nk = 'OPENAI_API_KEY'\nv = os.environ.pop(k)",
]


@pytest.mark.parametrize("code", READS_ENVIRONMENT)
def test_reading_the_environment_is_its_own_effect_that_no_class_allows(code: str, folder: Path) -> None:
    found = _read(code, folder)
    assert Kind.ENVIRONMENT in found.kinds, describe(found)
    assert found.effect_class is None
    assert "reads the environment or stored credentials" in describe(found)
    rules = PermissionRules(None, working_dir=folder, defaults=False)
    for name in ALLOWS:  # no class an allow rule can name runs it
        rules.add("code", f"effects:{name}", scope="session")
    assert rules.check(CodeAction(code)) == "ask"


@pytest.mark.parametrize("code", CANNOT_TELL)
def test_changing_the_environment_or_passing_it_around_cannot_be_told(code: str, folder: Path) -> None:
    found = _read(code, folder)
    assert Kind.UNKNOWN in found.kinds, describe(found)


def _environment_objects() -> list[object]:
    return [os.environ, os.environb, os.getenv, os.getenvb, os.putenv, os.unsetenv, os.path.expandvars, getpass.getuser]


def test_no_name_the_reading_calls_pure_exposes_the_environment() -> None:
    """Every public name of every understood module that imports here, judged as the reading judges it."""
    exposed = _environment_objects()
    checked = 0
    for module_name, rule in known.MODULES.items():
        try:
            module = importlib.import_module(module_name)
        except Exception:  # noqa: BLE001 - modules of the kernel's venv (numpy, pandas) are not here
            continue
        for name in dir(module):
            what = known.name_in(module_name, rule, name)
            if what != "pure":
                continue
            checked += 1
            value = getattr(module, name, None)
            assert not any(value is e for e in exposed), f"{module_name}.{name} exposes the environment"
    assert checked > 500


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    access=st.sampled_from(READS_ENVIRONMENT + CANNOT_TELL),
    before=st.sampled_from(["", "x = 1\n", "import math\ny = math.sqrt(2)\n", "open('a.txt', 'w').write('1')\n"]),
    after=st.sampled_from(["", "\nprint('done')", "\nz = [i for i in range(3)]"]),
)
def test_benign_code_around_an_environment_access_never_makes_it_allowed(
    access: str, before: str, after: str, folder: Path
) -> None:
    found = _read(before + access + after, folder)
    assert found.effect_class is None and found.kinds & {Kind.ENVIRONMENT, Kind.UNKNOWN}, describe(found)


SETTINGS_COMPUTE = [
    "import matplotlib.pyplot as plt\nplt.rcParams['font.size'] = 12",
    "import matplotlib as mpl\nmpl.rcParams['axes.grid'] = True",
    "import matplotlib.pyplot as plt\nplt.rcParams.update({'figure.figsize': (4, 3), 'lines.linewidth': 2})",
    "import matplotlib.pyplot as plt\nplt.rcParams['font.size'] += 2",
    "import matplotlib as mpl\nmpl.rcParams['backend'] = 'agg'",
    "import matplotlib.pyplot as plt\nsize = plt.rcParams['font.size']",
    "import pandas as pd\npd.options.display.max_rows = 5",
    "import pandas as pd\npd.options.display.float_format = '{:.2f}'.format",
    "import pandas as pd\npd.options.plotting.backend = 'matplotlib'",
    "import pandas as pd\npd.set_option('display.max_rows', 5)",
    "import numpy as np\nnp.set_printoptions(precision=3, suppress=True)",
    "import warnings\nwarnings.filterwarnings('ignore', category=FutureWarning)",
    "import warnings\nwarnings.simplefilter('ignore')",
    "import logging\nlogging.basicConfig(level=logging.INFO, format='%(message)s')",
    "import logging\nlogging.getLogger('x').info('hi')",
]

SETTINGS_WIDER = [
    ("import matplotlib as mpl\nmpl.rcParams['backend'] = 'module://evil'", Kind.UNKNOWN),
    ("import matplotlib.pyplot as plt\nplt.rcParams.update({'backend': 'qt5agg'})", Kind.UNKNOWN),
    ("import matplotlib.pyplot as plt\nplt.rcParams['savefig.directory'] = '/etc'", Kind.OUTSIDE),
    ("import matplotlib.pyplot as plt\nplt.rcParams['savefig.directory'] += '/../../etc'", Kind.UNKNOWN),
    ("import matplotlib.pyplot as plt\nplt.rcParams['backend'] += 'g'", Kind.UNKNOWN),
    ("import matplotlib.pyplot as plt\nplt.rcParams['text.usetex'] = True", Kind.UNKNOWN),
    ("import matplotlib.pyplot as plt\nplt.rcParams['text.latex.preamble'] = r'\\input{/etc/passwd}'", Kind.UNKNOWN),
    ("import matplotlib.pyplot as plt\nplt.rcParams['animation.ffmpeg_path'] = './ffmpeg'", Kind.UNKNOWN),
    ("import matplotlib.pyplot as plt\nplt.rcParams['webagg.open_in_browser'] = True", Kind.UNKNOWN),
    ("import matplotlib.pyplot as plt\nk = input()\nplt.rcParams[k] = 1", Kind.UNKNOWN),
    ("import matplotlib.pyplot as plt\nr = plt.rcParams\nr['backend'] = 'module://x'", Kind.UNKNOWN),
    ("import matplotlib.pyplot as plt\nplt.rcParams.update(dict(backend='module://x'))", Kind.UNKNOWN),
    ("import matplotlib.pyplot as plt\nplt.rcParams.update(**{'backend': 'module://x'})", Kind.UNKNOWN),
    ("import matplotlib.pyplot as plt\nplt.rcParams.clear()", Kind.UNKNOWN),
    ("import pandas as pd\npd.options.plotting.backend = 'helper'", Kind.UNKNOWN),
    ("import pandas as pd\no = pd.options\no.plotting.backend = 'module://helper'", Kind.UNKNOWN),
    ("import pandas as pd\nx = pd.options.plotting\nx.backend = 'helper'", Kind.UNKNOWN),
    ("import pandas as pd\nprint(pd.options.plotting)", Kind.UNKNOWN),
    ("import pandas as pd\npd.options.io.excel.xlsx.writer = 'evil'", Kind.UNKNOWN),
    ("import logging\nlogging.basicConfig(filename='/etc/app.log')", Kind.OUTSIDE),
    ("import logging\nlogging.basicConfig(handlers=[object()])", Kind.UNKNOWN),
    ("import warnings\nwarnings.showwarning = print", Kind.UNKNOWN),
    ("import json\njson.decoder.scanstring = len", Kind.UNKNOWN),  # not a settings object of the table
    ("import matplotlib.pyplot as plt\nplt.rcParamsDefault['text.usetex'] = True\nplt.rcdefaults()", Kind.UNKNOWN),
    ("import numpy as np\nnp.typecodes['x'] = 'y'", Kind.UNKNOWN),  # a library's own value, changed
    ("import numpy as np\nnp.typecodes['x']['y'] = 1", Kind.UNKNOWN),
    ("import numpy as np\ndel np.typecodes['All']", Kind.UNKNOWN),
    ("import matplotlib.pyplot as plt\nplt.style.use('/etc/evil.mplstyle')", Kind.UNKNOWN),
]


@pytest.mark.parametrize("code", SETTINGS_COMPUTE)
def test_configuring_a_known_library_only_computes(code: str, folder: Path) -> None:
    found = _read(code, folder)
    assert found.effect_class == "computes", describe(found)


@pytest.mark.parametrize(("code", "kind"), SETTINGS_WIDER)
def test_a_setting_that_names_a_module_a_path_or_a_program_is_not_in_folder_work(
    code: str, kind: Kind, folder: Path
) -> None:
    found = _read(code, folder)
    assert kind in found.kinds and found.effect_class not in FOLDER_CLASSES, describe(found)


def test_a_log_file_in_the_folder_is_a_write_inside_it(folder: Path) -> None:
    found = _read("import logging\nlogging.basicConfig(filename='run.log', filemode='w')", folder)
    assert found.effect_class == "in-folder" and found.names(Kind.WRITES) == ["run.log"]


_RC = known.SETTINGS["matplotlib.rcParams"]


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    key=st.one_of(
        st.sampled_from(sorted(_RC.groups | _RC.module_keys | _RC.path_keys | _RC.program_keys)).flatmap(
            lambda g: st.sampled_from([g, f"{g}.size", f"{g}.directory", f"{g}.preamble"])
        ),
        st.text(min_size=1, max_size=20),
    ),
    value=st.one_of(st.text(max_size=30), st.sampled_from(["module://helper", "/etc", "agg", "~/x", "../x"])),
    form=st.sampled_from(["plt.rcParams[{k!r}] = {v!r}", "plt.rcParams.update({{{k!r}: {v!r}}})"]),
)
def test_a_setting_reads_as_computing_only_by_a_row_of_the_table(key: str, value: str, form: str, folder: Path) -> None:
    code = "import matplotlib.pyplot as plt\n" + form.format(k=key, v=value)
    found = _read(code, folder)
    if found.effect_class == "computes":
        assert key not in _RC.program_keys and key not in _RC.path_keys, code
        if key in _RC.module_keys:
            assert value.lower() in known.PLOT_BACKENDS, code
        else:
            assert key.split(".")[0] in _RC.groups, code


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    wider=st.sampled_from([code for code, _ in SETTINGS_WIDER]),
    before=st.sampled_from(["", "import matplotlib.pyplot as plt\nplt.rcParams['font.size'] = 9\n", "x = {}\nx['a'] = 1\n"]),
    after=st.sampled_from(["", "\nimport pandas as pd\npd.options.display.max_rows = 3", "\nprint('ok')"]),
)
def test_allowed_settings_around_a_wider_one_never_make_it_pass(wider: str, before: str, after: str, folder: Path) -> None:
    found = _read(before + wider + after, folder)
    assert found.effect_class not in FOLDER_CLASSES, describe(found)
