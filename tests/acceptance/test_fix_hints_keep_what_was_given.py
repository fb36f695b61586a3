"""fix's own hints (refusals, warnings, --safe-only) name the checkpoint and the target as the user gave them.

A relative path stays relative and `--target DIR` stays `--target DIR` (not the absolute folder fix resolved, nor
`--target-vocab-size N`), exactly as check's hints do (check/hints.py derives both).
"""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path
from typing import Any

from conftest import make_checkpoint, run_cli

T = 96
COMMAND = re.compile(r"`(dspark-ckpt (?:fix|check) [^`]+)`")


def setup(tmp_path: Path) -> None:
    make_checkpoint(tmp_path / "drafts" / "my draft", vocab=T, draft_vocab=T + 4, target_vocab=T)
    (tmp_path / "the target").mkdir()
    (tmp_path / "the target" / "config.json").write_text(json.dumps({"vocab_size": T}))


def fix_json(tmp_path: Path, *args: str) -> dict[str, Any]:
    result = run_cli("fix", "drafts/my draft", "--target", "the target", *args, "--format", "json", "--isolated",
                     cwd=tmp_path)
    assert result.returncode in (0, 1), result.stderr
    doc: dict[str, Any] = json.loads(result.stdout)
    return doc


def hint_commands(doc: dict[str, Any]) -> list[list[str]]:
    texts = [c["refusal"]["hint"] for c in doc["checkpoints"] if c["refusal"]]
    texts += [w["hint"] for c in doc["checkpoints"] for w in c["warnings"]]
    return [shlex.split(cmd) for text in texts if text for cmd in COMMAND.findall(text)]


def assert_as_given(argv: list[str]) -> None:
    assert argv[2] == "drafts/my draft", argv
    assert "--target-vocab-size" not in argv, argv
    assert argv[argv.index("--target") + 1] == "the target", argv


def test_a_refusal_names_the_relative_path_and_the_target_folder(tmp_path: Path) -> None:
    setup(tmp_path)
    found = hint_commands(fix_json(tmp_path, "--strategy", "drop-d2t", "--for", "vllm==0.29.0"))
    assert found, "DSP503 names the strategy that applies"
    for argv in found:
        assert_as_given(argv)


def test_a_best_effort_warning_names_them_too(tmp_path: Path) -> None:
    setup(tmp_path)
    found = hint_commands(fix_json(tmp_path, "--dry-run", "--for", "all"))  # SGLang is left out (DSP505)
    assert any(argv[1] == "check" for argv in found), found
    for argv in found:
        assert_as_given(argv)


def test_safe_only_names_the_command_without_it(tmp_path: Path) -> None:
    setup(tmp_path)
    result = run_cli("fix", "drafts/my draft", "--target", "the target", "--safe-only", "--for", "vllm",
                     "--isolated", cwd=tmp_path)
    assert result.returncode == 1, result.stdout + result.stderr
    (cmd,) = COMMAND.findall(result.stdout)
    assert_as_given(shlex.split(cmd))
