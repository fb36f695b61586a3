"""Crash safety: `fix` SIGKILLed at every named write step, and after random delays (any instant), leaves the original or
the complete fix once the next fix or check has run its recovery, proven by the sha256 of every file."""

from __future__ import annotations

import json
import os
import random
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import run_cli
from test_fix_repairs import CASES, Case, build, fix_args, tree_digest

from dspark_ckpt.check.analysis import inspect_checkpoint
from dspark_ckpt.model.target import TargetVocab
from dspark_ckpt.repair import apply_fix, fix_runtimes, plan_fix
from dspark_ckpt.repair.files import write_steps
from dspark_ckpt.repair.journal import JOURNAL_NAME, STAGE_NAME, recover_interrupted
from dspark_ckpt.sources.local import LocalFolder

REPAIRS = ["trim", "trim-inkling", "trim-input", "share-target-head", "identity-d2t", "drop-d2t", "rebuild-d2t"]
KILL_LOOP_RUNS = 105  # per mode: 210 runs killed at random instants in all


def check_says(folder: Path, case: Case) -> tuple[Any, ...]:
    """What check reports (compatibility and finding codes), the way a user tells the two states apart."""
    report = inspect_checkpoint(LocalFolder(folder), target=TargetVocab(case.target, "test"),
                                runtimes=fix_runtimes(list(case.runtimes) or None))
    return (report.draft_vocab_size, tuple((c.version, c.loads, c.silent_codes) for c in report.compatibility),
            tuple(sorted(f.code for f in report.findings)))


def reference(case: Case, root: Path) -> tuple[Path, Path, list[str]]:
    pristine = build(case, root / "pristine")
    plan = plan_fix(pristine, target_vocab_size=case.target, runtimes=list(case.runtimes) or None,
                    strategy=case.strategy if case.force else None)
    assert plan.strategy == case.strategy and plan.changes is not None
    apply_fix(plan, out=root / "fixed")
    return pristine, root / "fixed", list(write_steps(plan.changes, in_place=True))


# Each run is a real child process: forked from one interpreter that has already imported the CLI, so a run costs
# tens of milliseconds instead of a fresh interpreter start. A job either sets DSPARK_CKPT_CRASH_AT (the child kills
# itself at that step) or `kill_after` (this server SIGKILLs the child after that many seconds, wherever it is).
FORK_SERVER = r"""
import gc, json, os, signal, sys, time
from dspark_ckpt.cli import app as cli
import dspark_ckpt.check.analysis, dspark_ckpt.repair.apply, dspark_ckpt.repair.journal  # what fix imports lazily
import dspark_ckpt.repair.plan, dspark_ckpt.repair.read, dspark_ckpt.repair.render, dspark_ckpt.repair.safety
import dspark_ckpt.repair.hub
def quiet_run(argv):
    saved = os.dup(1), os.dup(2)
    null = os.open(os.devnull, os.O_WRONLY)
    os.dup2(null, 1); os.dup2(null, 2)
    try:
        cli.main(argv)
    except SystemExit:
        pass
    finally:
        os.dup2(saved[0], 1); os.dup2(saved[1], 2)
quiet_run(["fix", os.devnull, "--target-vocab-size", "8", "--dry-run"])  # warm: what parsing imports lazily
gc.freeze()  # fewer copy-on-write page faults in each child
for line in sys.stdin:
    job = json.loads(line)
    pid = os.fork()
    if pid == 0:
        os.environ.update(job["env"])
        null = os.open(os.devnull, os.O_WRONLY)
        os.dup2(null, 1); os.dup2(null, 2)
        try:
            cli.main(job["argv"])
        except SystemExit as done:
            os._exit(done.code if isinstance(done.code, int) else 1)
        os._exit(0)
    start = time.monotonic()
    if job["env"].get("DSPARK_CKPT_CRASH_SIGNAL") == "STOP":  # held at its crash step: the clock starts there
        status = os.waitpid(pid, os.WUNTRACED)[1]
        if os.WIFSTOPPED(status):
            start = time.monotonic()
            os.kill(pid, signal.SIGCONT)
    deadline = None if job.get("kill_after") is None else start + job["kill_after"]
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            break
        now = time.monotonic()
        if deadline is not None and now >= deadline:
            os.kill(pid, signal.SIGKILL)
            status = os.waitpid(pid, 0)[1]
            break
        time.sleep(max(0.0, min(0.0003, deadline - now)) if deadline is not None else 0.0003)
    print(json.dumps({"rc": os.waitstatus_to_exitcode(status), "elapsed": time.monotonic() - start}), flush=True)
"""


class ForkServer:
    def __init__(self) -> None:
        self.proc = subprocess.Popen([sys.executable, "-c", FORK_SERVER], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, text=True, env={**os.environ, "NO_COLOR": "1"})

    def run(self, argv: list[str], env: dict[str, str] | None = None,
            kill_after: float | None = None) -> tuple[int, float]:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.write(json.dumps({"argv": argv, "env": env or {}, "kill_after": kill_after}) + "\n")
        self.proc.stdin.flush()
        done = json.loads(self.proc.stdout.readline())
        return done["rc"], done["elapsed"]

    def close(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        self.proc.wait(timeout=30)


@pytest.fixture(scope="module")
def server() -> Iterator[ForkServer]:
    srv = ForkServer()
    yield srv
    srv.close()


def recover(source: Path) -> bool:
    """What the next fix does first (check does the same): finish or roll back a dead run. True if it had work."""
    return recover_interrupted(source) is not None


def kill_at(server: ForkServer, case: Case, pristine: Path, root: Path, step: str,
            in_place: bool) -> tuple[str, int, Path, Path]:
    work = root / step.replace(":", "_")
    source = work / "ckpt"
    shutil.copytree(pristine, source)
    dest = source if in_place else work / "out"
    mode = ["--in-place"] if in_place else ["--out", str(dest)]
    rc, _ = server.run(fix_args(case, source, *mode), {"DSPARK_CKPT_CRASH_AT": step})
    return step, rc, source, dest


@pytest.mark.parametrize("in_place", [True, False], ids=["in-place", "out"])
@pytest.mark.parametrize("name", REPAIRS)
def test_killed_at_every_step_leaves_original_or_fix(name: str, in_place: bool, tmp_path: Path,
                                                     server: ForkServer) -> None:
    case = CASES[name]
    pristine, fixed, _ = reference(case, tmp_path)
    plan = plan_fix(pristine, target_vocab_size=case.target, runtimes=list(case.runtimes) or None,
                    strategy=case.strategy if case.force else None)
    assert plan.changes is not None
    steps = list(write_steps(plan.changes, in_place))
    original, complete = tree_digest(pristine), tree_digest(fixed)
    says_original, says_fixed = check_says(pristine, case), check_says(fixed, case)
    assert original != complete and says_original != says_fixed
    # In place, the journal's commit point decides: from `commit` on, recovery completes the fix. --out: the rename.
    fixed_from = steps.index("commit" if in_place else "committed")
    for i, (step, rc, source, dest) in enumerate(kill_at(server, case, pristine, tmp_path, s, in_place)
                                                  for s in steps):
        assert rc == -signal.SIGKILL, f"{step}: the crash hook did not fire (rc {rc})"
        recover(source)
        fixed_now = i >= fixed_from
        assert tree_digest(source) == (complete if in_place and fixed_now else original), step
        if in_place:
            assert check_says(dest, case) == (says_fixed if fixed_now else says_original), step
        elif fixed_now:
            assert tree_digest(dest) == complete and check_says(dest, case) == says_fixed, step
        else:
            assert not dest.exists(), step
    # A later run takes over (no stale lock: the kernel dropped it) and completes the fix, leaving nothing behind.
    _, _, source, dest = kill_at(server, case, pristine, tmp_path / "again", "linked", in_place)
    mode = ["--in-place"] if in_place else ["--out", str(dest)]
    again = run_cli(*fix_args(case, source, *mode))
    assert again.returncode == 0, again.stdout + again.stderr
    assert tree_digest(dest) == complete
    assert [p.name for p in dest.parent.iterdir() if p.name.startswith(".")] == []
    assert [p.name for p in source.iterdir() if p.name.startswith(".")] == []


KILL_LOOP_CASES = ["trim-sharded-stray-d2t", "identity-d2t", "drop-d2t", "rebuild-d2t-all-zero"]


HOLD_AT_LOCK = {"DSPARK_CKPT_CRASH_AT": "lock", "DSPARK_CKPT_CRASH_SIGNAL": "STOP"}


def _apply_time(server: ForkServer, case: Case, pristine: Path, root: Path, in_place: bool) -> float:
    """How long a run takes from taking the lock (planning done) to its end: the window most kills aim at."""
    times = []
    for i in range(2):
        work = root / f"{in_place}-{i}"
        shutil.copytree(pristine, work / "ckpt")
        mode = ["--in-place"] if in_place else ["--out", str(work / "out")]
        rc, elapsed = server.run(fix_args(case, work / "ckpt", *mode), HOLD_AT_LOCK)
        assert rc == 0
        times.append(elapsed)
    return max(times)


@pytest.mark.slow  # the kill loop: tens of forked fixes
def test_killed_at_random_instants_leaves_original_or_fix(tmp_path: Path, server: ForkServer) -> None:
    """SIGKILL after a random delay, wherever the run is (no hook): over 210 runs, in place and --out, every end
    state is, file for file by sha256, the original or the complete fix once recovery has run. Most runs are held
    at the lock for an instant (SIGSTOP, SIGCONT) so that their delay counts from there: the kill lands anywhere
    while files are written, wherever the code is."""
    rng = random.Random(1301)
    refs = {}
    for name in KILL_LOOP_CASES:
        case = CASES[name]
        pristine, fixed, _ = reference(case, tmp_path / name)
        timing = {m: _apply_time(server, case, pristine, tmp_path / name / "timing", m) for m in (True, False)}
        refs[name] = (case, pristine, tree_digest(pristine), tree_digest(fixed), timing)
    seen: dict[str, int] = {"original": 0, "fixed": 0, "recovered": 0, "completed": 0}
    started = time.monotonic()
    for run in range(2 * KILL_LOOP_RUNS):
        in_place = run % 2 == 0
        name = KILL_LOOP_CASES[run // 2 % len(KILL_LOOP_CASES)]
        case, pristine, original, complete, timing = refs[name]
        planning = rng.random() < 0.1  # a few kills anywhere from the start; the rest while files are written
        delay = rng.uniform(0, 0.3) if planning else rng.uniform(0, 1.1 * timing[in_place])
        work = tmp_path / "runs" / str(run)
        source, dest = work / "ckpt", work / "out"
        shutil.copytree(pristine, source)
        mode = ["--in-place"] if in_place else ["--out", str(dest)]
        rc, _ = server.run(fix_args(case, source, *mode), None if planning else HOLD_AT_LOCK, kill_after=delay)
        assert rc in (0, -signal.SIGKILL), f"run {run}: exit {rc}"
        seen["completed"] += rc == 0
        left = os.path.lexists(source / JOURNAL_NAME) or os.path.lexists(source / STAGE_NAME)
        seen["recovered"] += recover(source) and left
        if in_place:
            state = tree_digest(source)
            assert state in (original, complete), f"run {run} ({name}, in place, {delay:.3f} s): a mixed state"
        else:
            assert tree_digest(source) == original, f"run {run} ({name}, --out): the source changed"
            state = tree_digest(dest) if dest.exists() else original
            assert state in (original, complete), f"run {run} ({name}, --out, {delay:.3f} s): a partial copy"
        assert not [p.name for p in source.iterdir() if p.name.startswith(".")], f"run {run}: leftovers"
        seen["fixed" if state == complete else "original"] += 1
        shutil.rmtree(work)
    print(f"kill loop: {2 * KILL_LOOP_RUNS} runs in {time.monotonic() - started:.1f} s: {seen}")
    assert seen["original"] and seen["fixed"] and seen["recovered"], seen
