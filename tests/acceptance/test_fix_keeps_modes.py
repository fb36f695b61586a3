"""fix keeps every file's mode, owner and group (rewritten, copied, hard-linked or new alike) and the folder's mode."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest
from conftest import make_checkpoint, run_cli

PADDED = dict(vocab=100, draft_vocab=100, target_vocab=96, shards=3)  # trim rewrites two shards, the index, config
MODES = {"config.json": 0o640, "model.safetensors.index.json": 0o600, "model-00001-of-00003.safetensors": 0o600,
         "model-00002-of-00003.safetensors": 0o640, "model-00003-of-00003.safetensors": 0o604}
FOLDER_MODE = 0o2750  # setgid folder, no access for others
IS_ROOT = os.geteuid() == 0


def private_checkpoint(folder: Path) -> Path:
    make_checkpoint(folder, **PADDED)
    (folder / "README.md").write_text("unchanged by the repair\n")
    for name, mode in MODES.items():
        os.chmod(folder / name, mode)
    if IS_ROOT:  # other owners than the one running fix, as in a shared deploy tree
        for i, name in enumerate(sorted(MODES)):
            os.chown(folder / name, 1000 + i, 2000 + i)
    os.chmod(folder, FOLDER_MODE)
    return folder


def owners(folder: Path) -> dict[str, tuple[int, int, int]]:
    return {p.name: (stat.S_IMODE(p.stat().st_mode), p.stat().st_uid, p.stat().st_gid)
            for p in folder.iterdir() if p.is_file()}


def test_in_place_keeps_modes_owners_and_the_folder(tmp_path: Path) -> None:
    folder = private_checkpoint(tmp_path / "d")
    before, folder_before = owners(folder), folder.stat()
    done = run_cli("fix", str(folder), "--target-vocab-size", "96", "--in-place")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "wrote model-00002-of-00003.safetensors" in done.stdout and "wrote config.json" in done.stdout
    assert owners(folder) == before, "0600/0640 weights must not become world-readable"
    after = folder.stat()
    assert (after.st_ino, stat.S_IMODE(after.st_mode), after.st_uid, after.st_gid) == (
        folder_before.st_ino, FOLDER_MODE, folder_before.st_uid, folder_before.st_gid)


def test_out_keeps_modes_of_rewritten_and_linked_files_and_the_folder(tmp_path: Path) -> None:
    folder = private_checkpoint(tmp_path / "d")
    before = owners(folder)
    done = run_cli("fix", str(folder), "--target-vocab-size", "96", "--out", str(tmp_path / "o"))
    assert done.returncode == 0, done.stdout + done.stderr
    out = tmp_path / "o"
    assert owners(out) == before and stat.S_IMODE(out.stat().st_mode) == FOLDER_MODE
    assert os.path.samefile(folder / "README.md", out / "README.md"), "an unchanged file is a hard link"
    assert not os.path.samefile(folder / "config.json", out / "config.json")


def _other_file_system(tmp_path: Path) -> Path | None:
    shm = Path("/dev/shm")
    if shm.is_dir() and os.access(shm, os.W_OK) and shm.stat().st_dev != tmp_path.stat().st_dev:
        return shm
    return None


def test_out_on_another_file_system_copies_with_mode_owner_and_times(tmp_path: Path) -> None:
    elsewhere = _other_file_system(tmp_path)
    if elsewhere is None:
        pytest.skip("no second writable file system (/dev/shm) to force copies")
    folder = private_checkpoint(tmp_path / "d")
    (folder / "README.md").chmod(0o400)
    os.utime(folder / "README.md", (1_000_000_000, 1_000_000_000))
    before = owners(folder)
    out = elsewhere / f"dspark-keeps-{os.getpid()}-{tmp_path.name}"
    try:
        done = run_cli("fix", str(folder), "--target-vocab-size", "96", "--out", str(out), "--format", "json")
        assert done.returncode == 0, done.stdout + done.stderr
        assert owners(out) == before, "copied files keep mode and owner like hard-linked ones would"
        assert (out / "README.md").stat().st_mtime == 1_000_000_000
        assert (out / "model-00001-of-00003.safetensors").stat().st_ino != \
            (folder / "model-00001-of-00003.safetensors").stat().st_ino
        assert stat.S_IMODE(out.stat().st_mode) == FOLDER_MODE
    finally:
        if out.exists():
            out.chmod(0o700)
            for p in out.iterdir():
                p.unlink()
            out.rmdir()


def test_a_new_shard_takes_its_siblings_mode(tmp_path: Path) -> None:
    """rebuild-d2t adds a shard and an index: they take a shard's and config.json's mode, not 0644."""
    folder = make_checkpoint(tmp_path / "d", vocab=128, draft_vocab=32, target_vocab=128, t2d=True)
    (folder / "model.safetensors").chmod(0o600)
    (folder / "config.json").chmod(0o640)
    # the releases that register Qwen3DSparkModel (registry.py @ v0.25.0 L597 first)
    done = run_cli("fix", str(folder), "--target-vocab-size", "128", "--for", "vllm>=0.25.0", "--in-place")
    assert done.returncode == 0, done.stdout + done.stderr
    assert stat.S_IMODE((folder / "dspark-fix-d2t.safetensors").stat().st_mode) == 0o600
    assert stat.S_IMODE((folder / "model.safetensors.index.json").stat().st_mode) == 0o640
    assert stat.S_IMODE((folder / "model.safetensors").stat().st_mode) == 0o600

