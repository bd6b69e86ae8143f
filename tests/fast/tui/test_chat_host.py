"""The chat screen knows its app by one interface (``ChatHost``), and the commands run on the screen reach
the app through it: no module of ``tui/`` declares an interface of the app of its own (a ``*Host``
protocol), and no command module takes the app itself."""

from __future__ import annotations

import ast
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

import freeact_tui.tui as tui

TUI = Path(tui.__file__).resolve().parent
THE_ONE = ("screens/chat_host.py", "ChatHost")
COMMAND_MODULES = ("slash_dispatch.py", "info_commands.py", "status_commands.py", "picker_commands.py", "checkpoint_commands.py")


def _is_protocol(base: ast.expr) -> bool:
    """``Protocol``, ``typing.Protocol`` or ``Protocol[T]`` among a class's bases."""
    if isinstance(base, ast.Subscript):
        base = base.value
    return (isinstance(base, ast.Name) and base.id == "Protocol") or (
        isinstance(base, ast.Attribute) and base.attr == "Protocol"
    )


def host_protocols(tree: ast.AST) -> list[str]:
    """The classes of ``tree`` that are protocols named ``…Host`` (or that extend one: ``class X(AHost, BHost)``)."""
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.ClassDef):
            continue
        bases = [b.value if isinstance(b, ast.Subscript) else b for b in node.bases]
        named = [b.id if isinstance(b, ast.Name) else b.attr if isinstance(b, ast.Attribute) else "" for b in bases]
        extends_host = any(n.endswith("Host") for n in named)
        if (node.name.endswith("Host") and any(_is_protocol(b) for b in node.bases)) or extends_host:
            found.append(node.name)
    return found


def test_one_interface_of_the_app_in_tui() -> None:
    found = sorted(
        (path.relative_to(TUI).as_posix(), name)
        for path in TUI.rglob("*.py")
        for name in host_protocols(ast.parse(path.read_text(encoding="utf-8")))
    )
    assert found == [THE_ONE]


def annotated_names(tree: ast.AST) -> set[str]:
    """The names in the annotations of every function parameter of ``tree`` (``"A | None"``: ``A``)."""
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            arguments = node.args
            for arg in [*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs]:
                if arg.annotation is not None:
                    names |= {n.id for n in ast.walk(arg.annotation) if isinstance(n, ast.Name)}
                    names |= {
                        word
                        for n in ast.walk(arg.annotation)
                        if isinstance(n, ast.Constant) and isinstance(n.value, str)
                        for word in n.value.replace("|", " ").replace("[", " ").replace("]", " ").split()
                    }
    return names


def test_a_command_takes_the_chat_screen_never_the_app() -> None:
    """No function outside the app takes the app or another interface of it; the commands take the screen."""
    taken = {
        (path.relative_to(TUI).as_posix(), name)
        for path in TUI.rglob("*.py")
        if path != TUI / "app.py"
        for name in annotated_names(ast.parse(path.read_text(encoding="utf-8")))
        if name == "FreeactApp" or (name.endswith("Host") and name != "ChatHost")
    }
    assert taken == set()
    for module in COMMAND_MODULES:
        assert "MainScreen" in annotated_names(ast.parse((TUI / module).read_text(encoding="utf-8"))), module


# -- the scan itself finds each form --------------------------------------------------------------------------

_FORMS = {
    "class {name}(Protocol): ...": True,
    "class {name}(typing.Protocol): ...": True,
    "class {name}(Protocol[T]): ...": True,
    "class {name}(AHost, BHost, Protocol): ...": True,
    "class {name}: ...": False,
    "class {name}(Base): ...": False,
}


@given(
    stem=st.from_regex(r"[A-Z][A-Za-z]{0,12}", fullmatch=True),
    form=st.sampled_from(sorted(_FORMS)),
)
def test_the_scan_finds_a_host_protocol_in_every_spelling(stem: str, form: str) -> None:
    source = form.format(name=stem + "Host")
    assert bool(host_protocols(ast.parse(source))) is _FORMS[form]


@given(stem=st.from_regex(r"[A-Z][A-Za-z]{0,12}", fullmatch=True).filter(lambda s: not s.endswith("Host")))
def test_the_scan_leaves_other_protocols(stem: str) -> None:
    assert host_protocols(ast.parse(f"class {stem}(Protocol): ...")) == []
