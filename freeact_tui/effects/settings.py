"""Process-wide settings a cell reads or changes by key: a known library's settings, and the environment.

``known.SETTINGS`` lists the objects (``matplotlib``'s ``rcParams``, ``pandas.options``, ``os.environ``).
Only these forms of them are understood, each key judged by ``known.Settings``:

- ``obj[key] = value`` and ``obj[key] += value`` (``obj.a.b = value`` for an object keyed by attribute;
  ``+=`` not on a key whose value names a module or a path: what it becomes is not known);
- ``obj.update({key: value, ...})`` and ``obj.update(key=value)``;
- ``obj[key]`` and ``obj.get/copy/keys/values/items(...)``: reading it (the environment is
  ``Kind.ENVIRONMENT``).

The object as a value (``o = pd.options``, and ``pd.options.plotting``, itself a settings object: read
``pd.get_option`` instead), any other method, ``del`` and a key given at run time cannot be told: where
it goes, what changes later cannot be followed.
"""

from __future__ import annotations

import ast
from collections.abc import Callable

from freeact_tui.effects import known
from freeact_tui.effects.classes import Found, Kind


class CannotTell(Exception):
    """The reading stops: it cannot tell what the cell does (``str`` says why)."""


Dotted = Callable[[ast.expr], "str | None"]
Const = Callable[["ast.expr | None"], "str | None"]
Visit = Callable[[ast.AST], None]
PathCheck = Callable[[str, Kind], list[Found]]


class SettingsForms:
    """Reads the settings forms of one cell into ``found`` (through the reader's own walk and values)."""

    def __init__(
        self, dotted: Dotted, const: Const, visit: Visit, check_path: PathCheck, found: list[Found]
    ) -> None:
        self._dotted = dotted
        self._const = const
        self._visit = visit
        self._check_path = check_path
        self.found = found

    def _object(self, node: ast.expr) -> tuple[str, known.Settings] | None:
        name = self._dotted(node)
        if name is not None and name in known.SETTINGS and not known.SETTINGS[name].attributes:
            return name, known.SETTINGS[name]
        return None

    def _by_attribute(self, node: ast.expr) -> tuple[str, known.Settings, str] | None:
        """``pd.options.display.max_rows``: the object, and the key ``display.max_rows``."""
        name = self._dotted(node) if isinstance(node, ast.Attribute) else None
        if name is None:
            return None
        for prefix, settings in known.SETTINGS.items():
            if settings.attributes and name.startswith(prefix + "."):
                return prefix, settings, name[len(prefix) + 1 :]
        return None

    def target(self, node: ast.expr) -> tuple[str, known.Settings, str | None] | None:
        """The settings object, and the key (``None``: given at run time), that ``node`` assigns to."""
        if isinstance(node, ast.Subscript) and (found := self._object(node.value)):
            return *found, self._const(node.slice)
        return self._by_attribute(node)

    def assign(self, node: ast.Assign | ast.AugAssign) -> bool:
        """Judge an assignment to a setting (``False``: it assigns to none)."""
        targets = node.targets if isinstance(node, ast.Assign) else [node.target]
        judged = [self.target(t) for t in targets]
        if not any(judged):
            return False
        for t, setting in zip(targets, judged, strict=True):
            if setting is None:
                self._visit(t)
                continue
            name, settings, key = setting
            if isinstance(node, ast.AugAssign) and key in settings.module_keys | settings.path_keys:
                raise CannotTell(f"adds to {key!r} of {name}: what it becomes is not known")
            self._set(name, settings, key, node.value)
        self._visit(node.value)
        return True

    def _set(self, name: str, settings: known.Settings, key: str | None, value: ast.expr) -> None:
        if not settings.writable:
            raise CannotTell(f"changes {name}, which later code reads")
        if key is None:
            raise CannotTell(f"changes {name} by a key given at run time")
        if key in settings.program_keys:
            raise CannotTell(f"sets {key!r} of {name}, which names a program or code to run")
        if key in settings.module_keys:
            module = self._const(value)
            if module is None or module.lower() not in known.PLOT_BACKENDS:
                raise CannotTell(f"sets {key!r} of {name} to a module to import: {module!r}")
        elif key in settings.path_keys:
            path = self._const(value)
            if path is None:
                raise CannotTell(f"sets {key!r} of {name} to a path built at run time")
            self.found.extend(self._check_path(path, Kind.WRITES))
        elif not settings.computes(key):
            raise CannotTell(f"sets {key!r} of {name}, a setting the reading does not know")

    def _read(self, name: str, settings: known.Settings) -> None:
        if settings.read is not None:
            self.found.append(Found(settings.read, name))

    def read_item(self, node: ast.Subscript) -> bool:
        """``obj[key]`` read (``False``: not a settings object)."""
        found = self._object(node.value)
        if found is None or not isinstance(node.ctx, ast.Load):
            return False
        self._read(*found)
        self._visit(node.slice)
        return True

    def call(self, call: ast.Call) -> bool:
        """A method called on a settings object (``False``: the call is not on one)."""
        func = call.func
        found = self._object(func.value) if isinstance(func, ast.Attribute) else None
        if found is None:
            return False
        assert isinstance(func, ast.Attribute)
        name, settings = found
        if func.attr in known.SETTINGS_READS:
            self._read(name, settings)
        elif func.attr == "update" and len(call.args) <= 1:
            for key, value in self._updates(call, name):
                self._set(name, settings, key, value)
        else:
            raise CannotTell(f"calls .{func.attr}() on {name}")
        for arg in [*call.args, *(k.value for k in call.keywords)]:
            self._visit(arg)
        return True

    def _updates(self, call: ast.Call, name: str) -> list[tuple[str | None, ast.expr]]:
        pairs: list[tuple[str | None, ast.expr]] = []
        for arg in call.args:
            if not isinstance(arg, ast.Dict) or any(k is None for k in arg.keys):
                raise CannotTell(f"updates {name} from a value the reading does not follow")
            pairs += [(self._const(k), v) for k, v in zip(arg.keys, arg.values, strict=True)]
        for keyword in call.keywords:
            if keyword.arg is None:
                raise CannotTell(f"updates {name} with unpacked arguments")
            pairs.append((keyword.arg, keyword.value))
        return pairs


__all__ = ["CannotTell", "SettingsForms"]
