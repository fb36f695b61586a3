"""The `.py` files of a runtime's released wheel, fetched once with pip and cached between runs: the upstream tier's.

The upstream tests that hold the tool's citations against a release read the release itself:
`release_tree("vllm", "0.30.0")` is a folder laid out as the wheel is (`vllm/config/speculative.py`, ...). The first
call downloads the wheel with `pip download --no-deps` (the registry the machine's pip is configured for), keeps only
its Python files and drops the wheel; later calls, in this run or the next, read the cache. A development machine's
extracted wheels under /work/wheels (`vllm-0.30.0/...`) are used as they are when present. The hermetic suite never
calls it (tests/upstream_guard.py fails a test that reads a cache); it reads what these trees answered, recorded
(tests/wheel_excerpts.py).

The cache is DSPARK_CKPT_TEST_WHEELS, else ~/.cache/dspark-ckpt-tests/wheels. A download that fails is a test
failure that says why, never a skip.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import shutil
import subprocess
import sys
import tempfile
import zipfile
from collections.abc import Iterator
from pathlib import Path

DEV_WHEELS = Path("/work/wheels")
_DONE = ".complete"


def cache_root() -> Path:
    configured = os.environ.get("DSPARK_CKPT_TEST_WHEELS")
    return Path(configured) if configured else Path.home() / ".cache" / "dspark-ckpt-tests" / "wheels"


class FetchError(AssertionError):
    """The release's wheel could not be fetched: the test fails with pip's own words."""


@contextlib.contextmanager
def _locked(root: Path) -> Iterator[None]:
    """One fetch at a time across processes (pytest-xdist workers share the cache)."""
    root.mkdir(parents=True, exist_ok=True)
    with open(root / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def _download(package: str, version: str, into: Path) -> Path:
    done = subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps", "--no-cache-dir",
                           "--only-binary=:all:", "--quiet", "-d", str(into), f"{package}=={version}"],
                          capture_output=True, text=True, timeout=900)
    wheels = sorted(into.glob("*.whl"))
    if done.returncode != 0 or not wheels:
        raise FetchError(f"pip download {package}=={version} failed ({done.returncode}): {done.stderr[-2000:]}")
    return wheels[0]


def _extract_python(wheel: Path, folder: Path) -> None:
    with zipfile.ZipFile(wheel) as archive:
        for member in archive.infolist():
            name = member.filename
            if not name.endswith(".py") or name.startswith("/") or ".." in Path(name).parts:
                continue
            target = folder / name
            target.parent.mkdir(parents=True, exist_ok=True)
            with archive.open(member) as src, open(target, "wb") as dst:
                shutil.copyfileobj(src, dst)


def release_tree(package: str, version: str) -> Path:
    """The folder holding the `.py` files of `package==version`'s wheel, fetched if not cached yet."""
    dev = DEV_WHEELS / f"{package}-{version}"
    if dev.is_dir():
        return dev
    root = cache_root()
    folder = root / f"{package}-{version}"
    if (folder / _DONE).exists():
        return folder
    with _locked(root):
        if (folder / _DONE).exists():  # another worker fetched it while this one waited
            return folder
        with tempfile.TemporaryDirectory(dir=root, prefix=f".{package}-{version}.") as scratch:
            staging = Path(scratch) / "tree"
            staging.mkdir()
            _extract_python(_download(package, version, Path(scratch)), staging)
            (staging / _DONE).write_text(f"{package}=={version}\n")
            shutil.rmtree(folder, ignore_errors=True)
            os.replace(staging, folder)
    return folder
