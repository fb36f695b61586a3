"""Which plans are metadata-only (`fix --safe-only`): planned from real checkpoints on disk, then classified."""

from __future__ import annotations

from pathlib import Path

from conftest import draft_tensors, make_checkpoint

from dspark_ckpt.repair import plan_fix
from dspark_ckpt.repair.safety import SAFE_SHARD_MAX_BYTES, skip_message, unsafe_reasons

PADDED = dict(vocab=100, draft_vocab=100, target_vocab=96)
EQUAL_WITH_D2T = dict(vocab=96, draft_vocab=96, target_vocab=96, d2t=True)
PRUNED = dict(vocab=128, draft_vocab=32, target_vocab=128, t2d=True)
# the releases that register Qwen3DSparkModel (registry.py @ v0.25.0 L597): no repair loads it before them
VLLM = "vllm>=0.25.0"


def test_trim_rewrites_tensor_data(tmp_path: Path) -> None:
    # SGLang's DSpark needs markov_head_type and mask_token_id before anything else, then V = T as well.
    ready = {"markov_head_type": "vanilla", "mask_token_id": 0}
    plan = plan_fix(make_checkpoint(tmp_path / "d", **PADDED, config_extra=ready), target_vocab_size=96)
    assert plan.strategy == "trim"
    reasons = unsafe_reasons(plan)
    assert any("trims lm_head.weight to 96 rows" in r for r in reasons), reasons
    assert any("trims markov_head.markov_w2.weight" in r for r in reasons), reasons
    assert any("trims embed_tokens.weight to 96 rows" in r for r in reasons), reasons  # V = T too, for SGLang
    text = skip_message(plan, reasons)
    assert text.startswith("skipped (--safe-only): trim is not a metadata-only repair") and "Nothing was written" in text


def test_share_target_head_trims_markov_w2(tmp_path: Path) -> None:
    plan = plan_fix(make_checkpoint(tmp_path / "d", lm_head=False, **PADDED), target_vocab_size=96)
    assert plan.strategy == "share-target-head"
    assert [r for r in unsafe_reasons(plan) if "markov_w2" in r]


def test_share_target_head_without_markov_head_is_refused_not_passed(tmp_path: Path) -> None:
    # For vLLM only: SGLang would also need V = T, which trims embed_tokens (tensor data). The config-only repair of
    # the head would leave the Markov head unwritten (vLLM 0.25-0.28 and 0.30+ load it so, with random values:
    # DSP345), so fix refuses rather than pass a draft that proposes with a random bias.
    plan = plan_fix(make_checkpoint(tmp_path / "d", lm_head=False, markov=False, **PADDED), target_vocab_size=96,
                    runtimes=[VLLM])
    assert plan.strategy is None and plan.changes is None and plan.refusal is not None
    assert plan.refusal.code == "DSP501" and "DSP345" in plan.refusal.message
    assert plan.after and all("DSP345" in p.silent_codes for p in plan.after)


def test_new_d2t_shard_is_metadata_only_until_it_is_large(tmp_path: Path) -> None:
    plan = plan_fix(make_checkpoint(tmp_path / "d", **PRUNED), target_vocab_size=128, runtimes=[VLLM])
    assert plan.strategy == "rebuild-d2t" and plan.changes is not None and plan.changes.shards[0].new
    assert unsafe_reasons(plan) == []
    assert unsafe_reasons(plan, max_bytes=32 * 8 - 1) == [
        "writes a new shard dspark-fix-d2t.safetensors with 256 bytes of tensor data (over 255)"]


def test_replacing_an_existing_d2t_is_not_metadata_only(tmp_path: Path) -> None:
    plan = plan_fix(make_checkpoint(tmp_path / "d", **dict(PRUNED, d2t="zeros")), target_vocab_size=128,
                    runtimes=[VLLM])
    assert plan.strategy == "rebuild-d2t"
    assert unsafe_reasons(plan) == ["replaces the data of d2t in the existing shard model.safetensors"]


def test_dropping_a_tensor_is_safe_only_while_its_shard_is_small(tmp_path: Path) -> None:
    plan = plan_fix(make_checkpoint(tmp_path / "d", **EQUAL_WITH_D2T), target_vocab_size=96)
    assert plan.strategy == "drop-d2t" and plan.changes is not None
    kept = sum(t.nbytes for t in plan.changes.shards[0].tensors)
    assert 0 < kept <= SAFE_SHARD_MAX_BYTES and unsafe_reasons(plan) == []
    assert unsafe_reasons(plan, max_bytes=kept - 1) == [
        f"rewrites the shard model.safetensors with {kept} bytes of tensor data (over {kept - 1})"]


def test_dropping_a_whole_shard_rewrites_nothing(tmp_path: Path) -> None:
    tensors = draft_tensors(**EQUAL_WITH_D2T)  # one tensor per shard: d2t's is deleted
    folder = make_checkpoint(tmp_path / "d", shards=len(tensors), tensors=tensors, **EQUAL_WITH_D2T)
    plan = plan_fix(folder, target_vocab_size=96)
    assert plan.changes is not None and plan.changes.removed and not plan.changes.shards
    assert unsafe_reasons(plan, max_bytes=0) == []


def test_plans_that_write_nothing_have_nothing_unsafe(tmp_path: Path) -> None:
    clean = plan_fix(make_checkpoint(tmp_path / "c", vocab=96, draft_vocab=96, target_vocab=96),
                     target_vocab_size=96)
    refused = plan_fix(make_checkpoint(tmp_path / "r", **PADDED), target_vocab_size=96,
                       runtimes=["vllm==0.33.0"], strategy="identity-d2t")
    assert not clean.changes_anything and refused.refusal is not None
    assert unsafe_reasons(clean, max_bytes=0) == [] and unsafe_reasons(refused, max_bytes=0) == []
