"""Run git on a shadow repository: its own git dir, the user's working directory as work tree.

Every call goes through ``gitrun`` (no system or global config, no hooks, no program-running
settings, no ``GIT_*`` variables leaking in), so a shadow repository never reads or writes the user's
``.git`` and runs nothing a repository or the user's config names.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from contextlib import suppress
from pathlib import Path

from freeact_tui import gitrun
from freeact_tui.project import files as projectfiles

# Identity and determinism for commits in the shadow repository (on top of ``gitrun.git_env``).
_FIXED_ENV = {
    "GIT_AUTHOR_NAME": "freeact-tui",
    "GIT_AUTHOR_EMAIL": "checkpoints@freeact-tui.invalid",
    "GIT_COMMITTER_NAME": "freeact-tui",
    "GIT_COMMITTER_EMAIL": "checkpoints@freeact-tui.invalid",
    "LC_ALL": "C",
}


class CheckpointError(Exception):
    """A checkpoint operation failed; ``str(error)`` is a message meant for the user."""


class CheckpointsUnavailable(CheckpointError):
    """Checkpoints cannot work here (``git`` is missing, or the directory is too big)."""


class GitTimedOut(CheckpointsUnavailable):
    """A git of the checkpoints did not finish within its time bound (a FIFO it opened, a huge tree): the
    action goes on without a checkpoint, and checkpoints are off for the session (it would hang again)."""


def find_git() -> str:
    """The path of the ``git`` executable.

    Raises:
        CheckpointsUnavailable: git is not installed (checkpoints are then off).
    """
    git = gitrun.find_git()
    if git is None:
        raise CheckpointsUnavailable(
            "Checkpoints are off: `git` is not installed (install git to make actions undoable)."
        )
    return git


def user_exclude_file(root: Path) -> Path | None:
    """The ``info/exclude`` of the user's repository at ``root`` (also for worktrees), if any."""
    dot_git = root / ".git"
    git_dir = dot_git
    if dot_git.is_file():  # a worktree or submodule: "gitdir: <path>"
        with suppress(OSError, ValueError, IndexError):
            text = projectfiles.read_text(dot_git).strip()  # the folder's: regular and bounded only
            git_dir = (root / text.split(":", 1)[1].strip()).resolve()
            common = git_dir / "commondir"
            if common.is_file():
                git_dir = (git_dir / projectfiles.read_text(common).strip()).resolve()
    exclude = git_dir / "info" / "exclude"
    return exclude if exclude.is_file() else None


class ShadowGit:
    """``git --git-dir=<git_dir> --work-tree=<work_tree>`` run in a subprocess, off the event loop."""

    def __init__(
        self, git_dir: Path, work_tree: Path, git: str | None = None, *, timeout: float | None = None
    ) -> None:
        self.git_dir = git_dir
        self.work_tree = work_tree
        self.git = git or find_git()
        self.timeout = gitrun.TIME_BOUND if timeout is None else timeout
        """Seconds one git command may take (``gitrun.TIME_BOUND``): then it is stopped (``GitTimedOut``)."""
        env = gitrun.git_env()
        env.update(_FIXED_ENV)
        self._env = env

    async def run(
        self,
        *args: str,
        input: bytes | None = None,
        env: dict[str, str] | None = None,
        ok_codes: Sequence[int] = (0,),
    ) -> bytes:
        """Run one git command in the work tree and return its stdout.

        Raises:
            CheckpointsUnavailable: git vanished since start.
            CheckpointError: git failed (its stderr is in the message).
        """
        argv = gitrun.git_argv(
            f"--git-dir={self.git_dir}",
            f"--work-tree={self.work_tree}",
            "-c", "core.quotepath=false",
            "-c", "core.autocrlf=false",
            "-c", "core.safecrlf=false",
            # File modes: the store copies .env files and keys, so it is private (dirs 700, files
            # 600); files git writes into the work tree keep their own modes (no umask here).
            "-c", "core.sharedRepository=0600",
            # The git dir is always ours; a working dir owned by someone else (files a Docker
            # kernel wrote as root) must not make git refuse it.
            "-c", "safe.directory=*",
            *args,
            git=self.git,
        )  # fmt: skip
        spawn = asyncio.ensure_future(
            asyncio.create_subprocess_exec(
                *argv,
                cwd=self.work_tree,
                env={**self._env, **(env or {})},
                stdin=asyncio.subprocess.PIPE if input is not None else asyncio.subprocess.DEVNULL,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
            )
        )
        try:
            # Shielded: a cancellation while git is being started must still reach that git process.
            proc = await asyncio.shield(spawn)
        except asyncio.CancelledError:
            with suppress(Exception):
                await _stop(await spawn)
            raise
        except FileNotFoundError as exc:
            if not self.work_tree.is_dir():
                raise CheckpointError(f"The working directory {self.work_tree} is gone.") from exc
            raise CheckpointsUnavailable(
                "Checkpoints are off: `git` is not installed (install git to make actions undoable)."
            ) from exc
        try:
            stdout, stderr = await asyncio.wait_for(proc.communicate(input), self.timeout)
        except asyncio.CancelledError:
            await _stop(proc)
            raise
        except TimeoutError:
            await _stop(proc, kill=True)
            raise GitTimedOut(
                gitrun.timeout_message(f"Checkpoints are off for this session (git {args[0]})", self.timeout)
            ) from None
        if proc.returncode not in ok_codes:
            message = stderr.decode("utf-8", errors="replace").strip() or f"exit code {proc.returncode}"
            raise CheckpointError(f"git {args[0]} failed in the checkpoint store {self.git_dir}: {message}")
        return stdout

    async def text(self, *args: str, input: bytes | None = None) -> str:
        """Like ``run``, decoded and stripped."""
        out = await self.run(*args, input=input)
        return out.decode("utf-8", errors="replace").strip()


async def _stop(proc: asyncio.subprocess.Process, *, kill: bool = False) -> None:
    """End a git process of a cancelled call and wait for it.

    A cancelled turn must not leave git running with ``index.lock`` held: git removes its lock
    files when terminated, and waiting for that is short.
    """
    if proc.returncode is None:
        with suppress(ProcessLookupError):
            if kill:
                proc.kill()  # past its time bound: blocked in an open(), where only a kill reaches it
            else:
                proc.terminate()
        await proc.wait()
