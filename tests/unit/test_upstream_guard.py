"""The hermetic suite's guard (tests/upstream_guard.py) refuses each way a test could reach a wheel or the network,
and lets the rest through: loopback (the fake Hub), pip without an index, files outside the wheel caches."""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import GUARD
from upstream_guard import Guard, UpstreamReached, wheel_caches

ROOT = Path(__file__).resolve().parents[2]


@contextlib.contextmanager
def own_guard(tmp_path: Path) -> Iterator[Guard]:
    """A guard over a cache of its own, active; the suite's guard stands aside meanwhile (the first audit hook to
    refuse would otherwise be the suite's, and this test would fail for what it provokes on purpose)."""
    cache = tmp_path / "cache"
    (cache / "vllm-0.34.0" / "vllm").mkdir(parents=True)
    (cache / "vllm-0.34.0" / "vllm" / "__init__.py").write_text("")
    own = Guard([str(cache)])
    GUARD.active, own.active = False, True
    try:
        yield own
    finally:
        GUARD.active, own.active = True, False


def test_every_way_to_a_wheel_or_the_network_is_refused(tmp_path: Path) -> None:
    with own_guard(tmp_path) as guard:
        _provoke(tmp_path / "cache" / "vllm-0.34.0")
    assert len(guard.violations) == 7, "\n".join(guard.violations)


def _provoke(tree: Path) -> None:
    with pytest.raises(UpstreamReached):
        (tree / "vllm" / "__init__.py").read_text()
    with pytest.raises(UpstreamReached):
        os.listdir(tree)
    with pytest.raises(UpstreamReached):
        (tree / "new").mkdir()
    with pytest.raises(UpstreamReached):
        socket.create_connection(("192.0.2.1", 9), timeout=0.5)  # TEST-NET-1: refused before a packet leaves
    with pytest.raises(UpstreamReached):
        subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps", "vllm==0.34.0"], check=False)
    with pytest.raises(UpstreamReached):
        subprocess.run([sys.executable, str(ROOT / "tools" / "probe_runtime.py"), "0.34.0", "--prepare-only"],
                       check=False)
    with pytest.raises(UpstreamReached):
        subprocess.run([sys.executable, "-c", "import vllm"], env={"PYTHONPATH": str(tree)}, check=False)


def test_loopback_local_pip_and_other_files_pass(tmp_path: Path) -> None:
    with own_guard(tmp_path) as guard:
        server = socket.socket()
        server.bind(("127.0.0.1", 0))
        server.listen()
        with server, socket.create_connection(server.getsockname(), timeout=5):
            pass
        done = subprocess.run([sys.executable, "-m", "pip", "download", "--no-index", "--find-links", str(tmp_path),
                               "--dest", str(tmp_path / "d"), "nothing-here"], capture_output=True, check=False)
        (tmp_path / "elsewhere.txt").write_text("ok")
        assert (tmp_path / "elsewhere.txt").read_text() == "ok"
    assert done.returncode != 0  # ran (pip found nothing locally), was not refused
    assert guard.violations == []


def test_the_suites_guard_covers_the_real_caches() -> None:
    home = Path.home() / ".cache"
    expected = {os.environ.get("DSPARK_PROBE_CACHE") or str(home / "dspark-ckpt" / "probe"),
                os.environ.get("DSPARK_CKPT_TEST_WHEELS") or str(home / "dspark-ckpt-tests" / "wheels")}
    assert {os.path.abspath(p) for p in expected} <= set(GUARD.caches) and GUARD.caches == wheel_caches()
    assert os.environ.get("PIP_NO_INDEX") == "1"  # what this test's subprocesses inherit
