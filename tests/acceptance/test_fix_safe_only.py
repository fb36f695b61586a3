"""`fix --safe-only`, `--checkpoint-folders` and settings files, and the dspark-ckpt-fix-safe pre-commit hook for real."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest
from conftest import make_checkpoint, run_cli
from test_fix_repairs import tree_digest
from test_preflight_precommit import git, run_hook

PADDED = dict(vocab=100, draft_vocab=100, target_vocab=96)
PRUNED = dict(vocab=128, draft_vocab=32, target_vocab=128, t2d=True)  # no d2t: rebuild-d2t adds a small shard
# A pruned Qwen3 DSpark draft never loads on SGLang (any d2t is refused, lm_head is sized by V): fix it for vLLM,
# the releases that register Qwen3DSparkModel (registry.py @ v0.25.0 L597 first; an older one refuses it).
VLLM = "vllm>=0.25.0"
FOR_VLLM = ("--for", VLLM)


def flat(text: str) -> str:
    return " ".join(text.split())


def sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_metadata_only_repair_is_applied(tmp_path: Path) -> None:
    folder = make_checkpoint(tmp_path / "d", **PRUNED)
    weights = sha(folder / "model.safetensors")
    done = run_cli("fix", str(folder), "--target-vocab-size", "128", "--in-place", "--safe-only", "--format", "json",
                   *FOR_VLLM)
    doc = json.loads(done.stdout)["checkpoints"][0]
    assert done.returncode == 0 and doc["status"] == "applied" and doc["skipped"] == [], done.stderr
    assert sorted(f["file"] for f in doc["result"]["written"]) == ["dspark-fix-d2t.safetensors",
                                                                    "model.safetensors.index.json"]
    assert sha(folder / "model.safetensors") == weights
    assert run_cli("check", str(folder), "--target-vocab-size", "128", "--runtime", VLLM).returncode == 0


def test_tensor_rewriting_repair_is_skipped_and_nothing_written(tmp_path: Path) -> None:
    folder = make_checkpoint(tmp_path / "d", **PADDED)
    before = tree_digest(folder)
    text = run_cli("fix", str(folder), "--target-vocab-size", "96", "--safe-only")
    assert text.returncode == 1
    assert "skipped (--safe-only): trim is not a metadata-only repair: it trims lm_head.weight" in flat(text.stdout)
    doc = json.loads(run_cli("fix", str(folder), "--target-vocab-size", "96", "--safe-only", "--in-place",
                             "--format", "json").stdout)["checkpoints"][0]
    assert doc["status"] == "skipped" and any("markov_w2" in r for r in doc["skipped"]) and "result" not in doc
    assert tree_digest(folder) == before and sorted(p.name for p in tmp_path.iterdir()) == ["d"]


def test_exit_non_zero_on_fix(tmp_path: Path) -> None:
    folder = make_checkpoint(tmp_path / "d", **PRUNED)
    args = ["fix", str(folder), "--target-vocab-size", "128", "--in-place", "--exit-non-zero-on-fix", *FOR_VLLM]
    first = run_cli(*args)
    assert first.returncode == 1 and "check passes" in first.stdout, first.stdout + first.stderr
    again = run_cli(*args)
    assert again.returncode == 0 and "nothing to do" in again.stdout


def test_checkpoint_folders_maps_hook_file_names(tmp_path: Path) -> None:
    a = make_checkpoint(tmp_path / "drafts" / "a", **PRUNED)
    b = make_checkpoint(tmp_path / "drafts" / "b", shards=2, **PRUNED)
    (tmp_path / "tools").mkdir()
    (tmp_path / "tools" / "config.json").write_text("{}")  # another tool's config: no weights beside it
    names = ["drafts/a/config.json", "drafts/a/model.safetensors", "tools/config.json",
             "drafts/b/model.safetensors.index.json", "drafts/b/model-00002-of-00002.safetensors"]
    done = run_cli("fix", "--in-place", "--safe-only", "--checkpoint-folders", "--target-vocab-size", "128",
                   "--format", "json", *FOR_VLLM, *names, cwd=tmp_path)
    docs = json.loads(done.stdout)["checkpoints"]
    assert done.returncode == 0, done.stderr
    assert [Path(d["source"]).relative_to(tmp_path).as_posix() for d in docs] == ["drafts/a", "drafts/b"]
    assert all(d["status"] == "applied" for d in docs)
    assert (a / "dspark-fix-d2t.safetensors").is_file() and (b / "dspark-fix-d2t.safetensors").is_file()
    assert (tmp_path / "tools" / "config.json").read_text() == "{}"


def test_settings_file_supplies_target_and_runtime(tmp_path: Path) -> None:
    make_checkpoint(tmp_path / "d", **PADDED)
    (tmp_path / "dspark-ckpt.toml").write_text('target-vocab-size = 96\nruntime = ["vllm==0.29.0"]\n')

    def plan(*extra: str) -> dict:
        run = run_cli("fix", "d", "--dry-run", "--format", "json", *extra, cwd=tmp_path)
        assert run.returncode in (0, 1), run.stderr
        return json.loads(run.stdout)["checkpoints"][0]

    doc = plan()
    assert doc["target_vocab_size"] == 96 and doc["runtimes"] == ["vllm==0.29.0"] and doc["strategy"] == "trim"
    assert plan("--for", "vllm==0.33.0")["runtimes"] == ["vllm==0.33.0"]  # the flag overrides the file
    assert plan("--target-vocab-size", "100")["status"] == "nothing-to-do"  # D == T: nothing to repair
    isolated = run_cli("fix", "d", "--dry-run", "--isolated", cwd=tmp_path)
    assert isolated.returncode == 2 and "[DSP-E061]" in isolated.stderr  # no T without the file
    other = tmp_path / "elsewhere.toml"
    other.write_text('target-vocab-size = 96\nruntime = "vllm==0.30.0"\n')
    assert plan("--settings", str(other))["runtimes"] == ["vllm==0.30.0"]
    both = run_cli("fix", "d", "--settings", str(other), "--isolated", cwd=tmp_path)
    assert both.returncode == 2 and "[DSP-E024]" in both.stderr  # settings.py's own error, as for check


def test_push_rejects_local_only_options() -> None:
    run = run_cli("fix", "org/draft", "--push", "--safe-only", "--target-vocab-size", "96")
    assert run.returncode == 2 and "[DSP-E072]" in run.stderr


def hook_repo(root: Path, draft: dict, settings: str) -> Path:
    root.mkdir()
    git(root, "init", "-q")
    make_checkpoint(root / "drafts" / "d", **draft)
    (root / "tools").mkdir()
    (root / "tools" / "config.json").write_text("{}")
    (root / "pyproject.toml").write_text(f"[tool.dspark-ckpt]\n{settings}")
    git(root, "add", "-A")
    return root


@pytest.mark.slow  # the first builds the hook environment (a venv with this project), once a run
def test_fix_safe_hook_applies_metadata_only_and_refuses_rewrites(tmp_path: Path, hook_env: dict[str, str]) -> None:
    meta = hook_repo(tmp_path / "meta", PRUNED, 'target-vocab-size = 128\nruntime = ["vllm==0.30.0"]\n')
    draft = meta / "drafts" / "d"
    weights = sha(draft / "model.safetensors")
    first = run_hook(meta, hook_env, "dspark-ckpt-fix-safe")
    out = flat(first.stdout)
    assert first.returncode == 1, first.stdout + first.stderr  # new files were written: stage them, then commit
    assert "dspark-ckpt fix (metadata-only repairs)" in out and "Failed" in out and "strategy rebuild-d2t" in out
    assert (draft / "dspark-fix-d2t.safetensors").is_file() and (draft / "model.safetensors.index.json").is_file()
    assert sha(draft / "model.safetensors") == weights and (meta / "tools" / "config.json").read_text() == "{}"
    assert sorted(p.name for p in (meta / "drafts").iterdir()) == ["d"], "no lock or staging folder left"
    assert run_cli("check", str(draft), "--target-vocab-size", "128", "--runtime", "vllm==0.30.0").returncode == 0
    git(meta, "add", "-A")
    second = run_hook(meta, hook_env, "dspark-ckpt-fix-safe")
    assert second.returncode == 0 and "Passed" in second.stdout, second.stdout + second.stderr

    rewrite = hook_repo(tmp_path / "rewrite", PADDED, 'target-vocab-size = 96\nruntime = ["vllm==0.29.0"]\n')
    before = tree_digest(rewrite / "drafts")
    refused = run_hook(rewrite, hook_env, "dspark-ckpt-fix-safe")
    assert refused.returncode == 1, refused.stdout + refused.stderr
    assert "skipped (--safe-only): trim is not a metadata-only repair" in flat(refused.stdout)
    assert "files were modified" not in refused.stdout and tree_digest(rewrite / "drafts") == before
