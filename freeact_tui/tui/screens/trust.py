"""The project-trust question, asked before anything of a folder's project files applies.

Public interface: ``TrustScreen(review)`` is a ``ModalScreen[bool]`` showing a
``project_review.ProjectReview`` (the files found, every MCP server command in full, the rules, the
settings, and for a trusted folder whose files changed, the diff). **t** dismisses with ``True``
(trust); **n** or Esc with ``False`` (not now: the session runs without the project's files).
Enter decides nothing, so that a key typed ahead never trusts a folder. The arrow and page keys
scroll the review.
"""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.content import Content
from textual.widgets import Label, Static

from freeact_tui.project.review import ProjectReview
from freeact_tui.text.codeshow import fold_visible
from freeact_tui.text.safe import visible
from freeact_tui.tui.screens.dialog_room import FittedDialog
from freeact_tui.tui.widgets.code_view import CodeView, mark_folds


class TrustScreen(FittedDialog[bool]):
    """Ask whether to trust the working dir's project files; the result is ``True`` for trust."""

    FIT = ("#trust-dialog", "CodeView", 24)  # the part takes what the rest leaves (dialog_room)

    CSS_PATH = "trust.tcss"
    BINDINGS = [
        Binding("t", "answer(True)", "Trust this folder", id="trust.yes"),
        Binding("n", "answer(False)", "Not now", id="trust.no"),
        Binding("escape", "answer(False)", "Not now", show=False),
    ]
    AUTO_FOCUS = "#trust-review"

    def __init__(self, review: ProjectReview) -> None:
        super().__init__()
        self.review = review

    def compose(self) -> ComposeResult:
        folder = visible(str(self.review.folder))
        if self.review.changed:
            title = f"Project files in {folder} changed since you trusted it"
            lead = "Nothing of them applies until you trust the folder again. Read the changes below."
        else:
            title = f"Trust the project files in {folder}?"
            lead = (
                "A project's files can start programs (MCP servers), approve actions with rules and "
                "instruct the model. Nothing of them applies until you trust this folder; without them, "
                "the session runs with your own settings only."
            )
        with Vertical(id="trust-dialog"):
            yield Label(title, id="trust-title", markup=False)
            yield Static(lead, id="trust-lead", markup=False)
            # All of it in sight or said to be below: blank runs folded with their count.
            folded = fold_visible(self.review.text())
            yield CodeView(
                mark_folds(Content(folded.text), folded), scroll_id="trust-review", body_id="trust-text"
            )
            yield Static("t  trust this folder      n / Esc  not now", id="trust-keys", markup=False)

    def action_answer(self, trusted: bool) -> None:
        """Close the dialog with the decision."""
        self.dismiss(trusted)
