"""Quote-aware splitting of composite shell commands, the traits permission rules rely on, and word lists."""

from __future__ import annotations

import random
import shutil
import subprocess

import pytest

from freeact_tui.shell.words import (
    CommandTraits,
    command_words,
    inspect_command,
    shell_only_cell,
    split_command,
)


@pytest.mark.parametrize(
    ("command", "parts"),
    [
        ("!a && b | c", ["a", "b", "c"]),
        ("!!ls -la", ["ls -la"]),
        ("! grep -q x f && y", ["! grep -q x f", "y"]),  # bash negation, not an IPython escape
        ("ls -la 2>&1 | grep x", ["ls -la 2>&1", "grep x"]),
        ("make >build.log 2>&1 && echo ok", ["make >build.log 2>&1", "echo ok"]),
        ("cmd &>/dev/null || fallback", ["cmd &>/dev/null", "fallback"]),
        ("cmd &>>log; next", ["cmd &>>log", "next"]),
        ("echo x >| f; y", ["echo x >| f", "y"]),
        ("echo err >&2 && z", ["echo err >&2", "z"]),
        ("cat <&3 | wc", ["cat <&3", "wc"]),
        ("a |& b", ["a", "b"]),
        ("sleep 10 & echo started", ["sleep 10", "echo started"]),
        ("server &", ["server"]),
        ("echo \"a && b\"; echo 'c | d'", ['echo "a && b"', "echo 'c | d'"]),
        ('grep "x;y" f || echo "none|zero"', ['grep "x;y" f', 'echo "none|zero"']),
        ("echo a\\;b \\&\\& c", ["echo a\\;b \\&\\& c"]),
        ("echo $(ls; pwd) && x", ["echo $(ls; pwd)", "x"]),
        ("echo $(echo $(a | b) && c) | d", ["echo $(echo $(a | b) && c)", "d"]),
        ('echo "$(a; b)" ; c', ['echo "$(a; b)"', "c"]),
        ("echo `a; b` || y", ["echo `a; b`", "y"]),
        ("echo $((1 + 2)) | cat", ["echo $((1 + 2))", "cat"]),
        ("echo ${x:-$(a; b)}; d", ["echo ${x:-$(a; b)}", "d"]),
        ("diff <(ls a; ls b) <(ls c) | wc -l", ["diff <(ls a; ls b) <(ls c)", "wc -l"]),
        ("(cd sub && rm x); ls", ["(cd sub && rm x)", "ls"]),
        ("echo $'it\\'s' ; rm x", ["echo $'it\\'s'", "rm x"]),
        ('echo $"hello; world" | cat', ['echo $"hello; world"', "cat"]),
        ("a\nb\n\n  c  ", ["a", "b", "c"]),
        (" ; ;a;;b ; ", ["a", "b"]),
        ("", []),
        ("   \n\t", []),
        ("ls \\\n  -la && pwd", ["ls \\\n  -la", "pwd"]),
        ("ls # list it && rm -rf /\npwd", ["ls", "pwd"]),
        ("echo a#b; c", ["echo a#b", "c"]),
        ("echo ${x#y}; z", ["echo ${x#y}", "z"]),
        ("echo $#; z", ["echo $#", "z"]),
        ("echo 'unterminated; rm x", ["echo 'unterminated; rm x"]),
        ('echo "unterminated | rm x', ['echo "unterminated | rm x']),
        ("echo $(unterminated; rm x", ["echo $(unterminated; rm x"]),
    ],
)
def test_split_command(command: str, parts: list[str]) -> None:
    assert split_command(command) == parts


def test_quoted_ansi_c_string_cannot_hide_a_command() -> None:
    # Read naively ($'…' as '…'), the rm would sit inside quotes of an allowed ``echo`` command.
    parts = split_command("echo $'\\'' ; rm -rf ~ ; echo '")
    assert "rm -rf ~" in parts
    assert inspect_command(parts[-1]).unbalanced


@pytest.mark.parametrize(
    ("command", "traits"),
    [
        ("ls -la src", CommandTraits()),
        ("grep 'a > b' f", CommandTraits()),
        ("echo a\\>b", CommandTraits()),
        ("make 2>&1", CommandTraits()),
        ("make 2>/dev/null >/dev/null", CommandTraits()),
        ("echo x >&2", CommandTraits()),
        ("cat < in.txt", CommandTraits()),
        ("cat <<< 'text'", CommandTraits()),
        ("sleep 1 &", CommandTraits()),
        ("grep 'cost$' f", CommandTraits()),
        ("echo $(rm -rf ~)", CommandTraits(substitution=True)),
        ('echo "$(whoami)"', CommandTraits(substitution=True)),
        ("echo `whoami`", CommandTraits(substitution=True)),
        ("diff <(ls a) b", CommandTraits(substitution=True)),
        ("tee >(gzip) f", CommandTraits(substitution=True)),
        ("echo $((1+2))", CommandTraits(substitution=True)),
        ("echo x > out.txt", CommandTraits(file_redirect=True)),
        ("echo x>>out.txt", CommandTraits(file_redirect=True)),
        ("echo x 1> out.txt", CommandTraits(file_redirect=True)),
        ("echo x &> out.txt", CommandTraits(file_redirect=True)),
        ("echo x >| out.txt", CommandTraits(file_redirect=True)),
        ("echo x >&out.txt", CommandTraits(file_redirect=True)),
        ("cat <> f", CommandTraits(file_redirect=True)),
        ('echo x > "/dev/null"', CommandTraits(file_redirect=True)),  # quoted target: not trusted
        ("echo $HOME", CommandTraits(expansion=True)),
        ('echo "${HOME}/x"', CommandTraits(expansion=True)),
        ("echo $1 $?", CommandTraits(expansion=True)),
        ("ls; pwd", CommandTraits(compound=True)),
        ("ls\npwd", CommandTraits(compound=True)),
        ("(ls)", CommandTraits(compound=True)),
        ("echo 'a", CommandTraits(unbalanced=True)),
        ('echo "a', CommandTraits(unbalanced=True)),
        ("echo `a", CommandTraits(unbalanced=True, substitution=True)),
        ("echo a)", CommandTraits(unbalanced=True)),
        ("echo >", CommandTraits(unbalanced=True)),
    ],
)
def test_inspect_command(command: str, traits: CommandTraits) -> None:
    assert inspect_command(command) == traits


def test_simple_means_nothing_beyond_one_program() -> None:
    assert inspect_command("ls -la 'src dir' 2>&1 >/dev/null").simple
    for risky in ("ls $(x)", "ls > f", "ls $HOME", "ls; rm f", "ls 'x"):
        assert not inspect_command(risky).simple, risky


@pytest.mark.parametrize(
    ("command", "words"),
    [
        ("cat 'a b.txt' \"c d\"", ["cat", "a b.txt", "c d"]),
        ("cat <.env", ["cat", "<", ".env"]),
        ("grep -f=x --file=.env y 2>&1", ["grep", "-f=x", "--file=.env", "y", "2", ">&", "1"]),
        ("!ls -la", ["ls", "-la"]),
        ("echo a#b", ["echo", "a#b"]),
        ("ls \\\n-la", ["ls", "-la"]),
        ("echo 'unterminated x", ["echo", "'unterminated", "x"]),
    ],
)
def test_command_words(command: str, words: list[str]) -> None:
    assert command_words(command) == words


# Words whose operators are all quoted, escaped or nested, so they never split a command.
_TOKENS = [
    "ls", "-la", "x.txt", "src/a_b.py", "2>&1", ">/dev/null", "&>/dev/null", "<in.txt", "1>&2",
    "'a && b'", "'x | y; z'", '"p || q"', '"semi;colon"', "a\\;b", "a\\|b", "a\\&\\&b",
    "$(echo a; echo b)", "$(x | y && z)", "`a; b`", '"$(a || b)"', "${HOME}", "${x:-a;b}",
    "$'it\\'s; ok'", "<(ls; pwd)", '"a # not a comment"', "a#b", "$#",
]  # fmt: skip
_OPERATORS = ["&&", "||", "|", "|&", ";", "\n", "&"]


def _random_command(rng: random.Random) -> tuple[str, list[str]]:
    parts = [
        " ".join(rng.choice(_TOKENS) for _ in range(rng.randint(1, 4))) for _ in range(rng.randint(1, 5))
    ]
    text = parts[0]
    for part in parts[1:]:
        # Without a blank, ``&`` + ``&>x`` would read as ``&&`` + ``>x``, in bash as here.
        after = rng.choice([" ", "\t"] if part[0] in "&|<>" else ["", " ", "\t"])
        text += rng.choice(["", " ", "  "]) + rng.choice(_OPERATORS) + after + part
    return text, parts


def test_property_generated_commands_split_into_their_parts() -> None:
    rng = random.Random(20240601)
    for _ in range(3000):
        text, parts = _random_command(rng)
        assert split_command(text) == parts, text
        # Re-joining with " ; " and splitting again is stable.
        assert split_command(" ; ".join(parts)) == parts, text


def test_property_quoted_operators_never_split() -> None:
    rng = random.Random(7)
    quoted = [t for t in _TOKENS if any(op in t for op in ("&", "|", ";"))]
    for _ in range(2000):
        words = [rng.choice(quoted) for _ in range(rng.randint(1, 6))]
        text = "cmd " + " ".join(words)
        assert split_command(text) == [text], text


def test_property_arbitrary_text_never_fails_and_is_stable() -> None:
    rng = random.Random(3)
    alphabet = "ab ;&|'\"`$(){}#<>\n\\!2-"
    for _ in range(20000):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 16)))
        parts = split_command(text)
        assert all(p and p == p.strip() for p in parts), text
        assert split_command(" ; ".join(parts)) == parts, text
        inspect_command(text)
        command_words(text)


@pytest.mark.skipif(shutil.which("bash") is None, reason="needs bash")
def test_split_agrees_with_bash() -> None:
    # bash's xtrace prints one "+ " line per simple command it runs at the top level.
    rng = random.Random(11)
    words = [
        "x",
        "'a && b'",
        '"c | d"',
        "e\\;f",
        "$(echo g; echo h)",
        "`echo i`",
        "2>&1",
        "'#j'",
        ">/dev/null",
    ]
    for _ in range(25):
        parts = ["echo " + " ".join(rng.choice(words) for _ in range(rng.randint(1, 3))) for _ in range(4)]
        text = parts[0] + "".join(rng.choice([" && ", "; ", " | ", "\n"]) + p for p in parts[1:])
        trace = subprocess.run(["bash", "-c", f"set -x\n{text}"], capture_output=True, text=True, timeout=10)
        ran = [line for line in trace.stderr.splitlines() if line.startswith("+ ")]
        assert len(ran) == len(split_command(text)) == 4, (text, trace.stderr)


@pytest.mark.parametrize(
    ("code", "only_shell"),
    [
        ("!rm -rf build", True),
        ("!!ls", True),
        ("# tidy up\n!rm a\n\n!rm b\n", True),
        ("%%bash\necho one\necho two", True),
        ("\n%%sh\nls", True),
        ("%%bash --out x\nls", False),  # the magic's arguments are Python's
        ("  %%bash\nls", False),
        ("x = 1\n!echo x", False),
        ("files = !ls", False),
        ("!echo {open('f').read()}", False),  # IPython evaluates {…} before the command runs
        ("!echo a \\\nb", False),
        ("print(1)", False),
        ("", False),
        ("# only a comment", False),
    ],
)
def test_shell_only_cell(code: str, only_shell: bool) -> None:
    assert shell_only_cell(code) is only_shell
