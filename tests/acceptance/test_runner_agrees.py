"""The in-process runner sees what a user sees: the same exit status, stdout and stderr as `python -m dspark_ckpt`
in a subprocess, for each kind of run (a report in each format, a usage error, an operational error, help, a fix,
a settings file in the working folder, an encoding the stream cannot hold)."""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import make_checkpoint, run_cli
from cli_runner import cli_env, run_in_process, run_subprocess

EXAMPLE = Path(__file__).parents[2] / "examples"
DRAFT, TARGET = str(EXAMPLE / "inkling-small-dspark"), str(EXAMPLE / "inkling-small-target")

RUNS = {
    "check-text": ["check", DRAFT, "--target", TARGET],
    "check-json": ["check", DRAFT, "--target", TARGET, "--format", "json"],
    "check-sarif": ["check", DRAFT, "--target", TARGET, "--format", "sarif"],
    "check-github": ["check", DRAFT, "--target", TARGET, "--format", "github"],
    "check-junit": ["check", DRAFT, "--target", TARGET, "--format", "junit"],
    "check-one-runtime": ["check", DRAFT, "--target", TARGET, "--runtime", "vllm==0.30.0", "-q"],
    "no-target": ["check", DRAFT],
    "usage-error": ["check", DRAFT, "--format", "nope"],
    "unknown-command": ["chek", DRAFT],
    "missing-folder": ["check", "no/such/folder/at/all", "--target-vocab-size", "96"],
    "help": ["--help"],
    "check-help": ["check", "--help"],
    "version-flag": ["--version"],
    "explain": ["explain", "DSP302"],
    "rules": ["rules"],
    "fix-dry-run": ["fix", DRAFT, "--target", TARGET, "--dry-run"],
}


def both(args: list[str], env: dict[str, str] | None = None, cwd: Path | None = None) -> tuple[object, object]:
    full = cli_env(env)
    return run_in_process(*args, full_env=full, cwd=cwd), run_subprocess(*args, full_env=full, cwd=cwd)


def same(inside: object, outside: object) -> None:
    assert (inside.returncode, inside.stdout, inside.stderr) == (  # type: ignore[attr-defined]
        outside.returncode, outside.stdout, outside.stderr)  # type: ignore[attr-defined]


@pytest.mark.parametrize("name", sorted(RUNS))
def test_in_process_and_subprocess_agree(name: str, tmp_path: Path) -> None:
    same(*both(RUNS[name], cwd=tmp_path))


def test_they_agree_on_a_settings_file_in_the_working_folder(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text('[tool.dspark-ckpt]\nruntime = ["vllm==0.30.0"]\nfail-on = "info"\n')
    inside, outside = both(["check", DRAFT, "--target", TARGET, "--format", "json"], cwd=tmp_path)
    same(inside, outside)


def test_they_agree_when_the_stream_cannot_encode(tmp_path: Path) -> None:
    draft = make_checkpoint(tmp_path / "draft", vocab=100, draft_vocab=100, target_vocab=96)
    same(*both(["check", str(draft), "--target-vocab-size", "96"], env={"PYTHONIOENCODING": "ascii"}))


def test_they_agree_on_a_fix_that_writes(tmp_path: Path) -> None:
    outputs = []
    for how in ("in", "out"):
        draft = make_checkpoint(tmp_path / how / "draft", vocab=100, draft_vocab=100, target_vocab=96)
        args = ["fix", str(draft), "--target-vocab-size", "96", "--out", str(tmp_path / how / "fixed")]
        full = cli_env()
        done = (run_in_process if how == "in" else run_subprocess)(*args, full_env=full)
        outputs.append((done.returncode, done.stdout.replace(f"/{how}/", "/X/"), done.stderr.replace(f"/{how}/", "/X/"),
                        sorted(p.name for p in (tmp_path / how / "fixed").iterdir())))
    assert outputs[0] == outputs[1]


def test_the_environment_cwd_and_streams_are_restored(tmp_path: Path) -> None:
    import os
    import sys

    before = (dict(os.environ), os.getcwd(), sys.stdout, sys.stderr, sys.stdin)
    run_cli("check", DRAFT, "--target", TARGET, env={"DSPARK_SOMETHING": "1"}, cwd=tmp_path)
    assert (dict(os.environ), os.getcwd(), sys.stdout, sys.stderr, sys.stdin) == before
