"""The pre-commit hooks, run for real: `pre-commit run` with a config naming this project (a committed copy) as
the hook repository installs it into a hook environment, once per test run (conftest.hook_env, pre_commit_run).

Offline and quick: the hook's virtualenv sees the test interpreter's site-packages through PYTHONPATH, so pip finds
every dependency already installed and builds only dspark-ckpt itself (no index, no build isolation).
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
import yaml
from conftest import git, make_checkpoint, pre_commit_run

REPO = Path(__file__).parents[2]


def user_repo(root: Path, *, padded: bool) -> Path:
    root.mkdir()
    git(root, "init", "-q")
    make_checkpoint(root / "drafts" / "d", vocab=120 if padded else 96, draft_vocab=120 if padded else 96,
                    target_vocab=96)
    (root / "tools").mkdir()
    (root / "tools" / "config.json").write_text("{}")  # some other tool's config: must not be checked
    (root / "pyproject.toml").write_text('[tool.dspark-ckpt]\ntarget-vocab-size = 96\nruntime = ["vllm==0.29.0"]\n')
    git(root, "add", "-A")
    return root


def run_hook(repo: Path, env: dict[str, str], hook: str) -> subprocess.CompletedProcess[str]:
    return pre_commit_run(repo, env, hook)


def test_hook_definitions() -> None:
    hooks = {h["id"]: h for h in yaml.safe_load((REPO / ".pre-commit-hooks.yaml").read_text())}
    assert set(hooks) == {"dspark-ckpt-check", "dspark-ckpt-fix-safe"}
    for hook in hooks.values():
        assert hook["language"] == "python" and hook["entry"].startswith("dspark-ckpt ")
    assert "--safe-only" in hooks["dspark-ckpt-fix-safe"]["entry"]


@pytest.mark.slow  # the first builds the hook environment (a venv with this project), once a run
def test_check_hook_blocks_a_broken_draft_and_passes_a_good_one(tmp_path: Path, hook_env: dict[str, str]) -> None:
    bad = run_hook(user_repo(tmp_path / "bad", padded=True), hook_env, "dspark-ckpt-check")
    assert bad.returncode == 1, bad.stdout + bad.stderr
    assert "dspark-ckpt check" in bad.stdout and "Failed" in bad.stdout
    assert "DSP302" in bad.stdout and "drafts/d" in bad.stdout and "tools" not in bad.stdout.split("Failed", 1)[1]
    good = run_hook(user_repo(tmp_path / "good", padded=False), hook_env, "dspark-ckpt-check")
    assert good.returncode == 0, good.stdout + good.stderr
    assert "Passed" in good.stdout
