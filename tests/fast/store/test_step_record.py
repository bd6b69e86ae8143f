"""The step record: one typed record of an action, written and read in one place, in the session's
format byte for byte (``tests/fixtures/app_sessions`` was written by the code before it)."""

from __future__ import annotations

import ast
import json
from pathlib import Path
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

import freeact_tui
from freeact_tui.store.envelope import decode_envelope
from freeact_tui.store.meta_keys import TEXT_ACTIONS_KEY
from freeact_tui.store.step_record import (
    INTERRUPTED_STEP,
    STEP_KEYS,
    TEXT_ACTION_KEYS,
    StepRecord,
    TextActionRecord,
    stored_text_actions,
    text_actions_meta,
)

FIXTURE = Path(__file__).parents[2] / "fixtures" / "app_sessions" / "5e1f0c2a-9b7d-4c3e-8a21-0d4b6f8e2a71"
PACKAGE = Path(freeact_tui.__file__).parent

# -- the format of the sessions the app wrote before the record -----------------------------------


def _rewritten(message: dict[str, Any]) -> dict[str, Any]:
    """``message`` with every step's metadata read into a record and written back."""
    parts = [
        part | {"metadata": StepRecord.from_meta(part["metadata"]).to_meta()}
        if part.get("part_kind") == "tool-return"
        else part
        for part in message["parts"]
    ]
    meta = message.get("metadata")
    if isinstance(meta, dict) and TEXT_ACTIONS_KEY in meta:
        meta = meta | text_actions_meta(list(stored_text_actions(meta)))
    return message | {"parts": parts, "metadata": meta}


def test_the_records_write_a_stored_session_byte_for_byte() -> None:
    lines = (FIXTURE / "main.jsonl").read_bytes().splitlines(keepends=True)
    steps = blocks = 0
    for line in lines:
        envelope = decode_envelope(line)
        message = envelope["message"]
        again = (json.dumps(envelope | {"message": _rewritten(message)}) + "\n").encode()
        assert again == line
        steps += sum(p.get("part_kind") == "tool-return" for p in message["parts"])
        blocks += len((message.get("metadata") or {}).get(TEXT_ACTIONS_KEY, []))
    assert steps == 65 and blocks == 38  # every shape the fixture holds was read


def test_the_stored_session_reads_as_typed_records() -> None:
    """Spot checks that the fields are read (not only carried through ``extra``)."""
    records = [
        StepRecord.from_meta(part["metadata"])
        for line in (FIXTURE / "main.jsonl").read_bytes().splitlines()
        for part in decode_envelope(line)["message"]["parts"]
        if part.get("part_kind") == "tool-return"
    ]
    assert all(not r.extra for r in records)
    assert {r.outcome for r in records} == {"ok", "error", "rejected", "interrupted"}
    assert any(r.kernel_died and r.malformed and r.subagent_id == "sub-7a3f" for r in records)
    assert any(r.images == ("/tmp/img/a.png", "/tmp/img/b.png") and r.truncated and r.result_path for r in records)
    assert any(r.outside is True and r.diff and r.resolved == "/etc/passwd" for r in records)
    assert any(isinstance(r.guarded, str) and r.guarded.startswith("NameError") for r in records)
    assert any(len(r.approvals) == 3 for r in records)


def test_a_freeact_session_reads_as_no_record() -> None:
    assert StepRecord.from_meta(None) == StepRecord()
    assert StepRecord().to_meta() == {}
    assert StepRecord().ran and not StepRecord().refused


# -- round trips over generated records -------------------------------------------------------------

_text = st.text(max_size=12)
_json = st.recursive(
    st.none() | st.booleans() | st.integers() | _text,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(_text, inner, max_size=3),
    max_leaves=6,
)
_approval = st.dictionaries(_text, _json, max_size=4)
_extra = st.dictionaries(_text.filter(lambda k: k not in STEP_KEYS), _json, max_size=3)

step_records = st.builds(
    StepRecord,
    outcome=st.none() | st.sampled_from(["ok", "error", "rejected", "interrupted"]) | _text,
    subagent_id=st.none() | _text,
    malformed=st.booleans(),
    kernel_died=st.booleans(),
    guarded=st.none() | st.booleans() | _text,
    images=st.lists(_text.filter(bool), max_size=3).map(tuple),
    truncated=st.booleans(),
    result_path=st.none() | _text,
    resolved=st.none() | _text,
    outside=st.none() | st.booleans(),
    diff=st.none() | _text,
    approvals=st.lists(_approval, max_size=3).map(tuple),
    extra=_extra,
)


@given(step_records)
def test_a_record_reads_back_as_it_was_written(record: StepRecord) -> None:
    meta = record.to_meta()
    assert StepRecord.from_meta(meta) == record
    assert StepRecord.from_meta(json.loads(json.dumps(meta))) == record  # through the file, too


@given(
    st.builds(
        TextActionRecord,
        id=_text,
        code=st.none() | _text,
        output=_text,
        step=step_records.filter(lambda r: not r.extra.keys() & TEXT_ACTION_KEYS),
    )
)
def test_a_text_action_reads_back_as_it_was_written(block: TextActionRecord) -> None:
    assert TextActionRecord.from_meta(json.loads(json.dumps(block.to_meta()))) == block
    assert list(stored_text_actions(text_actions_meta([block, block]))) == [block, block]


@given(st.dictionaries(_text, _json, max_size=6))
def test_any_stored_metadata_is_read_without_error_and_keeps_what_it_does_not_know(meta: dict[str, Any]) -> None:
    record = StepRecord.from_meta(meta)
    assert {k: v for k, v in meta.items() if k not in STEP_KEYS} == dict(record.extra)
    assert StepRecord.from_meta(record.to_meta()) == record


# -- one place spells the keys ---------------------------------------------------------------------

_DISTINCT_KEYS = frozenset({"outcome", "malformed", "kernel_died", "approvals", "subagent_id", "guarded", "result_path"})
"""The keys of the record that mean nothing else in the package (``images``, ``diff``, ``resolved``,
``outside``, ``truncated`` also name a file probe's fields and an effect class, so they are not scanned)."""


def _keyed_literals(tree: ast.AST) -> list[tuple[int, str]]:
    """String literals used as a key: a dict display's key, a subscript, ``.get/.pop/.setdefault``'s
    first argument, the left side of ``in``."""
    found: list[ast.expr] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Dict):
            found += [k for k in node.keys if k is not None]
        elif isinstance(node, ast.Subscript):
            found.append(node.slice)
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.args:
            if node.func.attr in ("get", "pop", "setdefault"):
                found.append(node.args[0])
        elif isinstance(node, ast.Compare) and any(isinstance(op, ast.In | ast.NotIn) for op in node.ops):
            found.append(node.left)
    return [(n.lineno, n.value) for n in found if isinstance(n, ast.Constant) and isinstance(n.value, str)]


def _reads_messages(path: Path, tree: ast.AST) -> bool:
    """A module that can see a session's messages: in the store, or importing pydantic-ai or the store.
    (A status-bar label named ``approvals`` is another vocabulary.)"""
    if path.parent.name == "store":
        return True
    modules = [n.module or "" for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)]
    modules += [a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names]
    return any(m.startswith(("pydantic_ai", "freeact_tui.store")) for m in modules)


def test_no_module_but_the_record_spells_its_keys() -> None:
    assert _DISTINCT_KEYS <= STEP_KEYS
    trees = {path: ast.parse(path.read_text(encoding="utf-8")) for path in sorted(PACKAGE.rglob("*.py"))}
    scanned = [path for path, tree in trees.items() if path.name != "step_record.py" and _reads_messages(path, tree)]
    assert len(scanned) > 50  # the agent, the policy, the store, the replay, the ACP server …
    spelled = [
        f"{path.relative_to(PACKAGE)}:{line}: {key!r}"
        for path in scanned
        for line, key in _keyed_literals(trees[path])
        if key in _DISTINCT_KEYS
    ]
    assert spelled == []


def test_the_scan_finds_a_spelled_key() -> None:
    """The scan itself: each position it covers is found."""
    source = 'm = {"outcome": 1}\nm["malformed"]\nm.get("kernel_died")\n"approvals" in m\nx = "outcome"\n'
    assert [key for _, key in _keyed_literals(ast.parse(source))] == [
        "outcome",
        "malformed",
        "kernel_died",
        "approvals",
    ]


# -- the writers write that format -----------------------------------------------------------------


def _stored_messages() -> list[dict[str, Any]]:
    return [decode_envelope(line)["message"] for line in (FIXTURE / "main.jsonl").read_bytes().splitlines()]


def _fixture_outcomes(approvals: list[tuple[Any, ...]]) -> list[tuple[Any, tuple[Any, ...]]]:
    """The action outcomes of the fixture's script (its README), built with today's writers."""
    import itertools

    from freeact_tui.actions.code import ActionOutcome, shown_record
    from freeact_tui.actions.ports import Overflow

    shown = [
        StepRecord(),
        shown_record([Path("/tmp/img/a.png"), Path("/tmp/img/b.png")], Overflow("", True, Path("/s/tool-results/1.txt"))),
        shown_record([], Overflow("", True, None)),
        StepRecord(resolved="/work/x.py", outside=False),
        StepRecord(resolved="/etc/passwd", outside=True, diff="--- a\n+++ b\n@@ -1 +1 @@\n-a\n+b\n"),
        StepRecord(guarded="NameError: name 'x' is not defined"),
    ]
    flags = list(itertools.product([False, True], repeat=5))
    made = []
    for i in range(64):
        (rej, err, died, bad, ins), sub = flags[i % 32], [None, "sub-7a3f"][(i // 6) % 2]
        outcome = ActionOutcome(
            "out", rejected=rej, is_error=err, kernel_died=died, malformed=bad, instructed=ins, subagent_id=sub,
            shown=shown[i % 6],
        )
        made.append((outcome, approvals[i % 3]))
    return made


def test_the_writers_write_what_the_app_wrote_before() -> None:
    """Tool returns and text-protocol results built with today's writers store the fixture's bytes."""
    from freeact_tui.agent.policy.text_protocol import BlockRun, TextAction, results_request

    messages = _stored_messages()
    stored = [p["metadata"] for m in messages for p in m["parts"] if p.get("part_kind") == "tool-return"]
    approvals = [(), StepRecord.from_meta(stored[1]).approvals, StepRecord.from_meta(stored[2]).approvals]
    outcomes = _fixture_outcomes(approvals)
    for (outcome, decided), meta in zip(outcomes, stored, strict=False):
        assert json.dumps(outcome.record().with_approvals(decided).to_meta()) == json.dumps(meta)
    assert json.dumps(INTERRUPTED_STEP.to_meta()) == json.dumps(stored[64])
    results = [m["metadata"] for m in messages if TEXT_ACTIONS_KEY in (m.get("metadata") or {})]
    for j, meta in zip(range(0, 64, 7), results, strict=True):
        done = []
        for k, (outcome, _) in enumerate(outcomes[j : j + 3]):
            item = BlockRun(TextAction("python", f"print({k})"), f"text_{j:04d}{k:012d}", outcome)
            item.approvals = [dict(a) for a in approvals[(j + k) % 3]]
            done.append(item)
        done.append(BlockRun(TextAction("bash", "sleep 100"), f"text_{j:04d}cut"))
        written = results_request(done, j % 3, switched="broken calls" if j == 0 else None).metadata
        assert json.dumps(written) == json.dumps(meta)
