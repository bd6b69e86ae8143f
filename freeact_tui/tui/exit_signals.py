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
        self._task: asyncio.Task[None] | None = None

    def install(self) -> None:
        """Handle the signals in the running loop (only possible in the main thread)."""
        loop = asyncio.get_running_loop()
        try:
            for signum in EXIT_SIGNALS:
                loop.add_signal_handler(signum, self._on_signal, signum)
        except (ValueError, RuntimeError) as exc:  # not the main thread: leave signals alone
            logger.warning("exit signals not handled: %s", exc)
            return
        self._loop = loop

    def remove(self) -> None:
        """Restore the default handling."""
        loop, self._loop = self._loop, None
        if loop is not None and not loop.is_closed():
            for signum in EXIT_SIGNALS:
                loop.remove_signal_handler(signum)

    def _on_signal(self, signum: int) -> None:
        if self.received is not None or self._loop is None:
            os._exit(128 + signum)
        self.received = signum
        logger.warning("%s received: quitting", signal.Signals(signum).name)
        deadline = threading.Timer(self.grace, os._exit, args=(128 + signum,))
        deadline.daemon = True
        deadline.start()
        self._task = self._loop.create_task(self._run_quit())

    async def _run_quit(self) -> None:
        with contextlib.suppress(Exception):
            await self._quit()
