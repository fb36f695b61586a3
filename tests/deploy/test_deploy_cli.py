"""`check --speculative-config` through the real CLI: the issue's two commands, the settings key, exit codes, and
golden text/JSON of the deploy part of the report (UPDATE_GOLDEN=1 regenerates tests/deploy/golden/)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from conftest import make_checkpoint, run_cli
from listed import vllm_before, vllm_minors

from dspark_ckpt.runtimes.versions import VLLM_RELEASES

GOLDEN = Path(__file__).parent / "golden"
SPEC = {"method": "dspark", "model": "./drafts/my-dspark", "num_speculative_tokens": 8}


@pytest.fixture(scope="module")
def ws(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("deploy-cli")
    make_checkpoint(root / "drafts" / "my-dspark", vocab=96, draft_vocab=96, target_vocab=96,
                    config_extra={"block_size": 8})
    make_checkpoint(root / "drafts" / "eagle3-ablation" / "d", vocab=96, draft_vocab=96, target_vocab=96)
    (root / "target").mkdir()
    (root / "target" / "config.json").write_text(json.dumps({"vocab_size": 96}))
    (root / "deploy").mkdir()
    (root / "deploy" / "spec.json").write_text(json.dumps(SPEC))
    (root / "deploy" / "eagle3.json").write_text(json.dumps({"model": "drafts/eagle3-ablation/d",
                                                             "num_speculative_tokens": 8}))
    (root / "deploy" / "no-tokens.json").write_text(json.dumps({"model": "./drafts/my-dspark"}))
    return root


def check(ws: Path, *args: str, cwd: Path | None = None):
    return run_cli("check", *args, cwd=cwd or ws, env={"TERM": "dumb"})


def deploy(result) -> dict[str, dict[str, object]]:
    (checkpoint,) = json.loads(result.stdout)["checkpoints"]
    return {r["version"]: r for r in checkpoint["deploy"]["runtimes"]}


def test_the_issues_first_command(ws: Path) -> None:
    result = check(ws, "./drafts/my-dspark", "--target", "target", "--isolated", "--format", "json",
                   "--speculative-config", json.dumps(SPEC))
    assert result.returncode == 0, result.stdout + result.stderr
    doc = json.loads(result.stdout)["checkpoints"][0]["deploy"]
    assert doc["source"] == "--speculative-config" and doc["speculative_config"] == SPEC
    assert doc["model"] == "./drafts/my-dspark"
    assert [r["version"] for r in doc["runtimes"]] == list(VLLM_RELEASES)
    for r in doc["runtimes"]:
        if r["version"] in vllm_before("0.25.0"):
            # no method "dspark" in SpeculativeMethod (speculative.py @ v0.24.0 L60-69): shown, not gated by default
            # (the release predates Qwen3DSparkModel, registry.py @ v0.25.0 L597)
            assert (r["starts"], r["error_code"]) == (False, "DSP804"), r
            continue
        assert (r["method"], r["model_class"], r["num_speculative_tokens"], r["draft_vocab_size"], r["starts"]) == \
            ("dspark", "Qwen3DSparkForCausalLM", 8, 96, True)


def test_the_issues_second_command_checks_the_configs_model(ws: Path) -> None:
    result = check(ws, "--speculative-config", "deploy/spec.json", "--target", "target", "--isolated",
                   "--format", "json")
    assert result.returncode == 0, result.stdout + result.stderr
    (checkpoint,) = json.loads(result.stdout)["checkpoints"]
    assert checkpoint["source"] == "drafts/my-dspark" and checkpoint["deploy"]["source"] == "deploy/spec.json"


def test_a_failing_release_fails_the_gate_with_its_own_message(ws: Path) -> None:
    result = check(ws, "--speculative-config", "deploy/no-tokens.json", "--target", "target", "--isolated", "-v")  # whole messages: -v
    assert result.returncode == 1, result.stdout + result.stderr
    # 0.25/0.26 detect dspark from the path as 0.27 does (speculative.py L848-852 @ v0.25.0) and want the count
    # (L939-942 @ v0.25.0, L992-995 @ v0.26.0); before 0.25 the draft ModelConfig fails on Qwen3DSparkModel (DSP809)
    failing = ", ".join(f"vllm=={v}" for v in vllm_minors("0.25.0", "0.30.0"))
    assert f"DSP811 start-up fails on {failing}: A speculative " \
           "model was provided, but `num_speculative_tokens` was not provided" in " ".join(result.stdout.split())
    passing = check(ws, "--speculative-config", "deploy/no-tokens.json", "--target", "target", "--isolated",
                    "--runtime", "vllm>=0.31", "--format", "json")
    assert passing.returncode == 0, passing.stdout + passing.stderr
    assert {v: r["num_speculative_tokens_from"] for v, r in deploy(passing).items()} == \
        dict.fromkeys(("0.31.0", "0.32.0", "0.33.0", "0.34.0"), "the draft config's block_size")


@pytest.mark.parametrize(("args", "code", "says"), [
    ((), "DSP-E026", "no checkpoint given"),
    (("--speculative-config", '{"method": "dspark", "num_speculative_tokens": 8}'), "DSP-E026", "names no `model`"),
    (("--speculative-config", "{not json"), "DSP-E026", "is not valid JSON"),
    (("--speculative-config", "deploy/missing.json"), "DSP-E027", "deploy/missing.json: no such file"),
    (("--speculative-config", "deploy"), "DSP-E027", "is a directory"),
    (("drafts/my-dspark", "--speculative-config", ""), "DSP-E028", "is empty"),
])
def test_operational_errors_exit_2(ws: Path, args: tuple[str, ...], code: str, says: str) -> None:
    result = check(ws, *args, "--target-vocab-size", "96", "--isolated", "--exit-zero")
    assert result.returncode == 2, result.stdout + result.stderr
    assert code in result.stderr and says in result.stderr and "Traceback" not in result.stderr


@pytest.mark.parametrize(("spec", "code"), [("{not json", "DSP801"), ("[1, 2]", "DSP802")])
def test_bad_json_with_a_checkpoint_is_a_finding(ws: Path, spec: str, code: str) -> None:
    result = check(ws, "drafts/my-dspark", "--target-vocab-size", "96", "--isolated", "--format", "json",
                   "--speculative-config", spec)
    assert result.returncode == 1, result.stdout + result.stderr
    (checkpoint,) = json.loads(result.stdout)["checkpoints"]
    assert checkpoint["deploy"] == {"source": "--speculative-config", "speculative_config": None, "model": None,
                                    "runtimes": []}
    assert [f["code"] for f in checkpoint["findings"] if f["code"].startswith("DSP8")] == [code]


def test_the_config_goes_with_the_checkpoint_it_names_only(ws: Path) -> None:
    result = check(ws, "drafts/eagle3-ablation/d", "drafts/my-dspark", "--target-vocab-size", "96", "--isolated",
                   "--format", "json", "--speculative-config", "deploy/spec.json")
    other, named = json.loads(result.stdout)["checkpoints"]
    assert "deploy" not in other and named["deploy"]["model"] == "./drafts/my-dspark"
    paired = check(ws, "drafts/eagle3-ablation/d", "--target-vocab-size", "96", "--isolated", "--format", "json",
                   "--speculative-config", "deploy/spec.json")
    (checkpoint,) = json.loads(paired.stdout)["checkpoints"]
    (warning,) = [f for f in checkpoint["findings"] if f["code"] == "DSP806"]
    assert warning["severity"] == "warning" and "vLLM loads './drafts/my-dspark'" in warning["message"]


def test_the_settings_key_is_read_relative_to_the_settings_file(ws: Path, tmp_path: Path) -> None:
    project = ws / "project"
    (project / "sub").mkdir(parents=True, exist_ok=True)
    (project / "pyproject.toml").write_text('[tool.dspark-ckpt]\nspeculative-config = "../deploy/eagle3.json"\n'
                                            'target = "../target"\nruntime = ["vllm==0.29.0"]\n')
    result = check(ws, "--format", "json", cwd=ws)  # no settings here: nothing to check
    assert result.returncode == 2 and "DSP-E026" in result.stderr
    result = check(ws, "--format", "json", "--settings", "project/pyproject.toml")
    assert result.returncode == 1, result.stdout + result.stderr
    (r,) = deploy(result).values()
    assert (r["error_code"], r["method"], r["note_codes"]) == ("DSP809", "eagle3", ["DSP807"])
    assert json.loads(result.stdout)["checkpoints"][0]["deploy"]["source"] == "project/../deploy/eagle3.json"
    ignored = check(ws, "--settings", "project/pyproject.toml", "--speculative-config", "deploy/spec.json",
                    "--format", "json")
    assert ignored.returncode == 0 and deploy(ignored)["0.29.0"]["method"] == "dspark"  # the flag wins


GOLDEN_CASES = {
    "deploy-eagle3-path": ("--speculative-config", "deploy/eagle3.json", "--target", "target", "--runtime",
                           "vllm==0.28.0", "--runtime", "vllm==0.31.0"),
    "deploy-tokens": ("--speculative-config", "deploy/no-tokens.json", "--target", "target", "--runtime", "vllm"),
}


def deploy_part(stdout: str, fmt: str) -> str:
    """What the deploy preflight adds to the report (the rest of it is covered by tests/unit/test_render_golden.py):
    text from the Deploy table to the end, JSON the `deploy` object and the DSP8xx findings."""
    if fmt == "json":
        (checkpoint,) = json.loads(stdout)["checkpoints"]
        return json.dumps({"deploy": checkpoint["deploy"],
                           "findings": [f for f in checkpoint["findings"] if f["code"].startswith("DSP8")]},
                          indent=2) + "\n"
    lines = stdout.splitlines(keepends=True)
    start = next(i for i, line in enumerate(lines) if line.startswith("Deploy ("))
    return "".join(line for line in lines[start:] if not line.startswith("T: target vocab"))


@pytest.mark.parametrize("fmt", ["text", "json"])
@pytest.mark.parametrize("case", sorted(GOLDEN_CASES))
def test_golden(ws: Path, case: str, fmt: str) -> None:
    verbose = ("-v",) if fmt == "text" else ()  # the Deploy table is the long form's (issue 41)
    result = check(ws, *GOLDEN_CASES[case], "--isolated", "--select", "DSP8", "--format", fmt, *verbose)
    assert result.returncode == 1, result.stderr
    got = deploy_part(result.stdout, fmt)
    golden = GOLDEN / f"{case}.{'txt' if fmt == 'text' else 'json'}"
    if os.environ.get("UPDATE_GOLDEN"):
        golden.parent.mkdir(exist_ok=True)
        golden.write_text(got)
    assert golden.exists(), f"{golden} is missing; run with UPDATE_GOLDEN=1 to create it"
    assert got == golden.read_text(), f"{golden.name} differs; if intended, run with UPDATE_GOLDEN=1"
