"""Keys typed while the app starts (before it has drawn anything) arrive as typed: Enter sends the
prompt instead of becoming a newline in it, and the terminal's settings are as before once the app
has quit (the real CLI in a pty, against the fake OpenAI server)."""

from __future__ import annotations

import termios
import time
from pathlib import Path

import pytest

from tests.fake_openai import FakeOpenAI, Reply
from tests.helpers import TimelineApp

pytestmark = [pytest.mark.timeout(120)]


def test_a_prompt_typed_before_the_first_frame_is_sent_by_its_enter(
    tmp_path: Path, fake_openai: FakeOpenAI
) -> None:
    fake_openai.script(Reply("six times seven is 42"))
    # -e docker: no kernel is needed to answer in text (the kernel starts when first used); it also
    # checks that a command line without a local kernel holds the keys too.
    argv = ["--model", "openai:fake-model", "--base-url", fake_openai.url, "-e", "docker"]
    with TimelineApp(tmp_path, argv, {"OPENAI_API_KEY": "fake"}) as app:
        before = app.settings_before
        assert before[0] & termios.ICRNL and before[3] & termios.ICANON  # cooked, as a shell leaves it
        deadline = time.monotonic() + 90
        app.wait_for("entry:hold", deadline, step=0.005)
        app.type(b"what is 6 times 7?\r")  # typed ahead, Enter included
        typed_at = time.monotonic()
        while fake_openai.count < 1:
            assert app.process.poll() is None and time.monotonic() < deadline, "the prompt was not sent"
            time.sleep(0.05)
        stages = app.stages()
    assert typed_at < stages["app:mount:end"], "typed after the prompt took keys: nothing was typed ahead"
    request = fake_openai.requests[0].last_user_text()
    assert request.strip() == "what is 6 times 7?", request
    assert app.settings_after == before, "the terminal's settings were not put back"
