"""SIGHUP, SIGTERM and SIGINT end the app the way Ctrl+Q does: history kept, children stopped.

Closing the terminal sends SIGHUP; ``kill`` sends SIGTERM; ``kill -INT`` sends SIGINT (Ctrl+C
arrives as a key, the terminal being in raw mode). Without handlers each of them ended the
process at once and left its kernels behind. A second signal, or a quit that hangs, ends the
process at once (the children's own watchdogs then stop them).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import signal
import threading
from collections.abc import Awaitable, Callable
from typing import Any, NoReturn

from freeact_tui import typeahead

logger = logging.getLogger(__name__)

EXIT_SIGNALS = (signal.SIGHUP, signal.SIGTERM, signal.SIGINT)


class ExitSignals:
    """Runs ``quit`` on the first exit signal; exits hard on a second one or after ``grace`` seconds.

    Args:
        quit: Stops what the app runs and exits it (the app's quit action).
        grace: Seconds ``quit`` may take before the process exits without it.
    """

    def __init__(self, quit: Callable[[], Awaitable[None]], grace: float = 15.0) -> None:
        self._quit = quit
        self.grace = grace
        self.received: int | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._task: asyncio.Future[None] | None = None
        self._previous: dict[int, Any] = {}

    def install(self) -> None:
        """Handle the signals (only possible in the main thread).

        Plain ``signal.signal`` handlers, not the loop's: they also run when the loop is stuck (a
        write to a closed terminal can block it), and then the deadline still ends the process.
        """
        loop = asyncio.get_running_loop()
        try:
            for signum in EXIT_SIGNALS:
                self._previous[signum] = signal.signal(signum, self._on_signal)
        except ValueError as exc:  # not the main thread: leave signals alone
            logger.warning("exit signals not handled: %s", exc)
            return
        self._loop = loop

    def remove(self) -> None:
        """Restore the handling there was before ``install``."""
        previous, self._previous = self._previous, {}
        self._loop = None
        with contextlib.suppress(ValueError):
            for signum, handler in previous.items():
                signal.signal(signum, handler)

    def _on_signal(self, signum: int, frame: object = None) -> None:
        loop = self._loop
        if self.received is not None or loop is None or loop.is_closed():
            _exit(128 + signum)
        self.received = signum
        deadline = threading.Timer(self.grace, _exit, args=(128 + signum,))
        deadline.daemon = True
        deadline.start()
        loop.call_soon_threadsafe(self._start_quit, signum)

    def _start_quit(self, signum: int) -> None:
        logger.warning("%s received: quitting", signal.Signals(signum).name)
        self._task = asyncio.ensure_future(self._run_quit())

    async def _run_quit(self) -> None:
        with contextlib.suppress(Exception):
            await self._quit()


def _exit(code: int) -> NoReturn:
    """End the process now, with the terminal's settings from before the app put back (and an isolated
    kernel's placeholders out of the folder)."""
    from freeact_tui.execution.isolation.protect import end_all_now

    end_all_now(limit=2.0)
    typeahead.restore()
    os._exit(code)
