"""The upstream tier: the committed release data is what each release does, regenerated from its wheel (its own code
executed on CPU by tools/release_model.py; the fixture matrix by tools/probe_runtime.py) and compared byte for byte
with runtimes/release_data/vllm-X/. Every generated release; `--releases vllm-0.34.0` picks some. The wheel, vLLM's
import-time dependencies (~70 class builds each): minutes per release on an empty cache (README.md)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from dspark_ckpt.runtimes.release_model import generated_releases
from dspark_ckpt.runtimes.versions import VLLM_RELEASES

pytestmark = pytest.mark.upstream(runtime="vllm")
ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("release", generated_releases("vllm"))
def test_regenerated_data_equals_the_committed_file(release: str) -> None:
    done = subprocess.run([sys.executable, str(ROOT / "tools" / "release_model.py"), release, "--check"],
                          capture_output=True, text=True, timeout=3000, check=False)
    assert done.returncode == 0, done.stdout + done.stderr[-3000:]
    assert f"is what vLLM {release} does" in done.stdout


@pytest.mark.parametrize("release", VLLM_RELEASES)
def test_regenerated_vocab_observations_equal_the_committed_file(release: str) -> None:
    """tests/data/release_vocab/vllm-X.json (what tests/unit/test_vocab_observed.py holds every listed release's rows to) is what the release's
    own classes do with the fixture matrix: tools/probe_runtime.py --check runs them again and compares."""
    done = subprocess.run([sys.executable, str(ROOT / "tools" / "probe_runtime.py"), release, "--check"],
                          capture_output=True, text=True, timeout=3000, check=False)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert f"is what vLLM {release} does" in done.stderr
