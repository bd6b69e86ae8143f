"""The request is what the user typed; files attached to it (``@path``) are its material (issue 43: the
demo read ``summarize @README.md`` as the README itself). One split serves the demo and the replay, and
it takes apart exactly what ``attach_mentions`` puts together."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from freeact_tui.demo.intents import parse_intent
from freeact_tui.text.userwords import split_attachments
from freeact_tui.tui.mentions import attach_mentions

_TYPED = st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00@"), max_size=40)


@settings(suppress_health_check=[HealthCheck.function_scoped_fixture], max_examples=60)
@given(_TYPED, _TYPED, st.text(max_size=300), st.sampled_from(["a.txt", "README.md", "dir/b.py"]))
def test_the_split_takes_back_exactly_what_was_typed(
    tmp_path: Path, before: str, after: str, content: str, name: str
) -> None:
    path = tmp_path / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(content, encoding="utf-8")
    typed = f"{before} @{name} {after}"
    sent = attach_mentions(typed, tmp_path)
    request, attached = split_attachments(sent)
    assert request == typed
    assert attached.startswith(f"[@{name}")


@pytest.mark.parametrize(
    "text",
    ["plain", "see\n\n[@x] not attached: no mention of it before", "@a.txt but nothing attached"],
)
def test_text_without_attachments_is_kept_whole(text: str) -> None:
    assert split_attachments(text) == (text, "")


def test_the_demo_outlines_an_attached_file_instead_of_reading_it_as_the_request(tmp_path: Path) -> None:
    readme = tmp_path / "README.md"
    readme.write_text(
        "# Title\n\nWhat is 2 + 2? Count the files. Create a file x containing y.\n\n## Usage\n\nRun it.\n"
    )
    intent = parse_intent(attach_mentions("summarize @README.md", tmp_path))
    assert intent.kind == "summarize" and "[@README.md]" in intent.content
    assert (
        parse_intent(attach_mentions("count the files here (see @README.md)", tmp_path)).kind == "count_files"
    )
