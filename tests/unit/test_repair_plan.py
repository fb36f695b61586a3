"""Planning: which repair is chosen for which draft and runtimes, refusals, and simulation matching the real result."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from conftest import make_checkpoint

from dspark_ckpt.inspect import TargetVocab, inspect_checkpoint, load
from dspark_ckpt.repair import apply_fix, fix_runtimes, plan_fix
from dspark_ckpt.repair.actions import DropTensor, PutTensor, SetConfig, TrimRows
from dspark_ckpt.repair.files import dump_like
from dspark_ckpt.sources.local import LocalFolder

PADDED = dict(vocab=100, draft_vocab=100, target_vocab=96)
PRUNED = dict(vocab=128, draft_vocab=32, target_vocab=128)


def plan(tmp_path: Path, target: int, runtimes: list[str] | None = None, strategy: str | None = None,
         **build: Any) -> Any:
    folder = make_checkpoint(tmp_path / "d", **build)
    return plan_fix(folder, target_vocab_size=target, runtimes=runtimes, strategy=strategy)


@pytest.mark.parametrize(("build", "target", "runtimes", "expected"), [
    (PADDED, 96, None, "trim"),
    (PADDED, 96, ["vllm==0.29.0"], "trim"),
    (PADDED, 96, ["vllm==0.33.0"], "trim"),  # loads already, but trimming removes the illegal ids
    ({**PADDED, "lm_head": False}, 96, None, "share-target-head"),
    ({**PADDED, "d2t": True}, 96, ["vllm==0.30.0"], "trim"),
    (dict(vocab=96, draft_vocab=96, target_vocab=96, d2t=True), 96, None, "drop-d2t"),
    ({**PRUNED, "t2d": True}, 128, None, "rebuild-d2t"),
    ({**PRUNED, "t2d": True, "d2t": "zeros"}, 128, None, "rebuild-d2t"),
])
def test_auto_choice(tmp_path: Path, build: dict[str, Any], target: int, runtimes: list[str] | None,
                     expected: str) -> None:
    p = plan(tmp_path, target, runtimes, **build)
    assert p.refusal is None and p.strategy == expected and p.actions
    assert all(o.loads and not o.silent_codes for o in p.after)


def test_trim_actions_and_byte_ranges(tmp_path: Path) -> None:
    p = plan(tmp_path, 96, **PADDED)
    trims = {x.tensor: x for x in p.actions if isinstance(x, TrimRows)}
    assert set(trims) == {"lm_head.weight", "markov_head.markov_w2.weight"} and {x.rows for x in trims.values()} == {96}
    assert [x for x in p.actions if isinstance(x, SetConfig)][0].new == 96
    shard = p.changes.shards[0]
    head = next(t for t in shard.tensors if t.name == "lm_head.weight")
    assert head.shape == (96, 16) and head.nbytes == 96 * 16 * 4 and head.data is None
    assert [t.file for t in p.changes.texts] == ["config.json"]  # a single-file draft gets no index


def test_stray_d2t_is_dropped_by_trim_with_its_own_reason(tmp_path: Path) -> None:
    p = plan(tmp_path, 96, ["vllm==0.30.0"], **PADDED, d2t=True)
    drops = [x for x in p.actions if isinstance(x, DropTensor)]
    assert [(x.tensor, x.reason) for x in drops] == [("d2t", "DSP303")]


def test_forced_drop_d2t_for_030_but_refused_for_029(tmp_path: Path) -> None:
    folder = make_checkpoint(tmp_path / "d", **PADDED, d2t=True)
    ok = plan_fix(folder, target_vocab_size=96, runtimes=["vllm==0.30.0"], strategy="drop-d2t")
    assert ok.strategy == "drop-d2t" and [type(x) for x in ok.actions] == [DropTensor]
    bad = plan_fix(folder, target_vocab_size=96, runtimes=["vllm==0.29.0"], strategy="drop-d2t")
    assert bad.refusal is not None and bad.refusal.code == "DSP503" and "vllm==0.29.0 (DSP302)" in bad.refusal.message


def test_forced_strategy_that_no_longer_applies_is_a_no_op_when_the_draft_loads(tmp_path: Path) -> None:
    folder = make_checkpoint(tmp_path / "d", **PADDED, d2t=True)
    p = plan_fix(folder, target_vocab_size=96, runtimes=["vllm==0.29.0"], strategy="identity-d2t")
    assert not p.actions and p.refusal is None and "already ships a d2t" in (p.note or "")


def test_identity_d2t_adds_a_shard_and_creates_the_index(tmp_path: Path) -> None:
    p = plan(tmp_path, 96, ["vllm==0.28.0"], "identity-d2t", **PADDED)
    (put,) = p.actions
    assert isinstance(put, PutTensor) and put.data == bytes(8 * 100) and put.file == "dspark-fix-d2t.safetensors"
    assert p.changes.shards[0].new
    (index,) = p.changes.texts
    doc = json.loads(index.new)
    assert index.old is None and doc["weight_map"]["d2t"] == put.file
    assert doc["weight_map"]["lm_head.weight"] == "model.safetensors"
    existing = sum(t.nbytes for t in load(LocalFolder(tmp_path / "d")).tensors.values())
    assert doc["metadata"]["total_size"] == existing + 8 * 100


def test_rebuild_without_valid_t2d_is_unrepairable(tmp_path: Path) -> None:
    p = plan(tmp_path, 128, None, **PRUNED)  # no d2t and no t2d
    assert p.refusal is not None and p.refusal.code == "DSP501" and not p.actions


def test_loading_draft_with_an_unrepairable_silent_error_names_it(tmp_path: Path) -> None:
    p = plan(tmp_path, 128, None, vocab=96, draft_vocab=96, target_vocab=96, d2t=True)  # all-zero d2t, no t2d
    assert p.refusal is not None and p.refusal.code == "DSP501" and all(o.loads for o in p.before)
    assert p.refusal.message == "cannot be fully repaired: DSP401 would remain (see `dspark-ckpt check`)"


def test_unrepairable_pruned_without_lm_head(tmp_path: Path) -> None:
    p = plan(tmp_path, 128, None, **PRUNED, lm_head=False, t2d=True)
    assert p.refusal is not None and p.refusal.code == "DSP501" and "lm_head" in p.refusal.message


def test_structural_errors_block_planning(tmp_path: Path) -> None:
    folder = make_checkpoint(tmp_path / "d", **PADDED)
    with open(folder / "model.safetensors", "ab") as f:
        f.write(b"trailing")
    p = plan_fix(folder, target_vocab_size=96)
    assert p.refusal is not None and p.refusal.code == "DSP501" and "DSP015" in p.refusal.message


@pytest.mark.parametrize(("build", "target", "runtimes", "strategy"), [
    (PADDED, 96, None, None),
    ({**PADDED, "lm_head": False, "shards": 2}, 96, None, None),
    (PADDED, 96, ["vllm==0.27.0", "vllm==0.29.0"], "identity-d2t"),
    (dict(vocab=96, draft_vocab=96, target_vocab=96, d2t=True, shards=2), 96, None, None),
    ({**PRUNED, "t2d": True}, 128, None, None),
])
def test_simulation_predicts_what_check_says_after_apply(tmp_path: Path, build: dict[str, Any], target: int,
                                                         runtimes: list[str] | None, strategy: str | None) -> None:
    p = plan(tmp_path, target, runtimes, strategy, **build)
    result = apply_fix(p, out=tmp_path / "out")
    seen = inspect_checkpoint(LocalFolder(tmp_path / "out"), target=TargetVocab(target, "t"),
                              runtimes=fix_runtimes(runtimes))
    actual = [(f"{c.runtime}=={c.version}", c.loads, c.error_code, c.silent_codes) for c in seen.compatibility]
    assert actual == [(o.runtime, o.loads, o.error_code, o.silent_codes) for o in p.after]
    assert result.errors == []


def test_dump_like_keeps_indentation_and_final_newline() -> None:
    assert dump_like({"a": 1}, '{\n    "a": 0\n}\n') == '{\n    "a": 1\n}\n'
    assert dump_like({"a": 1}, '{"a": 0}') == '{"a": 1}'
    assert dump_like({"a": 1}, None) == '{\n  "a": 1\n}\n'
