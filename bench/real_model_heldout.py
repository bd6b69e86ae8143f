"""The held-out task set of ``real_model.py``: written before looking at any trace of it (#30).

The derived set (``real_model.TASKS``) is what the small-model rules were tuned on; these tasks are
phrased as people ask — no "run code to…" — in English and German, with multi-step file work, data
files, a package to install, a literal-output trap and a correction turn. Each checks the real
outcome (files, the true number in the answer, what ran), never the model's claims.
"""

from __future__ import annotations

import base64
import csv
import hashlib
import io
import json
import re
import statistics
import sys
import zipfile
from collections.abc import Awaitable, Callable
from decimal import Decimal
from pathlib import Path
from typing import TYPE_CHECKING

from freeact_tui.events import ApprovalRequest
from freeact_tui.toolcalls import CodeAction

if TYPE_CHECKING:  # the types only are needed here
    from real_model_agents import Context

_SEPARATOR = re.compile(r"(?<=\d)[,.'\u00a0\u202f ](?=\d{3}(?!\d))")


_NUMBER = re.compile(r"(?<![\d.,])\d+(?:[.,]\d+)?(?![\d]|[.,]\d)")


def says_number(text: str, value: str) -> bool:
    """Whether ``text`` states ``value``: a number in it equal by value (``86400.0`` is 86400), with
    thousands separators and a decimal comma allowed."""
    plain = _SEPARATOR.sub("", text)
    want = Decimal(value)
    return any(Decimal(m.group().replace(",", ".")) == want for m in _NUMBER.finditer(plain))


async def h_day_seconds(c: Context) -> bool:
    async with c.make() as agent:
        t = await c.turn(agent, "Wie viele Sekunden hat ein Tag?")
    return says_number(t.answer, "86400")


async def h_csv_average(c: Context) -> bool:
    prices = [12.5, 40.0, 7.25, 31.0, 19.75, 47.0]
    rows = [["item", "price"], *([f"item{i}", f"{p:.2f}"] for i, p in enumerate(prices))]
    buffer = io.StringIO()
    csv.writer(buffer).writerows(rows)
    (c.work / "prices.csv").write_text(buffer.getvalue())
    async with c.make() as agent:
        t = await c.turn(agent, "what's the average price in prices.csv?")
    return says_number(t.answer, f"{statistics.mean(prices):.2f}")  # 26.25


async def h_rename_txt(c: Context) -> bool:
    contents = {"a": "first\n", "b": "second\n", "todo": "- milk\n"}
    for stem, text in contents.items():
        (c.work / f"{stem}.txt").write_text(text)
    (c.work / "data.csv").write_text("x\n1\n")
    async with c.make() as agent:
        await c.turn(agent, "rename every .txt file here to .md")
    renamed = all((c.work / f"{stem}.md").is_file() and (c.work / f"{stem}.md").read_text() == text
                  for stem, text in contents.items())  # fmt: skip
    return renamed and not list(c.work.glob("*.txt")) and (c.work / "data.csv").read_text() == "x\n1\n"


async def h_error_line(c: Context) -> bool:
    lines = [f"2026-11-27 04:0{i}:00 INFO step {i} ok" for i in range(9)]
    lines[5] = "2026-11-27 04:05:00 ERROR disk quota exceeded on /srv"
    (c.work / "log.txt").write_text("\n".join(lines) + "\n")
    async with c.make() as agent:
        t = await c.turn(agent, "Welche Zeile in log.txt enthält ERROR?")
    return "disk quota exceeded" in t.answer or bool(re.search(r"(?<![\d:])6(?![\d:])", t.answer))


async def h_json_port(c: Context) -> bool:
    original = {"name": "demo", "debug": True, "port": 8080, "hosts": ["a", "b"]}
    (c.work / "settings.json").write_text(json.dumps(original, indent=2) + "\n")
    async with c.make() as agent:
        await c.turn(agent, "the port in settings.json should be 9090 now, can you change that?")
    try:
        data = json.loads((c.work / "settings.json").read_text())
    except (OSError, ValueError):
        return False
    return data == {**original, "port": 9090}


async def h_biggest_city(c: Context) -> bool:
    cities = {"Graz": 298_000, "Linz": 210_000, "Innsbruck": 131_000, "Salzburg": 156_000, "Wels": 63_000}
    (c.work / "cities.csv").write_text("city;population\n" + "".join(f"{k};{v}\n" for k, v in cities.items()))
    async with c.make() as agent:
        t = await c.turn(agent, "which city in cities.csv has the most people?")
    others = [name for name in cities if name != "Graz"]
    return "Graz" in t.answer and not all(name in t.answer for name in others)


def _wheel(dist: Path, value: str) -> Path:
    """A pure-Python wheel of ``mypkg`` (VALUE = ``value``), built by hand: no build backend, no network."""
    files = {
        "mypkg/__init__.py": f'VALUE = "{value}"\n',
        "mypkg-0.1.dist-info/METADATA": "Metadata-Version: 2.1\nName: mypkg\nVersion: 0.1\n",
        "mypkg-0.1.dist-info/WHEEL": "Wheel-Version: 1.0\nGenerator: bench\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
    }
    record = []
    for name, text in files.items():
        digest = base64.urlsafe_b64encode(hashlib.sha256(text.encode()).digest()).rstrip(b"=").decode()
        record.append(f"{name},sha256={digest},{len(text.encode())}")
    record.append("mypkg-0.1.dist-info/RECORD,,")
    files["mypkg-0.1.dist-info/RECORD"] = "\n".join(record) + "\n"
    dist.mkdir()
    path = dist / "mypkg-0.1-py3-none-any.whl"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, text in files.items():
            archive.writestr(name, text)
    return path


async def h_wheel(c: Context) -> bool:
    value = "orchid-5521"
    _wheel(c.work / "dist", value)
    async with c.make() as agent:
        t = await c.turn(agent, "install the wheel in ./dist and tell me what mypkg.VALUE is")
    # The bench's kernel installs into the task's own site dir (PIP_TARGET), next to work/.
    installed = any(c.work.parent.glob("site/mypkg-0.1.dist-info"))
    return installed and value in t.outputs and value in t.answer


async def h_literal_42(c: Context) -> bool:
    async with c.make() as agent:
        t = await c.turn(agent, "just print 42 and tell me")
    # The trap: a reply that is only the literal (a fenced ``42``) must not run as a code action.
    literal_ran = any(
        isinstance(e.tool_call, CodeAction) and e.tool_call.code.strip().strip("`").strip() == "42"
        for e in t.of(ApprovalRequest)
    )
    return says_number(t.answer, "42") and not literal_ran


async def h_correction(c: Context) -> bool:
    (c.work / "notes_old.txt").write_text("".join(f"old line {i}\n" for i in range(12)))
    (c.work / "notes_new.txt").write_text("".join(f"new line {i}\n" for i in range(7)))
    async with c.make() as agent:
        await c.turn(agent, "how many lines are in notes_old.txt?")
        t = await c.turn(agent, "no, I meant the other file")
    return says_number(t.answer, "7") and not says_number(t.answer, "12")


async def h_word_count(c: Context) -> bool:
    text = (
        "Liebe Anna,\nvielen Dank für die Einladung zum Sommerfest. Ich komme gern und bringe einen "
        "Kuchen mit.\nBis Samstag, herzliche Grüße\nJonas\n"
    )
    (c.work / "brief.txt").write_text(text)
    async with c.make() as agent:
        t = await c.turn(agent, "Wie viele Wörter stehen in brief.txt?")
    return says_number(t.answer, str(len(text.split())))


async def h_backup_csv(c: Context) -> bool:
    tables = {"januar.csv": "tag,umsatz\n1,120\n", "februar.csv": "tag,umsatz\n1,95\n"}
    for name, text in tables.items():
        (c.work / name).write_text(text)
    (c.work / "notiz.txt").write_text("nicht kopieren\n")
    async with c.make() as agent:
        await c.turn(agent, "Leg einen Ordner backup an und kopier alle CSV-Dateien da rein.")
    backup = c.work / "backup"
    copied = all((backup / n).is_file() and (backup / n).read_text() == t for n, t in tables.items())
    kept = all((c.work / n).read_text() == t for n, t in tables.items())
    return copied and kept and not (backup / "notiz.txt").exists()


async def h_python_version(c: Context) -> bool:
    async with c.make() as agent:
        t = await c.turn(agent, "which Python version is your kernel running?")
    # The kernel runs on the bench's interpreter (its environment is layered over the app's).
    return f"{sys.version_info.major}.{sys.version_info.minor}.{sys.version_info.micro}" in t.answer


async def h_empty_files(c: Context) -> bool:
    for name in ("leer1.txt", "leer2.log"):
        (c.work / name).write_text("")
    for name, text in {"voll.txt": "inhalt\n", "config.ini": "[a]\nb = 1\n"}.items():
        (c.work / name).write_text(text)
    async with c.make() as agent:
        await c.turn(agent, "Lösch bitte alle leeren Dateien in diesem Ordner.")
    gone = not (c.work / "leer1.txt").exists() and not (c.work / "leer2.log").exists()
    return gone and (c.work / "voll.txt").read_text() == "inhalt\n" and (c.work / "config.ini").is_file()


HELDOUT: dict[str, Callable[[Context], Awaitable[bool]]] = {
    "day_seconds_de": h_day_seconds,
    "csv_average": h_csv_average,
    "rename_txt": h_rename_txt,
    "error_line_de": h_error_line,
    "json_port": h_json_port,
    "biggest_city": h_biggest_city,
    "wheel": h_wheel,
    "literal_42": h_literal_42,
    "correction": h_correction,
    "word_count_de": h_word_count,
    "backup_csv_de": h_backup_csv,
    "python_version": h_python_version,
    "empty_files_de": h_empty_files,
}
