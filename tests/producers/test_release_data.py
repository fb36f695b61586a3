"""The committed release data is what the release does: regenerated from vLLM 0.33.0's wheel (its own code executed
on CPU by tools/release_model.py) and compared byte for byte with runtimes/release_data/vllm-0.33.0.json. Slow (the
wheel, vLLM's import-time dependencies, ~70 class builds); CI runs it."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow
ROOT = Path(__file__).resolve().parents[2]


def test_regenerated_data_equals_the_committed_file() -> None:
    done = subprocess.run([sys.executable, str(ROOT / "tools" / "release_model.py"), "0.33.0", "--check"],
                          capture_output=True, text=True, timeout=3000, check=False)
    assert done.returncode == 0, done.stdout + done.stderr[-3000:]
    assert "is what vLLM 0.33.0 does" in done.stdout
