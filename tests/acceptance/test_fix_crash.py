"""Crash safety: `fix` killed (SIGKILL) at every write step of every repair leaves the original or the complete fix."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
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
from dspark_ckpt.sources.local import LocalFolder

REPAIRS = ["trim", "trim-inkling", "trim-input", "share-target-head", "identity-d2t", "drop-d2t", "rebuild-d2t"]


def check_says(folder: Path, case: Case) -> tuple[Any, ...]:
    """What check reports (compatibility and finding codes), the way a user tells the two states apart."""
    report = inspect_checkpoint(LocalFolder(folder), target=TargetVocab(case.target, "test"),
                                runtimes=fix_runtimes(list(case.runtimes) or None))
    return (report.draft_vocab_size, tuple((c.version, c.loads, c.silent_codes) for c in report.compatibility),
            tuple(sorted(f.code for f in report.findings)))


def reference(case: Case, root: Path) -> tuple[Path, Path, list[str], bool]:
    pristine = build(case, root / "pristine")
    plan = plan_fix(pristine, target_vocab_size=case.target, runtimes=list(case.runtimes) or None,
                    strategy=case.strategy if case.force else None)
    assert plan.strategy == case.strategy and plan.changes is not None
    apply_fix(plan, out=root / "fixed")
    return pristine, root / "fixed", list(write_steps(plan.changes, in_place=True)), True


# Each run is a real child process killed by the hook; the children fork from one interpreter that has already
# imported the CLI, so the ~140 kills below cost milliseconds each instead of a fresh interpreter start.
FORK_SERVER = r"""
import json, os, sys
from dspark_ckpt.cli import app as cli
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
    print(os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]), flush=True)
"""


class ForkServer:
    def __init__(self) -> None:
        self.proc = subprocess.Popen([sys.executable, "-c", FORK_SERVER], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, text=True, env={**os.environ, "NO_COLOR": "1"})

    def run(self, argv: list[str], env: dict[str, str]) -> int:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.write(json.dumps({"argv": argv, "env": env}) + "\n")
        self.proc.stdin.flush()
        return int(self.proc.stdout.readline())

    def close(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        self.proc.wait(timeout=30)


@pytest.fixture(scope="module")
def server() -> Iterator[ForkServer]:
    srv = ForkServer()
    yield srv
    srv.close()


def kill_at(server: ForkServer, case: Case, pristine: Path, root: Path, step: str,
            in_place: bool) -> tuple[str, int, Path, Path]:
    work = root / step.replace(":", "_")
    source = work / "ckpt"
    shutil.copytree(pristine, source)
    dest = source if in_place else work / "out"
    mode = ["--in-place"] if in_place else ["--out", str(dest)]
    rc = server.run(fix_args(case, source, *mode), {"DSPARK_CKPT_CRASH_AT": step})
    return step, rc, source, dest


@pytest.mark.parametrize("in_place", [True, False], ids=["in-place", "out"])
@pytest.mark.parametrize("name", REPAIRS)
def test_killed_at_every_step_leaves_original_or_fix(name: str, in_place: bool, tmp_path: Path,
                                                     server: ForkServer) -> None:
    case = CASES[name]
    pristine, fixed, steps, _ = reference(case, tmp_path)
    if not in_place:
        steps = [s for s in steps if s != "cleanup"]
    original, complete = tree_digest(pristine), tree_digest(fixed)
    says_original, says_fixed = check_says(pristine, case), check_says(fixed, case)
    assert original != complete and says_original != says_fixed
    runs = [kill_at(server, case, pristine, tmp_path, s, in_place) for s in steps]
    committed_at = steps.index("committed")
    for i, (step, rc, source, dest) in enumerate(runs):
        assert rc == -signal.SIGKILL, f"{step}: the crash hook did not fire (rc {rc})"
        fixed_now = i >= committed_at
        if in_place:
            assert tree_digest(dest) == (complete if fixed_now else original), step
            assert check_says(dest, case) == (says_fixed if fixed_now else says_original), step
        else:
            assert tree_digest(source) == original, step
            assert (tree_digest(dest) == complete and check_says(dest, case) == says_fixed) if fixed_now \
                else not dest.exists(), step
    if not in_place:
        return
    # A later run takes over the dead run's lock and staging folder and completes the fix.
    _, _, source, dest = runs[steps.index("fsync-dir")]
    mode = ["--in-place"] if in_place else ["--out", str(dest)]
    again = run_cli(*fix_args(case, source, *mode))
    assert again.returncode == 0, again.stdout + again.stderr
    assert tree_digest(dest) == complete
    assert [p.name for p in dest.parent.iterdir() if p.name.startswith(".")] == []
