"""A plan is bound to the bytes it was made from, and what fix wrote is read back before the commit (issue 38)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from conftest import make_checkpoint, run_cli
from test_fix_repairs import tree_digest

from dspark_ckpt.check.load import load
from dspark_ckpt.errors import RepairError
from dspark_ckpt.repair import apply as apply_module
from dspark_ckpt.repair import apply_fix, plan_fix
from dspark_ckpt.repair.binding import StalePlan, stamp_sources
from dspark_ckpt.sources.local import LocalFolder

PADDED = {"vocab": 128, "draft_vocab": 128, "target_vocab": 96, "shards": 4,
          "config_extra": {"markov_head_type": "vanilla", "mask_token_id": 0}}
FOR = ["vllm"]


def _fixed_alone(tmp: Path) -> dict[str, str]:
    alone = make_checkpoint(tmp / "alone", **PADDED)
    assert run_cli("fix", str(alone), "--target-vocab-size", "96", "--for", "vllm", "--in-place").returncode == 0
    return tree_digest(alone)


@pytest.mark.parametrize("out", [False, True], ids=["in-place", "out"])
def test_a_plan_made_before_another_fix_committed_writes_nothing(tmp_path: Path, out: bool) -> None:
    """The garbling case: planned on the original, applied after another fix replaced the shards."""
    folder = make_checkpoint(tmp_path / "d", **PADDED)
    stale = plan_fix(folder, target_vocab_size=96, runtimes=FOR)
    apply_fix(plan_fix(folder, target_vocab_size=96, runtimes=FOR), in_place=True)
    committed = tree_digest(folder)
    with pytest.raises(StalePlan) as caught:
        apply_fix(stale, out=tmp_path / "o" if out else None, in_place=not out)
    assert caught.value.code == "DSP-E070" and caught.value.names
    assert tree_digest(folder) == committed == _fixed_alone(tmp_path) and not (tmp_path / "o").exists()


def test_a_shard_swapped_between_reading_and_stamping_is_refused(tmp_path: Path) -> None:
    """The header read and the identity stamped come from one file: a swap in between is caught."""
    folder = make_checkpoint(tmp_path / "d", **PADDED)
    source = LocalFolder(folder)
    loaded = load(source)
    shard = folder / "model-00001-of-00004.safetensors"
    data = shard.read_bytes()
    shard.unlink()
    shard.write_bytes(data)  # the same bytes, another file: its offsets cannot be vouched for
    with pytest.raises(StalePlan):
        stamp_sources(folder, source, loaded.headers, ("config.json", "model.safetensors.index.json"))


def test_the_same_bytes_rewritten_in_place_still_bind(tmp_path: Path) -> None:
    """config.json is bound by content: an editor saving the same bytes does not make the plan stale."""
    folder = make_checkpoint(tmp_path / "d", **PADDED)
    plan = plan_fix(folder, target_vocab_size=96, runtimes=FOR)
    config = folder / "config.json"
    config.write_bytes(config.read_bytes())
    apply_fix(plan, in_place=True)
    assert tree_digest(folder) == _fixed_alone(tmp_path)


def test_an_edited_config_makes_the_plan_stale(tmp_path: Path) -> None:
    folder = make_checkpoint(tmp_path / "d", **PADDED)
    plan = plan_fix(folder, target_vocab_size=96, runtimes=FOR)
    config = folder / "config.json"
    config.write_text(config.read_text().replace('"hidden_size": 16', '"hidden_size":  16'))
    before = tree_digest(folder)
    with pytest.raises(StalePlan):
        apply_fix(plan, in_place=True)
    assert tree_digest(folder) == before


@pytest.mark.parametrize("out", [False, True], ids=["in-place", "out"])
@pytest.mark.parametrize("skew", [8, -4, 1])
def test_bytes_copied_from_the_wrong_offset_are_never_committed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                out: bool, skew: int) -> None:
    """Whatever makes a copy read the wrong range, the read-back finds it: DSP-E084, nothing put in place."""
    folder = make_checkpoint(tmp_path / "d", **PADDED)
    before = tree_digest(folder)
    plan = plan_fix(folder, target_vocab_size=96, runtimes=FOR)
    copy_range = apply_module.copy_range

    def skewed(src: int, offset: int, *args: object, **kwargs: object) -> None:
        copy_range(src, max(0, offset + skew), *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(apply_module, "copy_range", skewed)
    with pytest.raises(RepairError) as caught:
        apply_fix(plan, out=tmp_path / "o" if out else None, in_place=not out)
    assert caught.value.code == "DSP-E084", caught.value
    assert tree_digest(folder) == before and not (tmp_path / "o").exists()
    assert not [p for p in os.listdir(folder) if p.startswith(".")]


def test_a_second_fix_that_planned_before_the_first_committed_plans_again(tmp_path: Path,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """The CLI: a plan made stale by a fix that committed meanwhile is made again, finds nothing to do, says so,
    and exits 0; the checkpoint is exactly the first fix's result."""
    from dspark_ckpt import repair

    folder = make_checkpoint(tmp_path / "d", **PADDED)
    plan_for = repair.plan_for
    calls = []

    def plan_then_another_fix_commits(*args: object, **kwargs: object) -> object:
        plan = plan_for(*args, **kwargs)  # type: ignore[arg-type]
        calls.append(plan)
        if len(calls) == 1:
            apply_fix(plan_fix(folder, target_vocab_size=96, runtimes=FOR), in_place=True)
        return plan

    monkeypatch.setattr(repair, "plan_for", plan_then_another_fix_commits)
    done = run_cli("fix", str(folder), "--target-vocab-size", "96", "--for", "vllm", "--in-place", "--format",
                   "json")
    assert done.returncode == 0, done.stdout + done.stderr
    entry = json.loads(done.stdout)["checkpoints"][0]
    assert entry["status"] == "nothing-to-do" and "planned again" in entry["replanned"], entry
    assert len(calls) >= 2 and tree_digest(folder) == _fixed_alone(tmp_path)
