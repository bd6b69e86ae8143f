"""An action an agent wants to run: code, a shell command or script, a tool call, a subagent task."""

from __future__ import annotations

import json
from typing import ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.content import Content
from textual.markup import escape
from textual.message import Message
from textual.widgets import Static

from freeact_tui.text.codeshow import fold
from freeact_tui.text.safe import visible
from freeact_tui.toolcalls import (
    CodeAction,
    FileCall,
    FileEdit,
    FileRead,
    FileWrite,
    JsonToolCall,
    ProgrammaticToolCall,
    ShellAction,
    ShellScript,
    SubagentTask,
    ToolCall,
)
from freeact_tui.tui.widgets.blocks.base import Block
from freeact_tui.tui.widgets.blocks.fold import LogFold
from freeact_tui.tui.widgets.code_view import mark_folds
from freeact_tui.tui.widgets.diff import (
    DIFF_COLLAPSE_LINES,
    diff_content,
    diff_stats,
    file_call_content,
    file_call_header,
)

_TITLES: dict[type[ToolCall], str] = {
    CodeAction: "Code action",
    ShellAction: "Shell command",
    ShellScript: "Shell script",
    ProgrammaticToolCall: "Tool call (from code)",
    JsonToolCall: "Tool call",
    SubagentTask: "Subagent task",
    FileRead: "Read file",
    FileWrite: "Write file",
    FileEdit: "Edit file",
}


def action_title(tool_call: ToolCall) -> str:
    """A short human name of the kind of action."""
    return _TITLES.get(type(tool_call), "Action")


def highlight(code: str, *, language: str) -> Content:
    """Textual's syntax highlighting (pygments, imported with the first action shown, not at start)."""
    from textual.highlight import highlight as pygments_highlight

    return pygments_highlight(code, language=language)


def shown_content(text: str, *, language: str | None = None) -> Content:
    """``text`` as drawn for approval: made visible, long blank runs folded into marks styled apart,
    highlighted when ``language`` is given."""
    folded = fold(text)
    return mark_folds(highlight(folded.text, language=language) if language else Content(folded.text), folded)


def _json(args: dict[str, object]) -> str:
    return json.dumps(args, indent=2, ensure_ascii=False, default=str)


def tool_call_content(tool_call: ToolCall) -> Content:
    """The action in full: highlighted code, the shell command, tool name and JSON args.

    Every character of the table is shown as an escape (code hiding a command behind ``ESC[2K``
    shows it), and long runs of blank lines or spaces are folded into marks that count them.
    """
    match tool_call:
        case CodeAction(code=code):
            return shown_content(code, language="python")
        case ShellAction(command=command):
            return Content.assemble(("$ ", "bold $text-accent"), shown_content(command))
        case ShellScript(script=script):
            return shown_content(script, language="bash")
        case ProgrammaticToolCall(server=server, tool=tool, args=args):
            return Content.assemble(
                (visible(f"{server}.{tool}", multiline=False), "bold"),
                "\n",
                shown_content(_json(args), language="json"),
            )
        case JsonToolCall(tool_name=name, tool_args=args):
            return Content.assemble(
                (visible(name, multiline=False), "bold"),
                "\n",
                shown_content(_json(args), language="json"),
            )
        case SubagentTask(prompt=prompt, max_turns=max_turns):
            return Content.assemble(
                shown_content(prompt), ("\n(max turns: " + str(max_turns) + ")", "$text-muted")
            )
        case FileCall():
            return file_call_content(tool_call)
    return shown_content(tool_call.display_text())


class ActionBlock(Block):
    """An action shown in full; its border subtitle tells how it was decided.

    Args:
        tool_call: The typed call (CodeAction, ShellAction, …).
    """

    DEFAULT_CSS = """
    ActionBlock {
        border: round $primary 60%;
        border-title-color: $text-primary;
        border-subtitle-color: $text-muted;
        padding: 0 1;
        margin: 1 0 0 0;
        & > .action-body { width: 1fr; }
        /* While it is asked the block shows the action in full too (an empty box read as "nothing to
           approve"); the dialog stays the one place to decide. */
        &.-pending { border: round $warning; border-subtitle-color: $text-warning; }
        &.-rejected { border: round $error 70%; border-subtitle-color: $text-error; }
        &.-shell { border: round $accent 60%; }
        & > .action-diff { border-top: none; padding: 0; background: transparent; }
        & > .action-diff > Contents { padding: 0; }
        &:focus { border: round $accent; background: $boost; }
    }
    """
    HELP_GROUP = "Action block (focused)"
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("d", "show_diff", "Diff", id="action.diff"),
    ]
    can_focus = True

    class DiffRequested(Message):
        """The user asked for what this action changed (``d`` on a focused block)."""

        def __init__(self, corr_id: str) -> None:
            super().__init__()
            self.corr_id = corr_id

    def __init__(
        self, tool_call: ToolCall, *, agent_id: str = "main", corr_id: str = "", collapse_diff: bool = False
    ) -> None:
        super().__init__(agent_id=agent_id, corr_id=corr_id)
        self.tool_call = tool_call
        self.collapse_diff = collapse_diff
        self.border_title = self.label(action_title(tool_call))
        self.status = ""
        if isinstance(tool_call, ShellAction | ShellScript):
            self.add_class("-shell")

    def compose(self) -> ComposeResult:
        call = self.tool_call
        if isinstance(call, FileWrite | FileEdit) and call.diff:
            # The diff stays in the log after the decision, collapsible (Enter on its title).
            yield Static(file_call_header(call), classes="action-body", markup=False)
            added, removed = diff_stats(call.diff)
            collapsed = self.collapse_diff or call.diff.count("\n") > DIFF_COLLAPSE_LINES
            with LogFold(title=f"Diff +{added} -{removed}", collapsed=collapsed, classes="action-diff"):
                yield Static(diff_content(call.diff), markup=False)
            return
        yield Static(tool_call_content(call), classes="action-body", markup=False)

    def action_show_diff(self) -> None:
        """Ask the app to show what this action changed in the files."""
        if self.corr_id:
            self.post_message(self.DiffRequested(self.corr_id))

    def set_status(self, status: str, *, pending: bool = False, rejected: bool = False) -> None:
        """Show the decision state: ``waiting for approval``, ``approved``, ``auto-approved by rule``, …"""
        self.status = status
        self.border_subtitle = escape(visible(status, multiline=False))
        self.set_class(pending, "-pending")
        self.set_class(rejected, "-rejected")


class SubagentBlock(ActionBlock):
    """A delegated task; the subagent's events nest inside it."""

    DEFAULT_CSS = """
    SubagentBlock {
        border: round $secondary;
        & > .nested { height: auto; layout: stream; padding: 0 0 0 1; }
    }
    """

    def __init__(self, tool_call: ToolCall, *, agent_id: str = "main", corr_id: str = "") -> None:
        super().__init__(tool_call, agent_id=agent_id, corr_id=corr_id)
        self.adopted: list[Block] = []
        """Blocks of the subagent's own turn made before this block is mounted (a resumed session)."""

    def compose(self) -> ComposeResult:
        yield from super().compose()
        yield Vertical(*self.adopted, classes="nested")

    @property
    def nested(self) -> Vertical:
        """The container that receives the subagent's blocks."""
        return self.query_one(".nested", Vertical)
