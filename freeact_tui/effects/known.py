"""The allow-list the reading of code is held to: the builtins, modules, functions and methods it understands.

Anything not named here is "cannot tell". A module is understood in one of three ways: every public
name is pure (checked at import: a name bound to a module, such as ``uuid.os``, is not pure), only the
names listed are pure, or the whole module has one effect (``subprocess`` runs programs). Functions
that touch files are listed with the positions of their path arguments, so that the reading can
name the paths and check where they lead; every call of one is bound to the function's parameter list
(``signatures``), so a parameter is judged the same whichever way it is given.
"""

from __future__ import annotations

import dataclasses
import importlib
import inspect
import pathlib
import re
import types
from dataclasses import dataclass
from functools import cache

from freeact_tui.effects.classes import Kind
from freeact_tui.effects.landing import (
    AND_PARENTS,
    AS_NAMED,
    INTO_FOLDER,
    MATPLOTLIB_IMAGE,
    NUMPY_DATASOURCE,
    NUMPY_NPY,
    NUMPY_NPZ,
    Landing,
)
from freeact_tui.effects.settings_table import SETTINGS, SETTINGS_READS, Settings

PURE_BUILTINS = frozenset(
    "abs aiter all anext any ascii bin bool bytearray bytes callable chr classmethod complex dict divmod "
    "enumerate filter float format frozenset hash hex id int isinstance issubclass iter len list map max "
    "min next object oct ord pow print property range repr reversed round set slice sorted staticmethod "
    "str sum super tuple type zip True False None NotImplemented Ellipsis".split()
) | frozenset(
    "BaseException Exception ArithmeticError AssertionError AttributeError EOFError FileExistsError "
    "FileNotFoundError FloatingPointError ImportError IndexError KeyError KeyboardInterrupt LookupError "
    "MemoryError NameError NotImplementedError OSError OverflowError RecursionError RuntimeError "
    "StopIteration StopAsyncIteration SyntaxError TypeError UnicodeError UnicodeDecodeError "
    "UnicodeEncodeError ValueError ZeroDivisionError TimeoutError PermissionError IsADirectoryError "
    "NotADirectoryError ExceptionGroup Warning UserWarning DeprecationWarning RuntimeWarning FutureWarning "
    "PendingDeprecationWarning SyntaxWarning ImportWarning UnicodeWarning BytesWarning ResourceWarning".split()
)
"""Builtins that compute only (``open`` is judged by its arguments; the rest of builtins are unknown)."""

CHECKED_BUILTINS = frozenset({"open"})


@dataclass(frozen=True)
class FormatRuns:
    """The column of the reader rows: whether what a reader reads decides that it runs a program or loads code
    (#42). Pillow opens any image but PNG by its contents, and an EPS file runs Ghostscript; an unpickler runs
    the code it reads. A format in neither ``runs`` nor ``safe``, or one given at run time, cannot be told.

    Attributes:
        program: what runs, in words (``Ghostscript (Pillow picks an image's reader by its contents)``).
        runs: formats (suffixes in lower case, without the dot) for which it runs ``program``.
        safe: formats for which it is known to run nothing.
        format_keyword: the parameter that names the format instead of the path's suffix (``format``).
        code_keyword: a parameter that, unless a constant false, makes it load code (``allow_pickle``).
        always: it loads code whatever the format (``pd.read_pickle``): what runs cannot be told.
    """

    program: str
    runs: frozenset[str] = frozenset()
    safe: frozenset[str] = frozenset()
    format_keyword: str | None = None
    code_keyword: str | None = None
    always: bool = False


@dataclass(frozen=True)
class Touch:
    """A function that touches files: the path arguments it reads and writes (position, keyword)."""

    reads: tuple[tuple[int, str], ...] = ()
    writes: tuple[tuple[int, str], ...] = ()
    bare: Kind | None = None
    """Called without any path argument, what it does (``None``: it only computes)."""
    optional: bool = False
    """Its path arguments may be left out (``logging.basicConfig()``): then it only computes. A negative
    position is a keyword-only argument."""
    lands: Landing = AS_NAMED
    """Where its destination (the last path it writes; a reader's: the path it reads) really lands
    (``landing``): ``np.save('data')`` writes ``data.npy``, ``shutil.copy(src, folder)`` writes
    ``folder/<name of src>``, ``np.loadtxt('nums')`` reads ``nums.gz`` when there is no ``nums``."""
    runs: FormatRuns | None = None
    """A reader whose format decides whether it runs a program or loads code (``FormatRuns``); ``None``: it
    reads data whatever the format (the reader rows' corpus test lists every row with its column)."""


@dataclass(frozen=True)
class Module:
    """How a module is understood."""

    pure: frozenset[str] = frozenset()
    every_public: bool = False
    """Every public name not in ``touches``, ``effects`` or ``unknown`` is pure (submodules aside)."""
    touches: dict[str, Touch] | None = None
    effects: dict[str, Kind] | None = None
    whole: Kind | None = None
    """The whole module has this effect (importing it is enough)."""
    family: bool = False
    """Its submodules are understood as it is (``numpy.linalg``), not imported to check."""
    submodules: frozenset[str] = frozenset()
    """A family's submodules a name may be in (``numpy.linalg.norm``: ``linalg``); a name deeper in any
    other (``numpy.random.os.system``: a module the submodule imported) is not understood."""
    unknown: frozenset[str] = frozenset()


_R0 = Touch(reads=((0, "path"),))
_W0 = Touch(writes=((0, "path"),))
_W0_1 = Touch(writes=((0, "src"), (1, "dst")))
_R0_W1 = Touch(reads=((0, "src"),), writes=((1, "dst"),))
_NPY = Touch(writes=((0, "file"),), lands=NUMPY_NPY)
_NPZ = Touch(writes=((0, "file"),), lands=NUMPY_NPZ)
IMAGE_WRITE = Touch(writes=((0, "fname"),), lands=MATPLOTLIB_IMAGE)
"""``savefig``: appends the default format's extension to a name without one."""

IMAGE_READ = Touch(
    reads=((0, "fname"),),
    runs=FormatRuns(
        "Ghostscript (Pillow picks an image's reader by its contents)",
        runs=frozenset({"eps", "ps"}),  # Pillow's own extensions of its EPS reader
        safe=frozenset({"png"}),  # matplotlib opens a .png with Pillow's PNG reader only
        format_keyword="format",
    ),
)
"""``plt.imread``: a PNG is read as PNG; any other name is handed to ``PIL.Image.open``, which picks its reader
by the file's contents: an EPS file (whatever its name) runs Ghostscript."""
UNPICKLES = FormatRuns("the code a pickle holds", always=True)
"""A reader that unpickles what it reads (``pd.read_pickle``): it runs the code the file holds."""
NUMPY_LOAD = Touch(
    reads=((0, "file"),), runs=FormatRuns("the code a pickle holds", code_keyword="allow_pickle")
)
"""``np.load``: ``.npy``/``.npz`` data; with ``allow_pickle`` true, a pickled object array runs its code."""

_PURE_EVERY_PUBLIC = (
    "math cmath statistics itertools textwrap re json csv collections collections.abc heapq bisect decimal "
    "fractions random datetime calendar time copy base64 binascii hashlib zlib struct unicodedata pprint "
    "numbers difflib enum abc array functools html".split()
)
_PARTS = {
    "string": "ascii_letters ascii_lowercase ascii_uppercase digits hexdigits octdigits punctuation printable "
    "whitespace capwords Template",
    "operator": "add sub mul truediv floordiv mod pow neg pos abs eq ne lt le gt ge and_ or_ xor not_ "
    "itemgetter contains countOf indexOf concat iadd",
    "typing": "Any Callable Dict List Optional Set Tuple Union Iterable Iterator Sequence Mapping "
    "NamedTuple TypedDict Literal Generator cast overload Final ClassVar TypeVar Protocol",
    "dataclasses": "dataclass field fields asdict astuple replace is_dataclass",
    "uuid": "UUID uuid4",
    "io": "StringIO BytesIO",
    "asyncio": "sleep wait_for Queue Event Lock Semaphore TimeoutError CancelledError",
    "os.path": "join basename dirname split splitext normpath sep extsep",
    "os": "sep linesep name curdir pardir extsep getcwd cpu_count",
    "warnings": "filterwarnings simplefilter resetwarnings catch_warnings warn",
    "logging": "getLogger debug info warning error critical exception log disable captureWarnings "
    "DEBUG INFO WARNING ERROR CRITICAL NOTSET",
    "pathlib": "Path PurePath PosixPath PurePosixPath",
}
_NUMPY_IO = {
    "load": NUMPY_LOAD, "fromfile": _R0,
    "loadtxt": Touch(reads=((0, "path"),), lands=NUMPY_DATASOURCE),
    "genfromtxt": Touch(reads=((0, "path"),), lands=NUMPY_DATASOURCE),
    "save": _NPY, "savetxt": _W0, "savez": _NPZ, "savez_compressed": _NPZ,
}  # fmt: skip
_PANDAS_READS = "csv json excel parquet feather table fwf orc xml stata sas spss html".split()
_NUMPY_FAMILY_UNKNOWN = frozenset(
    "memmap fromregex ctypeslib distutils f2py testing lib DataSource show_config info source who "
    "load_library dump dumps loads tofile core char rec mrecords compat".split()
)
_PANDAS_UNKNOWN = frozenset(
    "eval read_sql read_sql_query read_sql_table read_clipboard read_gbq read_hdf HDFStore "
    "ExcelWriter io api set_eng_float_format options core compat".split()
)

_OS_TOUCHES = {
    "listdir": _R0, "scandir": _R0, "walk": _R0, "stat": _R0, "lstat": _R0,
    "makedirs": _W0, "mkdir": _W0, "remove": _W0, "unlink": _W0, "rmdir": _W0,
    "removedirs": Touch(writes=((0, "name"),), lands=AND_PARENTS),
    "rename": _W0_1, "replace": _W0_1,
}  # fmt: skip
_OS_PATH_TOUCHES = {
    n: _R0 for n in "exists isfile isdir islink getsize getmtime getctime getatime realpath abspath".split()
}
_OS_EFFECTS = {
    n: Kind.PROGRAMS
    for n in "system popen fork forkpty execl execle execlp execlpe execv execve execvp execvpe spawnl "
    "spawnle spawnlp spawnlpe spawnv spawnve spawnvp spawnvpe posix_spawn posix_spawnp startfile kill "
    "killpg".split()
}
# not copytree: it copies what the symlinks inside a tree point to, wherever that is
_SHUTIL_TOUCHES = {
    "copy": Touch(reads=((0, "src"),), writes=((1, "dst"),), lands=INTO_FOLDER),
    "copy2": Touch(reads=((0, "src"),), writes=((1, "dst"),), lands=INTO_FOLDER),
    "copyfile": _R0_W1, "move": Touch(writes=((0, "src"), (1, "dst")), lands=INTO_FOLDER),
    "rmtree": _W0, "disk_usage": _R0,
}  # fmt: skip

AMBIENT: dict[str, frozenset[str]] = {
    "os": frozenset({"getenv", "getenvb"}),
    "os.path": frozenset({"expandvars"}),
    "getpass": frozenset({"getuser"}),
    "numpy": frozenset({"show_runtime"}),
    "pandas": frozenset({"show_versions"}),
}
"""Every understood function that exposes the process environment (where API keys and tokens live):
``Kind.ENVIRONMENT``, which no class allows. The mapping ``os.environ``/``os.environb`` is a settings
object (``SETTINGS``); ``subprocess``'s ``env`` runs programs anyway, and ``/proc/self/environ`` is a
path outside the folder. Changing the environment (``putenv``, ``os.environ[k] = v``) cannot be told:
later code reads it (``MPLBACKEND`` names a module matplotlib imports)."""

_AMBIENT_MODULES = "netrc keyring dotenv".split()
"""Modules whose whole purpose is ambient credentials (``~/.netrc``, the system keyring, ``.env`` files)."""

_PROGRAM_MODULES = "subprocess pty multiprocessing concurrent.futures.process pexpect sh plumbum".split()
_NETWORK_MODULES = (
    "socket socketserver ssl http http.client http.server urllib urllib.request urllib.parse ftplib "
    "smtplib poplib imaplib telnetlib xmlrpc xmlrpc.client requests httpx aiohttp websockets websocket "
    "paramiko urllib3 boto3 openai anthropic".split()
)

MODULES: dict[str, Module] = {
    **{name: Module(every_public=True) for name in _PURE_EVERY_PUBLIC},
    **{name: Module(pure=frozenset(names.split())) for name, names in _PARTS.items()},
    "numpy": Module(
        every_public=True,
        family=True,
        touches=_NUMPY_IO,
        unknown=_NUMPY_FAMILY_UNKNOWN,
        submodules=frozenset(
            "linalg fft random polynomial polynomial.polynomial polynomial.chebyshev polynomial.legendre "
            "polynomial.hermite polynomial.laguerre ma emath dtypes exceptions".split()
        ),
    ),
    "pandas": Module(
        every_public=True,
        family=True,
        touches={
            **{f"read_{n}": _R0 for n in _PANDAS_READS},
            "read_pickle": Touch(reads=((0, "filepath_or_buffer"),), runs=UNPICKLES),
        },
        unknown=_PANDAS_UNKNOWN,
        submodules=frozenset("plotting tseries tseries.offsets errors arrays".split()),
    ),
    "matplotlib.pyplot": Module(
        every_public=True,
        touches={"savefig": IMAGE_WRITE, "imsave": _W0, "imread": IMAGE_READ},
        # rcParams["backend"] names a module to import (and other keys name programs to run)
        unknown=frozenset(
            "switch_backend get_current_fig_manager install_repl_displayhook rcParams rc rc_context style "
            "rcParamsDefault rcParamsOrig rcdefaults rc_file rc_file_defaults backend_registry".split()
        ),
    ),
    "matplotlib": Module(pure=frozenset({"use"})),
    **{name: Module(whole=Kind.PROGRAMS) for name in _PROGRAM_MODULES},
    **{name: Module(whole=Kind.NETWORK) for name in _NETWORK_MODULES},
    **{name: Module(whole=Kind.ENVIRONMENT) for name in _AMBIENT_MODULES},
    "getpass": Module(),
    "logging": Module(
        pure=frozenset(_PARTS["logging"].split()),
        # a log file is a path it writes; handlers and streams are values the reading does not follow
        touches={"basicConfig": Touch(writes=((-1, "filename"),), optional=True)},
    ),
}
MODULES["os"] = Module(pure=MODULES["os"].pure, touches=_OS_TOUCHES, effects=_OS_EFFECTS)
MODULES["os.path"] = Module(pure=MODULES["os.path"].pure, touches=_OS_PATH_TOUCHES)
MODULES["shutil"] = Module(touches=_SHUTIL_TOUCHES, effects={"which": Kind.PROGRAMS})
for _module, _names in AMBIENT.items():
    MODULES[_module] = dataclasses.replace(
        MODULES[_module],
        effects={**(MODULES[_module].effects or {}), **dict.fromkeys(_names, Kind.ENVIRONMENT)},
    )
MODULES["asyncio"] = Module(
    pure=MODULES["asyncio"].pure,
    effects={
        "open_connection": Kind.NETWORK,
        "start_server": Kind.NETWORK,
        "create_subprocess_exec": Kind.PROGRAMS,
        "create_subprocess_shell": Kind.PROGRAMS,
    },
)
PURE_METHODS = frozenset(
    # str, bytes, list, dict, set, tuple, numbers
    "capitalize casefold center count decode encode endswith expandtabs find format format_map index isalnum "
    "isalpha isascii isdecimal isdigit isidentifier islower isnumeric isprintable isspace istitle isupper join "
    "ljust lower lstrip maketrans partition removeprefix removesuffix rfind rindex rjust rpartition rsplit "
    "rstrip split splitlines startswith strip swapcase title translate upper zfill hex fromhex "
    "append extend insert pop remove reverse sort copy clear get items keys values setdefault update "
    "replace popitem fromkeys add discard difference difference_update intersection intersection_update isdisjoint "
    "issubset issuperset symmetric_difference union conjugate bit_length as_integer_ratio is_integer real imag "
    # file handles (opened by a checked ``open``) and string buffers
    "read readline readlines write writelines close seek tell flush getvalue readable writable seekable "
    # re, datetime, csv, json, collections, itertools
    "group groups groupdict span start end match search fullmatch findall finditer sub subn "
    "isoformat strftime timestamp date time weekday isoweekday total_seconds astimezone "
    "writerow writerows writeheader most_common elements subtract appendleft popleft extendleft rotate "
    "hexdigest digest "
    # numpy arrays and pandas frames (what they compute)
    "sum mean median std var min max argmin argmax cumsum cumprod prod round abs clip any all "
    "reshape ravel flatten transpose astype tolist item dot nonzero squeeze "
    "head tail describe info groupby agg aggregate merge join concat pivot pivot_table melt sort_values "
    "sort_index reset_index set_index drop dropna fillna isna notna isnull notnull unique nunique "
    "value_counts rename loc iloc at iat corr cov rolling resample shift diff pct_change quantile "
    "apply map applymap transform where mask filter sample duplicated drop_duplicates nlargest nsmallest "
    "plot bar barh hist scatter line pie boxplot set_title set_xlabel set_ylabel legend grid subplots "
    "tight_layout figure set_xticks set_yticks annotate text fill_between axhline axvline imshow "
    "add_subplot set_xlim set_ylim twinx to_numpy to_dict to_list tolist to_frame to_datetime str dt cat "
    "lstsq solve inv eig normal uniform integers random choice shuffle permutation standard_normal seed".split()
)
"""Methods that only compute on any value the reading allowed to exist (a value of an unknown kind cannot)."""

ARG_WRITE_METHODS = frozenset(
    "to_csv to_json to_excel to_parquet to_feather to_html to_latex to_markdown to_string to_xml "
    "to_stata to_orc savefig".split()
)
"""Methods on values that write their first argument (as a path) when they have one; else they compute."""

DATA_ATTRIBUTES = frozenset(
    # arrays, frames and series; numbers, dates and times; matches; exceptions; figures' parts
    "shape ndim size dtype dtypes T columns index values empty name names nbytes itemsize flat axes "
    "year month day hour minute second microsecond days seconds microseconds tzinfo "
    "string pos endpos lastindex lastgroup re pattern flags args".split()
)
"""Attributes of the values the reading allows that are data, not methods that touch anything."""

LATER_METHODS: dict[str, str] = {
    **dict.fromkeys(
        "call_soon call_soon_threadsafe call_later call_at run_in_executor add_done_callback add_reader "
        "add_writer add_signal_handler create_task ensure_future submit map_async apply_async "
        "mpl_connect connect register add_callback new_timer".split(),
        "a callback or a task that runs after the cell",
    ),
}
"""Methods that start work which outlives its cell (a task, a callback, a thread): whatever the cell is read
as, that work runs later, when the reading of a later cell cannot account for it."""

LATER_NAMES = frozenset(
    "create_task ensure_future gather run_coroutine_threadsafe get_event_loop get_running_loop "
    "new_event_loop TaskGroup Timer Thread connect FuncAnimation TimedAnimation seterrcall".split()
)
"""Module functions that start work which outlives its cell (``asyncio.create_task``, ``plt.connect``), or
register an object whose methods a library calls later (``np.seterrcall(log)``: ``log.write`` runs when a later
cell divides by zero). The registrations of the modules not in ``MODULES`` (``atexit``, ``weakref.finalize``,
``signal.signal``, ``sys.settrace``, ``threading``) cannot be told already; a test checks every public name of
the understood libraries that is a registration by its name is here or not pure."""

PATH_READS = frozenset(
    "read_text read_bytes exists is_file is_dir is_symlink stat lstat iterdir glob rglob resolve absolute "
    "samefile owner group".split()
)
PATH_WRITES = frozenset("write_text write_bytes mkdir touch unlink rmdir chmod".split())
PATH_MOVES = frozenset({"rename", "replace"})
PATH_PURE = frozenset(
    "name suffix suffixes stem parent parents parts anchor root drive with_suffix with_name with_stem "
    "as_posix relative_to is_absolute is_relative_to match joinpath".split()
)
"""What a ``pathlib`` path with a known value does: reads it, writes it, moves it, or only computes."""


def _copy(self: object, target: object, **kwargs: object) -> None: ...
def _copy_into(self: object, target_dir: object, **kwargs: object) -> None: ...
def _move(self: object, target: object) -> None: ...
def _move_into(self: object, target_dir: object) -> None: ...


_LATER_PATH_METHODS = {"copy": _copy, "copy_into": _copy_into, "move": _move, "move_into": _move_into}
"""Path methods of later Pythons than this one (the kernel's may be newer), by their signatures."""


def _path_methods() -> dict[str, inspect.Signature | None]:
    methods: dict[str, inspect.Signature | None] = {}
    for name in {n for n in dir(pathlib.Path) if not n.startswith("_")} | set(_LATER_PATH_METHODS):
        member = getattr(pathlib.Path, name, None) or _LATER_PATH_METHODS.get(name)
        if name in PATH_PURE or not callable(member):
            continue
        try:
            methods[name] = inspect.signature(member)
        except (TypeError, ValueError):
            methods[name] = None
    for name in PATH_READS | PATH_WRITES | PATH_MOVES | {"open", "symlink_to", "hardlink_to"}:
        methods.setdefault(name, None)
    return methods


IO_METHODS: dict[str, inspect.Signature | None] = _path_methods()
"""Method names that are also a path's I/O (``rename``, ``write_text``, ``copy``), with the path method's
signature (``None``: any call may be it): on a value the reading cannot resolve, such a method is
trusted by its name only when the call's shape cannot be the path's."""

VALUE_ATTRIBUTES = DATA_ATTRIBUTES | (PURE_METHODS - frozenset(IO_METHODS) - {"format", "format_map"})
"""Attributes that may be loaded as values (not called on the spot: ``map(s.upper, …)``, a callback): data,
or a method that computes whatever arguments a later call passes. A method that may touch a file by its
name (``IO_METHODS``: ``replace``, ``rename``) or run a template (``format``) is a value only when called."""


def io_shaped(method: str, positional: int, keywords: tuple[str, ...]) -> bool:
    """Whether ``value.method(<positional args>, <keywords>)`` may be a path's I/O (a move, a write, a read)."""
    if method not in IO_METHODS:
        return method in ARG_WRITE_METHODS
    signature = IO_METHODS[method]
    if signature is None:
        return True
    try:
        signature.bind(None, *range(positional), **dict.fromkeys(keywords))
    except TypeError:
        return False
    return True


SUSPECT_NAMES = (
    PATH_READS
    | PATH_WRITES
    | PATH_MOVES
    | ARG_WRITE_METHODS
    | frozenset(
        "system popen spawn exec eval compile open remove unlink rmtree rename replace write_text "
        "to_pickle to_clipboard to_sql to_gbq dump dumps load loads query tofile f_globals f_locals "
        "f_builtins f_back gi_frame cr_frame ag_frame tb_frame f_code co_code modules builtins "
        "getattr setattr import_module".split()
    )
) - frozenset({"replace", "open", "load", "loads", "dumps", "exists", "glob", "group", "name", "match"})
"""A string constant equal to one of these names may be used to reach it by name (``attrgetter``,
``df.agg("to_pickle", ...)``, ``string.Formatter``): the reading cannot tell what it does."""

SAFE_KEYWORDS = frozenset(
    "encoding errors newline buffering mode index header sep delimiter dtype usecols skiprows nrows names "
    "exist_ok parents indent sheet_name comment fmt dpi bbox_inches format columns orient lines parse_dates "
    "index_col na_values quotechar skipinitialspace low_memory transparent facecolor float_format "
    "date_format decimal thousands ensure_ascii sort_keys default_flow_style missing_ok "
    "level datefmt style force filemode".split()
)
"""Keywords of the functions that touch files that change no more than how (``allow_pickle``,
``opener`` and any other keyword make the call "cannot tell")."""

DATA_PARAMETERS = frozenset(
    "arr X args kwds topdown count offset skip_header skip_footer missing_values filling_values excludelist "
    "deletechars replace_space autostrip case_sensitive defaultfmt unpack usemask loose invalid_raise max_rows "
    "ndmin fix_imports max_header_size ignore_errors strict data pattern missing_ok case_sensitive".split()
)
"""Parameters of the functions that touch files (``signatures``) that carry data or change no more than
how, by any spelling: an array to save, a count, a flag that changes no file touched (``converters``,
``onerror``, ``allow_pickle``, ``followlinks``, ``copy_function`` and any other make the call "cannot tell")."""

PLOT_BACKENDS = frozenset(
    "inline agg svg pdf ps template matplotlib module://matplotlib_inline.backend_inline".split()
)
"""Backend names that import only modules shipped with matplotlib, pandas or the kernel (any other
value, ``module://helper`` or ``qt`` whose binding may be missing, may import a file of the folder; ``pgf``
runs LaTeX on every save)."""

PROGRAM_KEYWORDS = frozenset(key.rsplit(".", 1)[-1] for key in SETTINGS["matplotlib.rcParams"].program_keys)
"""Keywords named as a setting that runs a program (``text.usetex``: ``plt.text(..., usetex=True)`` runs
LaTeX when it draws): an artist's or a call's own copy of that setting, judged as the setting is."""

MODULE_NAME_ARGS: dict[str, str] = {"matplotlib.use": "backend"}
"""Understood functions a parameter of which names a module to import (bound by ``signatures``, whatever
the spelling); any call's ``backend=`` keyword is one too (``df.plot(backend=...)``)."""

OPTION_SETTERS = frozenset({"pandas.set_option", "pandas.option_context"})
"""Setters of options by a key pattern (a regular expression searched in the option names), judged by
``pandas_options``."""


ALIASES = {"np": "numpy", "pd": "pandas", "plt": "matplotlib.pyplot"}
"""Nothing is imported under these names implicitly; listed so that the words name the library."""


NEVER_PURE: dict[str, str] = {
    "test": "runs the library's test suite: pytest with the arguments given, plugins and files of the folder",
    "bench": "runs the library's benchmarks through its test runner",
    "main": "a command-line entry point: reads the files and arguments it is given, writes where told",
    "show_config": "imports build modules and prints the build configuration",
    "tzset": "changes the process's time zone from the environment",
    "clock_settime": "sets the system clock",
    "clock_settime_ns": "sets the system clock",
    "to_pickle": "writes a file",
    "read_pickle": "reads a file and runs what it unpickles",
    "ExcelFile": "reads a file",
    "ExcelWriter": "writes a file",
    "HDFStore": "reads and writes a file",
}
"""Names that are never pure in any module whose public names are otherwise pure (``every_public``): a
test runner, a command-line entry point, a setter of the process or the system, a file's reader or
writer. A value that is a test runner by its type (numpy's ``PytestTester``) is excluded too
(``_runtime_runners``), whatever its name."""


IO_NAMED = re.compile(r"^(read|to|save|load|open|dump|write|import|export)(_\w+|[a-z]+)?$")
"""Names a library gives its file and database I/O (``read_*``, ``to_*``, ``save*``, ``load*``, ``open*``,
``dump*``): a name of an understood library so named that its table does not list is not pure
(``pd.read_iceberg``, a reader of a later version), and a string so named may reach one by name
(``df.agg('to_hdf', path)``, ``methodcaller('to_parquet', p)``): neither can be told."""

IO_NAMED_BUT_COMPUTES: dict[str, str] = {
    "pandas.to_datetime": "converts values", "pandas.to_numeric": "converts values",
    "pandas.to_timedelta": "converts values",
    "json.dump": "writes to a file object (opened by a judged open)", "json.dumps": "makes a string",
    "json.load": "reads a file object (opened by a judged open)", "json.loads": "parses a string",
    "csv.writer": "writes to a file object (opened by a judged open)",
}  # fmt: skip
"""The names ``IO_NAMED`` matches in the understood libraries that only compute, or act on a file object only
a judged ``open`` makes (a test lists every such name of the libraries, so a new one is decided here)."""


def io_named(module: str, name: str) -> bool:
    """``module.name`` is I/O by its library's naming and not known to compute (``IO_NAMED``)."""
    return bool(IO_NAMED.match(name)) and f"{module}.{name}" not in IO_NAMED_BUT_COMPUTES


@cache
def _runtime_runners(name: str) -> frozenset[str]:
    """The public names of a module bound to a test runner (an instance of a ``…Tester`` class)."""
    try:
        module = importlib.import_module(name)
    except Exception:  # noqa: BLE001 - a module that does not import here is understood by its table only
        return frozenset()
    return frozenset(a for a in dir(module) if type(getattr(module, a, None)).__name__.endswith("Tester"))


@cache
def _runtime_submodules(name: str) -> frozenset[str]:
    """The public names of a standard module bound to modules (``uuid.os``): never pure through it."""
    try:
        module = importlib.import_module(name)
    except Exception:  # noqa: BLE001 - a module that does not import here is understood by its table only
        return frozenset()
    return frozenset(a for a in dir(module) if isinstance(getattr(module, a, None), types.ModuleType))


@cache
def has_name(module: str, path: tuple[str, ...]) -> bool:
    """Whether ``module.a.b`` exists (``math.system`` does not: "every public name" is only of names there
    are); a module that does not import here (the kernel's environment may have it) is understood by its
    table only."""
    try:
        value: object = importlib.import_module(module)
    except Exception:  # noqa: BLE001 - not importable here: the table decides
        return True
    try:
        for part in path:
            value = getattr(value, part)
    except Exception:  # noqa: BLE001 - a name that does not resolve here is not understood
        return False
    return True


def module_rule(dotted: str) -> tuple[str, Module] | None:
    """The understood module a dotted name is in (``numpy.linalg`` is in the ``numpy`` family)."""
    if dotted in MODULES:
        return dotted, MODULES[dotted]
    parts = dotted.split(".")
    for k in range(len(parts) - 1, 0, -1):
        head = ".".join(parts[:k])
        rule = MODULES.get(head)
        if rule is not None and (rule.family or rule.whole is not None):
            return head, rule
    return None


def name_in(module: str, rule: Module, name: str) -> Touch | Kind | str | None:
    """What ``module.name`` is: a ``Touch``, an effect ``Kind``, ``"pure"``, or ``None`` (not understood)."""
    if rule.whole is not None:
        return rule.whole
    if name.startswith("_") or name in rule.unknown:
        return None
    if rule.touches and name in rule.touches:
        return rule.touches[name]
    if rule.effects and name in rule.effects:
        return rule.effects[name]
    if name in rule.pure:
        return "pure"
    if name in NEVER_PURE or name in _runtime_runners(module) or io_named(module, name):
        return None
    if rule.every_public and (rule.family or name not in _runtime_submodules(module)):
        return "pure"
    return None


__all__ = [
    "ALIASES",
    "IMAGE_READ",
    "IMAGE_WRITE",
    "NUMPY_LOAD",
    "UNPICKLES",
    "FormatRuns",
    "DATA_ATTRIBUTES",
    "LATER_METHODS",
    "LATER_NAMES",
    "VALUE_ATTRIBUTES",
    "ARG_WRITE_METHODS",
    "PATH_MOVES",
    "PATH_PURE",
    "PATH_READS",
    "PATH_WRITES",
    "PURE_METHODS",
    "SAFE_KEYWORDS",
    "DATA_PARAMETERS",
    "SETTINGS",
    "SETTINGS_READS",
    "Settings",
    "AMBIENT",
    "SUSPECT_NAMES",
    "CHECKED_BUILTINS",
    "IO_METHODS",
    "io_shaped",
    "MODULES",
    "MODULE_NAME_ARGS",
    "NEVER_PURE",
    "OPTION_SETTERS",
    "PLOT_BACKENDS",
    "PROGRAM_KEYWORDS",
    "PURE_BUILTINS",
    "Module",
    "Touch",
    "IO_NAMED",
    "IO_NAMED_BUT_COMPUTES",
    "has_name",
    "io_named",
    "module_rule",
    "name_in",
]
