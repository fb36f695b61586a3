"""The upstream tier: each listed vLLM release's config_rewrites.json is what its own hf_config_override and
EAGLEConfig do, regenerated from the wheel (tools/release_config_rewrites.py executes them over stand-in configs) and
compared byte for byte."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from dspark_ckpt.runtimes.versions import SGLANG_RELEASES, VLLM_RELEASES

pytestmark = pytest.mark.upstream(runtime="vllm")
ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("release", VLLM_RELEASES)
def test_regenerated_rewrites_equal_the_committed_file(release: str) -> None:
    done = subprocess.run([sys.executable, str(ROOT / "tools" / "release_config_rewrites.py"), release, "--check"],
                          capture_output=True, text=True, timeout=900, check=False)
    assert done.returncode == 0, done.stdout + done.stderr[-3000:]
    assert f"is what vLLM {release}'s code does" in done.stdout


@pytest.mark.upstream(runtime="sglang")
@pytest.mark.parametrize("release", SGLANG_RELEASES)
def test_the_sglang_target_class_lines_are_what_the_wheels_say(release: str) -> None:
    """Per release (its wheel fetched), so that --releases picks it and the answer does not depend on which other
    wheels the cache holds: the release's entry (or its absence) is what its files say."""
    done = subprocess.run([sys.executable, str(ROOT / "tools" / "sglang_target_class_lines.py"), release, "--check"],
                          capture_output=True, text=True, timeout=900, check=False)
    assert done.returncode == 0, done.stdout + done.stderr[-3000:]
    assert "is what the SGLang wheels say" in done.stdout
