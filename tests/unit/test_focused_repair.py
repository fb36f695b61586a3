"""Focused tests of repair/simulate.py, apply.py, render.py and source_tree.py, on real tiny checkpoints."""

from __future__ import annotations

import json
import os
import struct
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from conftest import make_checkpoint

from dspark_ckpt.check.analysis import analyze
from dspark_ckpt.errors import RepairError
from dspark_ckpt.model.report import FixState
from dspark_ckpt.model.rule_catalog import RULES
from dspark_ckpt.model.target import TargetVocab
from dspark_ckpt.output.documents import fix_entry
from dspark_ckpt.output.fix_records import json_diffs
from dspark_ckpt.output.fix_text import state_text
from dspark_ckpt.repair import plan_fix
from dspark_ckpt.repair import simulate as sim
from dspark_ckpt.repair.actions import (
    DROP_D2T,
    IDENTITY_D2T,
    REBUILD_D2T,
    TRIM,
    TRIM_INPUT,
    Predicted,
    TrimRows,
)
from dspark_ckpt.repair.apply import apply_fix, check_destination, out_taken, remaining_errors
from dspark_ckpt.repair.render import fix_record
from dspark_ckpt.repair.source_tree import changed, in_hf_cache, scan, stamp
from dspark_ckpt.runtimes.selectors import RuntimeVersion
from dspark_ckpt.sources.local import LocalFolder

T = 96
PADDED = {"vocab": 128, "draft_vocab": 128, "target_vocab": T}  # D = V > T, the Inkling shape in miniature
VLLM_030 = [RuntimeVersion("vllm", "0.30.0")]


def facts_of(folder: Path, target: int = T, runtimes: list[RuntimeVersion] | None = None) -> Any:
    analysis = analyze(LocalFolder(folder), target=TargetVocab(target, "test"), runtimes=runtimes or VLLM_030)
    assert analysis.facts is not None
    return analysis.facts


def header_shapes(path: Path) -> dict[str, list[int]]:
    raw = path.read_bytes()
    (n,) = struct.unpack("<Q", raw[:8])
    header = json.loads(raw[8:8 + n])
    return {k: v["shape"] for k, v in header.items() if k != "__metadata__"}


# --- simulate.py ---

def test_trim_makes_every_draft_sized_fact_t(tmp_path: Path) -> None:
    facts = facts_of(make_checkpoint(tmp_path / "d", **PADDED, d2t=True))
    assert facts.kind.value == "padded"
    after = sim.after_facts(facts, (TRIM,))
    assert (after.draft_vocab_size, after.lm_head_rows, after.markov_w2_rows) == (T, T, T)
    assert after.has_d2t is False and after.d2t_length is None
    assert after.kind.value == "equal"
    assert after.vocab_size == facts.vocab_size == 128  # the input side is trim-input's business


def test_trim_input_cuts_only_the_input_side(tmp_path: Path) -> None:
    facts = facts_of(make_checkpoint(tmp_path / "d", **PADDED))
    after = sim.after_facts(facts, (TRIM_INPUT,))
    assert (after.vocab_size, after.embed_rows, after.markov_w1_rows) == (T, T, T)
    assert after.draft_vocab_size == 128 and after.lm_head_rows == 128


def test_combined_steps_apply_in_turn_and_rewrite_the_config_the_builds_read(tmp_path: Path) -> None:
    facts = facts_of(make_checkpoint(tmp_path / "d", **PADDED))
    assert facts.builds  # check built the config per release
    after = sim.after_facts(facts, (TRIM, TRIM_INPUT))
    assert after.draft_vocab_size == after.vocab_size == T
    assert after.raw_config["draft_vocab_size"] == T and after.raw_config["vocab_size"] == T
    assert after.builds == ()  # rebuilt from the edited config, not the stale builds


def test_no_steps_is_the_draft_as_it_is(tmp_path: Path) -> None:
    facts = facts_of(make_checkpoint(tmp_path / "d", **PADDED))
    assert sim.after_facts(facts, ()) is facts


def test_d2t_steps(tmp_path: Path) -> None:
    facts = facts_of(make_checkpoint(tmp_path / "d", vocab=128, draft_vocab=32, target_vocab=128, d2t=True),
                     target=128)
    assert facts.has_d2t
    dropped = sim.after_facts(facts, (DROP_D2T,))
    assert not dropped.has_d2t and dropped.d2t_length is None
    identity = sim.after_facts(replace(facts, has_d2t=False, d2t_length=None), (IDENTITY_D2T,))
    assert identity.has_d2t and identity.d2t_length == 32 and identity.d2t_all_zero
    rebuilt = sim.after_facts(facts, (REBUILD_D2T,))
    assert rebuilt.d2t_length == 32 and not rebuilt.d2t_all_zero


def test_mapping_problems_only_for_a_kept_all_zero_d2t_on_a_pruned_draft() -> None:
    assert sim.mapping_problems((), d2t_all_zero=True, pruned=True) == ("DSP401",)
    assert sim.mapping_problems((TRIM_INPUT,), d2t_all_zero=True, pruned=True) == ("DSP401",)
    for step in (REBUILD_D2T, DROP_D2T, TRIM):
        assert sim.mapping_problems((step,), d2t_all_zero=True, pruned=True) == ()
    assert sim.mapping_problems((), d2t_all_zero=True, pruned=False) == ()
    assert sim.mapping_problems((), d2t_all_zero=False, pruned=True) == ()


def test_score_orders_failures_then_errors_then_warnings() -> None:
    error = next(c for c, r in RULES.items() if r.severity == "error")
    warning = next(c for c, r in RULES.items() if r.severity == "warning")
    results = [Predicted(False, "DSP303", (), runtime="vllm==0.30.0"),
               Predicted(True, None, (error, warning), runtime="vllm==0.31.0"),
               Predicted(True, None, (warning,), runtime="vllm==0.32.0")]
    s = sim.score(results, extra=[error])
    assert s.key() == (1, 2, 2) and not s.clean
    assert sim.score([Predicted(True, None, (), runtime="vllm==0.30.0")]).clean
    assert sim.problem_codes(results, [error]) == {"DSP303", error, warning}


def test_simulated_trim_loads_where_the_padded_draft_fails(tmp_path: Path) -> None:
    facts = facts_of(make_checkpoint(tmp_path / "d", **PADDED, d2t=True))
    before = sim.simulate(facts, (), VLLM_030)
    after = sim.simulate(facts, (TRIM,), VLLM_030)
    assert [o.runtime for o in before] == ["vllm==0.30.0"]
    assert not before[0].loads and before[0].error_code  # 0.30 has no d2t parameter for D >= T
    assert after[0].loads and after[0].error_code is None


def test_outcomes_counts_a_first_step_failure_as_not_loading(tmp_path: Path) -> None:
    facts = facts_of(make_checkpoint(tmp_path / "d", **PADDED))
    verdict = sim.verdicts(facts, VLLM_030)[0]
    from dspark_ckpt.runtimes.records import Issue
    failing = replace(verdict, error=None, first_step=Issue("DSP340", "first step"))
    (o,) = sim.outcomes([failing])
    assert o.loads is False and o.error_code == "DSP340"


# --- apply.py ---

def test_apply_trim_to_a_new_folder(tmp_path: Path) -> None:
    src = make_checkpoint(tmp_path / "d", **PADDED)
    before = (src / "model.safetensors").read_bytes()
    plan = plan_fix(src, target_vocab_size=T, runtimes=["vllm==0.30.0"], strategy="trim")
    assert any(isinstance(x, TrimRows) for x in plan.actions)
    result = apply_fix(plan, out=tmp_path / "out")
    shapes = header_shapes(tmp_path / "out" / "model.safetensors")
    assert shapes["lm_head.weight"][0] == T and shapes["markov_head.markov_w2.weight"][0] == T
    assert json.loads((tmp_path / "out" / "config.json").read_text())["draft_vocab_size"] == T
    assert result.errors == [] and not result.in_place
    assert (src / "model.safetensors").read_bytes() == before  # the source is untouched
    written = dict(result.written)
    assert written["model.safetensors"] == (tmp_path / "out" / "model.safetensors").stat().st_size
    assert result.bytes_written >= written["model.safetensors"]


def test_apply_in_place_rewrites_the_checkpoint(tmp_path: Path) -> None:
    src = make_checkpoint(tmp_path / "d", **PADDED)
    inode = src.stat().st_ino
    result = apply_fix(plan_fix(src, target_vocab_size=T, runtimes=["vllm==0.30.0"], strategy="trim"), in_place=True)
    assert result.in_place and result.errors == []
    assert header_shapes(src / "model.safetensors")["lm_head.weight"][0] == T
    assert src.stat().st_ino == inode
    assert sorted(p.name for p in src.iterdir()) == ["config.json", "model.safetensors"]  # no staging left


def test_apply_refuses_a_plan_that_changes_nothing(tmp_path: Path) -> None:
    src = make_checkpoint(tmp_path / "d", vocab=T, draft_vocab=T, target_vocab=T)
    plan = plan_fix(src, target_vocab_size=T, runtimes=["vllm==0.30.0"])
    assert not plan.changes_anything
    with pytest.raises(RepairError) as exc:
        apply_fix(plan, out=tmp_path / "out")
    assert exc.value.code == "DSP-E067" and not (tmp_path / "out").exists()


def test_apply_needs_exactly_one_destination(tmp_path: Path) -> None:
    plan = plan_fix(make_checkpoint(tmp_path / "d", **PADDED), target_vocab_size=T, runtimes=["vllm==0.30.0"])
    for kwargs in ({}, {"out": tmp_path / "o", "in_place": True}):
        with pytest.raises(RepairError) as exc:
            apply_fix(plan, **kwargs)
        assert exc.value.code == "DSP-E068"


def test_apply_refuses_a_source_changed_since_planning(tmp_path: Path) -> None:
    src = make_checkpoint(tmp_path / "d", **PADDED)
    plan = plan_fix(src, target_vocab_size=T, runtimes=["vllm==0.30.0"], strategy="trim")
    make_checkpoint(src, **PADDED, seed=1)  # rewritten: new inode/mtime
    with pytest.raises(RepairError) as exc:
        apply_fix(plan, out=tmp_path / "out")
    assert exc.value.code == "DSP-E070" and not (tmp_path / "out").exists()


def test_out_taken(tmp_path: Path) -> None:
    assert not out_taken(tmp_path / "missing")
    (tmp_path / "empty").mkdir()
    assert not out_taken(tmp_path / "empty")
    (tmp_path / "full").mkdir()
    (tmp_path / "full" / "x").write_text("x")
    assert out_taken(tmp_path / "full")
    (tmp_path / "file").write_text("x")
    assert out_taken(tmp_path / "file")
    os.symlink(tmp_path / "missing", tmp_path / "dangling")
    assert out_taken(tmp_path / "dangling")


def test_check_destination_refuses_inside_the_source_and_taken_folders(tmp_path: Path) -> None:
    src = make_checkpoint(tmp_path / "d", **PADDED)
    with pytest.raises(RepairError) as inside:
        check_destination(src, src / "sub", in_place=False)
    assert inside.value.code == "DSP-E066"
    with pytest.raises(RepairError) as taken:
        check_destination(src, src, in_place=False)  # the source folder is not empty
    assert taken.value.code == "DSP-E065"
    with pytest.raises(RepairError) as missing_parent:
        check_destination(src, tmp_path / "no" / "such", in_place=False)
    assert missing_parent.value.code == "DSP-E064"
    check_destination(src, tmp_path / "fresh", in_place=False)  # a new path beside it is fine


def test_remaining_errors_leave_out_only_what_the_strategy_accepts(tmp_path: Path) -> None:
    from dspark_ckpt.model.findings import finding
    src = make_checkpoint(tmp_path / "d", **PADDED)
    report = analyze(LocalFolder(src), target=TargetVocab(T, "t"), runtimes=VLLM_030).report
    report = replace(report, findings=report.findings + (finding("DSP402", "ids >= T"),))
    assert "DSP402" in {f.code for f in remaining_errors(report, None)}
    assert "DSP402" not in {f.code for f in remaining_errors(report, IDENTITY_D2T)}
    assert all(f.severity == "error" for f in remaining_errors(report, None))


# --- render.py ---

def test_state_text() -> None:
    assert state_text(FixState(False, "DSP303", ())) == "fails (DSP303)"
    assert state_text(FixState(True, None, ("DSP305", "DSP305", "DSP307"))) == "loads* (DSP305, DSP307)"
    assert state_text(FixState(True, None, ())) == "loads"


def fix_json(plan: Any, result: Any, *, in_place: bool, dry_run: bool, skipped: list[str] | None = None) -> Any:
    return fix_entry(fix_record(plan, result, in_place=in_place, dry_run=dry_run, skipped=skipped or ()))


def test_fix_json_statuses_and_diff(tmp_path: Path) -> None:
    src = make_checkpoint(tmp_path / "d", **PADDED)
    plan = plan_fix(src, target_vocab_size=T, runtimes=["vllm==0.30.0"], strategy="trim")
    doc = fix_json(plan, None, in_place=False, dry_run=True)
    assert doc["status"] == "planned" and doc["target_vocab_size"] == T
    assert doc["compatibility"][0]["runtime"] == "vllm==0.30.0"
    assert doc["compatibility"][0]["after"]["loads"] is True
    (diff,) = json_diffs(fix_record(plan, None, in_place=False, dry_run=True).changes)
    assert '-  "draft_vocab_size": 128' in diff and f'+  "draft_vocab_size": {T}' in diff
    assert fix_json(plan, None, in_place=False, dry_run=False, skipped=["unsafe"])["status"] == "skipped"
    result = apply_fix(plan, out=tmp_path / "out")
    applied = fix_json(plan, result, in_place=False, dry_run=False)
    assert applied["status"] == "applied" and applied["result"]["check_errors"] == []
    assert applied["result"]["bytes_written"] == result.bytes_written
    nothing = plan_fix(make_checkpoint(tmp_path / "e", vocab=T, draft_vocab=T, target_vocab=T),
                       target_vocab_size=T, runtimes=["vllm==0.30.0"])
    assert fix_json(nothing, None, in_place=False, dry_run=True)["status"] == "nothing-to-do"


# --- source_tree.py ---

def test_scan_records_every_entry_and_changed_sees_a_rewrite(tmp_path: Path) -> None:
    src = make_checkpoint(tmp_path / "d", **PADDED)
    (src / "sub").mkdir()
    (src / "sub" / "notes.txt").write_text("hello")
    entries = scan(src)
    kinds = {e.rel: e.kind for e in entries}
    assert kinds == {"config.json": "file", "model.safetensors": "file", "sub": "dir", "sub/notes.txt": "file"}
    assert changed(entries) == []
    (src / "sub" / "notes.txt").write_text("hello, longer")
    assert changed(entries) == ["sub/notes.txt"]
    st = os.stat(src / "config.json")
    assert stamp(st) == (st.st_ino, st.st_size, st.st_mtime_ns)


def test_scan_refuses_a_link_leaving_the_checkpoint_and_a_fifo(tmp_path: Path) -> None:
    src = make_checkpoint(tmp_path / "d", **PADDED)
    (tmp_path / "outside.txt").write_text("x")
    os.symlink(tmp_path / "outside.txt", src / "leak.txt")
    with pytest.raises(RepairError) as leaves:
        scan(src)
    assert leaves.value.code == "DSP-E075"
    os.unlink(src / "leak.txt")
    os.mkfifo(src / "pipe")
    with pytest.raises(RepairError) as fifo:
        scan(src)
    assert fifo.value.code == "DSP-E076"


def test_in_hf_cache(tmp_path: Path) -> None:
    snap = tmp_path / "hub" / "models--org--name" / "snapshots" / "abc"
    snap.mkdir(parents=True)
    assert in_hf_cache(snap)
    assert in_hf_cache(tmp_path / "hub" / "models--org--name")  # the repo folder, which holds snapshots/
    assert not in_hf_cache(make_checkpoint(tmp_path / "plain", **PADDED))

