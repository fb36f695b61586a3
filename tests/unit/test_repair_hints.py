"""Pure: the commands refusals suggest, built from data: quoted, complete (path, T, runtimes), one per group."""

from __future__ import annotations

import shlex

from dspark_ckpt.check.hints import Named
from dspark_ckpt.repair import hints
from dspark_ckpt.repair.actions import Predicted
from dspark_ckpt.runtimes.selectors import parse_selectors


def outcome(runtime: str, loads: bool) -> Predicted:
    return Predicted(loads, None if loads else "DSP302", (), runtime=runtime)


def test_a_command_is_complete_and_quoted() -> None:
    cmd = hints.command("fix", Named("/data/my draft", ("--target-vocab-size", "96")), ["vllm==0.29.0"], "--strategy", "trim")
    assert shlex.split(cmd) == ["dspark-ckpt", "fix", "/data/my draft", "--target-vocab-size", "96", "--for",
                                "vllm==0.29.0", "--strategy", "trim"]
    assert shlex.split(hints.command("check", Named("d"), ["vllm==0.30.0"])) == [
        "dspark-ckpt", "check", "d", "--runtime", "vllm==0.30.0"]


def test_every_known_vllm_release_is_named_vllm() -> None:
    every = [str(r) for r in parse_selectors(["vllm"])]
    assert hints.selectors(every) == ["vllm"]
    assert hints.selectors(every[:2]) == every[:2]


def test_conflicting_runtimes_get_one_fix_per_group() -> None:
    runtimes = ["vllm==0.29.0", "vllm==0.30.0", "sglang==0.5.20"]
    before = [outcome("vllm==0.29.0", False), outcome("vllm==0.30.0", True), outcome("sglang==0.5.20", True)]
    trim = [outcome("vllm==0.29.0", True), outcome("vllm==0.30.0", True), outcome("sglang==0.5.20", False)]
    groups = hints.groups(runtimes, before, [("trim", trim)])
    assert groups == [("trim", ["vllm==0.29.0", "vllm==0.30.0"]), (None, ["sglang==0.5.20"])]
    text = hints.per_group_commands(Named("/d", ("--target-vocab-size", "96")), runtimes, before, [("trim", trim)])
    [cmd] = [c for c in text.split("`")[1::2]]
    assert shlex.split(cmd) == ["dspark-ckpt", "fix", "/d", "--target-vocab-size", "96", "--for", "vllm==0.29.0",
                                "--for", "vllm==0.30.0", "--out", "/d-fixed-vllm-0.29.0+vllm-0.30.0"]
    assert "sglang==0.5.20 load(s) the draft as it is" in text


def test_a_command_keeps_the_checkpoint_and_target_as_given() -> None:
    cmd = hints.command("fix", Named("drafts/d", ("--target", "../target dir")), ["vllm==0.29.0"])
    assert shlex.split(cmd) == ["dspark-ckpt", "fix", "drafts/d", "--target", "../target dir", "--for",
                                "vllm==0.29.0"]


def test_a_hub_repo_gets_a_dry_run_instead_of_an_out_folder() -> None:
    assert hints.out_args("hf://org/draft@abc", ["vllm==0.29.0"]) == ("--dry-run",)
