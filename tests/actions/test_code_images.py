"""Images a code action makes reach a model that takes images as image content; others get paths."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic_ai.messages import BinaryContent, ToolReturnPart
from pydantic_ai.models.function import FunctionModel

from freeact_tui.actions.code import MAX_IMAGES
from freeact_tui.agent.agent import Agent
from freeact_tui.permissions.rules import PermissionRules
from tests.scripted import Code, Script

PLOTS = (
    "import matplotlib\nmatplotlib.use('module://matplotlib_inline.backend_inline')\n"
    "import matplotlib.pyplot as plt\n"
    "for i in range({n}):\n    plt.figure(figsize=(1, 1)); plt.plot([0, i]); plt.show()"
)


async def run_plots(tmp_path: Path, n: int, profile: dict[str, object] | None) -> ToolReturnPart:
    s = Script([[Code(PLOTS.format(n=n))], ["seen"]])
    model = s.model()
    if profile is not None:
        model = FunctionModel(stream_function=s._stream, model_name="scripted", profile=profile)
    agent = Agent(
        model,
        sessions_dir=tmp_path / "s",
        working_dir=tmp_path,
        permissions=PermissionRules(None, skip_permissions=True, defaults=False),
        enable_subagents=False,
        images_dir=tmp_path / "images",
    )
    async with agent:
        async for _ in agent.stream("plot"):
            pass
    returns = [p for p in s.requests[1][-1].parts if isinstance(p, ToolReturnPart)]
    return returns[0]


@pytest.mark.kernel
async def test_images_are_attached_for_models_that_take_them(tmp_path: Path) -> None:
    part = await run_plots(tmp_path, MAX_IMAGES + 1, None)
    assert isinstance(part.content, list)
    text, *images = part.content
    assert all(isinstance(i, BinaryContent) and i.media_type == "image/png" for i in images)
    assert len(images) == MAX_IMAGES  # bounded: the rest are named by path
    assert text.count("[image saved:") == MAX_IMAGES + 1 and "Not attached, too many or too big" in text


@pytest.mark.kernel
async def test_text_only_models_get_the_paths(tmp_path: Path) -> None:
    part = await run_plots(tmp_path, 1, {"supports_image_input": False})
    assert isinstance(part.content, str)
    assert "[image saved:" in part.content and "does not take images" in part.content
