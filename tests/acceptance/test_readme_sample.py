"""The README's samples are the real thing (issue 41, item 6): the shipped example's check and fix output verbatim,
a pre-commit configuration that runs as pasted, and an Action block whose inputs action.yml takes."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import yaml
from conftest import REPO, git, make_checkpoint, run_cli

README = (REPO / "README.md").read_text()
EXAMPLE = ("examples/inkling-small-dspark", "--target", "examples/inkling-small-target")
FIRST_COMMANDS = """```bash
pip install -e . && dspark-ckpt check examples/inkling-small-dspark --target examples/inkling-small-target
pip install torch==2.13.0 && pip install -e '.[test,torch]' && python -m pytest -q
```"""


def blocks(lang: str) -> list[str]:
    return re.findall(rf"^```{lang}\n(.*?)^```", README, flags=re.DOTALL | re.MULTILINE)


def test_the_first_commands_block_is_unchanged() -> None:
    assert FIRST_COMMANDS in README


def test_the_check_sample_is_the_real_run_verbatim() -> None:
    done = run_cli("check", *EXAMPLE, "--isolated", cwd=REPO)
    assert done.returncode == 1
    assert f"```\n{done.stdout}```" in README, "README's check sample differs from the real run: paste it again"
    lines = done.stdout.splitlines()
    assert any(": FAIL (" in line for line in lines[:10]) and max(map(len, lines)) <= 200


def test_the_fix_sample_is_the_real_run_verbatim() -> None:
    done = run_cli("fix", *EXAMPLE, "--dry-run", "--isolated", cwd=REPO)
    assert f"```\n{done.stdout}```" in README, "README's fix sample differs from the real run: paste it again"


def test_the_action_block_uses_the_actions_inputs() -> None:
    inputs = set(yaml.safe_load((REPO / "action.yml").read_text())["inputs"])
    (workflow,) = [yaml.safe_load(b) for b in blocks("yaml") if "jobs:" in b]
    steps = workflow["jobs"]["preflight"]["steps"]
    (ours,) = [s for s in steps if s.get("uses", "").endswith("dspark-ckpt")]
    assert ours["uses"].startswith("./") and set(ours["with"]) <= inputs


def test_the_pre_commit_block_runs_as_pasted(tmp_path: Path) -> None:
    (config,) = [b for b in blocks("yaml") if "repos:" in b]
    bin_dir = tmp_path / "bin"  # `pip install ./tools/dspark-ckpt`: the console script, this tree
    bin_dir.mkdir()
    script = bin_dir / "dspark-ckpt"
    script.write_text(f"#!/bin/sh\nexec {sys.executable} -m dspark_ckpt \"$@\"\n")
    script.chmod(0o755)
    env = {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}", "PYTHONPATH": str(REPO),
           "PRE_COMMIT_HOME": str(tmp_path / "cache"), "NO_COLOR": "1"}
    repo = tmp_path / "user"
    repo.mkdir()
    git(repo, "init", "-q")
    make_checkpoint(repo / "drafts" / "d", vocab=120, draft_vocab=120, target_vocab=96)  # DSP302 on vLLM 0.29
    (repo / "pyproject.toml").write_text('[tool.dspark-ckpt]\ntarget-vocab-size = 96\nruntime = ["vllm==0.29.0"]\n')
    (repo / ".pre-commit-config.yaml").write_text(config)
    git(repo, "add", "-A")
    done = subprocess.run([sys.executable, "-m", "pre_commit", "run", "--all-files"], cwd=repo, env=env,
                          capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 1 and "DSP302" in done.stdout, done.stdout + done.stderr
    assert "dspark-ckpt check" in done.stdout and "Failed" in done.stdout
