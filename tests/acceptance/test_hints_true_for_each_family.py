"""Every hint true for the case at hand: each finding check reports, on checkpoints of every family, carries a hint
whose claims hold for that checkpoint.

A corpus of tiny checkpoints (each family x each vocab shape the tests know how to build, checked against every
known runtime) goes through the real CLI (`check --format json`). For every finding that fires, its hint is held
to what it claims: a command it names parses as a shell would (shlex), names the checkpoint path as the user
typed it (relative, with a space) and the target as given (`--target DIR`); a `--strategy` exists in
repair/strategies.py; and it names no architecture of another family (no EAGLE-3 name in a DSpark draft's hint).
"""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path
from typing import Any

import pytest
from conftest import make_checkpoint, run_cli

from dspark_ckpt.model.families import ARCHITECTURE_FAMILY
from dspark_ckpt.repair.strategies import STRATEGIES

T = 96
DRAFT, TARGET = "my draft", "the target"
COMMAND = re.compile(r"`(dspark-ckpt [^`]+)`")
FAMILIES = ("qwen3-dspark", "qwen3-omni-dspark", "gemma4-dspark", "dflash", "eagle3-llama", "eagle3-qwen3")
BUILDS: dict[str, dict[str, Any]] = {
    "equal": {},
    "padded": {"vocab": T + 4, "draft_vocab": T + 4},
    "padded-no-lm-head": {"vocab": T + 4, "draft_vocab": T + 4, "lm_head": False},
    "pruned-no-d2t": {"draft_vocab": 32, "t2d": True},
    "pruned-zero-d2t": {"draft_vocab": 32, "d2t": "zeros", "t2d": True},
    "equal-with-d2t": {"d2t": True},
    "nested-settings": {"config_extra": {"dflash_config": {"markov_rank": 4}}},
}
# What each family's hints must not name: the architectures vLLM registers for the other families.
FOREIGN = {f: sorted(a for a, fam in ARCHITECTURE_FAMILY.items() if fam.value != f) for f in FAMILIES}
# Findings whose point is that the draft looks like another family: their hint names that family on purpose.
ABOUT_ANOTHER_FAMILY = {
    "DSP350": "a DSpark markov_head in a draft of another family: if it was trained as DSpark, name it so",
}


def report(tmp_path: Path, family: str, build: dict[str, Any], *runtime: str) -> list[dict[str, Any]]:
    make_checkpoint(tmp_path / DRAFT, family=family, target_vocab=T, **build)
    (tmp_path / TARGET).mkdir(exist_ok=True)
    (tmp_path / TARGET / "config.json").write_text(json.dumps({"vocab_size": T}))
    result = run_cli("check", DRAFT, "--target", TARGET, *runtime, "--format", "json", "--isolated", cwd=tmp_path)
    assert result.returncode in (0, 1), result.stderr
    (checkpoint,) = json.loads(result.stdout)["checkpoints"]
    findings: list[dict[str, Any]] = checkpoint["findings"]
    return findings


def assert_true_for(family: str, f: dict[str, Any]) -> None:
    hint = f["hint"] or ""
    where = f"{f['code']} on {family}: {hint}"
    for text in COMMAND.findall(hint):
        argv = shlex.split(text)
        assert argv[1] in ("fix", "check", "verify", "explain", "rules"), where
        if argv[1] in ("explain", "rules"):
            continue
        assert argv[2] == DRAFT, where  # the path as typed: relative, the space kept by quoting
        assert "--target-vocab-size" not in argv and argv[argv.index("--target") + 1] == TARGET, where
        if "--strategy" in argv:
            assert argv[argv.index("--strategy") + 1] in STRATEGIES, where
    if f["code"] in ABOUT_ANOTHER_FAMILY:
        return
    named = [arch for arch in FOREIGN[family] if re.search(rf"\b{arch}\b", hint)]
    assert not named, f"{where} names another family's architecture {named}"
    if not family.startswith("eagle3"):
        assert "EAGLE" not in hint.upper(), where
    for weight in ("lm_head", "embed_tokens"):  # a finding about one weight is not answered about another
        if f["code"] == "DSP307" and weight in f["message"]:
            assert weight in hint, where


@pytest.mark.parametrize("build", list(BUILDS))
@pytest.mark.parametrize("family", FAMILIES)
def test_every_hint_holds_for_the_checkpoint(tmp_path: Path, family: str, build: str) -> None:
    for f in report(tmp_path, family, BUILDS[build]):
        assert_true_for(family, f)


@pytest.mark.parametrize(("family", "runtime"), [
    ("qwen3-dspark", "sglang==0.5.15"), ("qwen3-omni-dspark", "vllm==0.28.0"), ("gemma4-dspark", "sglang==0.5.20"),
    ("dflash", "sglang==0.5.10"), ("eagle3-qwen3", "sglang==0.5.20"),
])
def test_an_unsupported_architecture_hint_is_about_that_family(tmp_path: Path, family: str, runtime: str) -> None:
    """DSP309 on a DSpark draft said to rename it to SGLang's EAGLE-3 class; each family now has its own."""
    (f,) = [f for f in report(tmp_path, family, {}, "--runtime", runtime) if f["code"] == "DSP309"]
    assert_true_for(family, f)
    assert "LlamaForCausalLMEagle3" not in f["hint"]


def test_the_eagle3_llama_hint_names_sglangs_class(tmp_path: Path) -> None:
    config = {"architectures": ["Eagle3LlamaForCausalLM"], "model_type": "llama"}
    findings = report(tmp_path, "eagle3-llama", {"config_extra": config}, "--runtime", "sglang==0.5.20")
    (f,) = [f for f in findings if f["code"] == "DSP309"]
    assert "LlamaForCausalLMEagle3" in f["hint"]


def test_an_unread_release_hint_names_that_release_and_no_uninstalled_tool(tmp_path: Path) -> None:
    """DSP220 for `--runtime vllm==9.9.9`: the version asked for, and what an installed user can run."""
    (f,) = [f for f in report(tmp_path, "qwen3-dspark", {}, "--runtime", "vllm==9.9.9") if f["code"] == "DSP220"]
    assert "9.9.9" in f["hint"] and "0.34.0" not in f["hint"] and "tools/" not in f["hint"]
    assert_true_for("qwen3-dspark", f)
    (cmd,) = COMMAND.findall(f["hint"])
    argv = shlex.split(cmd)
    assert argv[1] == "verify" and argv[argv.index("--runtime") + 1] == "vllm==9.9.9"
