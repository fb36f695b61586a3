"""`dspark-ckpt check` and `fix` (the real CLI) on the producers' checkpoints: the config-only repairs and the trim
of a padded draft without its own embed_tokens, each re-checked per release."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from conftest import run_cli
from listed import vllm_before, vllm_minors
from producers import materialise
from safetensors import safe_open

NEW = ("vllm==0.29.0", "vllm==0.30.0", "vllm==0.31.0", "vllm==0.32.0", "vllm==0.33.0")


def fix(folder: Path, target: int, *extra: str) -> Any:
    args = ["fix", str(folder), "--target-vocab-size", str(target), *(a for r in NEW for a in ("--for", r))]
    return run_cli(*args, *extra)


def check(folder: Path, target: int, *runtimes: str) -> dict[str, Any]:
    args = [a for r in runtimes for a in ("--runtime", r)]
    done = run_cli("check", str(folder), "--target-vocab-size", str(target), *args, "--format", "json",
                   "--isolated")
    doc: dict[str, Any] = json.loads(done.stdout)["checkpoints"][0]
    return doc


def digests(folder: Path) -> dict[str, str]:
    """sha256 of every shard file: a config-only repair leaves them byte for byte (hard links or copies)."""
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(folder.glob("*.safetensors"))}


def rows(folder: Path) -> dict[str, list[int]]:
    with safe_open(folder / "model.safetensors", framework="numpy") as f:
        return {name: list(f.get_slice(name).get_shape()) for name in f.keys()}  # noqa: SIM118 - not a dict


def test_check_reports_each_release_with_its_error(tmp_path: Path) -> None:
    folder = materialise(tmp_path / "sf", "specforge-0.2.0-dspark-nested")
    doc = check(folder, 96, "vllm")
    by_version = {c["version"]: (c["loads"], c["error_code"], c["error"]) for c in doc["compatibility"]}
    assert by_version["0.28.0"] == (False, "DSP309", ("AttributeError: 'Qwen3Config' object has no attribute "
                                                     "'hc_mult'"))
    assert by_version["0.33.0"] == (False, "DSP215", ("AttributeError: 'Qwen3Config' object has no attribute "
                                                     "'markov_rank'"))
    assert {f["code"] for f in doc["findings"]} >= {"DSP215", "DSP309"}


def test_nested_settings_are_written_at_the_top_level(tmp_path: Path) -> None:
    before = materialise(tmp_path / "sf", "specforge-0.2.0-dspark-nested")
    done = fix(before, 96, "--out", str(tmp_path / "after"))
    assert done.returncode == 0, done.stdout + done.stderr
    assert "strategy hoist-dspark-settings" in done.stdout and "check passes" in done.stdout
    after = tmp_path / "after"
    config = json.loads((after / "config.json").read_text())
    assert (config["markov_rank"], config["markov_head_type"], config["enable_confidence_head"]) == (4, "vanilla",
                                                                                                     True)
    assert digests(after) == digests(before), "a config-only repair leaves every tensor as it was"
    assert all(c["loads"] for c in check(after, 96, *NEW)["compatibility"])


def test_a_contradicting_draft_vocab_size_is_repaired_in_the_config(tmp_path: Path) -> None:
    before = materialise(tmp_path / "sf", "specforge-0.2.0-dspark-declared-d")
    done = fix(before, 96, "--out", str(tmp_path / "after"))
    assert done.returncode == 0, done.stdout + done.stderr
    assert "[DSP216] set config.json draft_vocab_size: 32 -> 96" in done.stdout
    after = tmp_path / "after"
    assert json.loads((after / "config.json").read_text())["draft_vocab_size"] == 96
    assert digests(after) == digests(before)
    doc = check(after, 96, *NEW)
    assert all(c["loads"] for c in doc["compatibility"]) and not [f for f in doc["findings"]
                                                                   if f["severity"] == "error"]


def test_padded_draft_without_embed_tokens_is_trimmed_to_t(tmp_path: Path) -> None:
    """SpecForge's padded Inkling export: V = D = 104 > T = 100, no embed_tokens, no lm_head."""
    before = materialise(tmp_path / "sf", "specforge-0.2.0-inkling-padded")
    done = fix(before, 100, "--out", str(tmp_path / "after"))
    assert done.returncode == 0, done.stdout + done.stderr
    assert "trim markov_head.markov_w1.weight to its first 100 rows" in done.stdout
    assert "trim markov_head.markov_w2.weight to its first 100 rows" in done.stdout
    after = tmp_path / "after"
    config = json.loads((after / "config.json").read_text())
    assert (config["vocab_size"], config["draft_vocab_size"], config["markov_rank"]) == (100, 100, 4)
    shapes = rows(after)
    assert shapes["markov_head.markov_w1.weight"] == shapes["markov_head.markov_w2.weight"] == [100, 4]
    assert "embed_tokens.weight" not in shapes and "lm_head.weight" not in shapes
    assert all(c["loads"] for c in check(after, 100, *NEW)["compatibility"])


def test_no_markov_head_to_hoist_settings_for_is_refused(tmp_path: Path) -> None:
    """SpecForge 0.2.0 ignored dspark_config: the draft has no Markov head, so writing markov_rank would make
    vLLM build one from uninitialised memory."""
    folder = materialise(tmp_path / "sf", "specforge-0.2.0-inkling-dspark-config")
    done = fix(folder, 100, "--dry-run", "--strategy", "hoist-dspark-settings")
    assert done.returncode == 1, done.stdout + done.stderr
    assert "DSP503" in done.stdout and "it ships no markov_head tensors" in done.stdout


def test_the_deepseek_v4_name_is_repaired_for_0_27_and_0_28(tmp_path: Path) -> None:
    """DSparkDraftModel + qwen3 is the DeepSeek-V4 draft on 0.27/0.28: named Qwen3DSparkModel it loads there too (and
    on 0.25/0.26, which register the name); for 0.29+ alone the name is left as it is (those releases rename it
    themselves)."""
    before = materialise(tmp_path / "sf", "specforge-0.2.0-dspark-nested")
    assert "DSP218" in {f["code"] for f in check(before, 96, "vllm")["findings"]}
    done = run_cli("fix", str(before), "--target-vocab-size", "96", "--for", "vllm==0.27.0", "--for", "vllm==0.28.0",
                   "--for", "vllm==0.33.0", "--out", str(tmp_path / "after"))
    assert done.returncode == 0, done.stdout + done.stderr
    assert "[DSP218] set config.json architectures: ['DSparkDraftModel'] -> ['Qwen3DSparkModel']" in done.stdout
    doc = check(tmp_path / "after", 96, "vllm")
    loads = {c["version"]: c for c in doc["compatibility"]}
    assert sorted(loads) == sorted([*vllm_before("0.25.0"), *vllm_minors("0.25.0")])
    # Qwen3DSparkModel is registered from 0.25.0 (registry.py L597 @ v0.25.0); 0.24.0's registry has no DSpark entry
    assert all(loads[v]["loads"] for v in vllm_minors("0.25.0")), doc["compatibility"]
    assert all((loads[v]["loads"], loads[v]["error_code"], loads[v]["error"]) == (
        False, "DSP309", "Model architectures ['Qwen3DSparkModel'] are not supported for now.")
        for v in vllm_before("0.25.0")), doc["compatibility"]
    assert "DSP218" not in {f["code"] for f in doc["findings"]}
    later = run_cli("fix", str(before), "--target-vocab-size", "96", "--for", "vllm==0.33.0", "--dry-run")
    assert "strategy hoist-dspark-settings" in later.stdout and "architectures" not in later.stdout
