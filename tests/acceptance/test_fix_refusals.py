"""What fix refuses, and how it fails without harming the original: runtimes, HF cache, locks, disk, permissions."""

from __future__ import annotations

import json
import os
import re
import resource
import signal
import subprocess
import sys
from pathlib import Path

from conftest import make_checkpoint, run_cli, wait_stopped
from listed import vllm_before
from test_fix_repairs import CASES, build, fix_args, tree_digest

from dspark_ckpt.runtimes.versions import SGLANG_RELEASES

PADDED = dict(vocab=100, draft_vocab=100, target_vocab=96)


def test_identity_d2t_refused_for_vllm_030_and_later(tmp_path: Path) -> None:
    folder = make_checkpoint(tmp_path / "d", **PADDED)
    before = tree_digest(folder)
    result = run_cli("fix", str(folder), "--target-vocab-size", "96", "--strategy", "identity-d2t",
                     "--for", "vllm==0.29.0", "--for", "vllm==0.30.0", "--for", "vllm==0.33.0", "--in-place")
    assert result.returncode == 1
    assert "DSP503" in result.stdout and "identity-d2t would break vllm==0.30.0 (DSP303), vllm==0.33.0 (DSP303)" \
        in " ".join(result.stdout.split())
    assert tree_digest(folder) == before


def test_pruned_draft_without_lm_head_is_unrepairable(tmp_path: Path) -> None:
    folder = make_checkpoint(tmp_path / "d", vocab=128, draft_vocab=32, target_vocab=128, lm_head=False, t2d=True)
    result = run_cli("fix", str(folder), "--target-vocab-size", "128", "--out", str(tmp_path / "o"),
                     "--format", "json")
    doc = json.loads(result.stdout)["checkpoints"][0]
    assert result.returncode == 1 and doc["status"] == "refused" and doc["refusal"]["code"] == "DSP501"
    assert "without its own lm_head" in doc["refusal"]["message"] and doc["actions"] == []
    assert not (tmp_path / "o").exists()


def test_conflicting_runtimes_are_named(tmp_path: Path) -> None:
    # The draft embeds its mask token (id 99 >= T): SGLang refuses that id itself (DSpark's worker, 0.5.16+) and
    # has no DSpark class before 0.5.16, so no repair loads on any SGLang release; each reason is named.
    folder = make_checkpoint(tmp_path / "d", **PADDED, config_extra={"mask_token_id": 99,
                                                                     "markov_head_type": "vanilla"})
    before = tree_digest(folder)
    result = run_cli("fix", str(folder), "--target-vocab-size", "96", "--for", "vllm==0.29.0", "--for", "sglang",
                     "--in-place")
    text = " ".join(result.stdout.split())
    assert result.returncode == 1 and "DSP502" in text
    # SGLang before 0.5.16 has no DSpark class: older than the architecture, left out of `--for sglang` (issue 41)
    assert "no repair makes this draft load on sglang 0.5.16-0.5.23: as it is it fails with DSP343" in text
    assert tree_digest(folder) == before


def test_pruned_draft_for_all_is_repaired_for_vllm_and_sglang_named_refuses(tmp_path: Path) -> None:
    folder = make_checkpoint(tmp_path / "d", vocab=128, draft_vocab=32, target_vocab=128, t2d=True,
                             config_extra={"markov_head_type": "vanilla", "mask_token_id": 0})
    args = ("fix", str(folder), "--target-vocab-size", "128", "--dry-run", "--format", "json")
    doc = json.loads(run_cli(*args, "--for", "all").stdout)["checkpoints"][0]
    assert doc["status"] == "planned" and doc["strategy"] == "rebuild-d2t"
    assert not any(r.startswith("sglang") for r in doc["runtimes"])
    # every SGLang release, and the vLLM ones older than Qwen3DSparkModel (registry.py @ v0.25.0 L597 first); the
    # releases older than the architecture, of either runtime, in one DSP505, the rest in SGLang's best effort
    older = [f"vllm=={v}" for v in vllm_before("0.25.0")]
    assert [w["code"] for w in doc["warnings"]] == ["DSP505", "DSP505"]
    assert len(doc["not_repaired_for"]) == len(older) + len(SGLANG_RELEASES)
    assert doc["not_repaired_for"][:len(older)] == older
    newer = SGLANG_RELEASES[SGLANG_RELEASES.index("0.5.16"):]
    assert doc["stays_broken"] == [f"sglang=={v}" for v in newer]
    named = json.loads(run_cli(*args, "--for", "sglang").stdout)["checkpoints"][0]
    assert named["status"] == "refused" and named["refusal"]["code"] == "DSP502"
    assert re.search(r"SGLang's Qwen3 DSpark|fails with DSP\d{3}", named["refusal"]["message"]), named["refusal"]


def test_refuses_to_write_inside_the_hf_cache(tmp_path: Path) -> None:
    snapshot = tmp_path / "hub" / "models--org--draft" / "snapshots" / ("a" * 40)
    make_checkpoint(snapshot, **PADDED)
    before = tree_digest(snapshot)
    result = run_cli("fix", str(snapshot), "--target-vocab-size", "96", "--in-place")
    assert result.returncode == 2 and "DSP-E063" in result.stderr and "--out" in result.stderr
    assert tree_digest(snapshot) == before
    into = run_cli("fix", str(snapshot), "--target-vocab-size", "96", "--out", str(snapshot.parent / "fixed"))
    assert into.returncode == 2 and "Hugging Face cache" in into.stderr
    out = run_cli("fix", str(snapshot), "--target-vocab-size", "96", "--out", str(tmp_path / "fixed"))
    assert out.returncode == 0, out.stderr  # reading from the cache is fine


def test_existing_out_folder_is_not_overwritten(tmp_path: Path) -> None:
    folder = make_checkpoint(tmp_path / "d", **PADDED)
    (tmp_path / "o").mkdir()
    (tmp_path / "o" / "keep.txt").write_text("mine")
    result = run_cli("fix", str(folder), "--target-vocab-size", "96", "--out", str(tmp_path / "o"))
    assert result.returncode == 2 and "DSP-E065" in result.stderr
    assert [p.name for p in (tmp_path / "o").iterdir()] == ["keep.txt"]


def test_read_only_folder_is_left_intact(tmp_path: Path) -> None:
    folder = make_checkpoint(tmp_path / "d", **PADDED)
    before = tree_digest(folder)
    folder.chmod(0o555)
    try:
        result = run_cli("fix", str(folder), "--target-vocab-size", "96", "--in-place")
    finally:
        folder.chmod(0o755)
    assert result.returncode == 2 and "read-only" in result.stderr and "DSP-E064" in result.stderr
    assert tree_digest(folder) == before and sorted(p.name for p in tmp_path.iterdir()) == ["d"]


def test_full_disk_leaves_the_original_and_says_so(tmp_path: Path) -> None:
    folder = make_checkpoint(tmp_path / "d", **PADDED)
    before = tree_digest(folder)
    limit = 4096  # below the rewritten shard, above config.json and the lock file

    def small_files() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    result = subprocess.run([sys.executable, "-m", "dspark_ckpt", "fix", str(folder), "--target-vocab-size", "96",
                             "--in-place"], capture_output=True, text=True, preexec_fn=small_files,
                            env={**os.environ, "NO_COLOR": "1"}, timeout=60)
    assert result.returncode == 2, result.stderr
    err = " ".join(result.stderr.split())
    assert "DSP-E069" in err and "File too large (model.safetensors)" in err and "original is unchanged" in err
    assert tree_digest(folder) == before and sorted(p.name for p in tmp_path.iterdir()) == ["d"]


def test_two_concurrent_in_place_runs_one_refuses(tmp_path: Path) -> None:
    case = CASES["trim"]
    folder = build(case, tmp_path / "d")
    fixed = build(case, tmp_path / "ref")
    assert run_cli(*fix_args(case, fixed, "--in-place")).returncode == 0
    env = {**os.environ, "NO_COLOR": "1", "DSPARK_CKPT_CRASH_AT": "linked", "DSPARK_CKPT_CRASH_SIGNAL": "STOP"}
    first = subprocess.Popen([sys.executable, "-m", "dspark_ckpt", *fix_args(case, folder, "--in-place")],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    try:
        wait_stopped(first.pid)  # the first run holds the lock, half-way through staging
        second = run_cli(*fix_args(case, folder, "--in-place"))
        assert second.returncode == 2 and "DSP-E071" in second.stderr and f"pid {first.pid}" in second.stderr
    finally:
        os.kill(first.pid, signal.SIGCONT)
    out, err = first.communicate(timeout=60)
    assert first.returncode == 0, out + err
    assert tree_digest(folder) == tree_digest(fixed)


def test_generic_draft_for_a_qwen3_omni_target_is_judged_like_check(tmp_path: Path) -> None:
    """No repair makes a Qwen3DSparkModel load under an Omni target on 0.29+: fix must not plan one."""
    target = tmp_path / "omni"
    target.mkdir()
    (target / "config.json").write_text(json.dumps(
        {"model_type": "qwen3_omni_moe", "thinker_config": {"text_config": {"vocab_size": 96}}}))
    folder = make_checkpoint(tmp_path / "d", **PADDED)
    before = tree_digest(folder)
    result = run_cli("fix", str(folder), "--target", str(target), "--for", "vllm", "--format", "json")
    doc = json.loads(result.stdout)["checkpoints"][0]
    assert result.returncode == 1 and doc["status"] == "refused" and doc["refusal"]["code"] == "DSP502"
    assert "DSP309" in doc["refusal"]["message"]
    assert tree_digest(folder) == before and not (tmp_path / "d-fixed").exists()
