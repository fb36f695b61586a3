"""The padded-row probe: illegal rows made to win are caught, harmless ones are not, quantised heads are skipped."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from conftest import draft_tensors, make_checkpoint
from listed import vllm_minors

from dspark_ckpt.runtimes.selectors import parse_selectors
from dspark_ckpt.sources.local import local_source
from dspark_ckpt.sources.target import explicit_target
from dspark_ckpt.verify.checkpoint import verify_checkpoint
from dspark_ckpt.verify.torch_loader import VerifyOptions

T, D, H = 96, 128, 16


def padded(tmp_path: Path, name: str, illegal_rows: str, **extra: Any) -> Path:
    tensors = draft_tensors(vocab=D, draft_vocab=D, target_vocab=T, hidden=H)
    rng = np.random.default_rng(1)
    tensors["embed_tokens.weight"][:, 0] = 10.0  # every token embedding points along axis 0 after the norm
    head = rng.standard_normal((D, H)).astype(np.float32) * 0.01
    if illegal_rows == "win":
        head[T:, 0] = 5.0  # rows [T, D) align with that axis: they beat every legal row
    else:
        head[:T] = rng.standard_normal((T, H)).astype(np.float32)
        head[T:] = 0.0  # zero logits can never beat the best of 96 random legal logits
    tensors["lm_head.weight"] = head
    return make_checkpoint(tmp_path / name, tensors=tensors, vocab=D, draft_vocab=D, target_vocab=T, hidden=H,
                           **extra)


def run(path: Path, probes: int = 256, seed: int = 0) -> tuple[Any, Any]:
    return verify_checkpoint(local_source(path), target=explicit_target(T), runtimes=parse_selectors(["vllm"]),
                             options=VerifyOptions(device="cpu", probes=probes, seed=seed, top_k=4),
                             device=torch.device("cpu"))


def stats(result: Any) -> dict[tuple[str, str], Any]:
    return {(s.source, s.logits): s for s in result.probe.stats}


def test_illegal_rows_made_to_win(tmp_path: Path) -> None:
    report, result = run(padded(tmp_path, "win", "win"))
    # the first release that loads the draft's own head: Qwen3DSparkModel's first, 0.25.0 (registry.py @ v0.25.0
    # L597), where a padded head loads with its illegal rows (qwen3_dspark.py L121-127, L149-185 @ v0.25.0)
    first = vllm_minors("0.25.0")[0]
    assert result.probe.ran and result.probe.illegal_rows == D - T and result.probe.runtime == f"vllm=={first}"
    embed = stats(result)[("embed_tokens", "lm_head")]
    assert embed.probes == 128 and embed.argmax_illegal == 128 and embed.topk_any_illegal == 128
    assert embed.topk_illegal_slots == 128 * 4 and embed.max_margin > 0 and T <= embed.max_margin_row < D
    gaussian = stats(result)[("gaussian", "lm_head")]
    assert gaussian.probes == 128 and 0 < gaussian.argmax_illegal < 128  # sign of axis 0 decides
    assert ("embed_tokens", "lm_head + markov") in stats(result)
    assert [f.code for f in report.findings if f.code.startswith("DSP6")] == ["DSP601"]


def test_zero_illegal_rows_never_win(tmp_path: Path) -> None:
    report, result = run(padded(tmp_path, "safe", "zero", config_extra=None))
    for s in result.probe.stats:
        if s.logits == "lm_head":
            assert s.argmax_illegal == 0 and s.max_margin is not None and s.max_margin < 0
    assert not any(f.code == "DSP601" for f in report.findings)


def test_seed_makes_the_probe_reproducible(tmp_path: Path) -> None:
    path = padded(tmp_path, "seeded", "win")
    first, again, other = run(path, seed=3)[1], run(path, seed=3)[1], run(path, seed=4)[1]
    assert first.probe.stats == again.probe.stats
    assert first.probe.stats != other.probe.stats


def test_quantised_head_is_reported_not_probed(tmp_path: Path) -> None:
    tensors = draft_tensors(vocab=D, draft_vocab=D, target_vocab=T, hidden=H)
    tensors["lm_head.weight"] = np.full((D, H), 0x38, dtype=np.uint8)  # fp8 e4m3 bytes of 1.0
    tensors["lm_head.weight_scale"] = np.ones(1, dtype=np.float32)
    path = make_checkpoint(tmp_path / "fp8", tensors=tensors, vocab=D, draft_vocab=D, target_vocab=T, hidden=H,
                           config_extra={"quantization_config": {"quant_method": "fp8"}})
    from conftest import write_safetensors
    write_safetensors(path / "model.safetensors", tensors, dtypes={"lm_head.weight": "F8_E4M3"})
    report, result = run(path)
    assert result.runtimes[-1].loads  # the scale belongs to the quantization_config: not an unknown weight
    assert not result.probe.ran and "quantised" in result.probe.reason and "lm_head.weight_scale" in result.probe.reason
    assert [f.code for f in report.findings if f.code.startswith("DSP6")] == ["DSP604"]


def test_probe_zero_or_no_illegal_rows_skips(tmp_path: Path) -> None:
    _, result = run(make_checkpoint(tmp_path / "equal", vocab=T, draft_vocab=T, target_vocab=T))
    assert not result.probe.ran and "nothing to compare" in result.probe.reason
