"""The options each default-allowed read-only program may take unasked: an allow-list, unknown asks.

A read-only program still reads what its options name: ``sort --files0-from=-`` reads the files listed
on its input, ``grep -f FILE`` its patterns from a file, ``du --exclude-from``, ``file -f``, ``date -f``,
``tree --fromfile``, ``find -files0-from`` — names the path rules never see. A forbidden list misses
the next such option (and GNU's abbreviations: ``--files0`` is ``--files0-from``), so each program the
built-in rules allow names the options known to only shape its output, and any other option (an
abbreviation too) makes the command ask (``unknown_option``). Values are skipped as the program's own
parser does (``-k2``, ``-k 2``, ``--key=2``, ``--key 2``), so a value is never read as an option.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Options:
    """One program's known options.

    Attributes:
        flags: short option letters that take no value (clustered: ``-la``).
        valued: short option letters whose value follows (glued ``-n5`` or as the next word).
        long: long options that take no value (or only a glued ``=value``).
        long_valued: long options that take a value (``--key=2`` or ``--key 2``).
        numeric: ``-5`` is a count (``head -5``, ``grep -3``).
        single_dash: options are words with one dash (``find -name``), never clusters.
    """

    flags: str = ""
    valued: str = ""
    long: frozenset[str] = frozenset()
    long_valued: frozenset[str] = frozenset()
    numeric: bool = False
    single_dash: bool = False


def _set(text: str) -> frozenset[str]:
    return frozenset(text.split())


_COMMON = _set("--help --version")
_GREP = Options(
    flags="EFGPivwxyclLoqsbHhnTZzaUIV",
    valued="emABCD",
    long=_set(
        "--extended-regexp --fixed-strings --basic-regexp --perl-regexp --ignore-case --no-ignore-case "
        "--word-regexp --line-regexp --null-data --no-messages --invert-match --byte-offset --line-number "
        "--no-line-number --line-buffered --with-filename --no-filename --only-matching --quiet --silent "
        "--text --files-without-match --files-with-matches --count --initial-tab --null --color --colour "
        "--binary"
    ),
    long_valued=_set(
        "--regexp --max-count --label --binary-files --devices --exclude --exclude-dir --include "
        "--before-context --after-context --context"
    ),
    numeric=True,
)
_FIND_FLAGS = _set(
    "-print -print0 -ls -prune -quit -depth -xdev -mount -noleaf -daystart -empty -readable -writable "
    "-executable -nouser -nogroup -true -false -not -and -or -a -o -H -P -ignore_readdir_race "
    "-noignore_readdir_race -d -help -version -nowarn -warn"
)
_FIND_VALUED = _set(
    "-name -iname -path -ipath -wholename -iwholename -regex -iregex -type -xtype -maxdepth -mindepth -size "
    "-mtime -atime -ctime -mmin -amin -cmin -newer -anewer -cnewer -perm -user -group -uid -gid -links "
    "-inum -samefile -lname -ilname -printf -regextype -used -fstype -context"
)
_NO_OPTIONS_READ = Options()
PROGRAM_OPTIONS: dict[str, Options] = {
    "id": Options(flags="agGnruzZ", long=_set("--context --group --groups --name --real --user --zero")),
    "uname": Options(
        flags="asnrvmpio",
        long=_set(
            "--all --kernel-name --nodename --kernel-release --kernel-version --machine --processor "
            "--hardware-platform --operating-system"
        ),
    ),
    # ``-f``/``--file`` reads dates from a file and prints each line it cannot read: not here.
    "date": Options(
        flags="uRI", valued="dr", long=_set("--debug --rfc-email --utc --universal --resolution --iso-8601"),
        long_valued=_set("--date --rfc-3339 --reference"),
    ),
    "which": Options(flags="as", long=_set("--all")),
    "whereis": Options(flags="bmsulBMS"),
    "type": Options(flags="afptP"),
    "ls": Options(
        flags="aAbBcCdDfFgGhHiklLmnNopqQrRsStuUvxXZ1",
        valued="ITw",
        long=_set(
            "--all --almost-all --author --escape --human-readable --si --inode --numeric-uid-gid --literal "
            "--reverse --recursive --size --dereference --dereference-command-line "
            "--dereference-command-line-symlink-to-dir --directory --classify --file-type --full-time "
            "--group-directories-first --no-group --hide-control-chars --show-control-chars --kibibytes "
            "--context --zero --quote-name --ignore-backups --color --hyperlink --indicator-style"
        ),
        long_valued=_set(
            "--ignore --hide --format --sort --time --time-style --width --block-size --quoting-style "
            "--tabsize"
        ),
    ),
    # ``--fromfile`` lists paths read from a file; ``-o``/``-R`` write one.
    "tree": Options(
        flags="aAdlfxpsughDFqNQrtvUcCniSJX",
        valued="LPIH",
        long=_set(
            "--noreport --inodes --device --dirsfirst --filesfirst --du --prune --matchdirs --ignore-case "
            "--si --gitignore --metafirst"
        ),
        long_valued=_set("--charset --filelimit --timefmt --sort"),
    ),
    "stat": Options(
        flags="Lft", valued="c", long=_set("--dereference --file-system --terse"),
        long_valued=_set("--format --printf --cached"),
    ),
    # ``-f`` reads file names from a file, ``-m`` a magic file; ``-C`` writes one.
    "file": Options(
        flags="bcEhikLlNnprsSzZ0", valued="eFP",
        long=_set(
            "--brief --checking-printout --keep-going --list --no-dereference --dereference --no-buffer "
            "--no-pad --preserve-date --raw --special-files --uncompress --uncompress-noreport --mime "
            "--mime-type --mime-encoding --print0 --extension --apple"
        ),
        long_valued=_set("--exclude --exclude-quiet --separator --parameter"),
    ),
    # ``--files0-from`` lists the files to read, ``-X``/``--exclude-from`` reads a pattern file.
    "du": Options(
        flags="0abcDhHkLlmPsSxv", valued="dBt",
        long=_set(
            "--null --all --apparent-size --bytes --total --dereference-args --human-readable --inodes "
            "--dereference --count-links --no-dereference --separate-dirs --si --summarize --one-file-system "
            "--time"
        ),
        long_valued=_set("--max-depth --block-size --threshold --time-style --exclude"),
    ),
    "df": Options(
        flags="ahHiklPTv", valued="Btx",
        long=_set(
            "--all --human-readable --si --inodes --local --portability --print-type --total --sync "
            "--no-sync --output"
        ),
        long_valued=_set("--block-size --type --exclude-type"),
    ),
    "wc": Options(
        flags="clmwL", long=_set("--bytes --chars --lines --words --max-line-length"),
        long_valued=_set("--total"),
    ),
    "cat": Options(
        flags="AbeEnstTuv",
        long=_set("--show-all --number-nonblank --show-ends --number --squeeze-blank --show-tabs "
                  "--show-nonprinting"),
    ),
    "head": Options(flags="qvz", valued="cn", long=_set("--quiet --silent --verbose --zero-terminated"),
                    long_valued=_set("--bytes --lines"), numeric=True),
    "tail": Options(
        flags="fFqvz", valued="cns", long=_set("--quiet --silent --verbose --zero-terminated --retry --follow"),
        long_valued=_set("--bytes --lines --sleep-interval --max-unchanged-stats"), numeric=True,
    ),
    "nl": Options(
        flags="p", valued="bdfhilnsvw",
        long=_set("--no-renumber"),
        long_valued=_set(
            "--body-numbering --section-delimiter --footer-numbering --header-numbering --line-increment "
            "--join-blank-lines --number-format --number-separator --starting-line-number --number-width"
        ),
    ),
    "echo": _NO_OPTIONS_READ, "printf": _NO_OPTIONS_READ,
    "grep": _GREP, "egrep": _GREP, "fgrep": _GREP,
    # ``-f``/``--file``/``--ignore-file`` read a named file, ``--pre`` runs a program, ``-z`` runs
    # decompressors, ``-L``/``--hidden``/``--no-ignore``/``-u`` reach what the folder hides.
    "rg": Options(
        flags="abcFhHiIlnNopPqsSUvVwx0", valued="eAgBCtTmMjErd",
        long=_set(
            "--case-sensitive --ignore-case --smart-case --fixed-strings --word-regexp --line-regexp "
            "--invert-match --count --count-matches --files-with-matches --files-without-match "
            "--only-matching --line-number --no-line-number --with-filename --no-filename --heading "
            "--no-heading --type-list --files --json --vimgrep --column --no-column --trim --multiline "
            "--multiline-dotall --pcre2 --stats --quiet --null --text --passthru --byte-offset --pretty "
            "--no-config --no-messages --crlf --null-data --unicode --no-unicode --binary --sort-files"
        ),
        long_valued=_set(
            "--color --colors --context --after-context --before-context --max-count --max-columns "
            "--max-depth --glob --iglob --type --type-not --type-add --type-clear --sort --sortr --replace "
            "--regexp --threads --max-filesize --encoding --engine --context-separator --field-match-separator "
            "--path-separator"
        ),
        numeric=True,
    ),
    # find's options are single-dash words; ``-files0-from`` lists start points read from a file and
    # ``-L``/``-follow`` leave the folder through a directory symlink: neither is here.
    "find": Options(long=_FIND_FLAGS, long_valued=_FIND_VALUED, single_dash=True),
    # ``-o``, ``-T`` and ``--compress-program`` write or run; ``--files0-from`` and ``--random-source``
    # read a file the rules never see.
    "sort": Options(
        flags="bdfgiMhnRrVcCmsuz", valued="ktS",
        long=_set(
            "--ignore-leading-blanks --dictionary-order --ignore-case --general-numeric-sort "
            "--ignore-nonprinting --month-sort --human-numeric-sort --numeric-sort --random-sort --reverse "
            "--version-sort --check --merge --stable --unique --zero-terminated --debug"
        ),
        long_valued=_set("--sort --key --field-separator --buffer-size --parallel --batch-size"),
    ),
    "cut": Options(
        flags="nsz", valued="bcdf",
        long=_set("--complement --only-delimited --zero-terminated"),
        long_valued=_set("--bytes --characters --delimiter --fields --output-delimiter"),
    ),
    # ``-r`` reads whole trees (a ``.env`` inside), ``--from-file``/``--to-file`` and ``-X`` name files.
    "diff": Options(
        flags="qscuenyltTabwBiEZpNPa", valued="CUDIFxSW",
        long=_set(
            "--normal --brief --report-identical-files --ed --rcs --side-by-side --left-column "
            "--suppress-common-lines --show-c-function --expand-tabs --initial-tab --suppress-blank-empty "
            "--new-file --unidirectional-new-file --ignore-case --ignore-tab-expansion --ignore-trailing-space "
            "--ignore-space-change --ignore-all-space --ignore-blank-lines --text --minimal "
            "--speed-large-files --strip-trailing-cr --color --context --unified"
        ),
        long_valued=_set(
            "--width --show-function-line --label --tabsize --ignore-matching-lines --horizon-lines "
            "--palette --exclude --line-format --new-line-format --old-line-format --unchanged-line-format "
            "--new-group-format --old-group-format --unchanged-group-format --changed-group-format "
            "--ifdef --starting-file"
        ),
        numeric=True,
    ),
    "basename": Options(flags="az", valued="s", long=_set("--multiple --zero"), long_valued=_set("--suffix")),
    "dirname": Options(flags="z", long=_set("--zero")),
    "realpath": Options(
        flags="emLPqsz", long=_set("--canonicalize-existing --canonicalize-missing --logical --physical "
                                   "--quiet --strip --no-symlinks --zero"),
        long_valued=_set("--relative-to --relative-base"),
    ),
    "readlink": Options(
        flags="femnqsvz", long=_set("--canonicalize --canonicalize-existing --canonicalize-missing "
                                    "--no-newline --quiet --silent --verbose --zero"),
    ),
}  # fmt: skip
"""Every program a built-in allow rule names (but git, judged by its subcommands in ``programs``)."""

_PIP_GENERAL = Options(
    flags="hvVq",
    long=_set(
        "--verbose --quiet --debug --isolated --require-virtualenv --no-input --no-cache-dir "
        "--disable-pip-version-check --no-color --no-python-version-warning"
    ),
)
"""pip's general options that change no more than how it reports: not ``--log`` (appends to a path),
``--python`` (runs another interpreter), ``--cert``/``--client-cert`` (read a file), ``--proxy``,
``--keyring-provider`` (runs a program), ``--cache-dir``, ``--use-feature`` …"""
SUBCOMMAND_OPTIONS: dict[str, tuple[Options, dict[str, Options]]] = {
    "pip": (
        _PIP_GENERAL,
        {
            # not ``-o``/``--outdated``, ``-u``/``--uptodate`` (ask the package index over the network), nor
            # their index options, nor ``--path`` (reads package metadata from a folder it names)
            "list": Options(
                flags="el",
                long=_set("--editable --local --user --pre --not-required --exclude-editable --include-editable"),
                long_valued=_set("--format --exclude"),
            ),
            "show": Options(flags="f", long=_set("--files")),
            # not ``-r``/``--requirement`` (reads a file) nor ``--path``
            "freeze": Options(
                flags="l", long=_set("--local --user --all --exclude-editable"), long_valued=_set("--exclude")
            ),
        },
    ),
}
"""Programs a built-in allow rule names by subcommand (``pip list *``): the general options, and each
subcommand's own, that only shape what it prints (an allow-list: any other option, an abbreviation too, asks)."""


def _merged(general: Options, own: Options) -> Options:
    return Options(
        flags=general.flags + own.flags,
        valued=general.valued + own.valued,
        long=general.long | own.long,
        long_valued=general.long_valued | own.long_valued,
    )


def _table(program: str, args: list[str]) -> Options | None:
    """The options ``program args`` may take unasked: its own table, or by its subcommand (the first word
    that is not an option; the general options only, for a subcommand without a table)."""
    if program in SUBCOMMAND_OPTIONS:
        general, by_subcommand = SUBCOMMAND_OPTIONS[program]
        subcommand = next((w for w in args if not w.startswith("-")), "")
        own = by_subcommand.get(subcommand)
        return general if own is None else _merged(general, own)
    return PROGRAM_OPTIONS.get(program)


def unknown_option(program: str, args: list[str]) -> str | None:
    """The first option of ``program args`` not known to only shape its output, or ``None``.

    ``None`` too for a program without a table (its rules are the user's own). ``--`` ends options;
    GNU programs take options after operands too, so every word is looked at.
    """
    table = _table(program, args)
    if table is None or table is _NO_OPTIONS_READ:
        return None
    k = 0
    while k < len(args):
        word = args[k]
        k += 1
        if word == "--" and not table.single_dash:
            return None
        if not word.startswith("-") or word == "-":
            continue
        if table.single_dash or word.startswith("--"):
            name, glued = word.split("=", 1)[0], "=" in word
            if name in table.long_valued:
                k += 0 if glued else 1
            elif name not in table.long and name not in _COMMON:
                return word
            continue
        if table.numeric and word[1:].isdigit():
            continue
        for j, letter in enumerate(word[1:], 1):
            if letter in table.valued:
                k += 0 if j + 1 < len(word) else 1  # the value is the rest of the word, or the next word
                break
            if letter not in table.flags:
                return word
    return None


__all__ = ["PROGRAM_OPTIONS", "SUBCOMMAND_OPTIONS", "Options", "unknown_option"]
