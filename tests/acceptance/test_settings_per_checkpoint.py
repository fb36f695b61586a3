"""Settings per checkpoint (issue 41, item 7): the nearest settings file above each checkpoint applies to it, as ruff
does, and a `per-path` table maps path patterns to a target and per-path select/ignore, so one run (one hook, one
Action step) covers a repository of drafts for two targets."""

from __future__ import annotations

import json
from pathlib import Path

from conftest import make_checkpoint, run_cli


def repo_of_two_targets(root: Path) -> Path:
    """Drafts for a T=96 target and a T=128 target, each folder with its own dspark-ckpt.toml."""
    make_checkpoint(root / "qwen" / "draft", vocab=96, draft_vocab=96, target_vocab=96)
    make_checkpoint(root / "llama" / "draft", vocab=128, draft_vocab=128, target_vocab=128)
    (root / "qwen" / "dspark-ckpt.toml").write_text('target-vocab-size = 96\nruntime = ["vllm>=0.30"]\n')
    (root / "llama" / "dspark-ckpt.toml").write_text('target-vocab-size = 128\nruntime = ["vllm>=0.30"]\n')
    return root


def targets(done) -> dict[str, int | None]:
    doc = json.loads(done.stdout)
    return {c["source"]: c["target_vocab_size"] for c in doc["checkpoints"]}


def test_the_nearest_settings_file_applies_to_each_checkpoint(tmp_path: Path) -> None:
    root = repo_of_two_targets(tmp_path / "repo")
    done = run_cli("check", ".", "--format", "json", cwd=root)
    assert done.returncode == 0, done.stdout + done.stderr
    assert targets(done) == {"llama/draft": 128, "qwen/draft": 96}, targets(done)
    named = run_cli("check", "qwen/draft", "llama/draft", "--format", "json", cwd=root)
    assert named.returncode == 0 and targets(named) == {"qwen/draft": 96, "llama/draft": 128}


def test_a_per_path_table_maps_patterns_to_targets_and_ignores(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    make_checkpoint(root / "drafts" / "qwen-a", vocab=96, draft_vocab=96, target_vocab=96)
    make_checkpoint(root / "drafts" / "llama-a", vocab=100, draft_vocab=100, target_vocab=96)  # padded on T=96
    (root / "pyproject.toml").write_text(
        '[tool.dspark-ckpt]\nruntime = ["vllm==0.29.0"]\ntarget-vocab-size = 96\n'
        '[tool.dspark-ckpt.per-path."drafts/llama-*"]\ntarget-vocab-size = 100\nignore = ["DSP3"]\n')
    done = run_cli("check", "drafts/qwen-a", "drafts/llama-a", "--format", "json", cwd=root)
    assert done.returncode == 0, done.stdout + done.stderr
    assert targets(done) == {"drafts/qwen-a": 96, "drafts/llama-a": 100}
    # the same draft without the settings: padded on T=96, DSP302 on vLLM 0.29 fails the run
    plain = run_cli("check", "drafts/llama-a", "--target-vocab-size", "96", "--runtime", "vllm==0.29.0", "--isolated",
                    "--format", "json", cwd=root)
    assert plain.returncode == 1


def test_per_path_ignore_applies_to_its_paths_only(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    make_checkpoint(root / "drafts" / "a", vocab=100, draft_vocab=100, target_vocab=96)
    make_checkpoint(root / "drafts" / "b", vocab=100, draft_vocab=100, target_vocab=96)
    (root / "dspark-ckpt.toml").write_text(
        'runtime = ["vllm==0.29.0"]\ntarget-vocab-size = 96\n[per-path."drafts/a"]\nignore = ["DSP302"]\n')
    done = run_cli("check", "drafts/a", "drafts/b", "--format", "json", cwd=root)
    codes = {c["source"]: {f["code"] for f in c["findings"]} for c in json.loads(done.stdout)["checkpoints"]}
    assert "DSP302" not in codes["drafts/a"] and "DSP302" in codes["drafts/b"], codes
    assert done.returncode == 1  # b still fails


def test_an_unknown_key_in_a_per_path_table_is_an_error(tmp_path: Path) -> None:
    make_checkpoint(tmp_path / "d", vocab=96, draft_vocab=96, target_vocab=96)
    (tmp_path / "dspark-ckpt.toml").write_text('target-vocab-size = 96\n[per-path."d"]\ntargte = "x"\n')
    done = run_cli("check", "d", cwd=tmp_path)
    assert done.returncode == 2 and "DSP-E022" in done.stderr, done.stderr


def test_isolated_and_an_explicit_settings_file_still_decide(tmp_path: Path) -> None:
    root = repo_of_two_targets(tmp_path / "repo")
    isolated = run_cli("check", "qwen/draft", "--isolated", "--allow-no-target", "--format", "json", cwd=root)
    assert targets(isolated) == {"qwen/draft": None}
    explicit = run_cli("check", "qwen/draft", "--settings", "llama/dspark-ckpt.toml", "--format", "json", cwd=root)
    assert targets(explicit) == {"qwen/draft": 128}


def test_fix_reads_the_checkpoints_settings_too(tmp_path: Path) -> None:
    root = repo_of_two_targets(tmp_path / "repo")
    done = run_cli("fix", "llama/draft", "--dry-run", "--format", "json", cwd=root)
    (entry,) = json.loads(done.stdout)["checkpoints"]
    assert entry["target_vocab_size"] == 128, entry
