"""The upstream tier: each SGLang release's EAGLE-3 aux-state lines (release_data/sglang_aux_lines.json, read by
runtimes/eagle3_aux_sglang.py `lines()`) are what that release's own wheel says: tools/sglang_aux_lines.py finds each
column's statement in the release's files and `--check` compares with the committed entry. With the hermetic ties in
tests/unit/test_eagle3_aux_sglang_lines.py (the releases it lists are the registry data's, its loader line follows
the generated record's), the table is generated data, not a second model beside it; a post release answers through
release.resolve (test_sglang_post_release_files.py)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from dspark_ckpt.runtimes import eagle3_aux_sglang as aux

pytestmark = pytest.mark.upstream(runtime="sglang")
ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("release", tuple(aux.lines()))
def test_each_release_s_lines_are_what_its_wheel_says(release: str) -> None:
    """Per release (its wheel fetched), so that --releases picks it and the answer does not depend on which other
    wheels the cache holds."""
    done = subprocess.run([sys.executable, str(ROOT / "tools" / "sglang_aux_lines.py"), release, "--check"],
                          capture_output=True, text=True, timeout=900, check=False)
    assert done.returncode == 0, done.stdout + done.stderr[-3000:]
    assert "is what the SGLang wheels say" in done.stdout
