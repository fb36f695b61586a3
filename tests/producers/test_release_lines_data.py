"""The upstream tier: the committed citations are where each release's files say: lines.json regenerated from its
wheel (tools/release_lines.py resolves tools/release_anchors.py against the extracted `.py` files, nothing executed) and
compared byte for byte. The wheel download, once (~/.cache/dspark-ckpt/probe after), then about a second."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from dspark_ckpt.runtimes.versions import VLLM_RELEASES

pytestmark = pytest.mark.upstream(runtime="vllm")
ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("release", VLLM_RELEASES)
def test_regenerated_lines_equal_the_committed_file(release: str) -> None:
    done = subprocess.run([sys.executable, str(ROOT / "tools" / "release_lines.py"), release, "--check"],
                          capture_output=True, text=True, timeout=900, check=False)
    assert done.returncode == 0, done.stdout + done.stderr[-3000:]
    assert f"is what vLLM {release}'s files say" in done.stdout
