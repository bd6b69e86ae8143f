"""Each isolation backend binds every target once, for every kernel of a folder (Docker refuses a
second mount on one target). Not in the fast tier: the table asks git whether the history holds a secret."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from freeact_tui.execution.isolation.protect import ProtectedNames
from freeact_tui.execution.isolation.secret_files import secret_targets
from freeact_tui.project import paths

_STATE = st.sampled_from(["missing", "file", "dir"])


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(states=st.lists(_STATE, min_size=len(paths.PROTECTED_NAMES), max_size=len(paths.PROTECTED_NAMES)), kernels=st.integers(1, 3))
def test_each_target_is_bound_once_for_every_kernel_of_a_folder(
    states: list[str], kernels: int, tmp_path_factory: pytest.TempPathFactory
) -> None:
    """Docker refuses a second mount on one target ("Duplicate mount point"): ``.env`` is a protected name
    and a secret file, and the placeholders one kernel's container made are existing names to the next
    kernel of the same folder (a subagent's). Every kernel's table names each target once, the secret
    ones hidden (their last bind is an empty placeholder)."""
    work = tmp_path_factory.mktemp("one-bind")
    for name, state in zip(paths.PROTECTED_NAMES, states, strict=True):
        if state == "file":
            (work / name).write_text("x")
        elif state == "dir":
            (work / name).mkdir()
    tables = []
    for _ in range(kernels):
        protected = ProtectedNames(work)
        binds = protected.binds()
        for _source, target in binds:  # the mount points the container runtime makes in the folder
            if not target.exists() and target.is_relative_to(work):
                target.mkdir(parents=True)
        tables.append((protected, binds))
    try:
        for protected, binds in tables:
            targets = [target for _, target in binds]
            assert len(targets) == len(set(targets)), binds
            words = protected.docker_options()
            volumes = [words[i + 1].rsplit(":", 2)[1] for i in range(0, len(words), 2)]
            assert len(volumes) == len(set(volumes))
            hidden = dict((target, source) for source, target in binds)
            for secret in secret_targets(work)[0]:
                source = hidden[secret]  # an empty placeholder from outside the folder
                assert not source.is_relative_to(work), (secret, source)
                assert not any(source.iterdir()) if source.is_dir() else source.stat().st_size == 0
    finally:
        for protected, _ in tables:
            protected.cleanup()
