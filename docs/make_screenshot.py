"""Make ``docs/screenshot.svg``: the app as a newcomer sees it after a short demo exchange (100x30).

Run from the repository root: ``python docs/make_screenshot.py``. The offline demo model, a real
kernel, ``hi`` then a code action approved with ``y``.
"""

from __future__ import annotations

import asyncio
import os
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from freeact_tui.agent.demo_model import demo_model  # noqa: E402
from freeact_tui.project.config import Config  # noqa: E402
from freeact_tui.tui.app import FreeactApp  # noqa: E402
from freeact_tui.tui.screens.approval import ApprovalScreen  # noqa: E402
from tests.helpers import idle, main, ready, send, until  # noqa: E402

OUT = Path(__file__).resolve().parent / "screenshot.svg"


async def make() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp) / "home"
        home.mkdir()
        os.environ["HOME"] = str(home)
        os.environ["XDG_CONFIG_HOME"] = str(home / ".config")
        work = Path(tmp) / "project"
        work.mkdir()
        config = Config(sessions_dir=Path(tmp) / "sessions", working_dir=work, subagent_pool_size=0)
        app = FreeactApp(config, model=demo_model(delay=0))
        async with app.run_test(size=(100, 30)) as pilot:
            await ready(pilot, limit=120)
            for prompt in ("hi", "compute the sum of the squares of 1..100"):
                await send(pilot, prompt)
                await pilot.pause(0.5)
                while True:  # approve each action with y
                    await until(pilot, lambda: isinstance(app.screen, ApprovalScreen) or not main(app).turn_running, 120)
                    screen = app.screen
                    if not isinstance(screen, ApprovalScreen):
                        break
                    await pilot.press("y")
                    await until(pilot, lambda s=screen: app.screen is not s, 30)  # type: ignore[misc]
                await idle(pilot, limit=120)
            await pilot.pause(0.5)
            assert not main(app).turn_running
            OUT.write_text(app.export_screenshot(title="freeact-tui"))
    print(OUT)


if __name__ == "__main__":
    asyncio.run(make())
