"""The committed citations are where the release's files say: vLLM 0.33.0's lines.json regenerated from its wheel
(tools/release_lines.py resolves tools/release_anchors.py against the extracted `.py` files) and compared byte for byte.
Slow (the wheel download, once; cached under ~/.cache/dspark-ckpt/probe after)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow
ROOT = Path(__file__).resolve().parents[2]


def test_regenerated_lines_equal_the_committed_file() -> None:
    done = subprocess.run([sys.executable, str(ROOT / "tools" / "release_lines.py"), "0.33.0", "--check"],
                          capture_output=True, text=True, timeout=900, check=False)
    assert done.returncode == 0, done.stdout + done.stderr[-3000:]
    assert "is what vLLM 0.33.0's files say" in done.stdout
