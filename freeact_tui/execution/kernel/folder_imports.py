"""The working folder's modules import for the cell's own code, never for a library's import (#42, round 6).

With the folder on the kernel's ``sys.path`` (even last), every import that finds nothing installed
finds the folder's file: fontTools' optional ``import lxml``/``unicodedata2`` while ``plt.savefig('a.pdf')``
ran a planted ``lxml.py`` the cell never named, and ``matplotlib.use('module://helper')`` or an rc file's
``figure.hooks`` do the same by name. The class is "the working folder is an import root for
libraries". The mechanism: the folder is not on ``sys.path``; a finder at the end of
``sys.meta_path`` (after the installed modules, as the folder was) finds a top-level module in it only
when the import is made by code the user runs: a cell (``get_ipython().compile``'s names, ``%%time``'s),
or a file of the folder itself (a module the cell imported, a ``%run`` script), not inside an
installation. A library's import (the first frame outside ``importlib`` and ``exec``'d text) finds
nothing, as if the file were absent; the static reading still judges the cell's own ``import helper`` as running folder code.
"""

from __future__ import annotations

from pathlib import Path

FOLDER_IMPORTS = """\
def _freeact_folder_imports(root):
    import importlib, importlib.machinery, os, sys
    root = os.path.realpath(root)
    importlib_dir = os.path.dirname(importlib.__file__) + os.sep
    installed = tuple({os.path.realpath(p) + os.sep for p in (sys.prefix, sys.base_prefix, sys.exec_prefix)})
    magic_names = frozenset({'<timed exec>', '<timed eval>', '<magic-timeit>'})

    def cell_names():
        ipython = sys.modules.get('IPython')
        shell = ipython.get_ipython() if ipython is not None else None
        return getattr(getattr(shell, 'compile', None), '_filename_map', {})

    def users_code(filename):
        if filename in magic_names or filename in cell_names():
            return True
        if filename.startswith('<'):
            return False
        real = os.path.realpath(filename)
        parts = real.split(os.sep)
        return (
            real.startswith(root + os.sep)
            and not real.startswith(installed)
            and 'site-packages' not in parts
            and 'dist-packages' not in parts
        )

    class FolderFinder:
        '''The working folder's top-level modules, for imports the user's own code makes.'''

        root_dir = root

        @staticmethod
        def find_spec(name, path=None, target=None):
            if path is not None:
                return None  # a submodule: found through its package's own __path__
            # the code that asked: past the import machinery and text run by exec (whose caller asked)
            frame = sys._getframe(1)
            while frame is not None and (
                frame.f_code.co_filename.startswith('<frozen importlib')
                or frame.f_code.co_filename.startswith(importlib_dir)
                or frame.f_code.co_filename == '<string>'
            ):
                frame = frame.f_back
            if frame is None or not users_code(frame.f_code.co_filename):
                return None
            return importlib.machinery.PathFinder.find_spec(name, [root])

        @staticmethod
        def invalidate_caches():
            pass

    while root in sys.path:
        sys.path.remove(root)
    sys.meta_path[:] = [f for f in sys.meta_path if getattr(f, '__name__', '') != 'FolderFinder']
    sys.meta_path.append(FolderFinder)
"""


def folder_imports_code(working_dir: Path) -> str:
    """Kernel code that lets the cell's own code, and only it, import the working folder's modules."""
    return FOLDER_IMPORTS + f"_freeact_folder_imports({str(working_dir)!r})\ndel _freeact_folder_imports\n"


__all__ = ["FOLDER_IMPORTS", "folder_imports_code"]
