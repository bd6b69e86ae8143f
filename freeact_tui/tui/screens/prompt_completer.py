"""Completion at the prompt for the main screen: the ``/`` menu of commands and skills as the user
types, and Tab for command names, ``@`` paths and ``/resume`` session ids.

``PromptCompleter`` keeps the menu in step with the text before the cursor and applies what the user
takes from it. Candidates come from the one command registry (``completion.command_entries``), the
``@`` picker's file index (``FileIndexCache``) and the session store; files and sessions are listed
off the UI thread.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path

from freeact_tui.store.sessions import SessionStore
from freeact_tui.text.safe import visible
from freeact_tui.tui.completion import (
    Completion,
    CompletionContext,
    command_entries,
    common_prefix,
    filter_commands,
    path_candidates,
    session_candidates,
)
from freeact_tui.tui.screens.file_picker import FileIndexCache
from freeact_tui.tui.widgets.completion_menu import CompletionMenu
from freeact_tui.tui.widgets.prompt import PromptInput

_WHAT = {"command": "command", "session": "session", "path": "file"}


class PromptCompleter:
    """Drives ``menu`` from ``prompt``.

    Args:
        prompt: The prompt (its ``menu`` is set to ``menu``).
        menu: The menu drawn above it.
        files: The working directory's file index (shared with the ``@`` picker).
        skills: Returns (name, description) of the skills ``/<name>`` invokes.
        sessions_dir: Returns the session store's directory.
        notify: Says something briefly (nothing matched).
    """

    def __init__(
        self,
        prompt: PromptInput,
        menu: CompletionMenu,
        *,
        files: FileIndexCache,
        skills: Callable[[], list[tuple[str, str]]],
        sessions_dir: Callable[[], Path],
        notify: Callable[[str], None],
    ) -> None:
        self.prompt = prompt
        self.menu = menu
        prompt.menu = menu
        self.files = files
        self._skills = skills
        self._sessions_dir = sessions_dir
        self._notify = notify
        self._commands: list[Completion] = []
        self._sessions: list[Completion] | None = None
        self._dismissed: str | None = None  # the text Esc closed the menu on

    # -- following the text ----------------------------------------------------------------------

    def refresh(self) -> None:
        """The text or the cursor moved: open, filter or close the menu."""
        prompt, menu = self.prompt, self.menu
        if self._dismissed is not None and self._dismissed != prompt.text:
            self._dismissed = None
        context = prompt.completion_context()
        if context is None or prompt.read_only or prompt.disabled:
            menu.close()
            return
        if context.kind == "command":
            if self._dismissed is not None:
                return
            if not (menu.is_open and menu.context is not None and menu.context.kind == "command"):
                self._commands = command_entries(self._skills())  # skills may have changed since
            menu.show(context, filter_commands(self._commands, context.fragment))
        elif menu.is_open and menu.context is not None and menu.context.kind == context.kind:
            found = self._known(context)
            if found is None:
                menu.close()
            else:
                menu.show(context, found)
        else:
            menu.close()

    def dismissed(self) -> None:
        """Esc (or browsing the history) closed the menu: it stays closed until the text changes."""
        self._dismissed = self.prompt.text
        self.menu.close()

    def _known(self, context: CompletionContext) -> list[Completion] | None:
        """Candidates from what is listed already (``None``: they need listing first)."""
        if context.kind == "command":
            return filter_commands(self._commands or command_entries(self._skills()), context.fragment)
        if context.kind == "session":
            return (
                None
                if self._sessions is None
                else [c for c in self._sessions if c.text.lower().startswith(context.fragment.lower())]
            )
        index = self.files.ready()
        return None if index is None else path_candidates(index.paths, context.fragment)

    async def _candidates(self, context: CompletionContext) -> list[Completion]:
        if context.kind == "session":
            infos = await asyncio.to_thread(SessionStore(self._sessions_dir()).list)
            self._sessions = session_candidates(infos, "")
        elif context.kind == "path":
            await self.files.get()
        found = self._known(context)
        return found or []

    # -- Tab and the menu's choice ---------------------------------------------------------------

    async def complete(self, context: CompletionContext) -> None:
        """Tab: complete as far as the candidates agree; more than one left, list them in the menu."""
        try:
            found = await self._candidates(context)
        except Exception as exc:  # an unreadable dir or store: said, the text stays
            self._notify(f"Cannot complete: {exc}")
            return
        prompt = self.prompt
        if prompt.completion_context() != context:
            return  # typed on meanwhile: the newer text decides
        if not found:
            self._notify(f"No {_WHAT[context.kind]} matches {visible(context.fragment, multiline=False)!r}")
            return
        if len(found) == 1:
            self.menu.close()
            prompt.replace_fragment(context, found[0].text, final=True)
            return
        prefix = common_prefix([c.text for c in found])
        if len(prefix) > len(context.fragment) and prefix.lower().startswith(context.fragment.lower()):
            prompt.replace_fragment(context, prefix, final=False)
            context = prompt.completion_context() or context
        self._dismissed = None
        self.menu.show(context, self._known(context) or found)

    def chosen(self, context: CompletionContext, completion: Completion, *, run: bool) -> None:
        """Enter (``run``) or Tab on the menu's entry: put it in; Enter runs a command or resumes a session."""
        prompt = self.prompt
        self.menu.close()
        prompt.focus()
        prompt.replace_fragment(context, completion.text, final=True)
        # A skill typed in full is sent as typed (freeact's "/<skill>"); chosen from the list it waits for arguments.
        typed_after = prompt.get_text_range(prompt.cursor_location, prompt.document.end).strip()
        if typed_after:  # text after the cursor would become the argument: complete only, run nothing
            return
        if run and (completion.runs or context.fragment == completion.text):
            prompt.post_message(PromptInput.Submitted(prompt, prompt.text))
