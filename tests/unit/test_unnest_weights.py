"""unnest-weights, close to the modules: the one derivation of the nested `.weight` names (check's facts, DSP331 and
the repair share it), the plan's actions and the shard it writes (each renamed tensor the same source byte range),
its effect on the facts each release is judged on, and why it is metadata-only."""

from __future__ import annotations

import sys
from dataclasses import replace
from pathlib import Path

from dspark_ckpt.check.analysis import analyze
from dspark_ckpt.model.families import Family
from dspark_ckpt.model.target import TargetVocab
from dspark_ckpt.repair import plan_fix
from dspark_ckpt.repair.actions import RenameTensor, action_json, describe
from dspark_ckpt.repair.read import read_situation
from dspark_ckpt.repair.safety import unsafe_reasons
from dspark_ckpt.repair.simulate import after_facts, simulate
from dspark_ckpt.repair.strategies import BY_NAME
from dspark_ckpt.runtimes.compatibility import evaluate_contract
from dspark_ckpt.runtimes.contracts import nested_weights
from dspark_ckpt.runtimes.records import DraftFacts
from dspark_ckpt.runtimes.selectors import RuntimeVersion, parse_selectors
from dspark_ckpt.runtimes.table import contract_for
from dspark_ckpt.runtimes.vllm_rows import BARE_PARAMETERS
from dspark_ckpt.sources.local import LocalFolder

sys.path.insert(0, str(Path(__file__).parents[1] / "producers"))
from producers import materialise

T = 96
LAYOUT = "dflash-0.1.0-dflash2"
PRED, SUCC = BARE_PARAMETERS
VLLM_0_34 = RuntimeVersion("vllm", "0.34.0")


def facts_of(folder: Path) -> DraftFacts:
    facts = analyze(LocalFolder(folder), target=TargetVocab(T, "t"), runtimes=[VLLM_0_34]).facts
    assert facts is not None
    return facts


def test_nested_weights_are_the_weight_names_of_bare_parameters_only() -> None:
    names = [f"{SUCC}.weight", f"{PRED}.weight", PRED + ".bias", "fc.weight", PRED, "x." + PRED + ".weight"]
    assert nested_weights(names, BARE_PARAMETERS) == (f"{PRED}.weight", f"{SUCC}.weight")  # sorted: load order
    assert nested_weights(names, ()) == ()


def test_dsp331_follows_the_rows_bare_parameters(tmp_path: Path) -> None:
    facts = facts_of(materialise(tmp_path / "d", LAYOUT))
    assert facts.nested_weights == (f"{PRED}.weight", f"{SUCC}.weight")
    row = contract_for("vllm", "0.34.0", Family.DFLASH2)
    assert row is not None and row.bare_parameters == BARE_PARAMETERS
    error = evaluate_contract(row, "0.34.0", facts).error
    assert error is not None and error.code == "DSP331" and f"'{PRED}.weight'" in error.text
    # a row that builds the codebooks as modules (no bare parameters) takes the `.weight` names
    other = evaluate_contract(replace(row, bare_parameters=()), "0.34.0", facts).error
    assert other is None or other.code != "DSP331"


def test_the_plan_renames_each_nested_weight_in_its_own_shard(tmp_path: Path) -> None:
    plan = plan_fix(materialise(tmp_path / "d", LAYOUT), target_vocab_size=T, runtimes=["vllm==0.34.0"])
    assert plan.strategy == "unnest-weights" and plan.refusal is None
    assert plan.actions == tuple(RenameTensor(f"{p}.weight", p, "model.safetensors", "DSP331") for p in (PRED, SUCC))
    assert describe(plan.actions[0]) == f"rename {PRED}.weight to {PRED}, data unchanged (model.safetensors)"
    assert action_json(plan.actions[0]) == {"action": "rename-tensor", "reason": "DSP331", "tensor": f"{PRED}.weight",
                                            "file": "model.safetensors", "new_name": PRED}
    assert plan.changes is not None
    (shard,) = plan.changes.shards
    assert not shard.new and plan.changes.texts == ()  # no index, config.json untouched
    written = {t.name: t for t in shard.tensors}
    assert PRED in written and f"{PRED}.weight" not in written
    for p in (PRED, SUCC):  # copied whole from the source range the old name had
        t = written[p]
        assert t.source_name == f"{p}.weight" and t.source_tensor == f"{p}.weight" and t.data is None
    assert all(t.source_name is None for n, t in written.items() if n not in BARE_PARAMETERS)
    assert '"action":"rename-tensor"' in shard.metadata["dspark_ckpt.fix"]  # recorded in the shard's __metadata__
    assert unsafe_reasons(plan) == []  # names only: metadata-only while the shard is small
    assert unsafe_reasons(plan, max_bytes=16) != []  # a large shard is still real I/O for a commit hook


def test_its_effect_on_the_facts_is_the_bare_names(tmp_path: Path) -> None:
    facts = facts_of(materialise(tmp_path / "d", LAYOUT))
    after = after_facts(facts, ("unnest-weights",))
    shapes = dict(after.tensor_shapes)
    assert after.nested_weights == () and f"{PRED}.weight" not in shapes
    assert shapes[PRED] == dict(facts.tensor_shapes)[f"{PRED}.weight"]
    runtimes = parse_selectors(["vllm>=0.28.0", "sglang==0.5.23"])
    before = simulate(facts, (), runtimes)
    fixed = simulate(facts, ("unnest-weights",), runtimes)
    assert {p.error_code for p in before if p.runtime.startswith("vllm")} == {"DSP331"}
    assert "DSP363" in next(p for p in before if p.runtime.startswith("sglang")).silent_codes
    assert all(p.loads and not p.silent_codes for p in fixed), fixed


def test_it_does_not_apply_without_nested_names_or_with_both_spellings(tmp_path: Path) -> None:
    facts = facts_of(materialise(tmp_path / "d", LAYOUT))
    strategy = BY_NAME["unnest-weights"]
    s = read_situation(tmp_path / "d", TargetVocab(T, "t"), [VLLM_0_34])
    assert strategy.why_not(s, facts) is None
    assert "ships no `<name>.weight`" in (strategy.why_not(s, replace(facts, nested_weights=())) or "")
    both = replace(s, tensors={**s.tensors, PRED: s.tensors[f"{PRED}.weight"]})
    assert f"ships both {PRED}.weight and {PRED}" in (strategy.why_not(both, facts) or "")
