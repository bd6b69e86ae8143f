"""A stored prompt taken apart the same way with and without the agent's record of what it added."""

from __future__ import annotations

from freeact_tui.checkpoints.model_notes import put_before
from freeact_tui.store.prompt_record import ShellRun, prompt_metadata, shell_context, split_prompt
from freeact_tui.text.userwords import user_words


def test_the_fallback_and_the_record_agree_on_notes_and_shell_runs() -> None:
    typed = "now fix it\n\n[Note: this line is the user's]"
    shells = "\n\n".join([shell_context("ls", "a.txt\n```\nb", False), shell_context("false", "", True)])
    notes = "[Note: the user undid the file changes of action 2.]\n[Note: the user rewound the files.]"
    sent = put_before(notes, put_before(shells, typed))
    assert isinstance(sent, str)
    runs = (ShellRun("ls", "a.txt\n```\nb", False), ShellRun("false", "", True))
    exact = split_prompt(sent, prompt_metadata(len(sent) - len(typed)))
    fallback = split_prompt(sent, None)  # a session written before the record
    assert exact.typed == fallback.typed == user_words(sent) == typed
    assert exact.shell == fallback.shell == runs


def test_a_prefix_that_does_not_parse_is_kept_as_typed() -> None:
    for text in (
        "[Note: not closed\n\nhello",
        "[I ran `ls` in the kernel's shell; its output:]\n```\nno end",
    ):
        assert split_prompt(text, None).typed == text and split_prompt(text, None).shell == ()
