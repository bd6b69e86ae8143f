"""Put on ``PYTHONPATH`` by ``tests/project/test_trust_boundary_audit.py``: an audit hook in every Python process
the app starts (the app, the kernel gateway, each kernel), recording what it opens, imports, compiles,
executes or spawns under ``AUDIT_FOLDER`` into ``AUDIT_LOG`` (one JSON object a line)."""

import json
import os
import sys

_FOLDER = os.environ.get("AUDIT_FOLDER")
_LOG = os.environ.get("AUDIT_LOG")


# The app's readers of project files: the trust check's digest and the one reader for use.
_READERS = {("trusted.py", "read_opened"), ("trust.py", "_scan")}  # ``_scan``: the walk of ``project_files`` and ``check``


def _reader(event: str) -> str | None:
    """Which of ``_READERS`` an ``open`` is made through (``None``: another way, or not an open)."""
    if event != "open":
        return None
    frame = sys._getframe(2)
    while frame is not None:
        code = frame.f_code
        if (os.path.basename(code.co_filename), code.co_name) in _READERS and "project" in code.co_filename:
            return code.co_name
        frame = frame.f_back
    return None


def _install(folder: str, log: str) -> None:
    folder = os.path.realpath(folder)
    busy = [False]

    def under(value: object) -> str | None:
        if isinstance(value, int) or value is None:
            return None
        try:
            text = os.fsdecode(value)  # type: ignore[arg-type]
        except TypeError:
            return None
        if not text or text.startswith("<"):
            return None  # "<string>", "<frozen …>": no file
        full = os.path.realpath(text if os.path.isabs(text) else os.path.join(os.getcwd(), text))
        return full if full == folder or full.startswith(folder + os.sep) else None

    def hook(event: str, args: tuple[object, ...]) -> None:
        if busy[0]:
            return
        if event == "open":
            candidates = [args[0]]
        elif event == "import":
            candidates = [args[1]]
        elif event == "compile":
            candidates = [args[1]]
        elif event == "exec":
            candidates = [getattr(args[0], "co_filename", None)]
        elif event in ("subprocess.Popen", "os.exec", "os.posix_spawn"):
            argv = args[1] if len(args) > 1 else None
            programs = [args[0], *(list(argv)[:1] if isinstance(argv, (list, tuple)) else [])]
            # A bare name is looked up on PATH, not in the working dir.
            candidates = [p for p in programs if isinstance(p, (str, bytes)) and os.sep in os.fsdecode(p)]
        else:
            return
        busy[0] = True
        try:
            for candidate in candidates:
                path = under(candidate)
                if path is not None:
                    record = {"pid": os.getpid(), "event": event, "path": path, "reader": _reader(event)}
                    with open(log, "a", encoding="utf-8") as out:
                        out.write(json.dumps(record) + "\n")
        except Exception:
            pass
        finally:
            busy[0] = False

    sys.addaudithook(hook)
    with open(log, "a", encoding="utf-8") as out:  # that the hook is in this process
        out.write(json.dumps({"pid": os.getpid(), "event": "start", "path": "", "argv": sys.argv[:3]}) + "\n")


if _FOLDER and _LOG:
    _install(_FOLDER, _LOG)
