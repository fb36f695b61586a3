"""The upstream tier: the committed SGLang release data is what each release does, regenerated from its wheel (its
own code executed on CPU by tools/sglang_release_model.py) and compared byte for byte with
runtimes/release_data/sglang-X/. Releases that once needed care: 0.5.13, whose transformers (5.8.1) reads an inert
flash_attn left in sys.modules as installed; 0.5.1, whose transformers pin carries a marker and which asks torch for
AMX unguarded; 0.4.6, which imports with OLDER_DEPS (triton 3.3.1, compressed-tensors 0.9.2); 0.4.2, which pins no
transformers. The wheels, SGLang's import-time dependencies (~50 class builds): minutes per release."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from dspark_ckpt.runtimes.release_model import generated_releases

pytestmark = pytest.mark.upstream(runtime="sglang")
ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("release", generated_releases("sglang"))
def test_regenerated_sglang_data_equals_the_committed_files(release: str) -> None:
    done = subprocess.run([sys.executable, str(ROOT / "tools" / "sglang_release_model.py"), release, "--check"],
                          capture_output=True, text=True, timeout=3000, check=False)
    assert done.returncode == 0, done.stdout + done.stderr[-3000:]
    assert f"is what SGLang {release} does" in done.stdout
