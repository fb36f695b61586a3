"""A vLLM release older than the draft's architecture is shown, not gated by default (docs/check.md, "The default
gate"): a Qwen3 DSpark draft that loads from vLLM 0.25.0 on, where DSpark is first registered."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import make_checkpoint, run_cli
from listed import vllm_before

T96 = ("--target-vocab-size", "96", "--isolated")


@pytest.fixture(scope="module")
def draft(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_checkpoint(tmp_path_factory.mktemp("older") / "dspark", vocab=96, draft_vocab=96, target_vocab=96)


def test_the_default_run_shows_them_and_passes(draft: Path) -> None:
    done = run_cli("check", str(draft), *T96, "--no-color")
    assert done.returncode == 0, done.stdout + done.stderr
    older = vllm_before("0.25.0")  # no Qwen3DSparkModel in their registry (registry.py @ v0.25.0 L597 first)
    assert f"vllm {older[0]}-{older[-1]}" in done.stdout and "are not supported for now" in done.stdout
    assert "on vllm releases older than the draft's architecture)" in done.stdout
    sarif = json.loads(run_cli("check", str(draft), *T96, "--format", "sarif").stdout)
    gated = {r["ruleId"]: r["properties"]["gated"] for r in sarif["runs"][0]["results"]}
    assert gated.get("DSP309") is False


def test_naming_such_a_release_gates_on_it(draft: Path) -> None:
    done = run_cli("check", str(draft), *T96, "--runtime", "vllm==0.22.0", "--format", "json")
    assert done.returncode == 1
    doc = json.loads(done.stdout)
    (entry,) = doc["checkpoints"][0]["compatibility"]
    assert entry["error_code"] == "DSP309" and not entry["loads"]


def test_a_release_that_should_register_it_still_gates(tmp_path: Path) -> None:
    """Not a newer architecture: a name no listed release registers is the draft's mistake, on every release."""
    bad = make_checkpoint(tmp_path / "typo", vocab=96, draft_vocab=96, target_vocab=96,
                          config_extra={"architectures": ["Qwen3DSparkModelX"]})
    done = run_cli("check", str(bad), *T96, "--no-color")
    assert done.returncode == 1, done.stdout
