"""Copying to the OS clipboard where the terminal does not take OSC 52 (freeact falls back the same way).

The app always sends OSC 52 (Textual's ``copy_to_clipboard``: it works over SSH and in most
terminals); then it also hands the text to the first OS clipboard program that is installed and
applies here: ``pbcopy`` (macOS), ``wl-copy`` (Wayland), ``xclip`` or ``xsel`` (X11), ``clip`` (Windows).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Callable, Mapping

ClipboardCommand = tuple[str, ...]
# A clipboard program that does not return within this time is given up on (xclip waits for X).
TIMEOUT = 2.0


def clipboard_commands(platform: str = sys.platform, env: Mapping[str, str] | None = None) -> list[ClipboardCommand]:
    """The copy commands to try on ``platform``, in order of preference."""
    environ = os.environ if env is None else env
    if platform == "darwin":
        return [("pbcopy",)]
    if platform.startswith("win"):
        return [("clip",)]
    wayland = bool(environ.get("WAYLAND_DISPLAY")) or environ.get("XDG_SESSION_TYPE", "").lower() == "wayland"
    x11 = [("xclip", "-selection", "clipboard"), ("xsel", "--clipboard", "--input")]
    return [("wl-copy",), *x11] if wayland else [*x11, ("wl-copy",)]


def copy_to_os_clipboard(
    text: str,
    commands: list[ClipboardCommand] | None = None,
    which: Callable[[str], str | None] = shutil.which,
) -> str | None:
    """Copy ``text`` with the first installed program that succeeds; never raises.

    Returns:
        The program that took the text, or ``None`` (none installed, or all failed).
    """
    for command in clipboard_commands() if commands is None else commands:
        program = which(command[0])
        if program is None:
            continue
        try:
            done = subprocess.run(
                [program, *command[1:]],
                input=text,
                text=True,
                capture_output=True,
                timeout=TIMEOUT,
                check=False,
            )
        except (OSError, subprocess.TimeoutExpired):
            continue
        if done.returncode == 0:
            return command[0]
    return None
