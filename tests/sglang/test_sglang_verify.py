"""verify's SGLang model (torch: SGLang's loaders, the target head attached, the first step's ops run) agrees with
check's SGLang rows over a fixture matrix, and never probes a head SGLang does not use."""

from __future__ import annotations

import itertools
from pathlib import Path
from typing import Any

import pytest
from sglang_support import DSPARK_READY, EAGLE3_READY, T

torch = pytest.importorskip("torch")

from conftest import draft_tensors, make_checkpoint

from dspark_ckpt.check.analysis import inspect_checkpoint
from dspark_ckpt.runtimes.landing import quoted_whole
from dspark_ckpt.runtimes.selectors import parse_selectors
from dspark_ckpt.runtimes.table import SGLANG_VERSIONS
from dspark_ckpt.sources.local import local_source
from dspark_ckpt.sources.target import explicit_target
from dspark_ckpt.verify.checkpoint import verify_checkpoint
from dspark_ckpt.verify.torch_loader import VerifyOptions

SGLANG = parse_selectors(["sglang"])
KINDS = {"pruned": (96, 64), "equal": (96, 96), "padded": (128, 128), "narrow": (64, 64)}  # kind: (V, D)
SHIPS = list(itertools.product([True, False], repeat=3))  # lm_head, d2t, embed_tokens
FAMILIES: dict[str, tuple[str, dict[str, Any]]] = {
    "dspark": ("qwen3-dspark", DSPARK_READY),
    "eagle3": ("eagle3-llama", EAGLE3_READY),
    "eagle3-tied": ("eagle3-llama", {**EAGLE3_READY, "tie_word_embeddings": True}),
    "dflash": ("dflash", {}),
    "dflash2": ("dflash", {"architectures": ["DFlash2DraftModel"],
                           "dflash_config": {"selector_rank": 4, "selector_top_k": 8}}),
}


def _both(path: Path) -> tuple[Any, Any, Any]:
    checked = inspect_checkpoint(local_source(path), target=explicit_target(T), runtimes=SGLANG)
    verified, result = verify_checkpoint(local_source(path), target=explicit_target(T), runtimes=SGLANG,
                                         options=VerifyOptions(device="cpu", probes=0), device=torch.device("cpu"))
    return checked, verified, result


def _agree(checked: Any, verified: Any, where: str) -> None:
    assert [e.version for e in verified.compatibility] == [e.version for e in checked.compatibility], where
    for mine, theirs in zip(verified.compatibility, checked.compatibility, strict=True):
        at = f"{where} on sglang {mine.version}"
        assert (mine.loads, mine.error_code, mine.first_step_error_code) == \
            (theirs.loads, theirs.error_code, theirs.first_step_error_code), at
        # check quotes SGLang up to where it varies, or whole with where it is raised and the shapes (the record's
        # landing: landing.quoted_whole)
        assert (mine.error or "").startswith(theirs.error or "") or quoted_whole(mine.error or "", theirs.error or ""), at
        assert mine.first_step_error == theirs.first_step_error, at
        assert sorted(set(mine.silent_codes)) == sorted(set(theirs.silent_codes)), at


@pytest.mark.parametrize("name", sorted(FAMILIES))
def test_verify_agrees_with_check_on_every_release(tmp_path: Path, name: str) -> None:
    family, config = FAMILIES[name]
    cells = 0
    for (kind, (v, d)), (lm, d2t, embed) in itertools.product(KINDS.items(), SHIPS):
        path = make_checkpoint(tmp_path / f"{kind}-{lm:d}{d2t:d}{embed:d}", family=family, vocab=v, draft_vocab=d,
                               target_vocab=T, lm_head=lm, d2t=d2t, embed=embed, markov=family == "qwen3-dspark",
                               config_extra=config)
        checked, verified, result = _both(path)
        assert result.skipped is None and result.check_disagreements == (), (path.name, result.check_disagreements)
        _agree(checked, verified, path.name)
        assert not any(f.code == "DSP605" for f in verified.findings)
        cells += len(verified.compatibility)
    assert cells == len(KINDS) * len(SHIPS) * len(SGLANG_VERSIONS)


@pytest.mark.parametrize("tensor", ["markov_head.markov_w1.weight", "markov_head.markov_w2.weight"])
def test_a_wrong_markov_row_count_is_default_weight_loaders_assert(tmp_path: Path, tensor: str) -> None:
    tensors = draft_tensors(vocab=T, draft_vocab=T, target_vocab=T)
    tensors[tensor] = tensors[tensor][:-1]
    path = make_checkpoint(tmp_path / "short", vocab=T, draft_vocab=T, target_vocab=T, tensors=tensors,
                           config_extra=DSPARK_READY)
    checked, verified, _ = _both(path)
    _agree(checked, verified, tensor)
    seen = verified.compatibility[-1]
    assert seen.error == f"Attempted to load weight (torch.Size([{T - 1}, 4])) into parameter (torch.Size([{T}, 4]))"


def test_a_short_eagle3_head_is_the_row_assert_with_its_message(tmp_path: Path) -> None:
    tensors = draft_tensors(vocab=T, draft_vocab=64, target_vocab=T, d2t=True, markov=False)
    tensors["lm_head.weight"] = tensors["lm_head.weight"][:-1]
    path = make_checkpoint(tmp_path / "short", family="eagle3-llama", vocab=T, draft_vocab=64, target_vocab=T,
                           tensors=tensors, config_extra=EAGLE3_READY)
    checked, verified, _ = _both(path)
    _agree(checked, verified, "lm_head")
    assert verified.compatibility[-1].error == ("self.org_vocab_size=64 self.use_presharded_weights=False "
                                                "loaded_weight.shape[output_dim]=63")


def test_the_probe_never_uses_a_dspark_head_sglang_ignores(tmp_path: Path) -> None:
    """A padded DSpark draft's own lm_head is skipped by SGLang: with only SGLang selected nothing is probed; with
    vLLM too, vLLM's head is the one probed."""
    path = make_checkpoint(tmp_path / "padded", vocab=128, draft_vocab=128, target_vocab=T, config_extra=DSPARK_READY)
    options = VerifyOptions(device="cpu", probes=64)
    _, sglang_only = verify_checkpoint(local_source(path), target=explicit_target(T), runtimes=SGLANG,
                                       options=options, device=torch.device("cpu"))
    assert not sglang_only.probe.ran and "own lm_head" in (sglang_only.probe.reason or "")
    _, both = verify_checkpoint(local_source(path), target=explicit_target(T),
                                runtimes=parse_selectors(["sglang", "vllm==0.33.0"]), options=options,
                                device=torch.device("cpu"))
    assert both.probe.runtime == "vllm==0.33.0"
