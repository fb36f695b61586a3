"""A long-lived process for the concurrency tests: it imports the CLI once, then runs what the test sends it.

Each line on stdin is a JSON job; the answer is one JSON line on stdout. A job waits until its wall-clock start
(`at`), so jobs sent to several workers start together, each at its own offset:
- {"kind": "cli", "argv": [...], "at": t}: the real CLI entry point, in this process (tests/cli_runner.run_cli),
  answered with its exit code and output;
- {"kind": "check-loop", "argv": [...], "at": t, "until": t2}: that check run again and again until t2, answered with
  every exit code and any output that holds a traceback;
- {"kind": "editor", "path": p, "at": t, "until": t2}: config.json saved again with the same bytes, in place, until t2.
Either side job also stops once its `stop` file exists (the test creates it when every fix has answered: the race is
over, so the rest of the window would only repeat the final state).
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))

from cli_runner import run_cli


def _wait(at: float) -> None:
    delay = at - time.time()
    if delay > 0:
        time.sleep(delay)


def _cli(job: dict[str, Any]) -> dict[str, Any]:
    done = run_cli(*job["argv"])
    return {"rc": done.returncode, "stdout": done.stdout, "stderr": done.stderr}


def _going(job: dict[str, Any]) -> bool:
    return time.time() < job["until"] and not ("stop" in job and Path(job["stop"]).exists())


def _check_loop(job: dict[str, Any]) -> dict[str, Any]:
    codes, broken = [], []
    while _going(job):
        done = run_cli(*job["argv"])
        codes.append(done.returncode)
        if "Traceback" in done.stdout + done.stderr:
            broken.append(done.stdout + done.stderr)
    return {"codes": codes, "broken": broken}


def _editor(job: dict[str, Any]) -> dict[str, Any]:
    """Saves config.json as an editor does in place: through one descriptor, read, truncate, write back the same
    bytes. (An editor that renames a copy it read earlier over the file can undo a fix committed in between:
    that race is the editor's, and no fix can close it.)"""
    path, saves = Path(job["path"]), 0
    while _going(job):
        try:
            with open(path, "r+b") as f:
                data = f.read()
                f.seek(0)
                f.truncate(0)
                f.write(data)
        except FileNotFoundError:
            continue
        saves += 1
        time.sleep(0.002)
    return {"saves": saves}


KINDS = {"cli": _cli, "check-loop": _check_loop, "editor": _editor}


def main() -> None:
    out = sys.stdout
    for line in sys.stdin:
        job = json.loads(line)
        _wait(job["at"])
        try:
            answer = KINDS[job["kind"]](job)
        except Exception as exc:  # noqa: BLE001 - reported as the answer, never swallowed: the test fails on it
            answer = {"rc": -1, "stdout": "", "stderr": f"worker: {type(exc).__name__}: {exc}"}
        out.write(json.dumps(answer) + "\n")
        out.flush()


if __name__ == "__main__":
    main()
