"""pre-commit judges what is committed (issue 41, item 4): with the fix-safe and check hooks, a draft lacking d2t fails
its first `git commit` (fix-safe wrote a d2t shard and an index), and a second `git commit` without `git add` must
fail too, since the commit would hold neither; once staged, it passes. A real repository, a real `git commit`."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from conftest import git, make_checkpoint, run_cli

PRUNED = {"vocab": 128, "draft_vocab": 64, "target_vocab": 128, "d2t": False, "t2d": True,
          "config_extra": {"markov_head_type": "vanilla"}}


def commit(repo: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    identity = ["-c", "user.name=t", "-c", "user.email=t@example.com", "-c", "commit.gpgsign=false"]
    return subprocess.run(["git", *identity, "commit", "-qm", "draft"], cwd=repo, env=env, capture_output=True,
                          text=True, timeout=600, check=False)


def user_repo(root: Path, env: dict[str, str]) -> Path:
    root.mkdir()
    git(root, "init", "-q")
    make_checkpoint(root / "drafts" / "d", **PRUNED)
    (root / "pyproject.toml").write_text('[tool.dspark-ckpt]\ntarget-vocab-size = 128\nruntime = ["vllm==0.30.0"]\n')
    tool = Path(env["TOOL_REPO"])
    rev = subprocess.run(["git", "rev-parse", "HEAD"], cwd=tool, capture_output=True, text=True, check=True).stdout
    (root / ".pre-commit-config.yaml").write_text(
        f"repos:\n  - repo: {tool}\n    rev: {rev.strip()}\n    hooks:\n"
        "      - id: dspark-ckpt-fix-safe\n      - id: dspark-ckpt-check\n")
    subprocess.run([sys.executable, "-m", "pre_commit", "install"], cwd=root, env=env, check=True,
                   capture_output=True)
    git(root, "add", "-A")
    return root


def test_a_second_commit_without_git_add_still_fails(tmp_path: Path, hook_env: dict[str, str]) -> None:
    repo = user_repo(tmp_path / "user", hook_env)
    first = commit(repo, hook_env)
    assert first.returncode != 0, first.stdout + first.stderr
    assert (repo / "drafts" / "d" / "model.safetensors.index.json").is_file()  # fix-safe wrote it, untracked
    second = commit(repo, hook_env)
    out = second.stdout + second.stderr
    assert second.returncode != 0, out
    assert "DSP-E014" in out and "git add" in out and "model.safetensors.index.json" in out, out
    git(repo, "add", "-A")
    third = commit(repo, hook_env)
    assert third.returncode == 0, third.stdout + third.stderr
    # what was committed checks clean from a fresh checkout
    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "-q", str(repo), str(clone)], check=True, capture_output=True)
    done = run_cli("check", "drafts/d", cwd=clone)
    assert done.returncode == 0, done.stdout + done.stderr


def test_the_check_hook_passes_a_clean_staged_draft(tmp_path: Path) -> None:
    repo = tmp_path / "clean"
    repo.mkdir()
    git(repo, "init", "-q")
    make_checkpoint(repo / "drafts" / "d", vocab=96, draft_vocab=96, target_vocab=96)
    (repo / "drafts" / "d" / "notes.txt").write_text("untracked, but no checkpoint file")
    git(repo, "add", "drafts/d/config.json", "drafts/d/model.safetensors")
    done = run_cli("check", "--checkpoint-folders", "--quiet", "drafts/d/config.json", "--target-vocab-size", "96",
                   "--runtime", "vllm==0.30.0", "--isolated", cwd=repo)
    assert done.returncode == 0, done.stdout + done.stderr
    (repo / "drafts" / "d" / "extra.safetensors").write_bytes((repo / "drafts" / "d" / "model.safetensors").read_bytes())
    done = run_cli("check", "--checkpoint-folders", "--quiet", "drafts/d/config.json", "--target-vocab-size", "96",
                   "--runtime", "vllm==0.30.0", "--isolated", cwd=repo)
    assert done.returncode == 2 and "DSP-E014" in done.stderr and "extra.safetensors" in done.stderr, done.stderr
    assert os.path.exists(repo / "drafts" / "d" / "extra.safetensors")
