"""The offline demo model (``--model demo``): a scripted pydantic-ai ``FunctionModel`` that shows the product.

It reads the last user prompt and carries out a few intents with real code actions through the normal
tools (``CODE_TOOL``, ``SUBAGENT_TOOL``), so approvals, kernel output, sessions and subagents are the
product's own. Its thoughts stream as thinking parts and its answers in chunks, as a real model's do;
after a tool return it quotes the output it actually got back. Deterministic and offline.

Public interface:

- ``DEMO_MODEL = "demo"``: the model name.
- ``demo_model(*, delay=0.012) -> FunctionModel``: the model (``delay``: seconds between streamed chunks).
- ``parse_intent(prompt) -> Intent``: what the demo makes of a prompt (``Intent.kind`` is one of
  ``compute``, ``compute_unknown``, ``list_files``, ``count_files``, ``create_file``, ``subagent``,
  ``table``, ``tour``).
"""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from typing import Any, Literal

from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    ToolReturnPart,
    UserPromptPart,
)
from pydantic_ai.models.function import AgentInfo, DeltaThinkingPart, DeltaToolCall, FunctionModel

from freeact_tui.demo.intents import Intent, attachment_summary, parse_intent
from freeact_tui.store.step_record import StepRecord
from freeact_tui.text.userwords import user_words
from freeact_tui.toolcalls import CODE_TOOL, SUBAGENT_TOOL

DEMO_MODEL = "demo"


# -- reading the conversation --------------------------------------------------------------------------


@dataclass
class _Turn:
    prompt: str
    returns: list[ToolReturnPart]
    """Tool returns of this turn, oldest first."""
    previous_rejection: str | None
    """What the user rejected at the end of the previous turn, if anything."""
    responses: int
    """Model responses in the whole conversation so far (for unique tool call ids)."""


def _prompt_text(part: UserPromptPart) -> str:
    """The user's own words: notes and shell output the app put before them are no request."""
    if isinstance(part.content, str):
        return user_words(part.content)
    return " ".join(user_words(c) for c in part.content if isinstance(c, str))


def _outcome(part: ToolReturnPart) -> str:
    outcome = StepRecord.of_part(part).outcome
    if outcome is not None:
        return outcome
    text = part.model_response_str()
    return "rejected" if text.startswith(("The user rejected", "Refused")) else "ok"


def _read_turn(messages: list[ModelMessage]) -> _Turn:
    responses = sum(isinstance(m, ModelResponse) for m in messages)
    for index in range(len(messages) - 1, -1, -1):
        message = messages[index]
        if not isinstance(message, ModelRequest):
            continue
        prompts = [p for p in message.parts if isinstance(p, UserPromptPart)]
        if not prompts:
            continue
        returns = [
            p
            for m in messages[index + 1 :]
            if isinstance(m, ModelRequest)
            for p in m.parts
            if isinstance(p, ToolReturnPart)
        ]
        rejection = None
        earlier: list[ToolReturnPart] = [p for p in message.parts if isinstance(p, ToolReturnPart)]
        back = index - 1
        while back >= 0 and isinstance(messages[back], ModelRequest):
            earlier = [p for p in messages[back].parts if isinstance(p, ToolReturnPart)] + earlier
            back -= 1
        for part in earlier:
            if _outcome(part) == "rejected":
                rejection = part.model_response_str()
        return _Turn(_prompt_text(prompts[-1]), returns, rejection, responses)
    return _Turn("", [], None, responses)


_ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


def _clean(text: str) -> str:
    return _ANSI.sub("", text).strip()


# -- streaming -----------------------------------------------------------------------------------------


@dataclass
class _Think:
    text: str


@dataclass
class _Say:
    text: str


@dataclass
class _Call:
    tool: str
    args: dict[str, Any]


_Step = _Think | _Say | _Call


def _chunks(text: str, words: int = 3) -> Iterator[str]:
    pieces = re.split(r"(?<=\s)(?=\S)", text)
    for i in range(0, len(pieces), words):
        yield "".join(pieces[i : i + words])


class _DemoStream:
    def __init__(self, delay: float, tour: str) -> None:
        self.delay = delay
        self.tour = tour

    async def __call__(self, messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[Any]:
        turn = _read_turn(messages)
        tools = {t.name for t in info.function_tools}
        steps = list(_reply(turn, tools, self.tour))
        part = 0
        for step in steps:
            match step:
                case _Think(text=text):
                    for chunk in _chunks(text):
                        yield {part: DeltaThinkingPart(content=chunk)}
                        await asyncio.sleep(self.delay)
                    part += 1
                case _Say(text=text):
                    for chunk in _chunks(text):
                        yield chunk
                        await asyncio.sleep(self.delay)
                case _Call(tool=tool, args=args):
                    call_id = f"demo-{turn.responses + 1}-{part}"
                    raw = json.dumps(args)
                    half = len(raw) // 2
                    yield {part: DeltaToolCall(name=tool, json_args=raw[:half], tool_call_id=call_id)}
                    await asyncio.sleep(self.delay)
                    yield {part: DeltaToolCall(json_args=raw[half:])}
                    part += 1


def demo_model(*, delay: float = 0.012, front_end: FrontEnd = "app") -> FunctionModel:
    """The demo model; ``delay`` is the pause between streamed chunks (0 in tests); ``front_end`` is what
    drives it (its tour names only what that front end has: the app's keys, or an editor's menus)."""
    return FunctionModel(stream_function=_DemoStream(delay, tour(front_end)), model_name=DEMO_MODEL)


# -- what the demo says and does -----------------------------------------------------------------------


def _polite_rejection(rejection: str) -> str:
    refused = re.match(r"Refused [^:]*:\s*(.*?)\.? Wait for new instructions\.?$", rejection, re.S)
    if refused:
        return f"My last action was refused ({refused.group(1)}), so it did not run. No problem.\n\n"
    stopped = re.search(r"The user rejected (`.*?`).*?; the action was stopped", rejection, re.S)
    if stopped:
        return f"You rejected {stopped.group(1)} in my last action, so I stopped it there. No problem.\n\n"
    return "You rejected my last action, so I did not run it. No problem.\n\n"


def _reply(turn: _Turn, tools: set[str], tour_text: str = "") -> Iterator[_Step]:
    intent = parse_intent(turn.prompt)
    if turn.returns:
        yield from _after_return(intent, turn.returns[-1])
        return
    steps = list(_first_step(intent, tools, tour_text or TOUR))
    if turn.previous_rejection is not None:  # after the thought, as the answer's first words
        at = 1 if steps and isinstance(steps[0], _Think) else 0
        steps.insert(at, _Say(_polite_rejection(turn.previous_rejection)))
    yield from steps


def _code_call(code: str) -> _Call:
    return _Call(CODE_TOOL, {"code": code})


def _first_step(intent: Intent, tools: set[str], tour_text: str) -> Iterator[_Step]:
    match intent.kind:
        case "compute":
            yield _Think(
                f"The user wants {intent.what}. I could guess, but the kernel is right there: I'll write a "
                "few lines of Python, run them, and answer with what they print."
            )
            yield _Say(f"I'll compute {intent.what} with Python in the kernel.\n")
            yield _code_call(intent.code)
        case "count_files":
            yield _Think(
                "Counting files is a job for the shell. In a code action a line starting with `!` runs a "
                "shell command; `find` lists the files, `wc -l` counts the lines."
            )
            yield _Say("I'll count them with `find` and `wc -l` (hidden files and folders left out).\n")
            yield _code_call(intent.code)
        case "list_files":
            yield _Think("The user wants to see the working directory: `ls -la` in a `!` shell line does it.")
            yield _Say("Here is a shell command that lists the working directory.\n")
            yield _code_call(intent.code)
        case "create_file":
            yield _Think(
                f"Create {intent.path} with the given text. I'll write it with pathlib, then read it back "
                "so the answer rests on what is really on disk."
            )
            yield _Say(f"I'll write {intent.what} and read it back to check.\n")
            yield _code_call(intent.code)
        case "table":
            yield _Think(
                f"A table of {intent.what}. I'll let Python produce the numbers and format them as a "
                "Markdown table myself."
            )
            yield _Say(f"Let me compute {intent.what} first.\n")
            yield _code_call(intent.code)
        case "subagent":
            if SUBAGENT_TOOL not in tools:
                yield _Think("The subagent tool is not available here (subagents cannot start subagents).")
                yield _Say(
                    "I can't start a subagent here: subagents are disabled in this context (a subagent "
                    "cannot start another one). Ask me the task directly instead."
                )
                return
            yield _Think(
                "The user asks for a subagent. A subagent gets its own kernel and works on the task on its "
                "own; its actions need approval like mine, and its final answer comes back to me."
            )
            yield _Say(f"I'll hand this to a subagent: *{intent.task}*.\n")
            yield _Call(SUBAGENT_TOOL, {"prompt": intent.task})
        case "compute_unknown":
            yield _Think("A computation I don't have a recipe for. Better to say so than to guess.")
            yield _Say(
                f"I'm only the offline demo model, so I can't work out *{intent.what}* myself. I compute "
                "arithmetic (`what is 2**64 - 1`, `sqrt(2) * pi`), sums (`the sum of the squares of 1 to "
                "100`), factorials, Fibonacci numbers and primes (`primes below 100`) — or connect a real "
                "model (see `/help`, or send `tour`)."
            )
        case "summarize":
            yield _Think(
                "Files are attached to the request. I'm a scripted demo, not a language model: I can say what "
                "is in them (their size, sections and opening), not summarise them in my own words."
            )
            yield _Say(
                "I'm the offline demo model, so this is an outline rather than a summary:\n\n"
                + attachment_summary(intent.content)
                + "\n\nConnect a real model (see `/help`) for a real summary."
            )
        case "tour":
            yield _Think(
                "Nothing I can act on directly, so I'll give the tour: what the demo can do, approvals, "
                "sessions, keys, and how to connect a real model."
            )
            yield _Say(tour_text)


def _quoted(text: str) -> str:
    return f"```text\n{text}\n```" if text else "*(no output)*"


def _after_return(intent: Intent, ret: ToolReturnPart) -> Iterator[_Step]:
    outcome = _outcome(ret)
    output = _clean(ret.model_response_str())
    if outcome == "rejected":
        yield _Say("You rejected that action, so I stopped. Tell me what you'd like instead.")
        return
    if outcome in ("error", "interrupted"):
        yield _Think("The action failed. I'll show the error as it came back rather than pretend.")
        yield _Say(f"That did not work; this is what came back:\n\n{_quoted(output)}\n")
        return
    last = output.splitlines()[-1].strip() if output else ""
    match intent.kind:
        case "compute":
            first = last.split()[0] if last else ""
            yield _Think(f"The kernel printed `{last}`. That is the answer.")
            yield _Say(
                intent.answer.format(
                    out=last, first=first, what=intent.what, bare=intent.what.removeprefix("the ")
                )
            )
        case "count_files":
            yield _Think(f"`wc -l` printed {last}.")
            found = "no files" if last == "0" else f"**{last}** file" + ("" if last == "1" else "s")
            yield _Say(
                f"`find` and `wc -l` found {found} under the working directory "
                "(hidden files and folders not counted)."
            )
        case "list_files":
            entries = [line for line in output.splitlines() if line and not line.startswith("total ")]
            names = [
                e.split()[-1] for e in entries if len(e.split()) >= 9 and e.split()[-1] not in (".", "..")
            ]
            yield _Think(f"`ls` listed {len(names)} entries.")
            shown = ", ".join(f"`{n}`" for n in names[:12]) + (" …" if len(names) > 12 else "")
            yield _Say(
                f"The working directory has **{len(names)}** entries"
                + (f": {shown}." if names else ".")
                + "\n\nThe full listing is in the output above."
            )
        case "create_file":
            lines = output.splitlines()
            head = re.fullmatch(r"(.*) \((\d+) bytes\):", lines[0]) if lines else None
            where, size = (head.group(1), f" ({head.group(2)} bytes)") if head else (intent.path, "")
            body = "\n".join(lines[1:])
            yield _Think(
                "The file is written; reading it back returned the text. Confirm with the real bytes."
            )
            yield _Say(f"Created `{where}`{size}. Reading it back gives:\n\n{_quoted(body)}\n")
        case "table":
            rows = [line.split(",") for line in output.splitlines() if line.count(",") == 3]
            table = "| n | n² | n³ | 2ⁿ |\n|---:|---:|---:|---:|\n" + "\n".join(
                "| " + " | ".join(cells) + " |" for cells in rows
            )
            yield _Think(f"{len(rows)} rows came back; now the Markdown table.")
            yield _Say(f"Here are the {intent.what}, from the kernel's output:\n\n{table}\n")
        case "subagent":
            yield _Think("The subagent finished; I'll pass on its answer.")
            yield _Say(f"The subagent is done. Its answer:\n\n> {output.replace(chr(10), chr(10) + '> ')}\n")
        case _:
            yield _Say(f"The action returned:\n\n{_quoted(output)}\n")


_TOUR_INTRO = """\
Hi! I'm the **demo model**: a small offline script built into freeact-tui, not a real LLM. I understand \
a handful of requests and carry them out with real code actions in a real Python kernel, so what you \
see — approvals, output, sessions, subagents — is the actual product.

**Try one of these**

- `compute the sum of the squares of 1 to 100`
- `what is 2**64 - 1`
- `count the files here` or `list the files`
- `create a file hello.txt containing Hello from freeact`
- `use a subagent to compute the factorial of 20`
- `show a table of powers up to 6`

"""

_TOUR_CONNECT = """\
**Connect a real model**: give the provider its key in an environment variable and name the model:

```bash
# or OPENAI_API_KEY, GEMINI_API_KEY, GROQ_API_KEY, ...
export ANTHROPIC_API_KEY=...
freeact-tui --model anthropic:claude-sonnet-4-5
```

or set `model = "provider:name"` in the config file{choose}. Local \
models work through any OpenAI-compatible server (llama.cpp's `llama-server`, Ollama, vLLM):

```bash
# llama.cpp
freeact-tui --base-url http://localhost:8080/v1 --model local
# Ollama
freeact-tui --base-url http://localhost:11434/v1 --model llama3.1
```
"""

FrontEnd = Literal["app", "acp"]

_TOUR_FRONT_END: dict[str, tuple[str, str]] = {
    # front end → (how approvals, sessions and keys work there; how to pick another model there)
    "app": (
        """\
**Approvals**: before anything runs you see it and decide: `y` (or Enter) runs it once, `n` rejects \
it, `a` always allows matching actions (saved as a permission rule), `s` allows them for this session, \
`d` always denies. Shell commands (`!ls`) inside code are approved one by one.

**Sessions**: every conversation is saved. `/sessions` lists them; `/resume ID` (a unique prefix is \
enough) or `freeact-tui --session-id ID` continues one, `freeact-tui --resume` the latest one here; \
`/new` (Ctrl+N) starts afresh and F2 copies the session id.

**Keys**: Ctrl+B shows or hides the side panel, Esc cancels a running turn, Ctrl+O expands or \
collapses details, F1 opens the help, Ctrl+Q quits.

""",
        ", or type `/model openai:gpt-4o` here",
    ),
    "acp": (
        """\
**Approvals**: before anything runs, your editor shows it and asks you: allow it once, always allow \
actions like it (saved as a permission rule), reject it, or always deny them. Shell commands (`!ls`) \
inside code are asked about one by one. Stopping the turn in your editor stops the running code too.

**Sessions**: every conversation is saved; your editor can list and reopen them, and the terminal app \
continues any of them with `freeact-tui --session-id ID`.

""",
        ", or choose another model in your editor's model menu",
    ),
}


def tour(front_end: FrontEnd = "app") -> str:
    """The demo's tour for ``front_end``: it names only what that front end has."""
    how, choose = _TOUR_FRONT_END[front_end]
    return _TOUR_INTRO + how + _TOUR_CONNECT.format(choose=choose)


TOUR = tour("app")


__all__ = ["DEMO_MODEL", "TOUR", "FrontEnd", "Intent", "demo_model", "parse_intent", "tour"]
