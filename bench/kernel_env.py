"""Kernel environment cost: building the kernel's own Python environment (a virtualenv layered over
the app's, where `!pip` installs) the first time, finding it again on every later start, and a
kernel start from it against one from the app's interpreter.

Target: first build < 1 s, later starts < 5 ms, no slower kernel start. Run:
``python bench/kernel_env.py [--json]``.
"""

from __future__ import annotations

import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from _report import run_bench  # noqa: E402  (bench/ is on the path when a script runs)

from freeact_tui.execution.kernel.executor import KernelExecutor  # noqa: E402
from freeact_tui.execution.kernel.venv import ensure_kernel_venv  # noqa: E402

ROUNDS = 3


class AppInterpreterExecutor(KernelExecutor):
    use_kernel_venv = False  # kernels from the app's interpreter, as before the kernel environment


async def kernel_start(executor_type: type[KernelExecutor], root: Path) -> float:
    work = root / "work"
    work.mkdir(exist_ok=True)
    executor = executor_type(working_dir=work, kernel_venv_dir=root / "kernel-env", warm_up=False)
    started = time.perf_counter()
    await executor.start()
    took = time.perf_counter() - started
    await executor.stop()
    return took


async def main() -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        builds, finds = [], []
        for i in range(ROUNDS):
            started = time.perf_counter()
            ensure_kernel_venv(root / f"env-{i}")
            builds.append(time.perf_counter() - started)
            started = time.perf_counter()
            ensure_kernel_venv(root / f"env-{i}")
            finds.append(time.perf_counter() - started)
        ensure_kernel_venv(root / "kernel-env")
        venv_starts = [await kernel_start(KernelExecutor, root) for _ in range(ROUNDS)]
        app_starts = [await kernel_start(AppInterpreterExecutor, root) for _ in range(ROUNDS)]
    return {
        "first_build_ms": round(statistics.median(builds) * 1000, 1),
        "later_find_ms": round(statistics.median(finds) * 1000, 2),
        "kernel_start_from_env_s": round(statistics.median(venv_starts), 2),
        "kernel_start_from_app_python_s": round(statistics.median(app_starts), 2),
    }


if __name__ == "__main__":
    run_bench(__doc__ or "", main)
