"""Where a writer's path lands: the names a library really writes, not the name it is given (#42).

A function that writes a path does not always write the name it is given. ``np.save('data', a)`` writes
``data.npy`` (an extension appended when missing), ``plt.savefig('fig')`` writes ``fig.png``,
``shutil.copy('a.txt', 'out')`` writes ``out/a.txt`` when ``out`` is a folder, and ``os.removedirs(name)``
goes on to remove each folder above ``name`` that it names. Judging the given name alone judges a file
that is never written, and misses the one that is (a symlink ``data.npy`` leading outside, a protected
name planted by a copy into the folder).

Every writer in the table of understood functions (``known``) says how its destination lands, as data
(``Landing``); ``landed`` turns a given name into every name the library may write, and the reading
judges each of them through the one path check (symlinks followed). Where the library's choice depends
on run time (the default image format, whether a destination is a folder), every name it may choose is
judged. A test calls each real writer in a temporary folder and checks the file it wrote is among the
names ``landed`` gives.
"""

from __future__ import annotations

import os
import posixpath
from dataclasses import dataclass

MATPLOTLIB_FORMATS = (
    "png", "avif", "eps", "gif", "jpeg", "jpg", "pdf", "pgf", "ps", "raw", "rgba", "svg", "svgz", "tif",
    "tiff", "webp",
)  # fmt: skip
"""The file formats matplotlib may append to a name without an extension (its default, ``savefig.format``,
is one of them; a test checks the list against matplotlib's own)."""


@dataclass(frozen=True)
class Landing:
    """How a writer's destination (its last path parameter) lands.

    Attributes:
        suffixes: extensions the library appends (``np.save``: ``.npy``).
        when_missing: ``"same"``: appended unless the name already ends with it (numpy); ``"any"``: appended
            (one of ``suffixes``, after dots at the end are dropped) unless the name has an extension at all
            (matplotlib's ``savefig``).
        into_folder: a destination that is a folder receives ``DEST/basename(source)`` (``shutil.copy``,
            ``shutil.move``): whether it is one is only known when it runs, so both are judged.
        parents: the library goes on to each folder above the name it names (``os.removedirs``).

    ``when_missing="also"``: the name as given, and each name with a suffix appended, unless it already
    ends with one (numpy's ``DataSource``: ``np.loadtxt('nums')`` opens ``nums.gz`` when ``nums`` is not there).
    A reader's landing is where the path it reads lands (the library opens the first name that exists).
    """

    suffixes: tuple[str, ...] = ()
    when_missing: str = "same"
    into_folder: bool = False
    parents: bool = False


AS_NAMED = Landing()
NUMPY_NPY = Landing(suffixes=(".npy",))
NUMPY_NPZ = Landing(suffixes=(".npz",))
MATPLOTLIB_IMAGE = Landing(suffixes=tuple("." + f for f in MATPLOTLIB_FORMATS), when_missing="any")
NUMPY_DATASOURCE = Landing(suffixes=(".gz", ".bz2", ".xz", ".lzma"), when_missing="also")
"""``np.loadtxt``/``np.genfromtxt``: a name without a compression suffix is tried with each (a test checks the
list against numpy's own openers)."""
INTO_FOLDER = Landing(into_folder=True)
AND_PARENTS = Landing(parents=True)


def _parents(name: str) -> list[str]:
    """The folders ``os.removedirs(name)`` goes on to, as it names them (the split of the name, not its real path)."""
    head, tail = posixpath.split(name)
    if not tail:
        head, tail = posixpath.split(head)
    out: list[str] = []
    while head and tail:
        out.append(head)
        head, tail = posixpath.split(head)
    return out


def landed(landing: Landing, name: str, source: str | None = None) -> list[str]:
    """Every name the writer may write when given ``name`` (``source``: the path it copies or moves, if any)."""
    names = [name]
    if landing.suffixes and landing.when_missing == "also":
        if not name.endswith(landing.suffixes):
            names += [name + suffix for suffix in landing.suffixes]
    elif landing.suffixes and landing.when_missing == "same":
        names = [name if name.endswith(landing.suffixes[0]) else name + landing.suffixes[0]]
    elif landing.suffixes:
        if not os.path.splitext(name)[1][1:]:  # as named only when the format is given by keyword
            names += [name.rstrip(".") + suffix for suffix in landing.suffixes]
    if landing.into_folder and source is not None:
        base = posixpath.basename(source.rstrip("/")) or source
        if posixpath.normpath(name) == ".":
            names = []  # the folder itself is always a folder: only what lands in it is written
        names.append(posixpath.join(name, base))
    if landing.parents:
        names += _parents(name)
    return list(dict.fromkeys(names))


__all__ = [
    "AND_PARENTS",
    "AS_NAMED",
    "INTO_FOLDER",
    "MATPLOTLIB_FORMATS",
    "MATPLOTLIB_IMAGE",
    "NUMPY_NPY",
    "NUMPY_DATASOURCE",
    "NUMPY_NPZ",
    "Landing",
    "landed",
]
