"""`verify` loads the producers' checkpoints with torch the way each release builds them, and agrees with check."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import torch
from producers import hoisted, materialise, names

from dspark_ckpt.model.target import TargetVocab
from dspark_ckpt.runtimes.selectors import parse_selectors
from dspark_ckpt.sources.local import LocalFolder
from dspark_ckpt.verify.checkpoint import verify_checkpoint
from dspark_ckpt.verify.torch_loader import VerifyOptions

CASES = [(name, {}) for name in names()] + [
    ("speculators-0.9.0-eagle3-qwen3-pruned", {"d2t": "zeros"}),
    ("speculators-0.9.0-eagle3-qwen3-pruned", {"d2t": "out-of-range"}),
    ("speculators-0.9.0-dspark-pruned", {"d2t": "out-of-range"}),
    ("specforge-0.2.0-dspark-nested", {"config": hoisted}),
    ("specforge-0.2.0-inkling-padded", {"config": hoisted}),
]


@pytest.mark.parametrize(("name", "edits"), CASES, ids=[f"{n}{'-' + '-'.join(e) if e else ''}" for n, e in CASES])
def test_verify_agrees_with_check(tmp_path: Path, name: str, edits: dict[str, Any]) -> None:
    folder = materialise(tmp_path / "ckpt", name, **edits)
    target = TargetVocab(100 if "inkling" in name else 96, "test")
    report, result = verify_checkpoint(LocalFolder(folder), target=target, runtimes=parse_selectors(["vllm"]),
                                       options=VerifyOptions(device="cpu", probes=0), device=torch.device("cpu"))
    assert result.skipped is None
    assert result.check_disagreements == ()
    assert "DSP605" not in {f.code for f in report.findings}


def _selector_rank(cfg: dict[str, Any], rank: int) -> None:
    cfg["dflash_config"]["selector_rank"] = rank


@pytest.mark.parametrize("rank", [5, 3, 2**30])
def test_a_draft_both_refuse_is_no_disagreement_whichever_tensor_each_stops_at(tmp_path: Path, rank: int) -> None:
    """z-lab's DFlash2 layout (codebooks saved as `<name>.weight`, which vLLM's loader refuses) with a selector rank
    its `candidate_selector.hidden_proj` was not made for: check's first error is that projection (the record's
    load order over every tensor), the torch run's the codebook name (it loads no backbone tensor). Both refuse the
    draft: verify says so without a DSP605."""
    folder = materialise(tmp_path / "ckpt", "dflash-0.1.0-dflash2", config=lambda cfg: _selector_rank(cfg, rank))
    report, result = verify_checkpoint(LocalFolder(folder), target=TargetVocab(96, "test"),
                                       runtimes=parse_selectors(["vllm==0.33.0"]),
                                       options=VerifyOptions(device="cpu", probes=0), device=torch.device("cpu"))
    (row,) = report.compatibility
    assert not row.loads and row.error_code == "DSP331"
    assert result.check_disagreements == () and "DSP605" not in {f.code for f in report.findings}
