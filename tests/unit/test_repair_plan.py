"""Planning: which repair is chosen for which draft and runtimes, refusals, and simulation matching the real result."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from conftest import make_checkpoint
from listed import vllm_before

from dspark_ckpt.check.analysis import inspect_checkpoint, load
from dspark_ckpt.model.target import TargetVocab
from dspark_ckpt.repair import apply_fix, fix_runtimes, plan_fix
from dspark_ckpt.repair.actions import DropTensor, PutTensor, SetConfig, TrimRows
from dspark_ckpt.repair.files import dump_like
from dspark_ckpt.runtimes.selectors import RuntimeVersion
from dspark_ckpt.runtimes.versions import SGLANG_RELEASES
from dspark_ckpt.sources.local import LocalFolder

# What SGLang's DSpark parser requires of any draft (markov_head_type, mask_token_id): without it every SGLang release
# refuses the config and no repair can help, which would leave SGLang out of these plans.
SGLANG_READY = {"config_extra": {"markov_head_type": "vanilla", "mask_token_id": 0}}
PADDED = dict(vocab=100, draft_vocab=100, target_vocab=96)
PRUNED = dict(vocab=128, draft_vocab=32, target_vocab=128, **SGLANG_READY)
INKLING = dict(vocab=128, draft_vocab=128, target_vocab=96, **SGLANG_READY)  # V = D > T, as Inkling's 201024 vs 200058
WIDE_INPUT = dict(vocab=128, draft_vocab=96, target_vocab=96, **SGLANG_READY)  # D = T already, only the input wider
SGLANG_REGISTERED = [f"sglang==0.5.{n}" for n in range(16, 24)]  # Qwen3DSparkModel is registered from 0.5.16
# vLLM registers Qwen3DSparkModel from 0.25.0 (registry.py @ v0.25.0 L597): no repair loads it on an older release,
# so `--for vllm` (every listed release) is refused for any of these drafts; the plans name the releases it can load on
VLLM = "vllm>=0.25.0"
VLLM_UNREGISTERED = tuple(f"vllm=={v}" for v in vllm_before("0.25.0"))
OUTPUT_TRIMMED = {"lm_head.weight", "markov_head.markov_w2.weight"}
INPUT_TRIMMED = {"embed_tokens.weight", "markov_head.markov_w1.weight"}


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
    ({**PRUNED, "t2d": True}, 128, [VLLM], "rebuild-d2t"),
    ({**PRUNED, "t2d": True, "d2t": "zeros"}, 128, [VLLM], "rebuild-d2t"),
    (INKLING, 96, None, "trim"),
    (INKLING, 96, ["sglang"], "trim"),
    ({**INKLING, "lm_head": False}, 96, None, "share-target-head"),
    (WIDE_INPUT, 96, None, "trim-input"),
    (WIDE_INPUT, 96, ["sglang"], "trim-input"),
])
def test_auto_choice(tmp_path: Path, build: dict[str, Any], target: int, runtimes: list[str] | None,
                     expected: str) -> None:
    p = plan(tmp_path, target, runtimes, **build)
    assert p.refusal is None and p.strategy == expected and p.actions
    # SGLang drafts DSpark with the target's head and embedding: the draft's own copies are ignored (DSP307).
    assert all(o.loads and set(o.silent_codes) <= ({"DSP307"} if o.runtime.startswith("sglang") else set())
               for o in p.after)


def test_trim_actions_and_byte_ranges(tmp_path: Path) -> None:
    p = plan(tmp_path, 96, [VLLM], **PADDED)
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
    # all-zero d2t, no t2d; V = T (a V < T DSpark draft fails at its first step: the previous token's markov_w1 row)
    p = plan(tmp_path, 128, [VLLM], vocab=128, draft_vocab=96, target_vocab=96, d2t=True)
    assert p.refusal is not None and p.refusal.code == "DSP501" and all(o.loads for o in p.before)
    folder = tmp_path / "d"
    assert p.refusal.message == ("cannot be fully repaired: DSP401 would remain (see "
                                 f"`dspark-ckpt check {folder} --target-vocab-size 128 --runtime '{VLLM}'`)")
    assert "`dspark-ckpt explain DSP401`" in (p.refusal.hint or "")


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
    (PADDED, 96, [VLLM], None),
    ({**PADDED, "lm_head": False, "shards": 2}, 96, None, None),
    (PADDED, 96, ["vllm==0.27.0", "vllm==0.29.0"], "identity-d2t"),
    (dict(vocab=96, draft_vocab=96, target_vocab=96, d2t=True, shards=2), 96, None, None),
    ({**PRUNED, "t2d": True}, 128, [VLLM], None),
    ({**INKLING, "shards": 2}, 96, None, None),
    (WIDE_INPUT, 96, None, None),
    (INKLING, 96, ["sglang"], "trim"),
])
def test_simulation_predicts_what_check_says_after_apply(tmp_path: Path, build: dict[str, Any], target: int,
                                                         runtimes: list[str] | None, strategy: str | None) -> None:
    p = plan(tmp_path, target, runtimes, strategy, **build)
    result = apply_fix(p, out=tmp_path / "out")
    seen = inspect_checkpoint(LocalFolder(tmp_path / "out"), target=TargetVocab(target, "t"),
                              runtimes=fix_runtimes(runtimes))
    # fix counts a first-draft-step failure as not loading; releases best effort left out are not in p.after.
    actual = [(str(RuntimeVersion(c.runtime, c.version)), c.loads and not c.first_step_error,
               c.error_code or c.first_step_error_code, c.silent_codes) for c in seen.compatibility
              if str(RuntimeVersion(c.runtime, c.version)) in p.runtimes]
    assert actual == [(o.runtime, o.loads, o.error_code, o.silent_codes) for o in p.after]
    assert result.errors == []


def test_dump_like_keeps_indentation_and_final_newline() -> None:
    assert dump_like({"a": 1}, '{\n    "a": 0\n}\n') == '{\n    "a": 1\n}\n'
    assert dump_like({"a": 1}, '{"a": 0}') == '{"a": 1}'
    assert dump_like({"a": 1}, None) == '{\n  "a": 1\n}\n'


def _trimmed(p: Any) -> set[str]:
    return {x.tensor for x in p.actions if isinstance(x, TrimRows)}


def _settings(p: Any) -> dict[str, Any]:
    return {x.key: (x.old, x.new, x.reason) for x in p.actions if isinstance(x, SetConfig)}


def test_fix_for_all_means_every_runtime_check_evaluates() -> None:
    every = [str(r) for r in fix_runtimes(None)]
    assert every == [str(r) for r in fix_runtimes(["all"])] and every[-1] == "sglang==0.5.23"
    vllm = [str(r) for r in fix_runtimes(["vllm"])]
    assert every == vllm + [str(r) for r in fix_runtimes(["sglang"])] and len(every) == len(vllm) + len(SGLANG_RELEASES)


def test_trim_takes_the_input_side_along_only_where_a_chosen_runtime_needs_it(tmp_path: Path) -> None:
    folder = make_checkpoint(tmp_path / "d", **INKLING)
    for_all = plan_fix(folder, target_vocab_size=96)
    assert for_all.strategy == "trim" and _trimmed(for_all) == OUTPUT_TRIMMED | INPUT_TRIMMED
    assert {x.rows for x in for_all.actions if isinstance(x, TrimRows)} == {96}
    # SGLang 0.5.16+ loads it and fails at the first draft step (a V-wide Markov bias on the T-wide target head).
    assert _settings(for_all) == {"draft_vocab_size": (128, 96, "DSP302"), "vocab_size": (128, 96, "DSP340")}
    assert all(o.loads for o in for_all.after) and [o.runtime for o in for_all.after][-8:] == SGLANG_REGISTERED
    sglang_unregistered = SGLANG_RELEASES[:SGLANG_RELEASES.index("0.5.16")]  # DSpark: models/dspark.py from 0.5.16
    assert for_all.not_repaired_for == VLLM_UNREGISTERED + tuple(f"sglang=={v}" for v in sglang_unregistered)
    for_vllm = plan_fix(folder, target_vocab_size=96, runtimes=[VLLM])
    assert for_vllm.strategy == "trim" and _trimmed(for_vllm) == OUTPUT_TRIMMED
    assert set(_settings(for_vllm)) == {"draft_vocab_size"}
    shard = for_all.changes.shards[0]
    embed = next(t for t in shard.tensors if t.name == "embed_tokens.weight")
    assert embed.shape == (96, 16) and embed.nbytes == 96 * 16 * 4 and embed.data is None  # a streamed prefix


def test_forced_trim_takes_the_input_side_along_for_sglang_only(tmp_path: Path) -> None:
    folder = make_checkpoint(tmp_path / "d", **INKLING)
    for runtimes, expected in ((["vllm==0.29.0"], OUTPUT_TRIMMED), (["sglang"], OUTPUT_TRIMMED | INPUT_TRIMMED)):
        p = plan_fix(folder, target_vocab_size=96, runtimes=runtimes, strategy="trim")
        assert p.refusal is None and p.strategy == "trim" and _trimmed(p) == expected, runtimes


def test_trim_input_alone_fixes_a_draft_whose_only_excess_is_the_input_side(tmp_path: Path) -> None:
    folder = make_checkpoint(tmp_path / "d", **WIDE_INPUT)
    assert not plan_fix(folder, target_vocab_size=96, runtimes=[VLLM]).actions  # vLLM loads it as it is
    p = plan_fix(folder, target_vocab_size=96)
    # SGLang 0.5.16+ sizes markov_w2 by V (128), not D (96): default_weight_loader's assert.
    assert [(o.runtime, o.error_code) for o in p.before if not o.loads] == [(r, "DSP323") for r in SGLANG_REGISTERED]
    assert p.strategy == "trim-input" and _trimmed(p) == INPUT_TRIMMED
    assert _settings(p) == {"vocab_size": (128, 96, "DSP323")}


def test_forced_trim_input_that_breaks_sglang_is_refused(tmp_path: Path) -> None:
    p = plan(tmp_path, 96, ["sglang"], "trim-input", **INKLING)  # V := T but markov_w2 keeps its D = 128 rows
    assert p.refusal is not None and p.refusal.code == "DSP503" and not p.actions
    assert p.refusal.message.startswith("trim-input would break sglang==0.5.16 (DSP323)")


def test_a_mask_token_above_t_keeps_the_input_side_and_sglang_is_named(tmp_path: Path) -> None:
    """SGLang refuses a mask id >= T itself (DSP343), whatever fix trims: --for all leaves it out, --for sglang
    refuses, and the input side is never trimmed under the mask token."""
    high = {**INKLING, "config_extra": {"markov_head_type": "vanilla", "mask_token_id": 100}}
    p = plan(tmp_path, 96, None, **high)
    assert p.refusal is None and _trimmed(p) == OUTPUT_TRIMMED and "sglang==0.5.23" in p.not_repaired_for
    assert "DSP343" in p.warnings[0].message
    named = plan_fix(tmp_path / "d", target_vocab_size=96, runtimes=["vllm==0.29.0", "sglang==0.5.23"])
    assert named.refusal is not None and named.refusal.code == "DSP502" and not named.actions
    assert "sglang==0.5.23" in named.refusal.message and "DSP343" in named.refusal.message
    forced = plan_fix(tmp_path / "d", target_vocab_size=96, runtimes=["vllm==0.29.0"], strategy="trim-input")
    assert forced.refusal is not None and forced.refusal.code == "DSP503"
    assert "trim-input does not apply: mask_token_id 100 >= T" in forced.refusal.message
    below = plan(tmp_path / "ok", 96, None, **{**INKLING, "config_extra": {"markov_head_type": "vanilla",
                                                                           "mask_token_id": 95}})
    assert below.refusal is None and _trimmed(below) == OUTPUT_TRIMMED | INPUT_TRIMMED


def test_trim_input_needs_a_top_level_vocab_size(tmp_path: Path) -> None:
    folder = make_checkpoint(tmp_path / "d", **WIDE_INPUT)
    config = json.loads((folder / "config.json").read_text())
    config["transformer_layer_config"] = {"vocab_size": config.pop("vocab_size")}  # speculators layout
    (folder / "config.json").write_text(json.dumps(config))
    p = plan_fix(folder, target_vocab_size=96, strategy="trim-input", runtimes=["sglang"])
    assert p.refusal is not None and "no top-level vocab_size" in p.refusal.message


def test_pruned_draft_for_all_is_repaired_for_vllm_and_names_sglang(tmp_path: Path) -> None:
    """--for all is best effort: SGLang's Qwen3 DSpark sizes markov_w2 by V, so no repair loads there (DSP505)."""
    p = plan(tmp_path, 128, None, **PRUNED, t2d=True)
    every = tuple(str(r) for r in fix_runtimes(["sglang"]))
    # the releases older than Qwen3DSparkModel first, of both runtimes alike (issue 41), then SGLang's best effort
    sglang_older = every[:every.index("sglang==0.5.16")]
    assert p.refusal is None and p.strategy == "rebuild-d2t"
    assert set(p.not_repaired_for) == set(VLLM_UNREGISTERED + every)
    assert p.not_repaired_for[:len(VLLM_UNREGISTERED) + len(sglang_older)] == VLLM_UNREGISTERED + sglang_older
    assert "sglang" not in p.runtimes and all(o.loads for o in p.after)
    warning, older = p.warnings
    assert warning.code == older.code == "DSP505" and warning.severity == older.severity == "warning"
    assert "not repaired for sglang 0.5.16-0.5.23, which" in warning.message
    assert "load. SGLang's Qwen3 DSpark drafts with the target's lm_head" in warning.message  # one reason left
    assert f"dspark-ckpt check {tmp_path / 'd'} --target-vocab-size 128 --runtime 'sglang>=0.5.16'" in (warning.hint or "")
    old = vllm_before("0.25.0")  # no Qwen3DSparkModel to load (registry.py @ v0.25.0 L597): left out, and said so
    assert older.message == (f"not repaired for vllm {old[0]}-{old[-1]}, sglang 0.4.2-0.5.15, older than the draft's architecture "
                             "Qwen3DSparkModel: no release before its registration can load it")


def test_pruned_draft_for_sglang_named_explicitly_is_refused(tmp_path: Path) -> None:
    folder = make_checkpoint(tmp_path / "d", **PRUNED, t2d=True)
    for runtimes in (["sglang"], [VLLM, "sglang"]):
        p = plan_fix(folder, target_vocab_size=128, runtimes=runtimes)
        assert p.refusal is not None and p.refusal.code == "DSP502" and not p.actions and not p.warnings
        # SGLang before 0.5.16 is older than the architecture: left out, as check's gate leaves it (issue 41)
        assert p.refusal.message.startswith("no repair makes this draft load on sglang 0.5.16-0.5.23: SGLang's Qwen3 "
                                            "DSpark drafts with the target's lm_head")
        assert p.refusal.hint == (f"`dspark-ckpt fix {folder} --target-vocab-size 128 --for '{VLLM}'` repairs it "
                                  f"for {VLLM}")
