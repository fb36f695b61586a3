"""The real CLI under the hostile corpus's limits: 2 GiB of address space (RLIMIT_AS), 5 s of CPU.

Each case runs in a child forked from one worker that imported the CLI once (fork_server.py), not in a new
interpreter: the limits, the environment, the folder and the streams are the child's own, as in a subprocess.
A case that needs a command prefix (setpriv, to drop capabilities) or DSPARK_CKPT_TEST_SUBPROCESS=1 runs in a
subprocess as before.

A case passes only if the CLI ends by itself inside those limits, with no traceback and no internal error (exit 3),
and, when it reports as JSON, with a document that a strict reader parses (no NaN, no lone surrogate).

The 5 s are what a case may cost on any machine. A case whose input is big by construction (a million-entry index,
a 99 MB header) costs more where the machine is slow or loaded, so a run over 5 s is held instead to a multiple of
the floor measured right then, in the same way: a bare interpreter that reads every input file and parses each JSON
document and safetensors header with `json.loads` (and imports torch for `verify`). A run that grew quadratic, or
hung, is still far outside that multiple.
"""

from __future__ import annotations

import atexit
import json
import os
import resource
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

MEMORY_LIMIT = 2 * 2**30
TIME_LIMIT_S = 5.0
# CPU time is what the CLI spends itself; a loaded CI machine can stretch wall time, so wall time only catches
# hangs (and waits on a server) with some slack. Hub cases, which mostly wait, are held to TIME_LIMIT_S of wall.
HANG_LIMIT_S = 20.0
# A wall limit bounds the waiting (on a server, a deadline). On a loaded machine a run is also descheduled, for
# longer the more it computes, so each second of its own CPU time widens the wall limit by LOAD_SLACK seconds; a run
# that hangs spends next to no CPU, so it still meets the bare limit.
LOAD_SLACK = 2.0
FLOOR_RATIO = 5.0  # a run over TIME_LIMIT_S may cost at most this many times the naive floor of the same inputs

# The naive floor: the same interpreter reads each input file once and parses what is JSON in it, errors ignored.
NAIVE_FLOOR = r"""
import json, os, struct, sys
if sys.argv[1] == "verify":
    import torch
def parse(path):
    try:
        with open(path, "rb") as f:
            data = f.read()
        if path.endswith(".safetensors") and len(data) >= 8:
            data = data[8:8 + struct.unpack("<Q", data[:8])[0]]
        json.loads(data)
    except Exception:
        pass
for arg in sys.argv[2:]:
    for root, _, files in os.walk(arg) if os.path.isdir(arg) else [(os.path.dirname(arg), [], [os.path.basename(arg)])]:
        for name in files:
            parse(os.path.join(root, name))
"""


@dataclass(frozen=True, slots=True)
class Run:
    returncode: int
    stdout: str
    stderr: str
    wall_s: float
    cpu_s: float
    command: str = ""
    inputs: tuple[str, ...] = ()

    @property
    def output(self) -> str:
        return self.stdout + self.stderr


def _limit_memory() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT, MEMORY_LIMIT))


def _timed(command: list[str], **kwargs: Any) -> tuple[subprocess.CompletedProcess[str], float, float]:
    """The command's result, its wall time and the CPU time it and its children spent."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.monotonic()
    done = subprocess.run(command, check=False, capture_output=True, text=True, errors="backslashreplace",
                          **kwargs)
    wall = time.monotonic() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return done, wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


class ForkServer:
    """The worker of fork_server.py, started on first use and shared by every case of this test process."""

    def __init__(self) -> None:
        self._proc: subprocess.Popen[str] | None = None
        self._lock = threading.Lock()

    def _started(self) -> subprocess.Popen[str]:
        if self._proc is None or self._proc.poll() is not None:
            self._proc = subprocess.Popen([sys.executable, str(Path(__file__).with_name("fork_server.py"))],
                                          stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, bufsize=1)
            assert self._proc.stdout is not None and self._proc.stdout.readline() == "ready\n", "no fork server"
            atexit.register(self.close)
        return self._proc

    def run(self, args: tuple[str, ...], env: dict[str, str], cwd: Path | None, timeout: float,
            code: str | None = None) -> tuple[subprocess.CompletedProcess[str], float, float]:
        """The CLI with `args` (or, for the server's own tests, the Python snippet `code`) in a forked child."""
        with self._lock, tempfile.TemporaryDirectory(prefix="dspark-case-") as scratch:
            out, err = Path(scratch) / "stdout", Path(scratch) / "stderr"
            out.touch()
            err.touch()
            proc = self._started()
            request = {"args": list(args), "env": env, "cwd": str(cwd or os.getcwd()), "stdout": str(out),
                       "stderr": str(err), "timeout": timeout, "memory_limit": MEMORY_LIMIT,
                       **({"code": code} if code is not None else {})}
            assert proc.stdin is not None and proc.stdout is not None
            proc.stdin.write(json.dumps(request) + "\n")
            proc.stdin.flush()
            answer = json.loads(proc.stdout.readline())
            command = [sys.executable, "-m", "dspark_ckpt", *args]
            if answer["timed_out"]:
                raise subprocess.TimeoutExpired(command, timeout)
            done = subprocess.CompletedProcess(command, answer["returncode"],
                                               out.read_bytes().decode("utf-8", "backslashreplace"),
                                               err.read_bytes().decode("utf-8", "backslashreplace"))
            return done, answer["wall"], answer["cpu"]

    def close(self) -> None:
        if self._proc is not None and self._proc.poll() is None:
            assert self._proc.stdin is not None
            self._proc.stdin.close()
            self._proc.wait(timeout=30)


SERVER = ForkServer()


def run_limited(*args: str, env: dict[str, str] | None = None, cwd: Path | None = None,
                prefix: list[str] | None = None) -> Run:
    full_env = {**os.environ, "NO_COLOR": "1", "COLUMNS": "100", **(env or {})}
    if prefix or os.environ.get("DSPARK_CKPT_TEST_SUBPROCESS") == "1":
        done, wall, cpu = _timed([*(prefix or []), sys.executable, "-m", "dspark_ckpt", *args], env=full_env,
                                 cwd=cwd, timeout=HANG_LIMIT_S, preexec_fn=_limit_memory)
    else:
        done, wall, cpu = SERVER.run(args, full_env, cwd, HANG_LIMIT_S)
    paths = (os.path.join(cwd or ".", a) for a in args[1:] if not a.startswith("-"))
    inputs = tuple(p for p in paths if os.path.exists(p))  # False, not an error, for a name too long to be one
    return Run(done.returncode, done.stdout, done.stderr, wall, cpu, args[0] if args else "", inputs)


def naive_floor_s(run: Run) -> float:
    """The CPU time of the naive floor for the run's inputs, measured now."""
    _, _, cpu = _timed([sys.executable, "-c", NAIVE_FLOOR, run.command, *run.inputs], timeout=10 * HANG_LIMIT_S)
    return cpu


def cpu_limit_s(run: Run) -> float:
    """TIME_LIMIT_S, or for a run that needed more, FLOOR_RATIO times the floor of its inputs."""
    return TIME_LIMIT_S if run.cpu_s < TIME_LIMIT_S else max(TIME_LIMIT_S, FLOOR_RATIO * naive_floor_s(run))


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
    assert run.cpu_s < (limit := cpu_limit_s(run)), f"{run.cpu_s:.1f} s of CPU, over {limit:.1f} s"
    if wall_limit is None:
        assert run.wall_s < HANG_LIMIT_S, f"{run.wall_s:.1f} s"
    else:
        allowed = wall_limit + LOAD_SLACK * run.cpu_s
        assert run.wall_s < allowed, f"{run.wall_s:.1f} s of wall time ({run.cpu_s:.1f} s of CPU), over {allowed:.1f} s"


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
