"""One lock per source checkpoint, whatever the destination; a fix proves the source it read is still the one it
fingerprinted before putting anything in place."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from conftest import make_checkpoint, run_cli, wait_stopped
from test_fix_repairs import tree_digest

PADDED = dict(vocab=100, draft_vocab=100, target_vocab=96, shards=3)
FIX = ("--target-vocab-size", "96")


class Held:
    def __init__(self, proc: subprocess.Popen[str]) -> None:
        self.proc, self.pid = proc, proc.pid
        self.returncode: int | None = None
        self.stdout = self.stderr = ""


@contextmanager
def held_at(step: str, *args: str) -> Iterator[Held]:
    """A fix stopped (SIGSTOP) at `step` while the block runs, then let go; the block sees it holding its lock."""
    env = {**os.environ, "NO_COLOR": "1", "DSPARK_CKPT_CRASH_AT": step, "DSPARK_CKPT_CRASH_SIGNAL": "STOP"}
    proc = subprocess.Popen([sys.executable, "-m", "dspark_ckpt", "fix", *args], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=env)
    held = Held(proc)
    try:
        wait_stopped(proc.pid)
        yield held
    finally:
        os.kill(proc.pid, signal.SIGCONT)
        held.stdout, held.stderr = proc.communicate(timeout=60)
        held.returncode = proc.returncode


def test_in_place_and_out_of_one_checkpoint_exclude_each_other(tmp_path: Path) -> None:
    folder = make_checkpoint(tmp_path / "d", **PADDED)
    reference = make_checkpoint(tmp_path / "ref", **PADDED)
    assert run_cli("fix", str(reference), *FIX, "--in-place").returncode == 0
    with held_at("linked", str(folder), *FIX, "--in-place") as first:
        other = run_cli("fix", str(folder), *FIX, "--out", str(tmp_path / "o"))
        assert other.returncode == 2 and "[DSP-E071]" in other.stderr and f"pid {first.pid}" in other.stderr
        assert not (tmp_path / "o").exists()
    assert first.returncode == 0 and tree_digest(folder) == tree_digest(reference)
    # and the other way round: a run writing a copy holds the checkpoint against an in-place fix
    pristine = make_checkpoint(tmp_path / "p", **PADDED)
    original = tree_digest(pristine)
    with held_at("write:config.json", str(pristine), *FIX, "--out", str(tmp_path / "copy")) as copying:
        other = run_cli("fix", str(pristine), *FIX, "--in-place")
        assert other.returncode == 2 and "[DSP-E071]" in other.stderr and f"pid {copying.pid}" in other.stderr
    assert copying.returncode == 0 and tree_digest(pristine) == original
    assert tree_digest(tmp_path / "copy") == tree_digest(reference)


def test_two_copies_to_different_places_share_the_source(tmp_path: Path) -> None:
    """Readers share: a fix writing a copy only reads the checkpoint, so a second copy runs beside it (issue 38)."""
    folder = make_checkpoint(tmp_path / "d", **PADDED)
    reference = make_checkpoint(tmp_path / "ref", **PADDED)
    assert run_cli("fix", str(reference), *FIX, "--in-place").returncode == 0
    original = tree_digest(folder)
    with held_at("linked", str(folder), *FIX, "--out", str(tmp_path / "a")) as first:
        other = run_cli("fix", str(folder), *FIX, "--out", str(tmp_path / "b"))
        assert other.returncode == 0, other.stdout + other.stderr
        in_place = run_cli("fix", str(folder), *FIX, "--in-place")  # while they read it, a writer is refused
        assert in_place.returncode == 2 and "[DSP-E071]" in in_place.stderr and f"pid {first.pid}" in in_place.stderr
    assert first.returncode == 0, first.stderr
    assert tree_digest(folder) == original
    assert tree_digest(tmp_path / "a") == tree_digest(tmp_path / "b") == tree_digest(reference)


def _rewrite_in_place(path: Path) -> None:
    """Another tool rewriting a shard the way fix would: a new file renamed over the old one."""
    data = path.read_bytes()
    tmp = path.with_name(path.name + ".other-tool")
    tmp.write_bytes(data)
    os.replace(tmp, path)


def test_a_source_changed_while_copying_is_never_put_in_place(tmp_path: Path) -> None:
    folder = make_checkpoint(tmp_path / "d", **PADDED)
    with held_at("verified", str(folder), *FIX, "--out", str(tmp_path / "o")) as run:
        _rewrite_in_place(folder / "model-00001-of-00003.safetensors")  # read, or hard-linked, by the run
    assert run.returncode == 2 and "[DSP-E070]" in run.stderr, run.stdout + run.stderr
    assert not (tmp_path / "o").exists() and sorted(p.name for p in tmp_path.iterdir()) == ["d"]


def test_a_source_changed_under_an_in_place_fix_is_left_as_it_is(tmp_path: Path) -> None:
    folder = make_checkpoint(tmp_path / "d", **PADDED)
    with held_at("verified", str(folder), *FIX, "--in-place") as run:
        (folder / "config.json").write_text((folder / "config.json").read_text().replace("100", "100 "))
        changed = {name: digest for name, digest in tree_digest(folder).items() if not name.startswith(".")}
    assert run.returncode == 2 and "[DSP-E070]" in run.stderr, run.stdout + run.stderr
    assert tree_digest(folder) == changed, "nothing was put in place over the other writer's files"
    assert not [p for p in os.listdir(folder) if p.startswith(".")]
