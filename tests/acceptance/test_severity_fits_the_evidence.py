"""Severity that fits the evidence, hints specific to the draft (issue 41, item 5)."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import pytest
from conftest import REPO, make_checkpoint, run_cli

from dspark_ckpt.model.rule_catalog import RULES

sys.path.insert(0, str(REPO / "tests" / "producers"))
from producers import materialise

T96 = ("--target-vocab-size", "96", "--isolated")
EXAMPLE = ("check", "examples/inkling-small-dspark", "--target", "examples/inkling-small-target", "--isolated")


def findings(*args: str, cwd: Path | None = None) -> dict[str, dict]:
    done = run_cli(*args, "--format", "json", cwd=cwd)
    return {f["code"]: f for f in json.loads(done.stdout)["checkpoints"][0]["findings"]}


@pytest.fixture(scope="module")
def eagle3(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return materialise(tmp_path_factory.mktemp("sev") / "eagle3", "specforge-0.2.0-eagle3")


def test_nothing_to_repair_and_the_default_applying_are_info() -> None:
    assert RULES["DSP307"].severity.value == "info" and RULES["DSP357"].severity.value == "info"


def test_a_correct_specforge_eagle3_draft_passes_fail_on_warning(eagle3: Path) -> None:
    for runtimes in ((), ("--runtime", "all"), ("--runtime", "sglang")):
        done = run_cli("check", str(eagle3), *T96, *runtimes, "--fail-on", "warning")
        assert done.returncode == 0, (runtimes, done.stdout)


def test_dsp357_says_it_once(eagle3: Path) -> None:
    found = findings("check", str(eagle3), *T96, "--runtime", "all")
    message = found["DSP357"]["message"]
    assert message.count("finds no") + message.count("find no") == 1, message
    assert "vLLM" in message and "SGLang" in message


def test_dsp305_names_no_markov_w2_for_eagle3(tmp_path: Path) -> None:
    padded = make_checkpoint(tmp_path / "e3", family="eagle3-llama", vocab=100, draft_vocab=100, target_vocab=96)
    found = findings("check", str(padded), *T96, "--runtime", "all")
    assert "DSP305" in found and "markov" not in found["DSP305"]["hint"].replace(str(tmp_path), ""), found["DSP305"]["hint"]
    assert RULES["DSP305"].fix_for("eagle3-qwen3").count("markov") == 0


def test_dsp309_never_suggests_the_name_the_draft_has(eagle3: Path) -> None:
    found = findings("check", str(eagle3), *T96, "--runtime", "all")
    hint = found["DSP309"]["hint"]
    assert "name it LlamaForCausalLMEagle3" not in hint and "0.4.4.post2" in hint, hint


def test_example_hints_are_about_this_draft() -> None:
    found = findings(*EXAMPLE)
    assert "norm_before_fc" not in found["DSP366"]["hint"] and "target_layer_ids" in found["DSP366"]["hint"]
    assert "loads everywhere" not in found["DSP302"]["hint"]


def test_two_hints_for_one_repair_give_one_command() -> None:
    found = findings(*EXAMPLE)
    commands = {code: re.findall(r"`(dspark-ckpt fix [^`]+--strategy trim[^`]*)`", f["hint"] or "")
                for code, f in found.items()}
    trims = {c for cs in commands.values() for c in cs}
    assert len(trims) == 1 and commands["DSP302"] and commands["DSP305"], commands
