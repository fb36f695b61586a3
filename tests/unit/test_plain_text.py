"""output/plain_text.py writes the text report off a terminal without rich: byte for byte what rich writes there.

FORCE_COLOR="" makes the run ask rich (write.plain_width defers to rich when FORCE_COLOR is set; rich reads the
empty value as no terminal), so each case runs both ways and compares stdout, stderr, the exit code and files.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from conftest import draft_tensors, make_checkpoint, run_cli

HOSTILE = {"  [bold]x[/bold] :smile: \x1b]0;t\x07 \u202e 词表 caf\u00e9\u0301 \xa0.weight": np.zeros((2, 2), "<f4")}


def both(tmp_path: Path, *args: str, columns: str = "") -> None:
    results = []
    for rich in (False, True):
        env = {"COLUMNS": columns, **({"FORCE_COLOR": ""} if rich else {})}
        out = tmp_path / f"out-{rich}.txt"
        extra = ("--output", str(out)) if "--output" in args else ()
        r = run_cli(*(a for a in args if a != "--output"), *extra, "--isolated", cwd=tmp_path, env=env)
        results.append((r.returncode, r.stdout, r.stderr.replace(str(out), "OUT"),
                        out.read_text() if out.exists() else None))
    assert results[0] == results[1]
    assert results[0][1] or results[0][3], results[0]


@pytest.fixture
def drafts(tmp_path: Path) -> Path:
    make_checkpoint(tmp_path / "padded", vocab=96, draft_vocab=120, target_vocab=96)
    make_checkpoint(tmp_path / "pruned", vocab=96, draft_vocab=48, target_vocab=96, d2t="zeros", shards=2)
    make_checkpoint(tmp_path / "plain", family="eagle3-llama", vocab=64, draft_vocab=64, target_vocab=64,
                    markov=False)
    hostile = {**draft_tensors(vocab=96, draft_vocab=96, target_vocab=96), **HOSTILE}
    make_checkpoint(tmp_path / "hostile", tensors=hostile, config_extra={"architectures": ["词 [red]x"]})
    return tmp_path


@pytest.mark.parametrize("columns", ["", "100", "30", "400"])
@pytest.mark.parametrize("case", [
    ("padded", "--target-vocab-size", "96", "--runtime", "vllm==0.29.0", "--runtime", "sglang"),
    ("pruned", "--target-vocab-size", "96"),
    ("plain", "--allow-no-target"),
    ("hostile", "--target-vocab-size", "96"),
    ("padded", "pruned", "hostile", "--target-vocab-size", "96", "-q"),
    ("padded", "--target-vocab-size", "96", "--color", "never", "--output"),
    ("padded", "--target-vocab-size", "96", "--runtime", "vllm",
     "--speculative-config", json.dumps({"model": "padded", "method": "dspark", "num_speculative_tokens": 8})),
])
def test_plain_text_is_what_rich_writes(drafts: Path, case: tuple[str, ...], columns: str) -> None:
    both(drafts, "check", *case, columns=columns)
