"""verify's JSON records the policy as check's does; --quiet's help says the policy announcements still print."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import make_checkpoint, run_cli

T = 96


def test_verify_json_carries_checks_policy_object(tmp_path: Path) -> None:
    pytest.importorskip("torch")
    make_checkpoint(tmp_path / "draft", vocab=T + 4, draft_vocab=T + 4, target_vocab=T)
    args = ("draft", "--target-vocab-size", str(T), "--runtime", "vllm==0.30.0", "--ignore", "DSP305",
            "--format", "json", "--isolated")
    checked = run_cli("check", *args, cwd=tmp_path)
    verified = run_cli("verify", *args, "--probe", "64", cwd=tmp_path)
    assert verified.returncode in (0, 1), verified.stderr
    policy = json.loads(verified.stdout)["policy"]
    assert policy == json.loads(checked.stdout)["policy"]
    assert policy["ignore"] == ["DSP305"] and policy["hidden"] >= 1


def test_quiet_help_names_the_policy_announcements(tmp_path: Path) -> None:
    result = run_cli("check", "--help", cwd=tmp_path, env={"COLUMNS": "400"})
    assert result.returncode == 0
    line = " ".join(result.stdout.split())
    assert "policy announcements" in line and "still print on stderr" in line
