"""fix judges what it writes against the target it planned for, whole: an Inkling-style target that pads its
vocabulary (T = 96, padded 128) whose padded rows hold a DSpark draft's mask id, and a Qwen3-Omni target, are the
same target in the plan and in the re-check before anything is put in place (issue 24: apply used to rebuild the
target from T alone, dropping head_rows, and refused the repair the dry run planned with a false DSP504)."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest
from conftest import make_checkpoint, run_cli

from dspark_ckpt.model.target import TargetVocab
from dspark_ckpt.repair import plan_for
from dspark_ckpt.repair.recheck import check_folder
from dspark_ckpt.runtimes.selectors import parse_selectors
from dspark_ckpt.sources.local import LocalFolder
from dspark_ckpt.sources.target import local_target


def inkling_target(root: Path) -> Path:
    root.mkdir(parents=True)
    (root / "config.json").write_text(json.dumps({
        "architectures": ["InklingForConditionalGeneration"], "model_type": "inkling",
        "text_config": {"vocab_size": 96, "padded_vocab_size": 128, "hidden_size": 16}}))
    return root


def padded_dspark_with_nested_rank(root: Path) -> Path:
    """A padded draft whose mask id sits in the target's padded rows, markov_rank only under dspark_config."""
    draft = make_checkpoint(root, vocab=128, draft_vocab=128, target_vocab=96, config_extra={
        "dspark_config": {"markov_rank": 4, "mask_token_id": 100, "markov_head_type": "vanilla"}})
    config = json.loads((draft / "config.json").read_text())
    config.pop("markov_rank")
    (draft / "config.json").write_text(json.dumps(config))
    return draft


def test_the_dry_run_and_the_write_agree_on_a_padded_target(tmp_path: Path) -> None:
    target = inkling_target(tmp_path / "target")
    draft = padded_dspark_with_nested_rank(tmp_path / "draft")
    args = ["fix", str(draft), "--target", str(target), "--runtime", "sglang==0.5.18"]
    dry = run_cli(*args, "--dry-run", "--format", "json")
    planned = json.loads(dry.stdout)["checkpoints"][0]
    assert planned["strategy"] is not None and planned["refusal"] is None, dry.stdout
    written = run_cli(*args, "--out", str(tmp_path / "fixed"))
    assert written.returncode == 0, written.stdout + written.stderr
    assert "DSP504" not in written.stderr
    after = run_cli("check", str(tmp_path / "fixed"), "--target", str(target), "--runtime", "sglang==0.5.18",
                    "--format", "json")
    assert after.returncode == 0, after.stdout


@pytest.mark.parametrize("make_target", ["inkling", "omni", "explicit"])
def test_every_field_of_the_resolved_target_reaches_the_recheck(tmp_path: Path, make_target: str,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    if make_target == "inkling":
        target = local_target(inkling_target(tmp_path / "target"))
        assert target.head_rows == 128
    elif make_target == "omni":
        target = TargetVocab(96, "a Qwen3-Omni thinker", omni=True, head_rows=None, hidden=16,
                             text_model_type="qwen3_omni_moe_text")
    else:
        target = TargetVocab(96, "--target-vocab-size")
    draft = padded_dspark_with_nested_rank(tmp_path / "draft")
    runtimes = parse_selectors(["sglang==0.5.18", "vllm==0.30.0"])
    plan = plan_for(str(draft), target, runtimes, None, selectors=[str(r) for r in runtimes])
    assert plan.target == target  # every field: size, source, omni, head_rows, hidden, text_model_type
    assert plan.runtime_versions == tuple(runtimes)
    seen: list[TargetVocab] = []
    from dspark_ckpt.repair import recheck

    original = recheck.analyze

    def spy(source: object, *, target: TargetVocab, runtimes: object, speculative: object = None) -> object:
        seen.append(target)
        assert speculative is plan.speculative is None  # no --speculative-config: no serving method is handed on
        return original(source, target=target, runtimes=runtimes, speculative=speculative)  # type: ignore[arg-type]

    monkeypatch.setattr(recheck, "analyze", spy)  # the real check, observed
    check_folder(LocalFolder(draft), plan)
    assert seen == [target]
    assert {f.name for f in dataclasses.fields(TargetVocab)} == {"size", "source", "omni", "head_rows", "hidden",
                                                                  "text_model_type"}, (
        "a new TargetVocab field: make sure it is part of what the plan hands on")
