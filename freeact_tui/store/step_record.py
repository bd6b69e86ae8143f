"""One typed record of a step: what the app stores about an action besides what the model is told.

A step is one action of the model: a tool call (its record is the tool return's ``metadata``) or a
code block of the text protocol (one item of a results message's ``TEXT_ACTIONS_KEY`` list). Both
are written and read here and only here: the agent writes ``StepRecord.to_meta()``, and the reply
policy, the transcript, the replay and the export read ``StepRecord.from_meta()`` / ``of_part()``.
No other module spells the keys (``tests/fast/store/test_step_record.py`` scans for them).

The format is the session file's, kept byte for byte: ``to_meta`` writes the keys in the order the
app has always written them (``tests/fixtures/app_sessions``), and a session of freeact, which
stores no metadata, reads as ``StepRecord()`` (no outcome). Keys a later version adds are kept in
``extra`` and written back first.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Final, Literal

from freeact_tui.store.meta_keys import TEXT_ACTIONS_KEY

Outcome = Literal["ok", "error", "rejected", "interrupted"]
"""How a step ended, as stored: it ran (``ok``, ``error``), was rejected, or was cut off."""

_OUTCOME: Final = "outcome"
_SUBAGENT: Final = "subagent_id"
_MALFORMED: Final = "malformed"
_KERNEL_DIED: Final = "kernel_died"
_GUARDED: Final = "guarded"
_IMAGES: Final = "images"
_TRUNCATED: Final = "truncated"
_RESULT_PATH: Final = "result_path"
_RESOLVED: Final = "resolved"
_OUTSIDE: Final = "outside"
_DIFF: Final = "diff"
_APPROVALS: Final = "approvals"
_ID: Final = "id"
_CODE: Final = "code"
_OUTPUT: Final = "output"

STEP_KEYS: Final = frozenset(
    {
        _OUTCOME,
        _SUBAGENT,
        _MALFORMED,
        _KERNEL_DIED,
        _GUARDED,
        _IMAGES,
        _TRUNCATED,
        _RESULT_PATH,
        _RESOLVED,
        _OUTSIDE,
        _DIFF,
        _APPROVALS,
    }
)
"""Every key of a step's record (a text action adds ``id``, ``code`` and ``output``)."""
TEXT_ACTION_KEYS: Final = frozenset({_ID, _CODE, _OUTPUT})


@dataclass(frozen=True)
class StepRecord:
    """What the app stored about one step. Every field is optional: the default record is a step of a
    session that stored nothing (freeact's), and an action fills in what it knows."""

    outcome: str | None = None
    """An ``Outcome`` (a later version's word is kept as it is); ``None``: none stored."""
    subagent_id: str | None = None
    """The subagent a task call started (its history is ``sub-<id>.jsonl``)."""
    malformed: bool = False
    """The call itself was broken (invalid JSON arguments, a missing argument, an unknown tool): it never ran."""
    kernel_died: bool = False
    guarded: str | bool | None = None
    """Not run by the repeat guard: the error it was refused for (older sessions: ``True``)."""
    images: tuple[str, ...] = ()
    """The images a code action made (their paths)."""
    truncated: bool = False
    """The output was over the inline limit: the model got a head and a tail."""
    result_path: str | None = None
    """Where the whole of a truncated output was saved."""
    resolved: str | None = None
    """A file call's path, resolved (where it pointed)."""
    outside: bool | None = None
    """A file call's path is outside the working directory."""
    diff: str | None = None
    """A file write's or edit's diff."""
    approvals: tuple[Mapping[str, Any], ...] = ()
    """The decisions on the call and its parts, in order (``store.decision_record``'s records)."""
    extra: Mapping[str, Any] = field(default_factory=dict)
    """Keys this version does not know (a later version's), kept to be written back."""

    @property
    def ran(self) -> bool:
        """The step ran (or a session that stores no outcome says nothing against it)."""
        return self.outcome in ("ok", "error", None)

    @property
    def failed(self) -> bool:
        return self.outcome == "error"

    @property
    def refused(self) -> bool:
        """The model was told why the step did not run, by the app (broken, guarded, rejected, cut off)."""
        return self.malformed or bool(self.guarded) or self.outcome in ("rejected", "interrupted")

    def to_meta(self) -> dict[str, Any]:
        """The record as the session file keeps it (a tool return's ``metadata``), keys in the app's order."""
        meta: dict[str, Any] = dict(self.extra)
        if self.images:
            meta[_IMAGES] = list(self.images)
        if self.truncated:
            meta[_TRUNCATED] = True
        if self.result_path is not None:
            meta[_RESULT_PATH] = self.result_path
        if self.resolved is not None:
            meta[_RESOLVED] = self.resolved
        if self.outside is not None:
            meta[_OUTSIDE] = self.outside
        if self.diff is not None:
            meta[_DIFF] = self.diff
        if self.guarded is not None:
            meta[_GUARDED] = self.guarded
        if self.outcome is not None:
            meta[_OUTCOME] = self.outcome
        if self.subagent_id is not None:
            meta[_SUBAGENT] = self.subagent_id
        if self.malformed:
            meta[_MALFORMED] = True
        if self.kernel_died:
            meta[_KERNEL_DIED] = True
        if self.approvals:
            meta[_APPROVALS] = [dict(a) for a in self.approvals]
        return meta

    @classmethod
    def from_meta(cls, meta: Any) -> StepRecord:
        """The record of stored metadata; anything not a record (``None``, damaged values) reads as unknown."""
        if not isinstance(meta, Mapping):
            return cls()
        images, approvals = meta.get(_IMAGES), meta.get(_APPROVALS)
        guarded = meta.get(_GUARDED)
        return cls(
            outcome=_str(meta.get(_OUTCOME)),
            subagent_id=_str(meta.get(_SUBAGENT)),
            malformed=meta.get(_MALFORMED) is True,
            kernel_died=meta.get(_KERNEL_DIED) is True,
            guarded=guarded if isinstance(guarded, str | bool) else None,
            images=tuple(p for p in images if isinstance(p, str) and p) if isinstance(images, list) else (),
            truncated=meta.get(_TRUNCATED) is True,
            result_path=_str(meta.get(_RESULT_PATH)),
            resolved=_str(meta.get(_RESOLVED)),
            outside=meta.get(_OUTSIDE) if isinstance(meta.get(_OUTSIDE), bool) else None,
            diff=_str(meta.get(_DIFF)),
            approvals=tuple(a for a in approvals if isinstance(a, dict)) if isinstance(approvals, list) else (),
            extra={k: v for k, v in meta.items() if k not in STEP_KEYS},
        )

    @classmethod
    def of_part(cls, part: Any) -> StepRecord:
        """The record of a tool return (or retry) part."""
        return cls.from_meta(getattr(part, "metadata", None))

    def with_approvals(self, approvals: Sequence[Mapping[str, Any]]) -> StepRecord:
        return replace(self, approvals=tuple(approvals)) if approvals else self


INTERRUPTED_STEP = StepRecord(outcome="interrupted")
"""The record of a call that was cut off before it finished (cancelled, or the turn failed)."""


@dataclass(frozen=True)
class TextActionRecord:
    """One code block of a text-protocol results message: the block, what the model was told, and its step."""

    id: str
    code: str | None
    """The block's code (``None``: a damaged item)."""
    output: str
    step: StepRecord

    def to_meta(self) -> dict[str, Any]:
        """The item as the results message's metadata keeps it (the step's keys, then the block's)."""
        meta = {k: v for k, v in self.step.to_meta().items() if k != _OUTCOME}
        return meta | {_ID: self.id, _CODE: self.code, _OUTCOME: self.step.outcome, _OUTPUT: self.output}

    @classmethod
    def from_meta(cls, item: Any) -> TextActionRecord | None:
        """The record of one stored item (``None``: not an item)."""
        if not isinstance(item, Mapping):
            return None
        code = item.get(_CODE)
        return cls(
            str(item.get(_ID, "")),
            code if isinstance(code, str) else None,
            str(item.get(_OUTPUT, "")),
            StepRecord.from_meta({k: v for k, v in item.items() if k not in TEXT_ACTION_KEYS}),
        )


def stored_text_actions(metadata: Any) -> Iterator[TextActionRecord]:
    """The code blocks a request's metadata reports (a text-protocol results message), in order."""
    items = metadata.get(TEXT_ACTIONS_KEY) if isinstance(metadata, Mapping) else None
    for item in items if isinstance(items, list) else []:
        record = TextActionRecord.from_meta(item)
        if record is not None:
            yield record


def text_actions_meta(records: Sequence[TextActionRecord]) -> dict[str, Any]:
    """A results message's metadata for ``records``."""
    return {TEXT_ACTIONS_KEY: [r.to_meta() for r in records]}


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) else None


__all__ = [
    "INTERRUPTED_STEP",
    "STEP_KEYS",
    "TEXT_ACTION_KEYS",
    "Outcome",
    "StepRecord",
    "TextActionRecord",
    "stored_text_actions",
    "text_actions_meta",
]
