"""The hermetic suite's guard: a test outside the upstream tier that reaches for a runtime wheel or the network fails.

One audit hook (sys.addaudithook: it sees every open, subprocess and connect of this process, whichever module makes
it, bound or imported late) is active while a test not marked `upstream` sets up, runs and tears down. It refuses
- a connection to anything but loopback (tests/fakehub serves the Hub on 127.0.0.1) or a Unix socket;
- a file opened, a folder listed or made, under a wheel cache: the probe's (~/.cache/dspark-ckpt/probe,
  DSPARK_PROBE_CACHE), the tests' (~/.cache/dspark-ckpt-tests/wheels, DSPARK_CKPT_TEST_WHEELS) and a development
  machine's /work/wheels: a warm cache is still a wheel, and a fresh clone has none;
- a subprocess that runs pip to download or install from an index, that runs a tool which fetches a wheel
  (tools/probe_runtime.py, ...), or whose PYTHONPATH reaches into a wheel cache.
The subprocesses a test starts inherit PIP_NO_INDEX=1, so a grandchild's pip finds no index either. Each refusal is raised where it happens and recorded, so a test that swallows the
error still fails (`violations`).
"""

from __future__ import annotations

import ipaddress
import os
import sys
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

# The tools that fetch a wheel or regenerate from one when run as commands (tools/README.md).
FETCHING_TOOLS = ("probe_runtime.py", "release_model.py", "sglang_release_model.py", "release_lines.py",
                  "registry_data.py", "probe_eagle3_aux.py", "probe_sglang.py", "release_spec.py")
_PIP_FETCHES = ("download", "install", "index", "wheel")


class UpstreamReached(AssertionError):
    """A test outside the upstream tier reached for a wheel or the network."""


def wheel_caches(environ: dict[str, str] | os._Environ[str] = os.environ) -> tuple[str, ...]:
    home = Path.home() / ".cache"
    roots = [environ.get("DSPARK_PROBE_CACHE") or home / "dspark-ckpt" / "probe",
             environ.get("DSPARK_CKPT_TEST_WHEELS") or home / "dspark-ckpt-tests" / "wheels",
             "/work/wheels"]
    return tuple(dict.fromkeys(os.path.abspath(os.fspath(r)) for r in roots))


def _loopback(address: Any) -> bool:
    if not isinstance(address, tuple):  # AF_UNIX paths and the like
        return True
    host = address[0]
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.split("%")[0]).is_loopback
    except ValueError:  # a name: it would be resolved, so it is not loopback
        return False


def _pip_fetch(argv: Sequence[str]) -> bool:
    """`pip download|install|index|wheel` that may go to an index (`--no-index` keeps pip on local files)."""
    names = [os.path.basename(a) for a in argv]
    at = next((i for i, n in enumerate(names) if n in ("pip", "pip3")), None)
    if at is None:
        return False
    return "--no-index" not in argv and any(a in _PIP_FETCHES for a in argv[at + 1:])


class Guard:
    def __init__(self, caches: Iterable[str]) -> None:
        self.caches = tuple(caches)
        self.active = False
        self.violations: list[str] = []
        sys.addaudithook(self._audit)

    def _in_cache(self, path: Any) -> bool:
        if isinstance(path, bytes):
            path = os.fsdecode(path)
        if not isinstance(path, (str, os.PathLike)):
            return False
        text = os.path.abspath(os.fspath(path))
        return any(text == root or text.startswith(root + os.sep) for root in self.caches)

    def _refuse(self, what: str) -> None:
        self.violations.append(what)
        raise UpstreamReached(f"{what}: this test is not marked upstream, and the hermetic suite reaches for no "
                              "wheel and no network (tests/upstream_guard.py; mark it @pytest.mark.upstream or "
                              "hold it to committed data)")

    def _audit(self, event: str, args: tuple[Any, ...]) -> None:
        if not self.active:
            return
        if event == "socket.connect":
            if not _loopback(args[1]):
                self._refuse(f"connection to {args[1]!r}")
        elif event in ("open", "os.listdir", "os.scandir", "os.mkdir"):
            if args and self._in_cache(args[0]):
                self._refuse(f"{event} {args[0]} (a wheel cache)")
        elif event == "subprocess.Popen":
            self._subprocess(args[1], args[3])

    def _subprocess(self, argv: Any, env: Any) -> None:
        argv = [os.fspath(a) if isinstance(a, os.PathLike) else str(a) for a in
                ([argv] if isinstance(argv, (str, bytes, os.PathLike)) else argv)]
        if _pip_fetch(argv):
            self._refuse(f"subprocess {' '.join(argv)}")
        tool = next((a for a in argv if os.path.basename(a) in FETCHING_TOOLS
                     and os.path.basename(os.path.dirname(a)) == "tools"), None)
        if tool is not None:
            self._refuse(f"subprocess running {tool}")
        path = (env if env is not None else os.environ).get("PYTHONPATH", "")
        if any(self._in_cache(p) for p in path.split(os.pathsep) if p):
            self._refuse(f"subprocess with PYTHONPATH={path}")

    def child_environment(self) -> dict[str, str]:
        """What a test's subprocesses inherit: pip reads no index. (The tools' caches are left as they are: a tool
        imported during a guarded test would keep a changed cache path for the upstream tests of that worker.)"""
        return {"PIP_NO_INDEX": "1"}
