"""The real CLI in a subprocess under the hostile corpus's limits: 2 GiB of address space (RLIMIT_AS), 5 s.

A case passes only if the CLI ends by itself inside those limits, with no traceback and no internal error (exit 3),
and, when it reports as JSON, with a document that a strict reader parses (no NaN, no lone surrogate).
"""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

MEMORY_LIMIT = 2 * 2**30
TIME_LIMIT_S = 5.0
# CPU time is what the CLI spends itself; a loaded CI machine can stretch wall time, so wall time only catches
# hangs (and waits on a server) with some slack. Hub cases, which mostly wait, are held to TIME_LIMIT_S of wall.
HANG_LIMIT_S = 20.0


@dataclass(frozen=True, slots=True)
class Run:
    returncode: int
    stdout: str
    stderr: str
    wall_s: float
    cpu_s: float

    @property
    def output(self) -> str:
        return self.stdout + self.stderr


def _limit_memory() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT, MEMORY_LIMIT))


def run_limited(*args: str, env: dict[str, str] | None = None, cwd: Path | None = None,
                prefix: list[str] | None = None) -> Run:
    full_env = {**os.environ, "NO_COLOR": "1", "COLUMNS": "100", **(env or {})}
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.monotonic()
    done = subprocess.run([*(prefix or []), sys.executable, "-m", "dspark_ckpt", *args], capture_output=True,
                          text=True, errors="backslashreplace", env=full_env, cwd=cwd, timeout=HANG_LIMIT_S,
                          preexec_fn=_limit_memory)
    wall = time.monotonic() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return Run(done.returncode, done.stdout, done.stderr, wall, cpu)


def strict_json(text: str) -> Any:
    """json.loads as a strict reader sees it: NaN/Infinity refused, and no lone surrogate anywhere."""
    def refuse(name: str) -> None:
        raise ValueError(f"{name} is not JSON")

    doc = json.loads(text, parse_constant=refuse)
    json.dumps(doc, ensure_ascii=False).encode("utf-8")  # UnicodeEncodeError on a lone surrogate
    return doc


def finding_codes(doc: Any) -> list[str]:
    return [f["code"] for c in doc["checkpoints"] for f in c["findings"]]


def assert_contained(run: Run, *, wall_limit: float | None = None) -> None:
    """Ended by itself, inside the limits, and never as a crash."""
    assert "Traceback" not in run.output, run.output[-3000:]
    assert "internal error" not in run.output, run.output[-3000:]
    assert run.returncode not in (3, -9, 137), run.output[-3000:]
    assert "MemoryError" not in run.output
    assert run.cpu_s < TIME_LIMIT_S, f"{run.cpu_s:.1f} s of CPU"
    assert run.wall_s < (wall_limit or HANG_LIMIT_S), f"{run.wall_s:.1f} s"


def assert_outcome(run: Run, code: str, exit: int, *, wall_limit: float | None = None) -> Any:
    """The exit status, and the code: a finding in the JSON report, or an operational error on stderr."""
    assert_contained(run, wall_limit=wall_limit)
    assert run.returncode == exit, run.output[-3000:]
    if code.startswith("DSP-E"):
        assert f"[{code}]" in run.stderr, run.stderr[-3000:]
        return None
    doc = strict_json(run.stdout)
    assert code in finding_codes(doc), run.output[-3000:]
    return doc
