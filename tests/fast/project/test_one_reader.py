"""No module that reads a project folder or the app's stores reads a file but through the one checked reader.

The class (issue #39, F4): a project or store file read with a plain read. A FIFO at
``.freeact/sessions/.index.json`` hung ``sessions list``, ``run --resume``, the TUI's side panel and ACP's
``session/list``; a device, a link to ``/dev/zero`` or a huge file would have done the same elsewhere. The
mechanism: ``project.files`` (opened without blocking, a regular file on the descriptor, a size bound, a
one-line error naming the file), wrapped by ``project.trusted`` and ``store.checked_read``. This audit reads
the source of every module of ``project/``, ``store/``, ``checkpoints/``, ``freeact/`` and the generated
packages' marker reader, and fails on any other read: ``x.read_text()``/``x.read_bytes()`` on a path,
``open()``/``x.open()``, ``json.load``/``tomllib.load`` of a file object, or an ``os.open`` for reading that
does not ask for ``O_NONBLOCK``. The few exceptions are listed with why each cannot block or exhaust.
"""

from __future__ import annotations

import ast
from pathlib import Path

import freeact_tui

_PACKAGE = Path(freeact_tui.__file__).parent
_AUDITED = ("project", "store", "checkpoints", "freeact", "mcp/ptc_marker.py")
# The readers themselves (and what calls them under their module names).
_READERS = frozenset({"projectfiles", "trusted", "trustedfiles", "checked_read", "files"})
_FILE_LOADERS = frozenset({("json", "load"), ("tomllib", "load"), ("pickle", "load")})

# (module, enclosing function): why this read cannot block on a FIFO or read without bound.
_EXCEPTIONS: dict[tuple[str, str], str] = {
    ("store/session.py", "sync"): "opens a history only to fsync it: nothing is read",
    ("checkpoints/engine.py", "_locked"): "the app's own lock file in its private data dir, only flock()ed",
    ("store/session.py", "rollback"): "rewrites the history just read through checked_read.read_own (regular)",
}


def _modules() -> list[Path]:
    found: list[Path] = []
    for entry in _AUDITED:
        path = _PACKAGE / entry
        found += [path] if path.is_file() else sorted(path.rglob("*.py"))
    return found


def _name(node: ast.expr) -> str | None:
    return node.id if isinstance(node, ast.Name) else None


def _flags_text(call: ast.Call) -> str:
    return ast.unparse(call.args[1]) if len(call.args) > 1 else ""


def _mode(call: ast.Call, position: int) -> str | None:
    node = call.args[position] if len(call.args) > position else None
    for keyword in call.keywords:
        if keyword.arg == "mode":
            node = keyword.value
    if node is None:
        return "r"
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else None


def _plain_read(call: ast.Call) -> str | None:
    """What plain read ``call`` is (``None``: not one)."""
    func = call.func
    if isinstance(func, ast.Attribute):
        owner = _name(func.value)
        if func.attr in ("read_text", "read_bytes") and owner not in _READERS:
            return f"{ast.unparse(func)}()"
        if (owner, func.attr) in _FILE_LOADERS:
            return f"{owner}.{func.attr}() of a file object"
        if func.attr == "open" and owner not in ("os",):
            mode = _mode(call, 0)
            return None if mode is not None and "r" not in mode and "+" not in mode else f"{ast.unparse(func)}()"
        if owner == "os" and func.attr == "open":
            flags = _flags_text(call)
            reads = "O_RDONLY" in flags or "O_RDWR" in flags or flags.strip() == ""
            safe = "O_NONBLOCK" in flags or "O_DIRECTORY" in flags  # a directory open never blocks
            return "os.open() for reading without O_NONBLOCK" if reads and not safe else None
    if isinstance(func, ast.Name) and func.id == "open":
        mode = _mode(call, 1)
        return None if mode is not None and "r" not in mode and "+" not in mode else "open()"
    return None


def _violations(path: Path) -> list[str]:
    rel = path.relative_to(_PACKAGE).as_posix()
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found: list[str] = []

    def walk(node: ast.AST, function: str) -> None:
        for child in ast.iter_child_nodes(node):
            inner = child.name if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef) else function
            if isinstance(child, ast.Call) and (what := _plain_read(child)) and (rel, function) not in _EXCEPTIONS:
                found.append(f"{rel}:{child.lineno} in {function or '<module>'}: {what}")
            walk(child, inner)

    walk(tree, "")
    return found


def test_every_audited_module_reads_files_only_through_the_checked_reader() -> None:
    modules = _modules()
    assert len(modules) > 40, "the audit found the packages it audits"
    violations = [v for module in modules for v in _violations(module)]
    assert violations == [], "\n".join(violations)


def test_every_exception_is_still_needed() -> None:
    """An exception whose read is gone is dropped from the list (the list only shrinks to what is real)."""
    seen: set[tuple[str, str]] = set()
    for path in _modules():
        rel = path.relative_to(_PACKAGE).as_posix()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                if any(isinstance(c, ast.Call) and _plain_read(c) for c in ast.walk(node)):
                    seen.add((rel, node.name))
    assert set(_EXCEPTIONS) <= seen, set(_EXCEPTIONS) - seen


def test_the_audit_catches_each_kind_of_plain_read() -> None:
    """The detector itself: each plain read is caught, each checked read passes."""
    plain = [
        "p.read_text()",
        "(root / '.index.json').read_bytes()",
        "open(p)",
        "open(p, 'r+b')",
        "p.open('rb')",
        "json.load(fh)",
        "tomllib.load(fh)",
        "os.open(p, os.O_RDONLY)",
        "os.open(p, os.O_RDWR | os.O_APPEND)",
    ]
    checked = [
        "projectfiles.read_text(p)",
        "checked_read.read_own(p)",
        "trusted.read_bytes(p)",
        "open(p, 'w')",
        "os.open(p, os.O_WRONLY | os.O_CREAT)",
        "os.open(p, os.O_RDONLY | os.O_NONBLOCK)",
        "json.loads(text)",
    ]
    parse = lambda src: ast.parse(src, mode="eval").body  # noqa: E731
    assert [s for s in plain if not _plain_read(parse(s))] == []
    assert [s for s in checked if _plain_read(parse(s))] == []
