"""Effects: what a code action does, read from its text, and the words and rule classes for it.

``read_effects(call, working_dir)`` reads an action; ``describe(reading)`` says it in one line;
``effects:<class>`` rules and the approval modes (``modes``) decide by it.
"""

from freeact_tui.effects.classes import (
    CLASSES,
    EFFECT_PREFIX,
    Found,
    Kind,
    Reading,
    check_pattern,
    class_of,
    class_words,
    describe,
    pattern_matches,
)
from freeact_tui.effects.reader import names_kept, read_effects

__all__ = [
    "names_kept",
    "CLASSES",
    "EFFECT_PREFIX",
    "Found",
    "Kind",
    "Reading",
    "check_pattern",
    "class_of",
    "class_words",
    "describe",
    "pattern_matches",
    "read_effects",
]
