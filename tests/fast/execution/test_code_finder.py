"""The generated-code finder (``execution.kernel.code_finder``): the class "a generated module is imported with
bytes nobody checked" closed at the point of use.

The finder is the very code the kernel's start-up runs (stdlib only); here it runs in this process over a
generated tree of a trusted folder whose manifest the app writes (``project.code_manifest``). Hypothesis picks
which file of the tree is changed, removed, added, replaced by a symlink out of the folder or shadowed by a
planted ``.pyc``, after the trust check: that module is refused (and its planted code never runs), every other
one imports as trusted. The real kernel's run of the same code is ``tests/execution/test_generated_import.py``.
"""

from __future__ import annotations

import builtins
import importlib
import importlib.util
import itertools
import keyword
import os
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from freeact_tui.execution.kernel import code_finder
from freeact_tui.project import trust, trusted
from freeact_tui.project.code_manifest import CodeManifest
from freeact_tui.project.generated_layout import APP_PACKAGES
from tests.planted import plant_pyc

_names = itertools.count()

# The tree: module name (relative to the package) -> file (relative to the package dir). ``ns`` has no
# ``__init__.py``: a namespace package.
_FILES = {
    "": "__init__.py",
    "mod_a": "mod_a.py",
    "sub": "sub/__init__.py",
    "sub.mod_b": "sub/mod_b.py",
    "ns.mod_c": "ns/mod_c.py",
}
_PLANTED = "import builtins\nbuiltins.__dict__.setdefault('_freeact_planted', []).append(__name__)\nVALUE = 'planted'\n"


def _trusted_source(module: str) -> str:
    return f"VALUE = {module or 'package'!r}\n"


@contextmanager
def _generated_tree() -> Iterator[tuple[Path, Path, str]]:
    """A trusted folder with a generated tree of a fresh package; yields (folder, root, package name)."""
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp).resolve() / "proj"
        root = folder / ".freeact" / "generated"
        package = f"gen_pkg_{os.getpid()}_{next(_names)}"
        for module, rel in _FILES.items():
            path = root / package / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(_trusted_source(module))
        trust.trust(trust.check(folder))
        manifest = CodeManifest(root, Path(tmp) / "manifests")
        finder = code_finder.install(str(root), str(manifest.open()), [package])
        try:
            yield folder, root, package
        finally:
            manifest.close()
            sys.meta_path[:] = [
                f for f in sys.meta_path if getattr(f, "freeact_generated_root", None) != finder.root
            ]  # type: ignore[attr-defined]
            for name in [n for n in sys.modules if n == package or n.startswith(package + ".")]:
                del sys.modules[name]
            trusted.forget(folder)
            builtins.__dict__.pop("_freeact_planted", None)


def _import(name: str) -> object:
    importlib.invalidate_caches()
    return importlib.import_module(name)


_KINDS = ("changed", "removed", "symlink", "pyc", "same-size")


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(target=st.sampled_from(sorted(_FILES)), kind=st.sampled_from(_KINDS))
def test_a_file_changed_after_the_check_is_refused_and_the_rest_imports(target: str, kind: str) -> None:
    with _generated_tree() as (folder, root, package):
        path = root / package / _FILES[target]
        if kind == "changed":
            path.write_text(_PLANTED)
        elif kind == "same-size":  # same size and modification time: only the bytes tell
            before = path.stat()
            path.write_text(_trusted_source(target).replace("VALUE", "VALUX"))
            os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
        elif kind == "removed":
            path.unlink()
        elif kind == "symlink":
            outside = folder.parent / f"outside_{target or 'init'}.py"
            outside.write_text(_PLANTED)
            path.unlink()
            path.symlink_to(outside)
        else:
            plant_pyc(path, _PLANTED)
        package_init = _FILES[target].endswith("__init__.py")
        for module in sorted(_FILES, key=len):
            name = f"{package}.{module}" if module else package
            inside = target == "" or module == target or module.startswith(target + ".")
            if kind == "removed" and package_init and inside:
                # Its package is a namespace package now: nothing unchecked runs, the rest is checked.
                value = getattr(_import(name), "VALUE", None)
                assert value == (None if module == target else _trusted_source(module).split("'")[1])
            elif inside and kind != "pyc":
                with pytest.raises(ImportError) as caught:
                    _import(name)
                if kind != "removed" and module == target:
                    assert "since the folder was trusted" in str(caught.value)
                    assert str(caught.value).count("\n") == 0
            else:
                assert getattr(_import(name), "VALUE", None) == _trusted_source(module).split("'")[1]
        assert "_freeact_planted" not in builtins.__dict__  # planted code never ran


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(where=st.sampled_from(["", "sub", "ns"]), name=st.sampled_from(["evil", "mod_a", "sitecustomize"]))
def test_a_file_added_after_the_check_is_refused(where: str, name: str) -> None:
    with _generated_tree() as (_folder, root, package):
        directory = root / package / where.replace(".", "/")
        if (directory / f"{name}.py").exists():
            return  # not an added file
        (directory / f"{name}.py").write_text(_PLANTED)
        module = ".".join(p for p in (package, where, name) if p)
        with pytest.raises(ImportError, match="appeared since the folder was trusted"):
            _import(module)
        assert "_freeact_planted" not in builtins.__dict__


def test_the_apps_own_write_is_accepted_and_reload_checks_again() -> None:
    with _generated_tree() as (_folder, root, package):
        module = _import(f"{package}.mod_a")
        path = root / package / "mod_a.py"
        path.write_text("VALUE = 'regenerated'\n")
        trust.note_own_writes([path])  # the app's regenerate step: the manifest follows
        assert getattr(importlib.reload(module), "VALUE") == "regenerated"  # noqa: B009
        path.write_text(_PLANTED)  # then anyone else
        with pytest.raises(ImportError, match="changed since the folder was trusted"):
            importlib.reload(module)
        assert "_freeact_planted" not in builtins.__dict__


def test_an_unchecked_root_loads_from_source_never_from_a_planted_pyc(tmp_path: Path) -> None:
    root = tmp_path / "data" / "generated"  # the app's own data dir: no trust check covers it
    package = f"gen_pkg_{os.getpid()}_{next(_names)}"
    (root / package).mkdir(parents=True)
    (root / package / "__init__.py").write_text("VALUE = 'source'\n")
    plant_pyc(root / package / "__init__.py", _PLANTED)
    manifest = CodeManifest(root, tmp_path / "manifests")
    finder = code_finder.install(str(root), str(manifest.open()), [package])
    try:
        assert getattr(_import(package), "VALUE") == "source"  # noqa: B009
        assert "_freeact_planted" not in builtins.__dict__
        assert not any(str(root) in p for p in sys.path)
    finally:
        manifest.close()
        sys.meta_path[:] = [
            f for f in sys.meta_path if getattr(f, "freeact_generated_root", None) != finder.root
        ]  # type: ignore[attr-defined]
        sys.modules.pop(package, None)


def test_the_apps_own_files_still_import_after_the_next_check(tmp_path: Path) -> None:
    """A trusted project where the app then generated code (its own writes): the next start's check leaves
    those files out of its entries (no change), yet registers their marks, so the kernel imports them."""
    folder = (tmp_path / "proj").resolve()
    root = folder / ".freeact" / "generated"
    root.mkdir(parents=True)
    trust.trust(trust.check(folder))
    package = f"gen_pkg_{os.getpid()}_{next(_names)}"
    files = []
    for module, rel in _FILES.items():
        path = root / package / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(_trusted_source(module))
        files.append(path)
    trust.note_own_writes(files)  # the app's generate step
    trusted.forget(folder)
    assert trust.check(folder).status == "trusted"  # the next start
    manifest = CodeManifest(root, tmp_path / "manifests")
    finder = code_finder.install(str(root), str(manifest.open()), [package])
    try:
        assert getattr(_import(f"{package}.sub.mod_b"), "VALUE", None) == "sub.mod_b"
    finally:
        manifest.close()
        sys.meta_path[:] = [
            f for f in sys.meta_path if getattr(f, "freeact_generated_root", None) != finder.root
        ]
        for name in [n for n in sys.modules if n == package or n.startswith(package + ".")]:
            del sys.modules[name]
        trusted.forget(folder)


_TOP_NAMES = st.one_of(
    st.sampled_from([*APP_PACKAGES, "json", "requests", "sitecustomize", "usercustomize", "numpy", "pandas"]),
    st.from_regex(r"\A[A-Za-z_][A-Za-z0-9_]{0,15}\Z").filter(lambda n: not keyword.iskeyword(n)),
)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(name=_TOP_NAMES, as_package=st.booleans())
def test_only_the_apps_own_packages_are_served_as_top_level_names(name: str, as_package: bool) -> None:
    """A trusted file of any other top-level name in the generated root (``json.py``, ``requests/``, a
    random name) is never imported from there: only ``generated_layout.APP_PACKAGES`` are served."""
    assume(name not in sys.modules and importlib.util.find_spec(name) is None or name in APP_PACKAGES)
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp).resolve() / "proj"
        root = folder / ".freeact" / "generated"
        path = root / name / "__init__.py" if as_package else root / f"{name}.py"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(_PLANTED)
        trust.trust(trust.check(folder))
        manifest = CodeManifest(root, Path(tmp) / "manifests")
        finder = code_finder.install(str(root), str(manifest.open()), APP_PACKAGES)
        try:
            importlib.invalidate_caches()
            try:
                module = importlib.import_module(name)
            except ModuleNotFoundError:
                module = None
            if name in APP_PACKAGES:
                assert module is not None and getattr(module, "VALUE", None) == "planted"  # trusted, the app's
            else:
                assert module is None, f"{name} was served from the generated root"
                assert "_freeact_planted" not in builtins.__dict__
        finally:
            manifest.close()
            sys.meta_path[:] = [
                f for f in sys.meta_path if getattr(f, "freeact_generated_root", None) != finder.root
            ]
            sys.modules.pop(name, None)
            trusted.forget(folder)
            builtins.__dict__.pop("_freeact_planted", None)
