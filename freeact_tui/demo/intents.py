"""What the offline demo model makes of a prompt: ``parse_intent(prompt) -> Intent``.

``Intent.kind`` is one of ``compute``, ``compute_unknown``, ``list_files``, ``count_files``,
``create_file``, ``subagent``, ``table``, ``summarize``, ``tour``; the code it runs is built here. The
request is what the user typed: files attached to it (``@path``) are its material, never the request;
a request the demo has no recipe for, with files attached, is about them (``summarize``).
"""

from __future__ import annotations

import ast
import math
import re
from dataclasses import dataclass
from typing import Literal

from freeact_tui.text.userwords import split_attachments

IntentKind = Literal[
    "compute",
    "compute_unknown",
    "list_files",
    "count_files",
    "create_file",
    "subagent",
    "table",
    "summarize",
    "tour",
]


@dataclass(frozen=True)
class Intent:
    """One request the demo understands, with what it needs to carry it out."""

    kind: IntentKind
    what: str = ""
    """A short description, e.g. "the sum of the squares of 1 to 100"."""
    code: str = ""
    """The code action (for the intents that run code)."""
    path: str = ""
    content: str = ""
    task: str = ""
    """The subagent's task."""
    answer: str = "The kernel printed `{out}`, so {what} is **{out}**."
    """The answer to a computation: ``{out}`` is the last line printed, ``{first}`` its first word,
    ``{what}`` the description (``{bare}`` without a leading "the")."""


# -- intent parsing ------------------------------------------------------------------------------------

_INT = r"(-?\d{1,7})"
_RANGE = rf"(?:from\s+)?{_INT}\s*(?:\.\.\.?|…|-|–|to|through|and)\s*{_INT}"
_MAX_RANGE = 10_000_000


def _range(a: str, b: str) -> tuple[int, int] | None:
    lo, hi = int(a), int(b)
    if lo > hi or hi - lo > _MAX_RANGE:
        return None
    return lo, hi


def _powers_code(power: int, lo: int, hi: int) -> str:
    terms = f"range({lo}, {hi + 1})" if power == 1 else f"n**{power} for n in range({lo}, {hi + 1})"
    return f"total = sum({terms})\nprint(total)"


def _sum_intent(text: str) -> Intent | None:
    m = re.search(
        rf"sum of (?:the |all )?(squares|cubes)\s+(?:of\s+)?(?:the\s+)?(?:numbers\s+|integers\s+)?{_RANGE}",
        text,
    )
    if m:
        bounds = _range(m.group(2), m.group(3))
        if bounds:
            power = 2 if m.group(1) == "squares" else 3
            what = f"the sum of the {m.group(1)} of {bounds[0]} to {bounds[1]}"
            return Intent("compute", what=what, code=f"# {what}\n" + _powers_code(power, *bounds))
    m = re.search(rf"sum of (?:the |all )?(?:numbers|integers)?\s*{_RANGE}", text)
    if m:
        bounds = _range(m.group(1), m.group(2))
        if bounds:
            what = f"the sum of the numbers {bounds[0]} to {bounds[1]}"
            return Intent("compute", what=what, code=f"# {what}\n" + _powers_code(1, *bounds))
    return None


def _named_intent(text: str) -> Intent | None:
    m = re.search(r"factorial of (\d{1,4})\b", text) or re.search(r"\b(\d{1,4})\s*!(?!=)", text)
    if m:
        n = int(m.group(1))
        what = f"{n}! (the factorial of {n})"
        return Intent("compute", what=what, code=f"import math\n\nprint(math.factorial({n}))")
    m = re.search(r"\b(\d{1,5})(?:st|nd|rd|th)?\s+fibonacci", text) or re.search(
        r"fibonacci(?: number)?\s+(?:number\s+)?#?(\d{1,5})\b", text
    )
    if m:
        n = int(m.group(1))
        what = f"Fibonacci number {n}"
        code = f"a, b = 0, 1\nfor _ in range({n}):\n    a, b = b, a + b\nprint(a)"
        return Intent("compute", what=what, code=code)
    m = re.search(r"primes?\s+(?:numbers\s+)?(?:below|under|less than|up to|until|<=?)\s+(\d{1,7})\b", text)
    if m:
        n = int(m.group(1))
        inclusive = re.search(r"up to|until|<=", m.group(0)) is not None
        limit = n + 1 if inclusive else n
        what = f"primes {'up to' if inclusive else 'below'} {n}"
        code = (
            f"limit = {limit}\n"
            "sieve = bytearray([1]) * max(limit, 2)\n"
            "sieve[0:2] = b'\\x00\\x00'\n"
            "for i in range(2, int(limit**0.5) + 1):\n"
            "    if sieve[i]:\n"
            "        sieve[i * i :: i] = bytearray(len(sieve[i * i :: i]))\n"
            "primes = [i for i in range(limit) if sieve[i]]\n"
            "print(len(primes), 'primes; the largest:', primes[-5:])"
        )
        answer = "The kernel printed `{out}`: there are **{first}** {bare}."
        return Intent("compute", what=f"the {what}", code=code, answer=answer)
    m = re.search(r"(?:square root|sqrt) of (\d+(?:\.\d+)?)", text)
    if m:
        what = f"the square root of {m.group(1)}"
        return Intent("compute", what=what, code=f"import math\n\nprint(math.sqrt({m.group(1)}))")
    return None


_MATH_NAMES = {name for name in dir(math) if not name.startswith("_")}
_ALLOWED_NODES = (
    ast.Expression, ast.BinOp, ast.UnaryOp, ast.Constant, ast.Name, ast.Load, ast.Call,
    ast.operator, ast.unaryop,
)  # fmt: skip
_LEAD = re.compile(
    r"^(?:please\s+)?(?:compute|calculate|evaluate|work out|what(?:'s| is)|how much is|solve)\b[:\s]*", re.I
)


def _expression(text: str) -> str | None:
    """``text`` as a Python arithmetic expression (numbers, operators, ``math`` functions), or None."""
    expr = _LEAD.sub("", text.strip()).strip().rstrip("?.!").strip()
    expr = expr.replace("^", "**").replace("×", "*").replace("÷", "/").replace("−", "-")
    if not expr or not re.search(r"\d", expr) or len(expr) > 200:
        return None
    try:
        tree = ast.parse(expr, mode="eval")
    except SyntaxError:
        return None
    for node in ast.walk(tree):
        if not isinstance(node, _ALLOWED_NODES):
            return None
        if isinstance(node, ast.Constant) and not isinstance(node.value, int | float):
            return None
        if isinstance(node, ast.Name) and node.id not in _MATH_NAMES:
            return None
        if isinstance(node, ast.Call) and (node.keywords or not isinstance(node.func, ast.Name)):
            return None
    if isinstance(tree.body, ast.Constant):
        return None  # a bare number is not a computation
    return expr


def _compute_intent(prompt: str, text: str) -> Intent | None:
    intent = _sum_intent(text) or _named_intent(text)
    if intent is not None:
        return intent
    expr = _expression(prompt)
    if expr is not None:
        names = {n.id for n in ast.walk(ast.parse(expr, mode="eval")) if isinstance(n, ast.Name)}
        head = f"from math import {', '.join(sorted(names))}\n\n" if names else ""
        return Intent("compute", what=f"`{expr}`", code=f"{head}print({expr})")
    if _LEAD.match(prompt.strip()) and re.match(r"^\s*(?:please\s+)?(?:compute|calculate|evaluate)", text):
        return Intent("compute_unknown", what=_LEAD.sub("", prompt.strip()))
    return None


def _unquote(value: str) -> str:
    value = value.strip()
    if len(value) >= 2 and value[0] in "\"'“‘`" and value[-1] in "\"'”’`":
        return value[1:-1]
    return value


def parse_intent(prompt: str) -> Intent:
    """What the demo makes of ``prompt`` (see the module docstring for the kinds)."""
    request, attached = split_attachments(prompt)
    intent = _request_intent(request)
    if attached and intent.kind in ("tour", "compute_unknown"):
        return Intent("summarize", what=request.strip(), content=attached)
    return intent


def attachment_summary(attached: str) -> str:
    """What the demo says about attached files: each one's size, headings and first paragraph."""
    parts: list[str] = []
    for section in attached.split("\n\n[@"):
        head, _, body = section.lstrip("[@").partition("\n")
        name = head.rstrip("]")
        lines = [line for line in body.splitlines() if not line.startswith("```")]
        headings = [line.lstrip("#").strip() for line in lines if line.startswith("#")][:8]
        paragraphs = "\n".join(line for line in lines if not line.startswith("#")).split("\n\n")
        paragraph = next((" ".join(p.split()) for p in paragraphs if p.strip()), "")
        text = f"**{name}**: {len(lines)} lines"
        if headings:
            text += "; its sections: " + ", ".join(f"*{h}*" for h in headings)
        if paragraph:
            text += f".\n\nIt begins: {paragraph[:300]}"
        parts.append(text)
    return "\n\n".join(parts)


def _request_intent(prompt: str) -> Intent:
    text = " ".join(prompt.lower().split())
    m = re.search(
        r"\b(?:use|ask|start|launch|with|delegate to|via)\s+(?:a\s+|one\s+)?sub-?agents?\b[,:]?\s*(.*)", text
    )
    if m:
        start = m.start(1)
        task = " ".join(prompt.split())[start:] if m.group(1) else ""
        task = re.sub(r"^(?:to|for|and|that|which)\s+", "", task, flags=re.I).strip()
        return Intent("subagent", task=task or "count the files in the working directory")
    m = re.search(
        r"\b(?:create|write|make)\s+(?:a\s+|the\s+|new\s+)*file\s+(?:named\s+|called\s+)?(\S+)\s+"
        r"(?:containing|that contains|with the (?:text|content)|with content|with)\s+(.+)$",
        " ".join(prompt.split()),
        re.I,
    )
    if m:
        path = _unquote(m.group(1)).rstrip(",:")
        content = _unquote(m.group(2).strip())
        code = (
            "from pathlib import Path\n\n"
            f"path = Path({path!r})\n"
            "path.parent.mkdir(parents=True, exist_ok=True)\n"
            f"path.write_text({content + chr(10)!r})\n"
            'print(f"{path.resolve()} ({path.stat().st_size} bytes):")\n'
            "print(path.read_text(), end='')"
        )
        return Intent("create_file", path=path, content=content, what=f"`{path}`", code=code)
    if re.search(r"\bfiles?\b", text) and re.search(r"\b(?:count|how many|number of)\b", text):
        return Intent(
            "count_files",
            what="the files under the working directory",
            code="!find . -type f -not -path '*/.*' | wc -l",
        )
    if re.search(r"\bfiles?\b|\bdirectory\b|\bfolder\b", text) and re.search(
        r"\b(?:list|show|ls|what)\b", text
    ):
        return Intent("list_files", what="the working directory", code="!ls -la")
    if re.search(r"\btables?\b", text):
        m = re.search(r"\b(?:up to|until|to|of)\s+(\d{1,2})\b", text)
        rows = max(1, min(int(m.group(1)), 20)) if m else 8
        code = f"for n in range(1, {rows + 1}):\n    print(n, n**2, n**3, 2**n, sep=',')"
        return Intent("table", what=f"powers of 1 to {rows}", code=code)
    intent = _compute_intent(prompt, text)
    if intent is not None:
        return intent
    return Intent("tour")
