"""The reading of Python: a walk over the syntax tree that understands only what ``known`` lists.

Every name, attribute and call must be understood, or the cell "cannot tell":

- a name is a builtin that computes, or the cell's own value where a binding of it definitely ran
  before the use (``flow``): a module the cell imports, a constant, a function it defines are known only
  so (bound once, at the top level); any other use is the kernel's value and cannot be told;
- a module is used only as ``module.name`` with a name ``known`` understands (never as a value,
  never assigned to, never a name starting with ``_``);
- a call is of a pure builtin, ``open`` with a constant path and mode, an understood module function
  (files it touches named by constant paths), a function or class the cell defines (its body is read
  too), a ``pathlib`` path with a constant value, a method ``known`` lists as computing, or a method
  of a class the cell defines called on its own instance (``receivers``: never by the name alone);
- a call of a function a rule is about (``has_rule``: a file it touches, a module it imports) is
  bound to that function's parameters (``signatures``: positional, keyword, ``*[...]``, ``**{...}``) and
  each BOUND parameter judged; an argument that cannot be bound cannot be told, and such a function
  used anywhere but as the callee of a bound call (``map(matplotlib.use, …)``) cannot be told either;
- an attribute is stored only on an object the cell made (``receivers``), a ``str.format`` template
  is known and reaches into none of its arguments (``{0.gi_frame}``);
- a method taken as a value (``map(p.unlink, …)``, ``key=``, a callback) is the call it enables, with
  any arguments: only data and methods that compute whatever they are passed (``known.VALUE_ATTRIBUTES``);
  the cell's own function or method that touches something, held as a value (or decorated), may run
  after the cell, and so may work a cell starts for later (``known.LATER_NAMES``, ``LATER_METHODS``: a
  task, a callback): neither can be told;
- a move (``os.rename``, ``shutil.move``, ``Path.replace``) is the cell's only use of paths: after it,
  the other paths may lead elsewhere than where they are judged;
- no special attribute (``__x__``, frame and code attributes), no special name, and no string that
  names a special attribute or a method that touches files (it may be reached by name).

Names bound in an earlier cell are not followed: the reading does not know what they hold.
A module attribute is understood only if the module has it (``math.system`` is not pure: it is not there).
"""

from __future__ import annotations

import ast
import builtins
import os
import re
from collections.abc import Callable

from freeact_tui.effects import known, pandas_options
from freeact_tui.effects.bindings import bind
from freeact_tui.effects.classes import Found, Kind
from freeact_tui.effects.kept import TRUSTED_NAMES, kept_names
from freeact_tui.effects.landing import landed
from freeact_tui.effects.receivers import cell_objects, template_follows
from freeact_tui.effects.settings import CannotTell, SettingsForms
from freeact_tui.effects.signatures import (
    MOVES_TO_ITS_ARGUMENT,
    SIGNATURES,
    WRITES_ITS_ARGUMENT,
    CannotBind,
    Signature,
    bind_call,
    expanded_keywords,
)

_DUNDER = re.compile(r"__\w+__")
_INTERNAL_ATTR = re.compile(r"^(f|gi|cr|ag|tb|co|func|im)_\w+$")
_WRITE_MODES = frozenset("wax+")
_MODULE_NAMES = frozenset(
    "os sys subprocess builtins importlib ctypes shutil io pickle marshal socket pty posix nt gc inspect "
    "tempfile platform signal threading multiprocessing runpy codeop shelve ssl urllib http asyncio "
    "sysconfig site zipimport pkgutil linecache traceback types weakref".split()
)
"""Attributes that are modules wherever they appear (``os.path.os``, ``uuid.os``): reaching one cannot be followed."""

_MOVES = frozenset({"os.rename", "os.replace", "shutil.move"})
"""Understood functions that move a file or folder (the path methods' are ``known.PATH_MOVES``)."""

PathCheck = Callable[[str, Kind], list[Found]]
"""Judges one constant path touched as ``READS`` or ``WRITES``: inside the folder, outside it, or the network."""


_Unknown = CannotTell


class PythonReader:
    """Reads one parsed cell into effects, or raises ``_Unknown``."""

    def __init__(self, tree: ast.Module, check_path: PathCheck) -> None:
        self.tree = tree
        self.check_path = check_path
        self.found: list[Found] = []
        self.b = bind(tree)
        self.settings = SettingsForms(self._dotted, self._const, self._visit, check_path, self.found)
        rebound = sorted(kept_names(tree) & TRUSTED_NAMES)
        if rebound:
            raise _Unknown(f"rebinds {rebound[0]} for later cells")
        params: dict[str, int] = {}
        for node in ast.walk(tree):
            if isinstance(node, ast.arg):
                params[node.arg] = params.get(node.arg, 0) + 1
        bound_otherwise = {*self.b.imports, *self.b.defs, *self.b.lambdas}
        bound_otherwise |= {n for n, c in self.b.other.items() if c != params.get(n, 0)}
        self.objects = cell_objects(tree, frozenset(bound_otherwise))
        self.moved: list[Found] = []
        self.moves = 0
        self.touching: set[str] = set()
        """The cell's functions and methods whose bodies touch something (an effect was found in them)."""
        self.valued: set[str] = set()
        """Names of the cell's functions and methods taken as values (not called on the spot)."""
        self.spread_only = _spread_only(tree)

    def read(self) -> list[Found]:
        self._visit(self.tree)
        later = sorted(self.touching & self.valued)
        if later:
            # whoever holds the function may call it after the cell (a callback, a lazy map, an option):
            # its paths would be judged now and touched then
            raise _Unknown(f"passes {later[0]}, which touches files or runs something, as a value")
        if self.moved:
            # a move changes where the cell's other paths lead after it ran (a folder renamed onto a path
            # whose link leads outside): with one, no other path is judged in advance
            files = (Kind.READS, Kind.WRITES, Kind.CONTROLS, Kind.OUTSIDE, Kind.RELINKS)
            others = [f for f in self.found if f.kind in files and f not in self.moved]
            if others or self.moves > 1:
                raise _Unknown("moves a file and touches other paths in the same cell")
        return self.found

    def _move(self, touch: Callable[[], None]) -> None:
        """A move (``os.rename``, ``shutil.move``, ``Path.replace``): its own paths, noted as the move's."""
        start = len(self.found)
        touch()
        self.moved += self.found[start:]
        self.moves += 1

    def _cell_made(self, node: ast.expr) -> bool:
        """Whether ``node`` is an object the cell itself makes (``receivers``): an instance of its own class."""
        match node:
            case ast.Name(id=name) if name in self.objects.selves:
                return True
            case ast.Name() if (value := self.b.constant(node)) is not None:
                return self._cell_made(value)
            case ast.Call(func=ast.Name(id=name) as func):
                return name in self.objects.classes and self.b.callable(func)
        return False

    def _template(self, call: ast.Call, func: ast.Attribute) -> None:
        """``str.format``/``format_map`` of a template the reading knows, reaching into no argument."""
        receiver = func.value
        if isinstance(receiver, ast.Name) and receiver.id == "str" and not self.b.bound("str"):
            receiver = call.args[0] if call.args and not isinstance(call.args[0], ast.Starred) else receiver
        template = self._const(receiver)
        if template is None:
            raise _Unknown(f".{func.attr}() of a template given at run time")
        if template_follows(template):
            raise _Unknown(f".{func.attr}() of a template that reaches into its arguments")

    # -- values -------------------------------------------------------------------------------

    def _const(self, node: ast.expr | None, depth: int = 0) -> str | None:
        """The constant string or path an expression always has (``None``: not known)."""
        if node is None or depth > 20:
            return None
        match node:
            case ast.Constant(value=str() as value):
                return value
            case ast.Name() if (assigned := self.b.constant(node)) is not None:
                return self._const(assigned, depth + 1)
            case ast.BinOp(left=left, op=ast.Div(), right=right) if self._is_path(left, depth):
                a, c = self._const(left, depth + 1), self._const(right, depth + 1)
                return None if a is None or c is None else os.path.join(a, c)
            case ast.Call(func=func, args=args, keywords=[]) if self._path_maker(func):
                parts = [self._const(a, depth + 1) for a in args]
                if any(p is None for p in parts):
                    return None
                return os.path.join(*[p for p in parts if p is not None]) if parts else "."
        return None

    def _is_path(self, node: ast.expr, depth: int = 0) -> bool:
        match node:
            case ast.Call(func=func) if self._path_maker(func):
                return True
            case ast.BinOp(left=left, op=ast.Div()):
                return self._is_path(left, depth + 1)
            case ast.Name() if (value := self.b.constant(node)) is not None and depth < 20:
                return self._is_path(value, depth + 1)
        return False

    def _path_maker(self, func: ast.expr) -> bool:
        """``Path``/``os.path.join`` as imported by the cell."""
        dotted = self._dotted(func)
        return dotted in (
            "pathlib.Path",
            "pathlib.PurePath",
            "pathlib.PosixPath",
            "pathlib.PurePosixPath",
            "os.path.join",
        )

    def _imported_at(self, node: ast.Name) -> str:
        """What an imported name is at this use (an import that may not have run yet: cannot be told)."""
        module = self.b.module(node)
        if module is None:
            raise _Unknown(f"uses {node.id} before the cell imports it (an earlier cell's value)")
        return module

    def _dotted(self, node: ast.expr) -> str | None:
        """The full dotted name of an imported module attribute chain (``np.linalg.norm``), if it is one."""
        chain: list[str] = []
        while isinstance(node, ast.Attribute):
            chain.append(node.attr)
            node = node.value
        module = self.b.module(node)
        return None if module is None else ".".join([module, *reversed(chain)])

    # -- the walk -----------------------------------------------------------------------------

    def _visit(self, node: ast.AST) -> None:
        if isinstance(node, ast.Assign | ast.AugAssign) and self.settings.assign(node):
            return
        if isinstance(node, ast.Subscript) and self.settings.read_item(node):
            return
        if isinstance(node, ast.Subscript) and not isinstance(node.ctx, ast.Load):
            self._item_store(node)
        if isinstance(node, ast.AugAssign) and isinstance(node.target, ast.Name):
            self._name(node.target, load=True)  # ``x += 1`` reads ``x`` first
        match node:
            case ast.Import(names=names):
                for alias in names:
                    self._imported(alias.name)
            case ast.ImportFrom(module=module, names=names):
                for alias in names:
                    self._imported(f"{module}.{alias.name}")
            case ast.FunctionDef() | ast.AsyncFunctionDef() | ast.Lambda():
                self._function(node)
            case ast.Constant(value=str() | bytes() as value):
                self._string(value if isinstance(value, str) else value.decode("latin-1"))
            case ast.Name():
                self._name(node)
            case ast.Attribute():
                self._attribute(node)
            case ast.Call():
                self._call(node)
            case _:
                for child in ast.iter_child_nodes(node):
                    self._visit(child)

    def _function(self, node: ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda) -> None:
        """A function's body is read with the cell; one that touches something is noted (``touching``): held
        as a value, it may run after the cell."""
        start = len(self.found)
        for child in ast.iter_child_nodes(node):
            self._visit(child)
        if len(self.found) > start:
            if isinstance(node, ast.Lambda):
                raise _Unknown("a lambda that touches files or runs something: it may run after the cell")
            later = outlives_its_cell(node)
            if later is not None:
                raise _Unknown(f"starts work that runs later: {node.name}, which touches something, {later}")
            self.touching.add(node.name)
            if node.decorator_list:
                self.valued.add(node.name)  # a decorator is handed the function

    def _item_store(self, node: ast.Subscript) -> None:
        """An item stored into (or deleted from) a library's own value (``np.typecodes['x'] = …``) changes
        what later code finds there: cannot be told (a settings object of the table is judged before)."""
        value: ast.expr = node.value
        while isinstance(value, ast.Subscript | ast.Attribute):
            dotted = self._dotted(value)
            if dotted is not None:
                raise _Unknown(f"changes an item of {dotted}")
            value = value.value

    def _imported(self, dotted: str) -> None:
        try:
            self._module_used(dotted, imported=True)
        except _Unknown:
            raise _Unknown(f"imports {dotted}") from None

    def _string(self, value: str) -> None:
        io = known.IO_NAMED.match(value) is not None and "_" in value  # ``'to_hdf'``, not ``'open'``
        if _DUNDER.search(value) or value in known.SUSPECT_NAMES or _INTERNAL_ATTR.match(value) or io:
            raise _Unknown(f"names {value[:40]!r} in a string (it may be reached by name)")

    def _name(self, node: ast.Name, *, load: bool = False) -> None:
        """A name used: the cell's own value (bound before the use, ``flow``) or a builtin that computes."""
        name = node.id
        if name.startswith("__"):
            raise _Unknown(f"uses {name}")
        if not isinstance(node.ctx, ast.Load) and not load:
            return
        if name in self.b.imports:
            # a module (or a function that touches something) as a value: where it goes cannot be followed
            target = self._imported_at(node)
            if target in known.MODULES or self._module_used(target) != "pure" or has_rule(target):
                raise _Unknown(f"passes {name} around as a value")
            return
        if id(node) in self.b.definite or (name in known.PURE_BUILTINS and not self.b.bound(name)):
            self.valued.add(name)
            return
        if self.b.bound(name):
            raise _Unknown(
                f"uses {name} where the cell's binding of it may not have run (an earlier cell's value)"
            )
        if hasattr(builtins, name):
            raise _Unknown(f"uses {name}")
        raise _Unknown(f"uses {name}, a name from an earlier cell")

    def _module_used(self, dotted: str, *, imported: bool = False) -> known.Touch | Kind | str:
        """Judge a dotted module name (``os.system``) and record an effect it has by itself."""
        if dotted in known.MODULES and (imported or known.MODULES[dotted].whole is not None):
            whole = known.MODULES[dotted].whole
            if whole is not None:
                self.found.append(Found(whole, dotted))
            return "pure"
        found = known.module_rule(dotted)
        if found is None:
            head, _, last = dotted.rpartition(".")
            rule = known.MODULES.get(head)
            if rule is None:
                raise _Unknown(f"uses {dotted}")
            found, name_path = (head, rule), [last]
        else:
            name_path = [p for p in dotted[len(found[0]) :].split(".") if p]
        module, rule = found
        if rule.whole is not None:
            self.found.append(Found(rule.whole, module))
            return rule.whole
        if not name_path:
            return "pure"
        if len(name_path) > 1 and (not rule.family or ".".join(name_path[:-1]) not in rule.submodules):
            raise _Unknown(f"uses {dotted}")
        if any(part in _MODULE_NAMES for part in name_path):
            raise _Unknown(f"reaches a module through {dotted}")
        if any(part in known.LATER_NAMES for part in name_path):
            raise _Unknown(f"starts work that runs later: {dotted}")
        if rule.every_public and not known.has_name(module, tuple(name_path)):
            raise _Unknown(f"uses {dotted}, which {module} does not have")
        what: known.Touch | Kind | str | None = "pure"
        for part in name_path:
            what = known.name_in(module, rule, part)
            # a file or effect name of the family's table, reached through a submodule, may be another
            # function (``np.ma.load`` unpickles): only the top-level one is the table's
            if what is None or (len(name_path) > 1 and not isinstance(what, str)):
                raise _Unknown(f"uses {dotted}")
        assert what is not None
        if isinstance(what, Kind):
            self.found.append(Found(what, dotted))
        return what

    def _attribute(self, node: ast.Attribute, *, called: bool = False) -> None:
        """An attribute: of a module (judged by ``known``), stored on the cell's own object, or loaded; a
        load not called on the spot is a value that may be called later (``map(p.unlink, …)``, a callback):
        it is judged as that call, so only an attribute ``known`` says computes whatever calls it passes."""
        if _DUNDER.fullmatch(node.attr) or _INTERNAL_ATTR.match(node.attr) or node.attr.startswith("_"):
            raise _Unknown(f"uses the attribute .{node.attr}")
        if node.attr in _MODULE_NAMES:
            raise _Unknown(f"reaches a module through .{node.attr}")
        dotted = self._dotted(node)
        if dotted is not None:
            if not isinstance(node.ctx, ast.Load):
                raise _Unknown(f"changes {dotted}")
            if (
                dotted in known.MODULES
                or not isinstance(self._module_used(dotted), str)
                or has_rule(dotted)
            ):
                raise _Unknown(f"passes {dotted} around as a value")
            return
        if not isinstance(node.ctx, ast.Load) and not self._cell_made(node.value):
            raise _Unknown(f"changes .{node.attr} of an object the cell did not make")
        if isinstance(node.ctx, ast.Load) and not called:
            self._attribute_value(node)
        self._visit(node.value)

    def _whole_effect(self, node: ast.expr) -> bool:
        """Whether ``node`` is made from a module the whole of which has one effect (``netrc.netrc()``)."""
        while isinstance(node, ast.Attribute | ast.Call | ast.Subscript):
            node = node.func if isinstance(node, ast.Call) else node.value
        module = self.b.module(node)
        found = known.module_rule(module) if module is not None else None
        return found is not None and found[1].whole is not None

    def _attribute_value(self, node: ast.Attribute) -> None:
        """``value.attr`` loaded, not called: a method as a value is the call it enables, with any arguments."""
        if self._cell_made(node.value):
            self.valued.add(node.attr)  # the cell's own class: its methods are read with the cell
            return
        if self._whole_effect(node.value):
            return  # a value of a module whose every use has one effect (``netrc``), already found
        if self._is_path(node.value) and node.attr not in known.PATH_PURE:
            raise _Unknown(f"takes .{node.attr} of a path as a value (it may be called later)")
        if node.attr in ("format", "format_map"):
            template = self._const(node.value)
            if template is None or template_follows(template):
                raise _Unknown(f"takes .{node.attr} of a template that may reach into its arguments as a value")
            return
        later = known.LATER_METHODS.get(node.attr)
        if later is not None:
            raise _Unknown(f"starts work that runs later: .{node.attr} ({later})")
        if node.attr not in known.VALUE_ATTRIBUTES or node.attr in self.objects.stored:
            raise _Unknown(f"takes .{node.attr} as a value: what calls it later cannot be followed")

    def _args(self, call: ast.Call) -> None:
        for arg in [*call.args, *(k.value for k in call.keywords)]:
            self._visit(arg)

    def _program_keywords(self, keywords: list[tuple[str, ast.expr]]) -> None:
        """A keyword named as a setting that runs a program (``usetex=True``: LaTeX at draw time)."""
        for keyword, value in keywords:
            off = isinstance(value, ast.Constant) and value.value in (False, None)
            if keyword in known.PROGRAM_KEYWORDS and not off:
                self.found.append(Found(Kind.PROGRAMS, f"{keyword}= (a program it runs when it draws or saves)"))

    def _spread(self, node: ast.expr) -> ast.expr | None:
        """The literal a name spread into a call (``**opts``, ``*args``) holds: its one binding's, when the
        cell uses the name nowhere else (``opts['backend'] = …``, ``opts.update(…)`` or an alias would change
        it after the binding)."""
        if isinstance(node, ast.Name) and node.id in self.spread_only:
            return self.b.constant(node)
        return None

    def _own_callee(self, func: ast.expr) -> bool:
        """A callee whose parameters no rule is about: the cell's own function or class, a pure builtin."""
        if not isinstance(func, ast.Name):
            return False
        return self.b.callable(func) or (func.id in known.PURE_BUILTINS and not self.b.bound(func.id))

    def _bind(
        self, call: ast.Call, signature: Signature, what: str
    ) -> list[tuple[str, ast.expr]]:
        """``call`` bound to the parameters of the function it calls (``signatures``: the one binder)."""
        try:
            return bind_call(call, signature, self._spread)
        except CannotBind as e:
            raise _Unknown(f"{what} with {e}") from None

    def _touch(
        self, call: ast.Call, touch: known.Touch, what: str, signature: Signature, *, moves: bool = False
    ) -> None:
        """A function that touches files: its BOUND path parameters judged as paths, every other bound
        parameter one that changes no more than how (``known.SAFE_KEYWORDS``, ``known.DATA_PARAMETERS``).
        ``moves``: its first written path is the source of a move (judged as ``Kind.RELINKS``)."""

        def name(position: int, keyword: str) -> str:
            return signature.positional[position] if 0 <= position < len(signature.positional) else keyword

        kinds = {name(p, k): Kind.READS for p, k in touch.reads} | {
            name(p, k): Kind.WRITES for p, k in touch.writes
        }
        if moves and touch.writes:
            kinds[name(*touch.writes[0])] = Kind.RELINKS
        paths: dict[str, str] = {}
        given: dict[str, ast.expr] = {}
        for parameter, value in self._bind(call, signature, what):
            if parameter in kinds:
                path = self._const(value)
                if path is None:
                    raise _Unknown(f"{what} with a path built at run time")
                paths[parameter] = path
            elif touch.runs is not None and parameter in (touch.runs.format_keyword, touch.runs.code_keyword):
                given[parameter] = value  # judged with the format below
            elif parameter not in known.SAFE_KEYWORDS and parameter not in known.DATA_PARAMETERS:
                raise _Unknown(f"{what} with {parameter}=")
        if touch.runs is not None:
            read = next((paths[name(p, k)] for p, k in touch.reads if name(p, k) in paths), None)
            self._format_runs(touch.runs, what, read, given)
        self._judge_landed(touch, [name(p, k) for p, k in (*touch.reads, *touch.writes)], paths, kinds)
        named = bool(paths)
        if not named and touch.bare is not None:
            self.found.append(Found(touch.bare, what))
        elif not named and touch.writes and not touch.optional:
            raise _Unknown(f"{what} with its path given in a way the reading does not follow")
        elif not named and touch.reads:
            self.found += self.check_path(".", Kind.READS)  # ``os.listdir()``: the folder itself
        self._args(call)

    def _format_runs(
        self, runs: known.FormatRuns, what: str, path: str | None, given: dict[str, ast.expr]
    ) -> None:
        """A reader whose format decides whether it runs a program or loads code (``known.FormatRuns``): the
        format is the one named by keyword, else the suffix of the path it reads; one computed at run time, or
        neither known to run nothing nor known to run the program, cannot be told."""
        if runs.always:
            raise _Unknown(f"{what} loads {runs.program}")
        if runs.code_keyword in given and not _false(given[runs.code_keyword]):
            raise _Unknown(f"{what} with {runs.code_keyword}= loads {runs.program}")
        if not runs.runs and not runs.safe:
            return  # the format decides nothing: only a keyword may make it load code
        if runs.format_keyword in given:
            named = self._const(given[runs.format_keyword])
            if named is None:
                raise _Unknown(f"{what} with a format given at run time (it may run {runs.program})")
            fmt = named.lower().lstrip(".")
        elif path is not None:
            fmt = os.path.splitext(path)[1].lower().lstrip(".")
        else:
            raise _Unknown(f"{what} of a file whose format the reading cannot tell (it may run {runs.program})")
        if fmt in runs.runs:
            self.found.append(Found(Kind.PROGRAMS, f"{runs.program}: {what} of a .{fmt} file"))
        elif fmt not in runs.safe:
            kind = f"a .{fmt} file" if fmt else "a file without a suffix"
            raise _Unknown(f"{what} of {kind} may run {runs.program}")

    def _judge_landed(
        self, touch: known.Touch, order: list[str], paths: dict[str, str], kinds: dict[str, Kind]
    ) -> None:
        """Each bound path judged where the library really writes it (``landing``): the destination (the
        last path it writes) as every name it may land on, with the first path named as its source."""
        destination = next((p for p in reversed(order) if kinds.get(p) == Kind.WRITES and p in paths), None)
        if destination is None and not touch.writes:  # a reader: where the path it reads lands
            destination = next((p for p in reversed(order) if p in paths), None)
        source = next((paths[p] for p in order if p in paths and p != destination), None)
        for parameter in order:
            if parameter not in paths:
                continue
            names = [paths[parameter]]
            if parameter == destination:
                names = landed(touch.lands, paths[parameter], source)
            for path in names:
                self.found += self.check_path(path, kinds[parameter])

    def _module_names(self, call: ast.Call, dotted: str | None) -> None:
        """A value that names a module to import (a plot backend, an option that is one) must be a known one:
        ``backend=`` of any call, and the bound module-naming parameter of a function that has one. The other
        keywords judged by name on any call (``format=``, ``usetex=``) are judged here too, ``**{...}`` spread."""
        try:
            keywords = expanded_keywords(list(call.keywords), self._spread)
        except CannotBind as e:
            if dotted in known.OPTION_SETTERS or not self._own_callee(call.func):
                # ``**options`` may hold ``backend=`` (``df.plot(**opts)``, ``fig.savefig(**opts)``)
                raise _Unknown(f"a call with {e}") from None
            keywords = []
        named = [value for keyword, value in keywords if keyword == "backend"]
        for keyword, value in keywords:  # a ``{``-style log format is a template applied to the record
            if keyword == "format" and template_follows(self._const(value) or ""):
                raise _Unknown("a format= template that reaches into its arguments")
        if not self._own_callee(call.func):
            self._program_keywords(keywords)
        if dotted in known.MODULE_NAME_ARGS:
            parameter = known.MODULE_NAME_ARGS[dotted]
            bound = self._bind(call, SIGNATURES[dotted], dotted)
            named = [value for name, value in bound if name == parameter]
            if not named:
                raise _Unknown(
                    f"{dotted} with the module it imports given in a way the reading does not follow"
                )
        if dotted in known.OPTION_SETTERS:
            self._options(call, dotted)
        for value in named:
            name = self._const(value)
            if name is None or name.lower() not in known.PLOT_BACKENDS:
                raise _Unknown(f"names a module to import: {name!r}" if name else "names a module to import")

    def _options(self, call: ast.Call, dotted: str) -> None:
        """``pd.set_option(pattern, value, ...)`` (or one dict of them): each pattern judged by the options it
        selects (``pandas_options.refusal``)."""
        args = call.args
        if call.keywords or any(isinstance(a, ast.Starred) for a in args):
            raise _Unknown(f"{dotted} with arguments the reading does not follow")
        if len(args) == 1 and isinstance(args[0], ast.Dict) and None not in args[0].keys:
            pairs = list(zip(args[0].keys, args[0].values, strict=True))
        elif len(args) % 2 == 0:
            pairs = list(zip(args[::2], args[1::2], strict=True))
        else:
            raise _Unknown(f"{dotted} with arguments the reading does not follow")
        for key, value in pairs:
            assert key is not None
            why = pandas_options.refusal(self._const(key), self._const(value), known.PLOT_BACKENDS)
            if why is not None:
                raise _Unknown(f"{dotted} of {why}")

    def _call(self, call: ast.Call) -> None:
        if self.settings.call(call):
            return
        func = call.func
        imported = (
            self._imported_at(func) if isinstance(func, ast.Name) and func.id in self.b.imports else None
        )
        self._module_names(call, self._dotted(func) if isinstance(func, ast.Attribute) else imported)
        if isinstance(func, ast.Name):
            return self._call_name(call, func)
        if not isinstance(func, ast.Attribute):
            raise _Unknown("calls the result of an expression")
        dotted = self._dotted(func)
        if dotted is not None:
            what = self._module_used(dotted)
            if isinstance(what, known.Touch):
                signature = self._signature(dotted)
                if dotted in _MOVES:
                    return self._move(lambda: self._touch(call, what, dotted, signature, moves=True))
                return self._touch(call, what, dotted, signature)
            return self._args(call)
        return self._call_method(call, func)

    def _call_method(self, call: ast.Call, func: ast.Attribute) -> None:
        """A call of a method on a value: judged by the receiver (a path, the cell's own object) and the call's shape."""
        method = func.attr
        if method in known.LATER_METHODS and not (
            method in self.objects.methods and self._cell_made(func.value)
        ):
            raise _Unknown(f"starts work that runs later: .{method}() ({known.LATER_METHODS[method]})")
        self._attribute(func, called=True)  # special attributes, and the receiver
        if method in ("format", "format_map"):
            self._template(call, func)
        receiver = self._const(func.value) if self._is_path(func.value) else None
        if receiver is not None:
            return self._path_method(call, receiver, method)
        if method in self.objects.stored:
            raise _Unknown(f"calls .{method}(), a name the cell stores on an object")
        if method in known.ARG_WRITE_METHODS:
            if call.args or any(
                k.arg is None or "path" in k.arg or "buf" in k.arg or k.arg in ("fname", "excel_writer")
                for k in call.keywords
            ):
                writes = known.Touch(writes=((0, "path_or_buf"),), lands=known.IMAGE_WRITE.lands)
                if method != "savefig":
                    writes = known.Touch(writes=((0, "path_or_buf"),))
                return self._touch(call, writes, f".{method}()", WRITES_ITS_ARGUMENT)
            return None
        if self._is_path(func.value) and method not in known.PATH_PURE:
            raise _Unknown(f"calls .{method}() on a path built at run time")
        unpacked = any(isinstance(a, ast.Starred) for a in call.args) or any(
            k.arg is None for k in call.keywords
        )
        if method in known.IO_METHODS and (
            unpacked or known.io_shaped(method, len(call.args), tuple(str(k.arg) for k in call.keywords))
        ):
            # ``str.replace(old, new)`` and ``df.rename(columns=...)`` compute; ``x.rename(target)`` may move a file
            raise _Unknown(f"calls .{method}() on a value that may be a path")
        if method in known.PURE_METHODS or (method in self.objects.methods and self._cell_made(func.value)):
            return self._args(call)
        raise _Unknown(f"calls .{method}() on a value")

    def _call_name(self, call: ast.Call, func: ast.Name) -> None:
        """A call of a bare name: ``open``, an imported function, one the cell defines, or a pure builtin."""
        name = func.id
        if name == "open" and not self.b.bound(name):
            return self._open(call, None)
        if name in self.b.imports:
            target = self._imported_at(func)
            what = self._module_used(target)
            if isinstance(what, known.Touch):
                signature = self._signature(target)
                if target in _MOVES:  # ``from os import rename``: a move, as ``os.rename`` is
                    return self._move(lambda: self._touch(call, what, target, signature, moves=True))
                return self._touch(call, what, target, signature)
            return self._args(call)
        if self.b.callable(func) or (name in known.PURE_BUILTINS and not self.b.bound(name)):
            return self._args(call)
        self._name(func)
        raise _Unknown(f"calls {name}, a value the reading cannot follow")

    def _path_method(self, call: ast.Call, path: str, method: str) -> None:
        if method in known.PATH_PURE:
            return self._args(call)
        if method == "open":
            return self._open(call, path)
        if method in known.PATH_READS or method in known.PATH_WRITES:
            # every argument bound and judged (``rglob('*', recurse_symlinks=True)`` leaves the folder)
            for parameter, _ in self._bind(call, self._signature(f"pathlib.Path.{method}"), f".{method}()"):
                if parameter not in known.SAFE_KEYWORDS and parameter not in known.DATA_PARAMETERS:
                    raise _Unknown(f".{method}() with {parameter}=")
            self.found += self.check_path(path, Kind.READS if method in known.PATH_READS else Kind.WRITES)
            return self._args(call)
        if method in known.PATH_MOVES and len(call.args) == 1 and not call.keywords:

            def move() -> None:
                self.found += self.check_path(path, Kind.RELINKS)
                moves = known.Touch(writes=((0, "target"),))
                self._touch(call, moves, f".{method}()", MOVES_TO_ITS_ARGUMENT)

            return self._move(move)
        raise _Unknown(f"calls .{method}() on a path")

    def _signature(self, dotted: str) -> Signature:
        signature = SIGNATURES.get(dotted)
        if signature is None:  # a rule without a parameter list: its arguments cannot be bound
            raise _Unknown(f"calls {dotted}, whose parameters the reading does not know")
        return signature

    def _open(self, call: ast.Call, path: str | None) -> None:
        """``open(file, mode, ...)`` or ``Path(...).open(mode, ...)``, judged by its bound parameters."""
        name = "open" if path is None else "pathlib.Path.open"
        bound = dict(self._bind(call, SIGNATURES[name], "opens a file"))
        if path is None:
            if "file" not in bound:
                raise _Unknown("opens a file given at run time")
            path = self._const(bound["file"])
            if path is None:
                raise _Unknown("opens a path built at run time")
        mode = "r" if "mode" not in bound else self._const(bound["mode"])
        if mode is None:
            raise _Unknown("opens a file in a mode given at run time")
        if any(p not in ("file", "mode") and p not in known.SAFE_KEYWORDS for p in bound):
            raise _Unknown("opens a file with an opener or options the reading does not follow")
        kind = Kind.WRITES if _WRITE_MODES & set(mode) else Kind.READS
        self.found += self.check_path(path, kind)
        self._args(call)


def _false(node: ast.expr) -> bool:
    """A constant that is false (``False``, ``None``, ``0``): a keyword that loads code when true, off."""
    return isinstance(node, ast.Constant) and not node.value


IMPLICIT_NOW = frozenset({"__init__", "__new__"})
"""Special methods that run only where the cell calls the class (a later cell's call of it cannot be read):
every other special method is called by Python itself, whenever an instance is printed, compared, copied,
iterated or collected — later cells included (``__del__`` when the last name of it goes)."""


def outlives_its_cell(node: ast.FunctionDef | ast.AsyncFunctionDef) -> str | None:
    """Why a function of the cell that touches something may run after the cell, unseen by any later
    reading (``None``: it runs only where it is called): a special method Python calls implicitly
    (``__del__``, ``__repr__``, ``__exit__``), or a generator (its body and ``finally`` run as it is
    resumed or collected, in a later cell)."""
    if _DUNDER.fullmatch(node.name) and node.name not in IMPLICIT_NOW:
        return "is a special method Python calls by itself (later cells included)"
    own = [n for n in ast.walk(node) if isinstance(n, ast.Yield | ast.YieldFrom | ast.Await)]
    nested = {
        id(n)
        for inner in ast.walk(node)
        if inner is not node and isinstance(inner, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda)
        for n in ast.walk(inner)
    }
    if any(id(n) not in nested for n in own) or isinstance(node, ast.AsyncFunctionDef):
        return "is a generator or coroutine (it runs as it is resumed or collected, in a later cell too)"
    return None


def has_rule(dotted: str) -> bool:
    """Whether the reading judges a call of ``dotted`` by its arguments (a path it touches, a module it
    imports, an option it sets): used as a value, anywhere but as the callee of a call the binder binds
    (``map(matplotlib.use, …)``, ``key=``, a default, a decorator), it is that call with arguments the
    reading never sees: it cannot be told."""
    return dotted in known.MODULE_NAME_ARGS or dotted in known.OPTION_SETTERS or dotted in SIGNATURES


def _spread_only(tree: ast.Module) -> frozenset[str]:
    """Names every use of which is a spread into a call (``f(*args)``, ``f(**opts)``)."""
    loads: dict[str, int] = {}
    spreads: dict[str, int] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
            loads[node.id] = loads.get(node.id, 0) + 1
        spread = node.value if isinstance(node, ast.Starred) or (isinstance(node, ast.keyword) and node.arg is None) else None
        if isinstance(spread, ast.Name):
            spreads[spread.id] = spreads.get(spread.id, 0) + 1
    return frozenset(name for name, count in loads.items() if spreads.get(name) == count)


def read_python(tree: ast.Module, check_path: PathCheck) -> list[Found]:
    """The effects of a parsed cell (``Kind.UNKNOWN`` with the reason when it cannot tell)."""
    try:
        return PythonReader(tree, check_path).read()
    except _Unknown as e:
        return [Found(Kind.UNKNOWN, str(e))]
    except RecursionError:
        return [Found(Kind.UNKNOWN, "too deeply nested to read")]


__all__ = ["PathCheck", "read_python"]
