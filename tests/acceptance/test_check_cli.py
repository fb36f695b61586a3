"""The check CLI through a real subprocess: exit codes, JSON shape, no torch, rules/explain."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import pytest
from conftest import make_checkpoint, run_cli

from dspark_ckpt.model.rule_catalog import RULES

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "inkling-small-dspark"
EXAMPLE_TARGET = ROOT / "examples" / "inkling-small-target"


def test_example_from_readme() -> None:
    result = run_cli("check", str(EXAMPLE), "--target", str(EXAMPLE_TARGET))
    assert result.returncode == 1, result.stderr
    assert "padded (D > T)" in result.stdout
    assert "T=200058" in result.stdout and "D=201024" in result.stdout
    assert "Traceback" not in result.stderr


def test_json_schema_contract(tmp_path: Path) -> None:
    result = run_cli("check", str(EXAMPLE), "--target-vocab-size", "200058", "--runtime", "vllm==0.29.0",
                     "--format", "json")
    doc = json.loads(result.stdout)
    assert doc["schema_version"] == 1
    (ckpt,) = doc["checkpoints"]
    for key in ("source", "family", "architecture", "draft_vocab_size", "input_vocab_size", "target_vocab_size",
                "vocab_kind", "compatibility", "findings"):
        assert key in ckpt
    assert (ckpt["vocab_kind"], ckpt["draft_vocab_size"], ckpt["target_vocab_size"]) == ("padded", 201024, 200058)
    (entry,) = ckpt["compatibility"]
    assert entry == {**entry, "runtime": "vllm", "version": "0.29.0", "loads": False, "silent": []}
    assert entry["error"].startswith("Reduced-vocabulary Qwen3 DSpark checkpoints must include a d2t mapping")
    for f in ckpt["findings"]:
        assert set(f) >= {"code", "severity", "message", "file", "tensor"}
    assert result.returncode == 1


def test_exit_zero_when_it_loads_on_the_chosen_runtime() -> None:
    result = run_cli("check", str(EXAMPLE), "--target-vocab-size", "200058", "--runtime", "vllm==0.33.0")
    assert result.returncode == 0, result.stdout
    assert "DSP305" in result.stdout  # the padded-row warning stays visible
    assert run_cli("check", str(EXAMPLE), "--target-vocab-size", "200058", "--runtime", "vllm==0.33.0",
                   "--fail-on", "warning").returncode == 1


def test_without_target_structural_checks_run_and_exit_two_unless_allowed(tmp_path: Path) -> None:
    """No T: no runtime contract is evaluated, so the run is no pass (DSP-E038) unless --allow-no-target."""
    path = make_checkpoint(tmp_path / "d")
    refused = run_cli("check", str(path), "--format", "json")
    assert refused.returncode == 2 and "[DSP-E038]" in refused.stderr and "--target" in refused.stderr
    assert json.loads(refused.stdout)["checkpoints"][0]["findings"][0]["code"] == "DSP206"  # the report is there
    result = run_cli("check", str(path), "--format", "json", "--allow-no-target")
    assert result.returncode == 0
    codes = [f["code"] for f in json.loads(result.stdout)["checkpoints"][0]["findings"]]
    assert codes == ["DSP206"]


def test_structural_error_without_target_still_fails(tmp_path: Path) -> None:
    path = make_checkpoint(tmp_path / "d")
    with open(path / "model.safetensors", "ab") as f:
        f.write(b"junk")
    result = run_cli("check", str(path))
    assert result.returncode == 1 and "DSP015" in result.stdout


@pytest.mark.parametrize("args", [
    ["check", "/no/such/draft"],
    ["check", "{EX}", "--target", "/no/such/target"],
    ["check", "{EX}", "--runtime", "vllm==not-a-version"],  # a newer release is a DSP220 warning, not exit 2
    ["check", "{EX}", "--runtime", "vllm>=0.99"],  # a range matching no known release
    ["check", "{EX}", "--runtime", "tgi"],
    ["check", "{EX}", "--target-vocab-size", "0"],
    ["check", "{EX}", "--target", "{EX}", "--target-vocab-size", "5"],
    ["explain", "DSP999"],
    ["check", "{EX}", "--format", "yaml"],
])
def test_usage_errors_exit_2_without_traceback(args: list[str]) -> None:
    result = run_cli(*[a.replace("{EX}", str(EXAMPLE)) for a in args])
    assert result.returncode == 2, (result.stdout, result.stderr)
    assert "Traceback" not in result.stderr and result.stderr.strip()


def test_unusable_target_config_is_exit_2(tmp_path: Path) -> None:
    target = tmp_path / "t"
    target.mkdir()
    (target / "config.json").write_text('{"text_config": {}}')
    result = run_cli("check", str(EXAMPLE), "--target", str(target))
    assert result.returncode == 2 and "DSP-E035" in result.stderr


def test_check_never_imports_torch(tmp_path: Path) -> None:
    path = make_checkpoint(tmp_path / "d", vocab=100, draft_vocab=40, target_vocab=100, d2t=True, t2d=True)
    code = ("import sys; from dspark_ckpt.cli.app import main\n"
            "try:\n    main(['check', sys.argv[1], '--target-vocab-size', '100', '--format', 'json'])\n"
            "except SystemExit:\n    pass\n"
            "assert 'torch' not in sys.modules, 'torch was imported'\nprint('NO-TORCH')")
    import subprocess
    result = subprocess.run([sys.executable, "-c", code, str(path)], capture_output=True, text=True)
    assert "NO-TORCH" in result.stdout, result.stderr


def test_rules_and_explain_cover_every_code() -> None:
    listed = run_cli("rules").stdout
    assert set(re.findall(r"^(DSP\d{3})", listed, flags=re.MULTILINE)) == set(RULES)
    explained = run_cli("explain", "dsp301")
    assert explained.returncode == 0
    for section in ("What it means", "Why it matters", "Example", "How to fix"):
        assert section in explained.stdout


def test_version_flag() -> None:
    result = run_cli("--version")
    assert result.returncode == 0 and re.match(r"dspark-ckpt \d+\.\d+\.\d+", result.stdout)


def test_omni_target_is_read_from_the_thinker_and_validates_the_draft(tmp_path: Path) -> None:
    target = tmp_path / "omni-target"
    target.mkdir()
    (target / "config.json").write_text(json.dumps({
        "model_type": "qwen3_omni_moe", "architectures": ["Qwen3OmniMoeForConditionalGeneration"],
        "thinker_config": {"text_config": {"vocab_size": 96}}}))
    generic = make_checkpoint(tmp_path / "generic")
    result = run_cli("check", str(generic), "--target", str(target), "--format", "json", "--runtime", "vllm")
    (ckpt,) = json.loads(result.stdout)["checkpoints"]
    assert ckpt["target_vocab_size"] == 96
    assert ckpt["target_vocab_source"].endswith("thinker_config.text_config.vocab_size")
    errors = {e["version"]: e["error"] for e in ckpt["compatibility"]}
    assert errors["0.28.0"] is None
    assert errors["0.29.0"].startswith("Qwen3-Omni DSpark requires a standalone draft checkpoint")
    assert result.returncode == 1
