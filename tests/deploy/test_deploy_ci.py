"""The deploy file in CI: `speculative-config = "deploy/spec.json"` in [tool.dspark-ckpt] makes the pre-commit hook
(run for real with `pre-commit run`, this project as the hook repository) and the GitHub Action (its script, with
the runner's environment) check the deploy file with the checkpoint it names."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from conftest import git, make_checkpoint, pre_commit_run

REPO = Path(__file__).parents[2]
ACTION = yaml.safe_load((REPO / "action.yml").read_text())
INPUT_EXPR = re.compile(r"^\$\{\{\s*inputs\.([a-z-]+)\s*\}\}$")
GOOD = {"method": "dspark", "model": "drafts/d", "num_speculative_tokens": 8}
BAD = {"model": "drafts/d"}  # no num_speculative_tokens: vLLM 0.29 refuses to start (DSP811)


def user_repo(root: Path, spec: dict[str, object], *, settings: bool = True) -> Path:
    root.mkdir()
    make_checkpoint(root / "drafts" / "d", vocab=96, draft_vocab=96, target_vocab=96)
    (root / "deploy").mkdir()
    (root / "deploy" / "spec.json").write_text(json.dumps(spec))
    (root / "pyproject.toml").write_text('[tool.dspark-ckpt]\ntarget-vocab-size = 96\nruntime = ["vllm==0.29.0"]\n'
                                         + ('speculative-config = "deploy/spec.json"\n' if settings else ""))
    return root


# --- the GitHub Action ---
def run_action(workspace: Path, **inputs: str) -> subprocess.CompletedProcess[str]:
    (step,) = ACTION["runs"]["steps"]
    inputs = {"install": "false", "python": sys.executable, **inputs}
    env = {name: inputs.get(INPUT_EXPR.match(expr)[1], str(ACTION["inputs"][INPUT_EXPR.match(expr)[1]]  # type: ignore[index]
                                                              .get("default", "")))
           for name, expr in step["env"].items()}
    env |= {"PATH": os.environ["PATH"], "HOME": str(workspace), "GITHUB_ACTION_PATH": str(REPO),
            "GITHUB_WORKSPACE": str(workspace), "GITHUB_STEP_SUMMARY": str(workspace / "summary.md"),
            "GITHUB_OUTPUT": str(workspace / "output.txt"), "CI": "true", "PYTHONPATH": os.pathsep.join(
                p for p in (str(REPO), os.environ.get("PYTHONPATH", "")) if p)}
    script = workspace / "step.sh"
    script.write_text(step["run"])
    return subprocess.run(["bash", "--noprofile", "--norc", "-eo", "pipefail", str(script)], cwd=workspace, env=env,
                          capture_output=True, text=True, timeout=120, check=False)


def test_the_action_checks_the_deploy_file_the_settings_name(tmp_path: Path) -> None:
    bad = run_action(user_repo(tmp_path / "bad", BAD))
    assert bad.returncode == 1, bad.stdout + bad.stderr
    assert "title=DSP811" in bad.stdout and "drafts/d" in bad.stdout
    assert "### drafts/d" in (tmp_path / "bad" / "summary.md").read_text()
    good = run_action(user_repo(tmp_path / "good", GOOD))
    assert good.returncode == 0, good.stdout + good.stderr
    assert "exit-code=0" in (tmp_path / "good" / "output.txt").read_text()


def test_the_action_input_names_the_deploy_file(tmp_path: Path) -> None:
    repo = user_repo(tmp_path / "repo", GOOD, settings=False)
    (repo / "deploy" / "bad.json").write_text(json.dumps(BAD))
    assert run_action(repo, **{"speculative-config": "deploy/spec.json"}).returncode == 0
    result = run_action(repo, checkpoints="drafts/d", **{"speculative-config": "deploy/bad.json"})
    assert result.returncode == 1 and "title=DSP811" in result.stdout
    nothing = run_action(repo)  # no checkpoints and no speculative config anywhere
    assert nothing.returncode == 2 and "checkpoints input is empty" in nothing.stderr
    assert "DSP-E026" in nothing.stderr


# --- the pre-commit hook ---
def run_hook(repo: Path, env: dict[str, str], *files: str) -> subprocess.CompletedProcess[str]:
    git(repo, "init", "-q")
    git(repo, "add", "-A")
    return pre_commit_run(repo, env, "dspark-ckpt-check", *files)


@pytest.mark.slow  # the first builds the hook environment (a venv with this project), once a run
def test_the_hook_runs_on_the_deploy_file_and_checks_it_with_its_checkpoint(tmp_path: Path,
                                                                          hook_env: dict[str, str]) -> None:
    bad = run_hook(user_repo(tmp_path / "bad", BAD), hook_env, "deploy/spec.json")  # only the deploy file changed
    assert bad.returncode == 1, bad.stdout + bad.stderr
    assert "DSP811" in bad.stdout and "drafts/d" in bad.stdout
    good = run_hook(user_repo(tmp_path / "good", GOOD), hook_env)
    assert good.returncode == 0, good.stdout + good.stderr
    assert "Passed" in good.stdout
