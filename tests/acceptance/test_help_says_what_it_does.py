"""Help and usage errors true for the command at hand: rules/explain/version say what their own -q/-v do, and an
unknown option is never answered with an unrelated one (`check --fix` is not `--config`)."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import make_checkpoint, run_cli

CHECK_QUIET = "only findings"  # check's -q text: about findings and stderr notes, not true of a listing


@pytest.mark.parametrize(("command", "quiet", "verbose"), [
    ("rules", "codes only", "category"),
    ("explain", "summary line only", "category"),
    ("version", "version only", "where each package is installed"),
])
def test_quiet_and_verbose_say_what_they_do_there(command: str, quiet: str, verbose: str) -> None:
    result = run_cli(command, "--help")
    assert result.returncode == 0
    text = " ".join(result.stdout.split())
    assert CHECK_QUIET not in text and "which settings and policy applied" not in text
    assert quiet in text and verbose in text


def test_the_flags_do_what_the_help_says() -> None:
    codes = run_cli("rules", "DSP30", "-q").stdout.split()
    assert codes and all(c.startswith("DSP30") for c in codes)
    assert "[runtime-contracts]" in run_cli("rules", "DSP301", "-v").stdout
    brief = run_cli("explain", "DSP301", "-q").stdout
    assert "What it means" not in brief and "DSP301" in brief
    assert "category: runtime-contracts" in run_cli("explain", "DSP301", "-v").stdout


@pytest.mark.parametrize(("command", "option"), [("check", "fix"), ("check", "verify"), ("fix", "check"),
                                                 ("verify", "fix")])
def test_an_option_named_after_a_command_suggests_the_command(tmp_path: Path, command: str, option: str) -> None:
    make_checkpoint(tmp_path / "d")
    result = run_cli(command, "d", f"--{option}", cwd=tmp_path)
    assert result.returncode == 2
    assert f"did you mean `dspark-ckpt {option}`?" in result.stderr
    assert "--config" not in result.stderr and "Possible options" not in result.stderr


def test_a_typo_still_gets_the_close_option(tmp_path: Path) -> None:
    make_checkpoint(tmp_path / "d")
    result = run_cli("check", "d", "--fomat", "json", cwd=tmp_path)
    assert result.returncode == 2 and "--format" in result.stderr


def test_an_unrelated_option_gets_no_suggestion(tmp_path: Path) -> None:
    make_checkpoint(tmp_path / "d")
    result = run_cli("check", "d", "--frobnicate", cwd=tmp_path)
    assert result.returncode == 2 and "No such option: --frobnicate" in result.stderr
    assert "Possible options" not in result.stderr
