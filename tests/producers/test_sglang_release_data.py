"""The committed SGLang release data is what the release does: regenerated from SGLang wheels (their own code
executed on CPU by tools/sglang_release_model.py) and compared byte for byte with runtimes/release_data/sglang-X/:
0.5.23, the newest; 0.5.13, whose transformers (5.8.1) reads an inert flash_attn left in sys.modules as installed;
0.5.1, whose transformers pin carries a marker and which asks torch for AMX unguarded; 0.4.6, which imports with
OLDER_DEPS (triton 3.3.1, compressed-tensors 0.9.2); 0.4.2, which pins no transformers.
Slow (the wheels, SGLang's import-time dependencies, ~50 class builds); CI runs it."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow
ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("release", ["0.5.23", "0.5.13", "0.5.1", "0.4.6", "0.4.2"])
def test_regenerated_sglang_data_equals_the_committed_files(release: str) -> None:
    done = subprocess.run([sys.executable, str(ROOT / "tools" / "sglang_release_model.py"), release, "--check"],
                          capture_output=True, text=True, timeout=3000, check=False)
    assert done.returncode == 0, done.stdout + done.stderr[-3000:]
    assert f"is what SGLang {release} does" in done.stdout
