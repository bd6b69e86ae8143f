"""The first-run screen: shown when no model is configured or its provider key is missing.

Public interface:

- ``FirstRunScreen(problem, *, config_file=None)`` is a ``Screen[bool | str]``; ``problem`` is the message
  of ``freeact_tui.agent.models.missing_setup()``. Push it with a callback (or ``push_screen_wait``):
  the result is ``True`` for "continue anyway" (Enter, c, Esc) — the app then shows its main screen
  without an agent —, ``False`` for quit (q); the app should then ``exit()``, and ``START_DEMO``
  (``"demo"``) for "start the demo" (d): the app should open an agent with the offline demo model.
- ``setup_guide(problem, config_file=None, *, demo_key=False) -> str``: the same guidance as Markdown,
  for the main screen to show when the user sends a prompt without a usable model (``demo_key``:
  say that **d** starts the demo, as on this screen).
"""

from __future__ import annotations

from pathlib import Path

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import Screen
from textual.widgets import Button, Label, Markdown

from freeact_tui.project import paths

START_DEMO = "demo"  # agent.models.DEMO_MODEL: not imported, it brings pydantic-ai to the first screen
"""The screen's result when the user chooses the offline demo."""

# (model prefix, environment variables) shown in the guide; the full list is in agent/models.py.
_PROVIDER_ROWS: tuple[tuple[str, str], ...] = (
    ("anthropic:…", "ANTHROPIC_API_KEY"),
    ("openai:…", "OPENAI_API_KEY"),
    ("google:… (google-gla:…)", "GEMINI_API_KEY or GOOGLE_API_KEY"),
    ("google-vertex:…", "GOOGLE_CLOUD_PROJECT / GOOGLE_APPLICATION_CREDENTIALS"),
    ("groq:…", "GROQ_API_KEY"),
    ("mistral:…", "MISTRAL_API_KEY"),
    ("deepseek:…", "DEEPSEEK_API_KEY"),
    ("openrouter:…", "OPENROUTER_API_KEY"),
    ("xai:…", "XAI_API_KEY"),
    ("ollama:…", "OLLAMA_BASE_URL (e.g. http://localhost:11434/v1)"),
)


def _keys_hint() -> str:
    from freeact_tui.agent.models import keys_found

    found = keys_found()
    if not found:
        return ""
    names = ", ".join(f"`{var}`" for _, var in found)
    provider = found[0][0]
    example = f"{provider}:{_EXAMPLES.get(provider, 'MODEL')}"
    return f"**Found in your environment**: {names}. Try `freeact-tui --model {example}`.\n\n"


# Example model names for the providers most often found set.
_EXAMPLES: dict[str, str] = {
    "anthropic": "claude-sonnet-4-5",
    "openai": "gpt-4o",
    "google": "gemini-2.5-flash",
    "groq": "llama-3.3-70b-versatile",
    "mistral": "mistral-large-latest",
    "deepseek": "deepseek-chat",
    "ollama": "llama3.2",
}


def setup_guide(problem: str, config_file: Path | None = None, *, demo_key: bool = False) -> str:
    """Explain how to set up a model, as Markdown.

    Args:
        problem: What is missing (from ``missing_setup``).
        config_file: The user config file to name; ``paths.user_config_file()`` by default.
        demo_key: Say that **d** starts the demo (on the first-run screen) instead of ``/model demo``.

    Returns:
        Markdown text: the problem, the offline demo, then the model setting, provider keys, local servers.
    """
    config_file = config_file or paths.user_config_file()
    # A list, not a preformatted table: a row wraps on a narrow terminal instead of scrolling sideways.
    rows = "\n".join(f"- `{prefix}`: {env}" for prefix, env in _PROVIDER_ROWS)
    how = "Press **d**" if demo_key else "Type `/model demo`"
    return f"""\
**{problem}**

**Just trying it out?** {how} (or start `freeact-tui --model demo`) for the offline demo: a built-in
scripted model that runs real code in a real kernel, asks for your approval and explains the app.
No key, no network.

{_keys_hint()}**Choose a model**: add this line to `{config_file}`

```toml
model = "anthropic:claude-sonnet-4-5"
```

or start with `freeact-tui --model anthropic:claude-sonnet-4-5`.

**Give the provider its key** in an environment variable (never in the config file):

{rows}

**Local or self-hosted models**: any OpenAI-compatible server works (llama.cpp, Ollama, vLLM):
`freeact-tui --base-url http://localhost:8080/v1 --model local`, or set
`base_url = "http://localhost:11434/v1"` (Ollama) and `model = "llama3.1"` in the config file;
`api_key_env` names the variable holding the server's key, if it needs one.
"""


class FirstRunScreen(Screen[bool | str]):
    """Welcome and setup guidance; dismisses with ``True`` to continue, ``False`` to quit, ``START_DEMO``."""

    CSS_PATH = "first_run.tcss"
    BINDINGS = [
        Binding("d", "start_demo", "Start the demo", id="first_run.demo"),
        Binding("q", "quit_app", "Quit", id="first_run.quit"),
        Binding("enter", "continue_app", "Continue anyway", id="first_run.continue"),
        Binding("c", "continue_app", "Continue anyway", show=False),
        Binding("escape", "continue_app", "Continue anyway", show=False),
    ]

    def __init__(self, problem: str, *, config_file: Path | None = None) -> None:
        """Build the screen.

        Args:
            problem: What is missing, as one or two sentences.
            config_file: The config file to name (tests pin it); ``paths.user_config_file()`` by default.
        """
        super().__init__()
        self._problem = problem
        self._config_file = config_file

    def compose(self) -> ComposeResult:
        with Vertical(id="first-run"):
            yield Label("Welcome to freeact-tui", id="first-run-title")
            with VerticalScroll(id="first-run-body"):
                yield Markdown(
                    setup_guide(self._problem, self._config_file, demo_key=True), id="first-run-guide"
                )
            with Horizontal(id="first-run-buttons"):
                yield Button("Start the demo (d)", id="first-run-demo", variant="success")
                yield Button("Continue anyway (Enter)", id="first-run-continue", variant="primary")
                yield Button("Quit (q)", id="first-run-quit", variant="error")

    def on_mount(self) -> None:
        # Keys, not the scroll area, should answer Enter at once.
        self.query_one("#first-run-continue", Button).focus()

    def action_quit_app(self) -> None:
        """Leave: the app should exit."""
        self.dismiss(False)

    def action_start_demo(self) -> None:
        """Open an agent with the offline demo model."""
        self.dismiss(START_DEMO)

    def action_continue_app(self) -> None:
        """Go on without a usable model (prompts will show the same guidance)."""
        self.dismiss(True)

    def on_button_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        if event.button.id == "first-run-demo":
            self.dismiss(START_DEMO)
        else:
            self.dismiss(event.button.id == "first-run-continue")
