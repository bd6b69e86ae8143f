"""The kernel's own Python environment: a virtualenv layered over the app's, where ``pip`` installs.

The app runs from its environment without activating it, so a kernel's ``!pip install`` used the
first ``pip`` on PATH (another Python) and the package never imported. Kernels run from this
environment instead: its ``site-packages`` comes first, a ``.pth`` file adds the app's
``site-packages`` after it (so everything the kernel needs is there without copying), its ``bin``
is first on the kernel's PATH (``!pip`` is its pip) and ``sys.executable`` is its python (``%pip``).
``pip`` itself is the app's, run by this interpreter, so it installs here and refuses to remove
anything of the app's ("outside environment"). Created once per data dir and app interpreter, in
well under a second, without network; a kernel spec in it starts the kernel without the working
dir on ``sys.path`` and without IPython's on-disk history (agent cells are not kept there).
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib.util
import json
import os
import shutil
import site
import sys
import sysconfig
import uuid
import venv
from dataclasses import dataclass
from pathlib import Path

from freeact_tui.execution.base import ExecutorError
from freeact_tui.execution.private_files import private_dir

KERNEL_NAME = "freeact-python"
_READY = "freeact-kernel-env.json"
# Bumped when the layout changes: an environment of another version is built anew beside it.
_LAYOUT = 1

_PIP_SCRIPT = """\
#!{python}
import sys
from pip._internal.cli.main import main
sys.exit(main())
"""


@dataclass(frozen=True)
class KernelVenv:
    """A built kernel environment.

    Attributes:
        root: Its directory (``sys.prefix`` of the kernel).
        python: Its interpreter (``sys.executable`` of the kernel).
        bin_dir: Put first on the kernel's PATH (``pip``, ``python``).
        jupyter_dir: A Jupyter data dir whose ``kernels/freeact-python`` starts the kernel from it.
    """

    root: Path

    @property
    def python(self) -> Path:
        return self.root / "bin" / "python"

    @property
    def bin_dir(self) -> Path:
        return self.root / "bin"

    @property
    def jupyter_dir(self) -> Path:
        return self.root / "share" / "jupyter"

    def path_env(self, path: str | None) -> str:
        """``path`` (a PATH value) with this environment's ``bin`` first."""
        return os.pathsep.join([str(self.bin_dir), *([path] if path else [])])


def app_site_dirs() -> list[str]:
    """The app's ``site-packages`` directories (its venv's, and the base ones a venv may include)."""
    dirs = [*site.getsitepackages()]
    purelib = sysconfig.get_paths()["purelib"]
    if purelib not in dirs:
        dirs.insert(0, purelib)
    return [d for d in dict.fromkeys(dirs) if os.path.isdir(d)]


def _key() -> str:
    """Names the environment after the app's interpreter and packages (a new app venv: a new one)."""
    ident = json.dumps([_LAYOUT, os.path.realpath(sys.executable), sys.prefix, sys.version, app_site_dirs()])
    return hashlib.sha256(ident.encode()).hexdigest()[:12]


# The kernel starts as ``python -m ipykernel_launcher`` would, with debugpy blocked: ipykernel imports
# it (a tenth of the kernel's start) only for Jupyter's debugger, which nothing here uses. The kernel's
# init code lifts the block, so ``import debugpy`` works in a cell.
_LAUNCH_KERNEL = (
    "import sys; sys.modules['debugpy'] = None; "
    "from ipykernel import kernelapp; kernelapp.launch_new_instance()"
)


def kernel_spec(python: Path) -> dict[str, object]:
    """The kernel spec of an environment whose interpreter is ``python``."""
    return {
        "argv": [
            str(python),
            "-P",  # not the working dir first on sys.path (a repo's ipykernel_launcher.py)
            "-c",
            _LAUNCH_KERNEL,
            "-f",
            "{connection_file}",
            "--HistoryManager.enabled=False",  # agent cells are not kept in ~/.ipython
        ],
        "display_name": "Python (freeact-tui kernel environment)",
        "language": "python",
        "metadata": {"debugger": False},
    }


def write_kernel_spec(env: KernelVenv, final: KernelVenv) -> None:
    """Write ``final``'s kernel spec into ``env`` (the same, or the directory it is built in) if it
    differs: an environment built by an older version gets the current spec, its packages kept."""
    spec_file = env.jupyter_dir / "kernels" / KERNEL_NAME / "kernel.json"
    text = json.dumps(kernel_spec(final.python), indent=1)
    try:
        if spec_file.read_text(encoding="utf-8") == text:
            return
    except OSError:
        pass
    spec_file.parent.mkdir(parents=True, exist_ok=True)
    partial = spec_file.with_name(f".kernel-{uuid.uuid4().hex[:8]}.json")
    partial.write_text(text, encoding="utf-8")
    partial.replace(spec_file)  # atomic: another app instance may be starting a kernel from it


def ensure_kernel_venv(base_dir: Path) -> KernelVenv:
    """The kernel environment under ``base_dir``, built first if there is none (cached afterwards).

    Args:
        base_dir: Where kernel environments live (``kernel-env`` in the data dir).

    Raises:
        ExecutorError: It cannot be created (the message says where and why).
    """
    env = KernelVenv(base_dir / _key())
    if (env.root / _READY).is_file() and env.python.exists():
        with contextlib.suppress(OSError):  # read-only: the spec it has starts kernels too
            write_kernel_spec(env, env)
        return env
    building = base_dir / f".building-{uuid.uuid4().hex[:8]}"
    try:
        private_dir(base_dir)  # what the kernel installs is nobody else's business
        _build(building, env.root)
        if (env.root / _READY).is_file():
            return env  # another app instance built it meanwhile (its kernels may run from it)
        shutil.rmtree(env.root, ignore_errors=True)  # a half-built leftover
        try:
            building.rename(env.root)
        except OSError:
            if not (env.root / _READY).is_file():
                raise
    except (OSError, RuntimeError, ValueError) as e:
        raise ExecutorError(
            f"Cannot create the kernel's Python environment in {env.root}: {e}. "
            f"Check that the directory is writable (or remove it to have it built again)."
        ) from e
    finally:
        shutil.rmtree(building, ignore_errors=True)
    return env


def _build(root: Path, final_root: Path) -> None:
    """Build in ``root``; paths written into files name ``final_root`` (``root`` is renamed to it)."""
    has_pip = importlib.util.find_spec("pip") is not None
    # Without pip it is ~50 ms (the app's pip serves); only an app without pip needs ensurepip (offline).
    venv.EnvBuilder(with_pip=not has_pip, symlinks=os.name != "nt", clear=True).create(root)
    built, final = KernelVenv(root), KernelVenv(final_root)
    # The interpreter's paths as seen from the new environment (its `purelib`).
    purelib = Path(sysconfig.get_path("purelib", vars={"base": str(root), "platbase": str(root)}))
    lines = "".join(f"import site; site.addsitedir({d!r})\n" for d in app_site_dirs())
    (purelib / "_freeact_app_site.pth").write_text(lines, encoding="utf-8")
    if has_pip:
        for name in ("pip", "pip3", f"pip{sys.version_info[0]}.{sys.version_info[1]}"):
            script = built.bin_dir / name
            script.write_text(_PIP_SCRIPT.format(python=final.python), encoding="utf-8")
            script.chmod(0o755)
    write_kernel_spec(built, final)
    (root / _READY).write_text(json.dumps({"app_python": sys.executable}), encoding="utf-8")
