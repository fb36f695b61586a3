"""Issue 41, item 8: fix's before/after lines never fold a range across a release left out; fix prints paths as
check does (relative where they lie under the working folder)."""

from __future__ import annotations

from pathlib import Path

from conftest import REPO, run_cli

EXAMPLE = ("examples/inkling-small-dspark", "--target", "examples/inkling-small-target", "--isolated")


def test_fix_folds_no_range_across_an_excluded_release() -> None:
    done = run_cli("fix", *EXAMPLE, "--dry-run", "--for", "vllm>=0.25.0,<=0.28.0", "--for", "vllm>=0.30.0", cwd=REPO)
    lines = [line.strip() for line in done.stdout.splitlines() if line.startswith("  vllm")]
    assert lines and not any(line.startswith("vllm 0.25.0-0.34.0") for line in lines), lines
    assert any(line.startswith("vllm 0.25.0-0.28.0") for line in lines)
    assert any(line.startswith("vllm 0.30.0-0.34.0") for line in lines)


def test_check_folds_no_range_across_a_release_not_chosen(tmp_path: Path) -> None:
    done = run_cli("check", *EXAMPLE, "-v", "--runtime", "vllm==0.25.0", "--runtime", "vllm==0.27.0", cwd=REPO)
    assert "vllm 0.25.0-0.27.0" not in done.stdout and "vllm 0.25.0 " in done.stdout, done.stdout


def test_fix_prints_the_path_as_check_does() -> None:
    done = run_cli("fix", *EXAMPLE, "--dry-run", cwd=REPO)
    first = done.stdout.splitlines()[0]
    assert first == "examples/inkling-small-dspark", first
    quiet = run_cli("fix", *EXAMPLE, "--dry-run", "-q", cwd=REPO)
    assert quiet.stdout.startswith("examples/inkling-small-dspark: "), quiet.stdout
