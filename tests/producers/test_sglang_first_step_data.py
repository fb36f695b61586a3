"""The upstream tier: each SGLang release's recorded DSpark first draft step (release_data/sglang-X/first_step.json)
is what that release's own step does, run again on CPU from its wheel by tools/probe_first_step.py and compared byte
for byte. Seconds per release once its wheel is cached."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from dspark_ckpt.runtimes.first_step import FILE
from dspark_ckpt.runtimes.release_store import DATA

pytestmark = pytest.mark.upstream(runtime="sglang")
ROOT = Path(__file__).resolve().parents[2]
RECORDED = sorted(p.parent.name.removeprefix("sglang-") for p in DATA.glob(f"sglang-*/{FILE}"))


@pytest.mark.parametrize("release", RECORDED)
def test_the_recorded_first_step_is_what_the_release_does(release: str) -> None:
    done = subprocess.run([sys.executable, str(ROOT / "tools" / "probe_first_step.py"), release, "--check"],
                          capture_output=True, text=True, timeout=600, check=False)
    assert done.returncode == 0, done.stdout + done.stderr[-3000:]
    assert f"is what SGLang {release} does" in done.stdout
