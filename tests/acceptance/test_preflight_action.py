"""The composite GitHub Action: its script run with exactly the environment the runner would build from action.yml."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml
from conftest import make_checkpoint

REPO = Path(__file__).parents[2]
ACTION = yaml.safe_load((REPO / "action.yml").read_text())
SCHEMA = json.loads((REPO / "tests" / "data" / "sarif-schema-2.1.0.json").read_text())
INPUT_EXPR = re.compile(r"^\$\{\{\s*inputs\.([a-z-]+)\s*\}\}$")


def step() -> dict[str, Any]:
    (only,) = ACTION["runs"]["steps"]
    return only


def runner_env(inputs: dict[str, str], workspace: Path) -> dict[str, str]:
    """What the runner does: evaluate each `env:` expression against the inputs (or their defaults)."""
    env = {}
    for name, expr in step()["env"].items():
        key = INPUT_EXPR.match(expr)[1]  # type: ignore[index]
        env[name] = inputs.get(key, str(ACTION["inputs"][key].get("default", "")))
    return {
        **env,
        "PATH": os.environ["PATH"], "HOME": str(workspace), "GITHUB_ACTION_PATH": str(REPO),
        "GITHUB_WORKSPACE": str(workspace), "GITHUB_STEP_SUMMARY": str(workspace / "summary.md"),
        "GITHUB_OUTPUT": str(workspace / "output.txt"), "CI": "true",
        # Stand-in for the action's own `pip install` (the `install` input is "false" here): import from the checkout.
        "PYTHONPATH": str(REPO),
    }


def run_action(workspace: Path, extra_env: dict[str, str] | None = None,
               **inputs: str) -> subprocess.CompletedProcess[str]:
    inputs = {"install": "false", "python": sys.executable, **inputs}
    script = workspace / "step.sh"
    script.write_text(step()["run"])
    # GitHub runs `shell: bash` steps as `bash --noprofile --norc -eo pipefail {0}`.
    return subprocess.run(["bash", "--noprofile", "--norc", "-eo", "pipefail", str(script)], check=False, cwd=workspace,
                          env={**runner_env(inputs, workspace), **(extra_env or {})}, capture_output=True, text=True,
                          timeout=120)


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    make_checkpoint(tmp_path / "drafts" / "padded", vocab=120, draft_vocab=120, target_vocab=96)
    make_checkpoint(tmp_path / "drafts" / "with space", vocab=96, draft_vocab=96, target_vocab=96)
    return tmp_path


def test_inputs_reach_the_script_only_through_env() -> None:
    assert ACTION["runs"]["using"] == "composite"
    s = step()
    assert s["shell"] == "bash" and "${{" not in s["run"]
    referenced = [INPUT_EXPR.match(v)[1] for v in s["env"].values()]  # type: ignore[index]
    assert sorted(referenced) == sorted(ACTION["inputs"])  # every input, once, and nothing else
    assert "${{" not in (REPO / "scripts" / "action.sh").read_text()


def test_failing_draft_annotates_summarises_and_writes_reports(workspace: Path) -> None:
    result = run_action(workspace, checkpoints="drafts/padded\ndrafts/with space\n", **{
        "target-vocab-size": "96", "runtime": "vllm==0.29.0, sglang", "sarif-file": "out/../report.sarif",
        "junit-file": "report.xml"})
    assert result.returncode == 1, result.stdout + result.stderr
    assert result.stdout.startswith("::error file=drafts/padded/config.json,line=1,title=DSP302")
    assert "exit-code=1" in (workspace / "output.txt").read_text()
    summary = (workspace / "summary.md").read_text()
    assert "### drafts/padded" in summary and "### drafts/with space" in summary
    jsonschema.Draft4Validator(SCHEMA).validate(json.loads((workspace / "report.sarif").read_text()))
    suites = ET.parse(workspace / "report.xml").getroot().findall("testsuite")
    assert [s.get("name") for s in suites] == ["drafts/padded", "drafts/with space"]


def test_exit_zero_and_policy_inputs(workspace: Path) -> None:
    args = {"checkpoints": "drafts/padded", "target-vocab-size": "96", "runtime": "vllm==0.29.0"}
    assert run_action(workspace, **args, **{"exit-zero": "true"}).returncode == 0
    assert run_action(workspace, **args, ignore="DSP302").returncode == 0
    assert run_action(workspace, **args, select="DSP1 DSP2", **{"extend-select": "DSP302"}).returncode == 1
    assert run_action(workspace, **{**args, "runtime": "sglang"}, **{"fail-on": "warning"}).returncode == 1


def test_operational_errors_fail_even_with_exit_zero(workspace: Path) -> None:
    missing = run_action(workspace, checkpoints="./drafts/typo", **{"exit-zero": "true", "target-vocab-size": "96"})
    assert missing.returncode == 2 and "DSP-E010" in missing.stderr
    assert "exit-code=2" in (workspace / "output.txt").read_text()
    assert run_action(workspace, checkpoints="\n  \n").returncode == 2


def test_inputs_are_data_not_shell(workspace: Path) -> None:
    canary = workspace / "pwned"
    hostile = {"checkpoints": f"$(touch {canary})\n`touch {canary}`; touch {canary}",
               "runtime": f"$(touch {canary})", "target-vocab-size": "96"}
    result = run_action(workspace, **hostile)
    assert result.returncode == 2
    assert not canary.exists()


def test_allow_no_target_input(workspace: Path) -> None:
    """Without T the step exits 2 (DSP-E038), as check does; the allow-no-target input passes --allow-no-target."""
    blind = run_action(workspace, checkpoints="./drafts/with space")
    assert blind.returncode == 2 and "DSP-E038" in blind.stdout + blind.stderr, blind.stdout + blind.stderr
    allowed = run_action(workspace, checkpoints="./drafts/with space", **{"allow-no-target": "true"})
    assert allowed.returncode == 0, allowed.stdout + allowed.stderr
    assert (workspace / "output.txt").read_text().splitlines()[-1] == "exit-code=0"


def counting_python(workspace: Path) -> Path:
    """An interpreter that logs each command line it runs, then is the real one: how many checks the step ran."""
    shim = workspace / "bin" / "python"
    shim.parent.mkdir()
    shim.write_text(f'#!/bin/sh\nprintf "%s\\n" "$*" >> "{workspace / "runs.log"}"\nexec "{sys.executable}" "$@"\n')
    shim.chmod(0o755)
    return shim


def test_one_check_renders_the_annotations_sarif_and_junit(workspace: Path) -> None:
    """Asked for SARIF and JUnit, the step runs check once; the three renderings come from the same report."""
    result = run_action(workspace, python=str(counting_python(workspace)), checkpoints="drafts/padded\n", **{
        "target-vocab-size": "96", "runtime": "vllm==0.29.0", "sarif-file": "out/r.sarif",
        "junit-file": "out/r.xml"})
    assert result.returncode == 1, result.stdout + result.stderr
    runs = (workspace / "runs.log").read_text().splitlines()
    assert len(runs) == 1 and "--report sarif=out/r.sarif" in runs[0] and "--report junit=out/r.xml" in runs[0]
    sarif = json.loads((workspace / "out" / "r.sarif").read_text())
    junit = ET.parse(workspace / "out" / "r.xml").getroot()
    annotated = set(re.findall(r"^::error [^:]*title=(DSP\d+)", result.stdout, re.MULTILINE))
    assert annotated == {r["ruleId"] for r in sarif["runs"][0]["results"] if r["level"] == "error"}
    assert annotated == {f.get("type") for f in junit.iter("failure")}


def test_token_and_revision_inputs(workspace: Path) -> None:
    """The token reaches the check as HF_TOKEN (never on its command line); the revision as --revision."""
    shim = counting_python(workspace)
    env_log = workspace / "env.log"
    shim.write_text(shim.read_text().replace("exec ", f'printf "%s\\n" "$HF_TOKEN" >> "{env_log}"\nexec ', 1))
    secret = "hf_ThIsIsAsEcReT0123456789"
    nowhere = {"HF_ENDPOINT": "http://127.0.0.1:9", "DSPARK_CKPT_HUB_RETRIES": "0"}  # no Hub: refused at once
    result = run_action(workspace, nowhere, python=str(shim), checkpoints="some-org/some-draft\n",
                        **{"target-vocab-size": "96", "token": secret, "revision": "v1.0"})
    (run,) = (workspace / "runs.log").read_text().splitlines()
    assert "some-org/some-draft@v1.0" in run or "--revision v1.0" in run
    assert secret not in run and env_log.read_text().strip() == secret
    assert secret not in result.stdout + result.stderr
    assert result.returncode == 2  # the Hub is unreachable here: an operational error, never a pass


def test_a_report_folder_that_cannot_be_made_fails_the_step_but_the_check_still_annotates(workspace: Path) -> None:
    (workspace / "blocker").write_text("a file where the folder should be")
    result = run_action(workspace, checkpoints="drafts/padded\n", **{
        "target-vocab-size": "96", "runtime": "vllm==0.29.0", "sarif-file": "blocker/r.sarif"})
    assert result.returncode == 2
    assert "::error title=dspark-ckpt::sarif-file: cannot create the folder" in result.stderr
    assert "::error file=drafts/padded/config.json" in result.stdout
