"""Golden files for text and JSON output, rendered by the real CLI with rich pinned (NO_COLOR, 100 columns).

Regenerate after an intended change with: UPDATE_GOLDEN=1 python -m pytest tests/unit/test_render_golden.py
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from conftest import make_checkpoint, run_cli

GOLDEN = Path(__file__).parents[1] / "golden"
CASES: dict[str, tuple[dict[str, Any], tuple[str, ...]]] = {
    "padded": (dict(vocab=96, draft_vocab=120, target_vocab=96),
               ("--target-vocab-size", "96", "--runtime", "vllm==0.29.0", "--runtime", "sglang")),
    "pruned-sharded": (dict(vocab=96, draft_vocab=48, target_vocab=96, d2t="zeros", shards=2),
                       ("--target-vocab-size", "96", "--runtime", "vllm")),
    "no-target": (dict(family="eagle3-llama", vocab=64, draft_vocab=64, target_vocab=64, markov=False),
                  ("--allow-no-target",)),  # without it the run exits 2 (DSP-E038) after the same report
}


# text: the first screen (issue 41); text-v: the long form behind -v
SUFFIX = {"text": ".txt", "text-v": "-v.txt", "json": ".json"}


@pytest.mark.parametrize("fmt", sorted(SUFFIX))
@pytest.mark.parametrize("case", sorted(CASES))
def test_golden(tmp_path: Path, case: str, fmt: str) -> None:
    build, args = CASES[case]
    make_checkpoint(tmp_path / case, **build)
    verbose = ("-v",) if fmt == "text-v" else ()
    result = run_cli("check", case, *args, "--format", fmt.removesuffix("-v"), *verbose, "--isolated", cwd=tmp_path,
                     env={"NO_COLOR": "1", "COLUMNS": "100", "TERM": "dumb"})
    assert result.returncode in (0, 1), result.stderr
    golden = GOLDEN / f"{case}{SUFFIX[fmt]}"
    if os.environ.get("UPDATE_GOLDEN"):
        golden.parent.mkdir(exist_ok=True)
        golden.write_text(result.stdout)
    assert golden.exists(), f"{golden} is missing; run with UPDATE_GOLDEN=1 to create it"
    assert result.stdout == golden.read_text(), f"{golden.name} differs; if intended, run with UPDATE_GOLDEN=1"
