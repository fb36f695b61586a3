"""The committed SGLang release data is what the release does: regenerated from SGLang 0.5.23's wheel (its own code
executed on CPU by tools/sglang_release_model.py) and compared byte for byte with runtimes/release_data/sglang-0.5.23/.
Slow (the wheel, SGLang's import-time dependencies, ~50 class builds); CI runs it."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow
ROOT = Path(__file__).resolve().parents[2]


def test_regenerated_sglang_data_equals_the_committed_files() -> None:
    done = subprocess.run([sys.executable, str(ROOT / "tools" / "sglang_release_model.py"), "0.5.23", "--check"],
                          capture_output=True, text=True, timeout=3000, check=False)
    assert done.returncode == 0, done.stdout + done.stderr[-3000:]
    assert "is what SGLang 0.5.23 does" in done.stdout
