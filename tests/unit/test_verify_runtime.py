"""The torch load emulation: the parameter set per version and the exact error text each runtime raises."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from conftest import draft_tensors, make_checkpoint
from listed import vllm_before, vllm_minors

from dspark_ckpt.check.analysis import load
from dspark_ckpt.runtimes import messages as c
from dspark_ckpt.runtimes.selectors import parse_selectors
from dspark_ckpt.sources.local import local_source
from dspark_ckpt.sources.target import explicit_target
from dspark_ckpt.verify import runtime_load
from dspark_ckpt.verify.checkpoint import verify_checkpoint
from dspark_ckpt.verify.torch_loader import VerifyOptions, load_order

T = 96
NOPARAM_Q = c.E_NOPARAM.format(cls="Qwen3DSparkForCausalLM")


def verify(path: Path, runtime: str = "vllm", **options: Any) -> tuple[Any, Any]:
    options.setdefault("probes", 0)
    return verify_checkpoint(local_source(path), target=explicit_target(T), runtimes=parse_selectors([runtime]),
                             options=VerifyOptions(device="cpu", **options), device=torch.device("cpu"))


def states(result: Any) -> dict[str, Any]:
    return {s.version: s for s in result.runtimes}


# vllm-contracts.md section 1: Qwen3 DSpark creates draft_id_to_target_id for D != T up to 0.29 (from its
# registration: qwen3_dspark.py L120-127 @ v0.25.0), D < T from 0.30. No release before 0.25 registers it
# (registry.py @ v0.25.0 L597 first): nothing is built there.
@pytest.mark.parametrize(("d", "v", "param_old", "param_new"), [(64, 96, True, True), (96, 96, False, False),
                                                                 (128, 128, True, False)])
def test_d2t_parameter_exists_exactly_when_the_version_predicate_holds(
        tmp_path: Path, d: int, v: int, param_old: bool, param_new: bool) -> None:
    _, result = verify(make_checkpoint(tmp_path / "x", vocab=v, draft_vocab=d, target_vocab=T, d2t=False))
    for version, state in states(result).items():
        if version in vllm_before("0.25.0"):
            assert (state.loads, state.error_code, state.d2t_param) == (False, "DSP309", False), version
            continue
        if version == "0.29.0" and d != T:
            assert not state.loads  # 0.29 requires the d2t it just created
            continue
        assert state.d2t_param == (param_new if version in vllm_minors("0.30.0") else param_old), version


def test_padded_draft_with_d2t_fails_on_030_with_the_noparam_text(tmp_path: Path) -> None:
    report, result = verify(make_checkpoint(tmp_path / "x", vocab=128, draft_vocab=128, target_vocab=T, d2t=True))
    by = states(result)
    assert by["0.29.0"].loads and by["0.28.0"].loads and by["0.29.0"].d2t_loaded
    for version in ("0.30.0", "0.31.0", "0.32.0", "0.33.0"):
        assert by[version].error_code == "DSP303"
        assert by[version].error.startswith(NOPARAM_Q + " {")
        available = by[version].error.split(" are: ", 1)[1]
        assert "'lm_head.weight'" in available and "draft_id_to_target_id" not in available


@pytest.mark.parametrize(("what", "expected"), [
    (dict(vocab=128, draft_vocab=64, lm_head=False, embed=False, d2t=False), ("DSP304", c.E_EMBED)),
    (dict(vocab=96, draft_vocab=64, lm_head=False, d2t=True), ("DSP301", c.E_LM_HEAD)),
    (dict(vocab=96, draft_vocab=64, lm_head=True, d2t=False), ("DSP302", c.E_D2T)),
])
def test_029_plus_vocab_errors_in_upstream_order(tmp_path: Path, what: dict[str, Any],
                                                 expected: tuple[str, str]) -> None:
    _, result = verify(make_checkpoint(tmp_path / "x", target_vocab=T, **what), runtime="vllm==0.31.0")
    (state,) = result.runtimes
    assert (state.error_code, state.error) == expected


def _write(tmp_path: Path, tensors: dict[str, np.ndarray], **config: Any) -> Path:
    return make_checkpoint(tmp_path / "x", tensors=tensors, target_vocab=T, **config)


def test_lm_head_row_count_is_a_bare_assertion(tmp_path: Path) -> None:
    tensors = draft_tensors(vocab=96, draft_vocab=64, target_vocab=T, d2t=True)
    tensors["lm_head.weight"] = tensors["lm_head.weight"][:63]
    _, result = verify(_write(tmp_path, tensors, vocab=96, draft_vocab=64), runtime="vllm==0.33.0")
    assert (result.runtimes[0].error_code, result.runtimes[0].error) == ("DSP320", "AssertionError")


def test_d2t_length_mismatch_names_both_sizes(tmp_path: Path) -> None:
    tensors = draft_tensors(vocab=96, draft_vocab=64, target_vocab=T, d2t=True)
    tensors["d2t"] = np.concatenate([tensors["d2t"], tensors["d2t"][-1:]])
    _, result = verify(_write(tmp_path, tensors, vocab=96, draft_vocab=64), runtime="vllm==0.30.0")
    assert result.runtimes[0].error == c.E_D2T_LEN.format(n=65, d=64)


def test_hidden_size_mismatch_is_torch_copy_error(tmp_path: Path) -> None:
    tensors = draft_tensors(vocab=96, draft_vocab=64, target_vocab=T, d2t=True)
    tensors["lm_head.weight"] = tensors["lm_head.weight"][:, :12].copy()
    _, result = verify(_write(tmp_path, tensors, vocab=96, draft_vocab=64), runtime="vllm==0.30.0")
    assert result.runtimes[0].error == c.E_HIDDEN.format(h=16, got=12)


def test_model_prefixed_backbone_is_rejected(tmp_path: Path) -> None:
    tensors = draft_tensors(vocab=96, draft_vocab=96, target_vocab=T)
    tensors["model.norm.weight"] = tensors.pop("norm.weight")
    _, result = verify(_write(tmp_path, tensors, vocab=96, draft_vocab=96), runtime="vllm==0.30.0")
    assert result.runtimes[0].error_code == "DSP313"
    assert result.runtimes[0].error.startswith(c.E_MODEL_PREFIX)


def test_dflash_mask_hidden_and_int32_d2t(tmp_path: Path) -> None:
    tensors = draft_tensors(vocab=96, draft_vocab=64, target_vocab=T, d2t=True, markov=False)  # no Markov head: DSP350
    tensors["mask_hidden"] = np.zeros(16, dtype=np.float32)
    path = make_checkpoint(tmp_path / "a", family="dflash", tensors=tensors, vocab=96, draft_vocab=64)
    _, result = verify(path, runtime="vllm==0.33.0")
    assert result.runtimes[0].error == c.E_MASK_HIDDEN
    tensors.pop("mask_hidden")
    tensors["d2t"] = tensors["d2t"].astype(np.int32)
    _, result = verify(make_checkpoint(tmp_path / "b", family="dflash", tensors=tensors, vocab=96, draft_vocab=64),
                       runtime="vllm==0.33.0")
    assert result.runtimes[0].loads and result.runtimes[0].d2t_loaded
    assert result.mappings[0].source == "d2t" and not result.mappings[0].failures


def test_first_failing_weight_in_load_order_wins_and_check_names_the_same(tmp_path: Path) -> None:
    tensors = draft_tensors(vocab=96, draft_vocab=64, target_vocab=T, d2t=True)
    tensors["lm_head.weight"] = tensors["lm_head.weight"][:63]
    tensors["d2t"] = tensors["d2t"][:63]
    path = _write(tmp_path, tensors, vocab=96, draft_vocab=64)
    assert load_order(load(local_source(path)))[0] == "d2t"  # safetensors keys are sorted; d2t loads first
    report, result = verify(path, runtime="vllm==0.30.0")
    assert result.runtimes[0].error_code == "DSP324"
    # check meets d2t first too (the record judges lm_head's rows after it, in load order): no disagreement
    assert [f.code for f in report.findings if f.code == "DSP605"] == []


def test_a_torch_run_that_sees_another_parameter_than_check_is_reported(tmp_path: Path,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """DSP605 can fire: the torch loader's lm_head made V rows high, where the release's record (check) builds D."""
    real = runtime_load.param_specs
    monkeypatch.setattr(runtime_load, "param_specs", lambda k, dims: real(replace(k, lm_head_rows="V"), dims))
    path = make_checkpoint(tmp_path / "x", vocab=96, draft_vocab=64, target_vocab=T, d2t=True)
    report, result = verify(path, runtime="vllm==0.30.0")
    assert (result.runtimes[0].loads, result.runtimes[0].error_code) == (False, "DSP320")
    assert [f.code for f in report.findings if f.code == "DSP605"] == ["DSP605"]
    monkeypatch.undo()
    report, result = verify(path, runtime="vllm==0.30.0")
    assert result.runtimes[0].loads and [f.code for f in report.findings if f.code == "DSP605"] == []


def test_only_vocab_tensors_are_read(tmp_path: Path) -> None:
    _, result = verify(make_checkpoint(tmp_path / "x", vocab=96, draft_vocab=64, target_vocab=T, d2t=True, t2d=True))
    read = {t.name for t in result.tensors_read}
    assert "layers.0.mlp.down_proj.weight" not in read
    assert {"lm_head.weight", "d2t", "t2d", "embed_tokens.weight", "norm.weight"} <= read
