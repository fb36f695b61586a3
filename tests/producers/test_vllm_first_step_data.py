"""The upstream tier: each vLLM release's recorded first draft step (release_data/vllm-X/first_step.json) is what
that release's own code does, run again on CPU by tools/probe_vllm_first_step.py and compared byte for byte."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from dspark_ckpt.runtimes.release_store import DATA

pytestmark = pytest.mark.upstream(runtime="vllm")
ROOT = Path(__file__).resolve().parents[2]
RECORDED = sorted(p.parent.name.removeprefix("vllm-") for p in DATA.glob("vllm-*/first_step.json"))


@pytest.mark.parametrize("release", RECORDED)
def test_the_recorded_vllm_first_step_is_what_the_release_does(release: str) -> None:
    done = subprocess.run([sys.executable, str(ROOT / "tools" / "probe_vllm_first_step.py"), release, "--check"],
                          capture_output=True, text=True, timeout=1200, check=False)
    assert done.returncode == 0, done.stdout + done.stderr[-3000:]
