"""verify (torch, observed) and check (headers, reasoned) agree on loads/errors over the whole fixture matrix."""

from __future__ import annotations

import itertools
import json
from pathlib import Path
from typing import Any

import numpy as np

import pytest

torch = pytest.importorskip("torch")

from conftest import ARCH, draft_tensors, make_checkpoint
from listed import vllm_before, vllm_minors

from dspark_ckpt.check.analysis import Analysis, analyze, inspect_checkpoint
from dspark_ckpt.model.target import TargetVocab
from dspark_ckpt.runtimes.landing import quoted_whole
from dspark_ckpt.runtimes.selectors import parse_selectors
from dspark_ckpt.sources.local import local_source
from dspark_ckpt.sources.target import explicit_target
from dspark_ckpt.verify.checkpoint import verify_checkpoint
from dspark_ckpt.verify.runtime_model import dims_for
from dspark_ckpt.verify.torch_loader import VerifyOptions

T = 96
KINDS = {"pruned": (96, 64), "equal": (96, 96), "padded": (128, 128), "expanded": (128, 96)}  # kind: (V, D)
SHIPS = list(itertools.product([True, False], repeat=4))  # lm_head, d2t, t2d, embed_tokens
RUNTIMES = parse_selectors(None)  # every vLLM version and SGLang


def same_words(torch_run: str | None, check: str | None) -> bool:
    """The torch run's words are check's: check quotes the release up to where it varies, or quotes a bare raise
    and adds where it is and the two shapes (the record's landing, runtimes/landing.py)."""
    mine, theirs = torch_run or "", check or ""
    return mine.startswith(theirs) or quoted_whole(mine, theirs)


@pytest.mark.parametrize("family", sorted(ARCH))
def test_matrix_agrees_with_check(tmp_path: Path, family: str) -> None:
    device = torch.device("cpu")
    options = VerifyOptions(device="cpu", probes=0)
    cells = 0
    for (kind, (v, d)), (lm, d2t, t2d, embed) in itertools.product(KINDS.items(), SHIPS):
        path = make_checkpoint(tmp_path / f"{kind}-{lm:d}{d2t:d}{t2d:d}{embed:d}", family=family, vocab=v,
                               draft_vocab=d, target_vocab=T, lm_head=lm, d2t=d2t, t2d=t2d, embed=embed)
        checked = inspect_checkpoint(local_source(path), target=explicit_target(T), runtimes=RUNTIMES)
        verified, result = verify_checkpoint(local_source(path), target=explicit_target(T), runtimes=RUNTIMES,
                                             options=options, device=device)
        assert result.skipped is None
        assert [(e.runtime, e.version) for e in verified.compatibility] == \
            [(e.runtime, e.version) for e in checked.compatibility]
        for mine, theirs in zip(verified.compatibility, checked.compatibility):
            cells += 1
            where = f"{path.name} on {mine.runtime} {mine.version}"
            assert mine.loads == theirs.loads, where
            assert mine.error_code == theirs.error_code, where
            assert same_words(mine.error, theirs.error), where
            assert sorted(set(mine.silent_codes)) == sorted(set(theirs.silent_codes)), where
        assert not any(f.code == "DSP605" for f in verified.findings), path.name
    assert cells == len(KINDS) * len(SHIPS) * len(checked.compatibility)



@pytest.mark.parametrize("tensor", ["markov_head.markov_w1.weight", "markov_head.markov_w2.weight",
                                    "embed_tokens.weight", "lm_head.weight"])
def test_a_wrong_row_count_agrees_with_check(tmp_path: Path, tensor: str) -> None:
    """Each vocab-sized tensor one row short: both say the same bare AssertionError on every version."""
    tensors = draft_tensors(vocab=96, draft_vocab=64, target_vocab=T, d2t=True)
    tensors[tensor] = tensors[tensor][:-1]
    path = make_checkpoint(tmp_path / "short", vocab=96, draft_vocab=64, target_vocab=T, tensors=tensors)
    checked = inspect_checkpoint(local_source(path), target=explicit_target(T), runtimes=RUNTIMES)
    verified, _ = verify_checkpoint(local_source(path), target=explicit_target(T), runtimes=RUNTIMES,
                                    options=VerifyOptions(device="cpu", probes=0), device=torch.device("cpu"))
    for mine, theirs in zip(verified.compatibility, checked.compatibility, strict=True):
        if mine.runtime == "vllm":
            assert (mine.loads, mine.error_code) == (theirs.loads, theirs.error_code)
            assert same_words(mine.error, theirs.error), (tensor, mine.version)
            if mine.version in vllm_before("0.25.0"):  # no Qwen3DSparkModel (registry.py @ v0.25.0 L597 first)
                assert not mine.loads and mine.error_code == "DSP309", (tensor, mine.version)
                continue
            # markov_w1 is an nn.Embedding from 0.27 (qwen3_dspark.py L56 @ v0.27.0: default_weight_loader's
            # message), a VocabParallelEmbedding in 0.25/0.26 (qwen3_dspark.py L54-56 @ v0.25.0, v0.26.0: the bare
            # row assert of vocab_parallel_embedding.py L465 @ v0.25.0, v0.26.0), as the other vocab-parallel heads
            embedding = "markov_w1" in tensor and mine.version in vllm_minors("0.27.0")
            want = ("Attempted to load weight (torch.Size([95, 4])) into parameter (torch.Size([96, 4]))"
                    if embedding else "AssertionError")
            assert not mine.loads and mine.error == want, (tensor, mine.version)


def _both(path: Path, target: TargetVocab) -> tuple[Analysis, Any, Any]:
    analysis = analyze(local_source(path), target=target, runtimes=RUNTIMES)
    verified, result = verify_checkpoint(local_source(path), target=target, runtimes=RUNTIMES,
                                         options=VerifyOptions(device="cpu", probes=0), device=torch.device("cpu"))
    return analysis, verified, result


def test_a_qwen3_omni_target_agrees_with_check(tmp_path: Path) -> None:
    """Regression: verify rebuilt check's prediction without the Omni flag and reported a false DSP605."""
    path = make_checkpoint(tmp_path / "generic", vocab=96, draft_vocab=96, target_vocab=T)
    omni = TargetVocab(T, "thinker_config.text_config.vocab_size", omni=True)
    analysis, verified, result = _both(path, omni)
    # vLLM 0.29+ refuses a generic draft for an Omni target (speculative.py @ v0.29.0 L159); before 0.25 no vLLM
    # registers Qwen3DSparkModel (registry.py @ v0.25.0 L597 first). SGLang is only refused before 0.5.16.
    refused = [v.version for v in analysis.verdicts if v.error is not None and v.error.code == "DSP309"
               and v.runtime == "vllm"]
    assert refused == [*vllm_before("0.25.0"), *vllm_minors("0.29.0")]
    observed = [e.version for e in verified.compatibility if e.error_code == "DSP309" and e.runtime == "vllm"]
    assert observed == refused
    assert result.check_disagreements == ()
    assert "DSP605" not in {f.code for f in verified.findings}


def test_a_speculators_layer_config_is_read_once(tmp_path: Path) -> None:
    """Regression: check read transformer_layer_config.markov_rank and the confidence head, verify read neither."""
    tensors = draft_tensors(vocab=96, draft_vocab=96, target_vocab=T, rank=4)
    tensors["confidence_head.proj.weight"] = np.zeros((1, 16), dtype=np.float32)
    tensors["confidence_head.proj.bias"] = np.zeros(1, dtype=np.float32)
    path = make_checkpoint(tmp_path / "spec", vocab=96, draft_vocab=96, target_vocab=T, tensors=tensors)
    config = json.loads((path / "config.json").read_text())
    del config["markov_rank"]
    config["transformer_layer_config"] = {"markov_rank": 4, "enable_confidence_head": True}
    (path / "config.json").write_text(json.dumps(config))
    analysis, verified, result = _both(path, TargetVocab(T, "test"))
    cfg = analysis.config
    assert cfg is not None and cfg.markov_rank == 4 and cfg.enable_confidence_head
    dims = dims_for(cfg, TargetVocab(T, "test"))
    assert (dims.markov_rank, dims.confidence_width) == (4, 16)
    assert result.skipped is None and result.check_disagreements == ()
    assert [(e.version, e.loads, e.error_code) for e in verified.compatibility] == \
        [(v.version, v.loads, v.error.code if v.error else None) for v in analysis.verdicts]
