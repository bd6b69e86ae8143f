"""Docker mode keeps the project's protected names read-only, as the sandbox does (issue #39).

Class: every isolation backend must apply the same protected-name table (``.git``, ``.freeact``, ``.env``
… existing or not), else code in the container creates ``.git/config`` or
``.freeact/generated/sitecustomize.py`` in the mounted folder for the host to run later. Mechanism:
``sandbox_protect.ProtectedNames.binds()`` is the one table; bubblewrap and Docker each turn it into
their options. Docker cannot run on this machine (no daemon), so this tests the ``docker run`` command
the backend builds: every protected name is bound read-only after the folder's own read-write bind.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from freeact_tui.execution.isolation.bridge import PortBridges
from freeact_tui.execution.isolation.docker import DockerGatewayProcess
from freeact_tui.execution.isolation.protect import ProtectedNames
from freeact_tui.project.paths import PROTECTED_NAMES


def _volumes(command: list[str]) -> list[str]:
    return [command[k + 1] for k, word in enumerate(command) if word == "--volume"]


def test_docker_binds_every_protected_name_read_only_existing_or_not(tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    (work / ".git").mkdir()  # one that exists; the others do not
    gateway = DockerGatewayProcess(
        host="127.0.0.1", port=1, tool_port=2, working_dir=work, env={}, image="img",
        read_only=[], memory=None, pids_limit=None,
    )  # fmt: skip
    gateway._docker = "docker"
    gateway._ports = PortBridges("freeact-dkr-test-")
    gateway._protected = ProtectedNames(work)
    try:
        volumes = _volumes(gateway.command())
        folder = volumes.index(f"{work}:{work}:rw")
        targets = {v.rsplit(":", 2)[1]: (k, v.rsplit(":", 1)[1]) for k, v in enumerate(volumes)}
        for name in PROTECTED_NAMES:
            k, mode = targets[str(work / name)]
            assert mode == "ro" and k > folder, (name, volumes)
        assert f"{work / '.git'}:{work / '.git'}:ro" in volumes  # an existing one is bound onto itself
    finally:
        gateway._protected.cleanup()
        shutil.rmtree(gateway._ports.socket_dir, ignore_errors=True)


def test_both_backends_apply_the_same_table(tmp_path: Path) -> None:
    protected = ProtectedNames(tmp_path)
    try:
        bwrap = protected.options()
        docker = protected.docker_options()
        bwrap_targets = [bwrap[k + 2] for k, w in enumerate(bwrap) if w == "--ro-bind"]
        docker_targets = [v.rsplit(":", 2)[1] for v in _volumes(docker)]
        assert bwrap_targets == docker_targets
        assert {str(tmp_path / n) for n in PROTECTED_NAMES} <= set(docker_targets)
    finally:
        protected.cleanup()
