"""A check that evaluated no runtime contract (no T given, none inferable) is no pass unless asked for (issue 22,
item 5): every format, settings above the working folder, several checkpoints, and the ways to opt in."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import make_checkpoint, run_cli

FORMATS = ("text", "json", "sarif", "junit", "github", "markdown")


@pytest.fixture(scope="module")
def ws(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("notarget")
    make_checkpoint(root / "a", vocab=96, draft_vocab=96, target_vocab=96)
    make_checkpoint(root / "b", family="eagle3-llama", vocab=64, draft_vocab=64, target_vocab=64, markov=False)
    (root / "target").mkdir()
    (root / "target" / "config.json").write_text(json.dumps({"vocab_size": 96}))
    return root


@pytest.mark.parametrize("fmt", FORMATS)
def test_no_target_exits_two_in_every_format_and_says_how_to_give_t(ws: Path, fmt: str) -> None:
    r = run_cli("check", "a", "--isolated", "--format", fmt, cwd=ws)
    assert r.returncode == 2, r.stderr
    assert "[DSP-E038]" in r.stderr and "--target DIR" in r.stderr and "--target-vocab-size" in r.stderr
    assert r.stderr.count("error [") == 1


@pytest.mark.parametrize("extra", [(), ("-q",), ("--exit-zero",), ("--ignore", "DSP206"), ("--fail-on", "info"),
                                   ("--select", "DSP0")])
def test_no_policy_flag_turns_a_blind_check_green(ws: Path, extra: tuple[str, ...]) -> None:
    r = run_cli("check", "a", "b", "--isolated", *extra, cwd=ws)
    assert r.returncode in (1, 2), r.stderr
    assert r.returncode == 1 or "2 checkpoint(s)" in r.stderr


def test_allow_no_target_opts_in_from_the_flag_or_the_settings(ws: Path, tmp_path: Path) -> None:
    assert run_cli("check", "a", "--isolated", "--allow-no-target", cwd=ws).returncode == 0
    (tmp_path / "proj" / "sub").mkdir(parents=True)
    (tmp_path / "proj" / "pyproject.toml").write_text("[tool.dspark-ckpt]\nallow-no-target = true\n")
    assert run_cli("check", str(ws / "a"), cwd=tmp_path / "proj" / "sub").returncode == 0
    r = run_cli("check", str(ws / "a"), "--no-allow-no-target", cwd=tmp_path / "proj" / "sub")
    assert r.returncode == 2 and "[DSP-E038]" in r.stderr


def test_a_wrong_type_for_allow_no_target_is_a_settings_error(ws: Path, tmp_path: Path) -> None:
    (tmp_path / "dspark-ckpt.toml").write_text('allow-no-target = "yes"\n')
    r = run_cli("check", str(ws / "a"), cwd=tmp_path)
    assert r.returncode == 2 and "[DSP-E021]" in r.stderr


@pytest.mark.parametrize("how", [("--target", "target"), ("--target-vocab-size", "96")])
def test_with_a_target_the_check_passes_as_before(ws: Path, how: tuple[str, ...]) -> None:
    r = run_cli("check", "a", "--isolated", *how, cwd=ws)
    assert r.returncode == 0, r.stderr and "DSP-E038" not in r.stderr


def test_a_target_in_settings_above_the_working_folder_counts(ws: Path, tmp_path: Path) -> None:
    (tmp_path / "repo" / "deep" / "er").mkdir(parents=True)
    (tmp_path / "repo" / "dspark-ckpt.toml").write_text("target-vocab-size = 96\n")
    r = run_cli("check", str(ws / "a"), cwd=tmp_path / "repo" / "deep" / "er")
    assert r.returncode == 0, r.stderr


def test_a_structural_failure_without_target_still_exits_one(ws: Path, tmp_path: Path) -> None:
    path = make_checkpoint(tmp_path / "d")
    with open(path / "model.safetensors", "ab") as f:
        f.write(b"junk")
    r = run_cli("check", str(path), "--isolated")
    assert r.returncode == 1 and "DSP015" in r.stdout


def test_every_blind_checkpoint_is_named(ws: Path) -> None:
    r = run_cli("check", "a", "b", "--isolated", "--format", "json", cwd=ws)
    assert r.returncode == 2 and "2 checkpoint(s) (a, b)" in r.stderr
