"""A runtime version must be a release (issue 41, item 2): a malformed version (`vllm==033`) or one inside the known
range that was never released (`vllm==0.33.2`) is an error, DSP-E009, naming the nearest real releases; a version newer
than every known release keeps the DSP220 path (its verdict assumed from the newest row)."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import make_checkpoint, run_cli

from dspark_ckpt.model.error_catalog import ERRORS
from dspark_ckpt.runtimes.versions import VLLM_RELEASES

T96 = ("--target-vocab-size", "96", "--isolated")


@pytest.fixture(scope="module")
def draft(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_checkpoint(tmp_path_factory.mktemp("versions") / "d", vocab=96, draft_vocab=96, target_vocab=96)


@pytest.mark.parametrize(("selector", "nearest"), [
    ("vllm==033", "0.33.0"), ("vllm==0.33.2", "0.33.0"), ("vllm==0.33.2", "0.34.0"), ("vllm==0.0033", "0.33.0"),
    ("sglang==0.5.99", "0.5.23"), ("sglang==0.4.11", "0.4.10"), ("vllm==0.25.3", "0.25.1")])
def test_a_version_that_is_no_release_is_an_error_naming_the_nearest(draft: Path, selector: str,
                                                                    nearest: str) -> None:
    if selector == "sglang==0.5.99":  # newer than every SGLang release read: the DSP220 path, not an error
        done = run_cli("check", str(draft), *T96, "--runtime", selector)
        assert done.returncode in (0, 1) and "DSP220" in done.stdout, done.stdout + done.stderr
        return
    done = run_cli("check", str(draft), *T96, "--runtime", selector)
    assert done.returncode == 2, done.stdout + done.stderr
    assert "DSP-E009" in done.stderr and nearest in done.stderr, done.stderr


@pytest.mark.parametrize("command", [("check",), ("fix", "--dry-run"), ("verify",)])
def test_every_command_refuses_it(draft: Path, command: tuple[str, ...]) -> None:
    flag = "--for" if command[0] == "fix" else "--runtime"
    done = run_cli(*command, str(draft), *T96, flag, "vllm==0.33.2")
    assert done.returncode == 2 and "DSP-E009" in done.stderr, done.stdout + done.stderr


def test_a_newer_release_keeps_dsp220(draft: Path) -> None:
    done = run_cli("check", str(draft), *T96, "--runtime", "vllm==0.99.0")
    assert done.returncode in (0, 1) and "DSP220" in done.stdout, done.stdout + done.stderr


def test_every_listed_release_is_still_accepted(draft: Path) -> None:
    for version in (VLLM_RELEASES[0], "0.30", "0.29.0rc1", VLLM_RELEASES[-1], "0.5.4.post2"):
        runtime = "sglang" if "post" in version else "vllm"
        done = run_cli("check", str(draft), *T96, "--runtime", f"{runtime}=={version}")
        assert done.returncode in (0, 1), (version, done.stderr)


def test_the_code_is_registered() -> None:
    assert ERRORS["DSP-E009"].slug == "runtime-version-not-a-release" and not ERRORS["DSP-E009"].retired
