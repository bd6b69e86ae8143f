"""Images saved in a folder the kernel may write too (a project's ``images_dir`` inside it, issue #39).

The class: the app (on the host) writes an image into the folder and later reads it back to attach it
for the model; code in the kernel (sandboxed: it cannot read the user's secrets itself) swaps the folder
or the file for a symlink between the two, so that the host writes where the kernel chose or sends a
secret to the model. The mechanism: ``files.write_new`` (only into the folder it was, never through a
link, never over a planted name) and a read of the image that follows no link. Every way of swapping,
generated, leaves the secret unsent and nothing written outside.
"""

from __future__ import annotations

import base64
import os
import tempfile
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from freeact_tui.actions.code import image_attachments
from freeact_tui.execution.kernel.client import OutputText, _Cell

PNG = b"\x89PNG\r\n\x1a\n" + b"image-bytes"
SECRET = b"-----BEGIN OPENSSH PRIVATE KEY----- secret"


def _swap(how: str, images: Path, outside: Path, secret: Path, saved: list[Path]) -> None:
    """What kernel code does to the images folder: before the app's write, or between write and read."""
    if how == "dir_to_link":  # the whole folder now leads outside, where links to the secret wait
        images.rename(images.with_name(images.name + "-old"))
        images.symlink_to(outside)
        for path in saved:
            (outside / path.name).symlink_to(secret)
    elif how == "parent_to_link":  # a component above it leads outside
        parent = images.parent
        parent.rename(parent.with_name(parent.name + "-old"))
        parent.symlink_to(outside)
        (outside / images.name).mkdir(exist_ok=True)
    elif how == "file_to_link":  # the saved image is now a link to a secret
        for path in saved:
            path.unlink()
            path.symlink_to(secret)
    elif how == "own_bytes":  # a regular file the kernel wrote itself: its own bytes only
        for path in saved:
            path.unlink()
            path.write_bytes(b"kernel's own bytes")
    elif how != "none":
        raise AssertionError(how)


@settings(max_examples=40, deadline=None)
@given(
    before=st.sampled_from(["none", "dir_to_link", "parent_to_link"]),
    after=st.sampled_from(["none", "file_to_link", "own_bytes", "dir_to_link"]),
    count=st.integers(1, 3),
)
def test_no_swap_of_the_images_folder_sends_a_secret_or_writes_outside(
    before: str, after: str, count: int
) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp).resolve()
        images, outside = root / "project" / "out" / "images", root / "outside"
        images.mkdir(parents=True)
        outside.mkdir()
        secret = root / "id_rsa"
        secret.write_bytes(SECRET)
        said: list[str] = []
        cell = _Cell(lambda e: said.append(e.text) if isinstance(e, OutputText) else None, images)
        _swap(before, images, outside, secret, [])
        for _ in range(count):
            cell._save_png(base64.b64encode(PNG).decode())
        if before == "none":
            _swap(after, images, outside, secret, list(cell.images))
        attached, _note = image_attachments(cell.images, lambda: {})
        sent = b"".join(a.data for a in attached)
        assert SECRET not in sent
        written = [p for p in outside.rglob("*") if p.is_file() and not p.is_symlink()]
        assert not written, "the app wrote where the kernel pointed it"
        if before == "none":
            assert len(cell.images) == count  # the control: with nothing swapped first, images are saved
            if after == "none":
                assert sent == PNG * count
        else:
            assert not cell.images and any("not saved" in s for s in said), said


def test_a_planted_link_under_the_images_name_is_never_written_through(tmp_path: Path) -> None:
    from freeact_tui.project.files import write_new

    target = tmp_path / "target"
    images = tmp_path / "images"
    images.mkdir()
    (images / "a.png").symlink_to(target)
    try:
        write_new(images, os.path.realpath(images), "a.png", PNG)
    except FileExistsError:
        pass
    else:
        raise AssertionError("wrote over a planted link")
    assert not target.exists()
