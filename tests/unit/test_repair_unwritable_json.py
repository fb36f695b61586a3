"""A JSON file fix would rewrite that holds a lone surrogate: the planner refuses (DSP506) instead of failing while
writing (it was an internal error, exit 3)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from conftest import make_checkpoint

from dspark_ckpt.model.target import TargetVocab
from dspark_ckpt.repair import actions as a
from dspark_ckpt.repair import fix_runtimes
from dspark_ckpt.repair.files import lone_surrogates
from dspark_ckpt.repair.plan import plan_repair
from dspark_ckpt.repair.read import read_situation


def test_lone_surrogates_are_found_with_their_line() -> None:
    changes = a.FileChanges((), (), (a.TextWrite("config.json", None, '{\n  "ok": "é",\n  "note": "\ud800"\n}\n'),
                                     a.TextWrite("model.safetensors.index.json", None, '{"fine": "\U0001f600"}')))
    assert lone_surrogates(changes) == ["config.json line 3 holds the escape \\ud800, a lone surrogate"]


def test_the_planner_refuses_rather_than_write_one(tmp_path: Path) -> None:
    folder = make_checkpoint(tmp_path / "d", vocab=100, draft_vocab=100, target_vocab=96)
    runtimes = fix_runtimes(["vllm>=0.25.0"])  # Qwen3DSparkModel's releases (registry.py @ v0.25.0 L597 first)
    situation = read_situation(folder, TargetVocab(96, "test"), runtimes)
    assert plan_repair(situation, runtimes).strategy == "trim"
    hostile = replace(situation, config={**situation.config, "note": "\udc80"})  # as json.loads reads "\udc80"
    plan = plan_repair(hostile, runtimes)
    assert plan.refusal is not None and plan.refusal.code == "DSP506" and not plan.actions and plan.changes is None
    assert "config.json line" in plan.refusal.message and "\\udc80" in plan.refusal.message
    assert f"`dspark-ckpt fix {folder} --target-vocab-size 96 --for 'vllm>=0.25.0'`" in (plan.refusal.hint or "")
