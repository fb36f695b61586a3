"""`--runtime installed` and unknown versions through the real CLI: a fake installed vLLM/SGLang is a `*.dist-info`
folder on PYTHONPATH, exactly what pip leaves in a deployment image (vllm itself is never imported by check)."""

from __future__ import annotations

import json
import os
from pathlib import Path

from conftest import make_checkpoint, run_cli

from dspark_ckpt.runtimes.release import release_key
from dspark_ckpt.runtimes.versions import VLLM_RELEASES


def with_path(*folders: object) -> dict[str, str]:
    """PYTHONPATH with these folders first, keeping the caller's (the tests may run against another tree)."""
    return {"PYTHONPATH": os.pathsep.join([*map(str, folders), *filter(None, [os.environ.get("PYTHONPATH")])])}


def fake_install(root: Path, name: str, version: str) -> Path:
    """What `pip install` leaves for a distribution: NAME-VERSION.dist-info/METADATA (no package code at all)."""
    info = root / f"{name}-{version}.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n")
    return root


def _json(done) -> dict:  # type: ignore[no-untyped-def]
    assert done.returncode in (0, 1), done.stderr
    return json.loads(done.stdout)["checkpoints"][0]


def test_installed_known_vllm(tmp_path: Path) -> None:
    site = fake_install(tmp_path / "site", "vllm", "0.30.0")
    draft = make_checkpoint(tmp_path / "d", vocab=96, draft_vocab=64, target_vocab=96, d2t=True)
    done = run_cli("check", str(draft), "--target-vocab-size", "96", "--runtime", "installed", "--format", "json",
                   env=with_path(site))
    entry = _json(done)
    assert [(c["runtime"], c["version"], c["loads"]) for c in entry["compatibility"]] == [("vllm", "0.30.0", True)]
    assert done.returncode == 0 and entry["findings"] == []


def test_installed_newer_vllm_warns_but_does_not_fail(tmp_path: Path) -> None:
    """The CI preflight the day 0.35 ships: evaluated with the 0.34 row, a DSP220 warning, exit 0."""
    site = fake_install(tmp_path / "site", "vllm", "0.35.1+cu128")
    draft = make_checkpoint(tmp_path / "d", vocab=96, draft_vocab=96, target_vocab=96)
    done = run_cli("check", str(draft), "--target-vocab-size", "96", "--runtime", "installed", "--format", "json",
                   env=with_path(site))
    entry = _json(done)
    assert done.returncode == 0
    assert [(c["version"], c["loads"]) for c in entry["compatibility"]] == [("0.35.1", True)]
    assert [(f["code"], f["severity"]) for f in entry["findings"]] == [("DSP220", "warning")]
    assert "verdict assumed from vLLM 0.34.0" in entry["findings"][0]["message"]


def test_installed_newer_vllm_still_fails_a_broken_draft(tmp_path: Path) -> None:
    site = fake_install(tmp_path / "site", "vllm", "0.35.0")
    draft = make_checkpoint(tmp_path / "d", vocab=96, draft_vocab=64, target_vocab=96, d2t=False)
    done = run_cli("check", str(draft), "--target-vocab-size", "96", "--runtime", "installed",
                   env=with_path(site))
    assert done.returncode == 1, done.stdout
    assert "DSP302" in done.stdout and "DSP220" in done.stdout


def test_installed_vllm_and_sglang(tmp_path: Path) -> None:
    site = fake_install(fake_install(tmp_path / "site", "vllm", "0.29.0"), "sglang", "0.5.23")
    draft = make_checkpoint(tmp_path / "d", vocab=96, draft_vocab=96, target_vocab=96)
    done = run_cli("check", str(draft), "--target-vocab-size", "96", "--runtime", "installed", "--format", "json",
                   env=with_path(site))
    entry = _json(done)
    assert [c["runtime"] for c in entry["compatibility"]] == ["vllm", "sglang"]
    # SGLang rows are per release where the table has them, one contract ("*") where it does not
    assert entry["compatibility"][0]["version"] == "0.29.0" and entry["compatibility"][1]["version"] in ("*", "0.5.23")


def test_installed_neither_is_a_clear_usage_error(tmp_path: Path) -> None:
    draft = make_checkpoint(tmp_path / "d", vocab=96, draft_vocab=96, target_vocab=96)
    done = run_cli("check", str(draft), "--target-vocab-size", "96", "--runtime", "installed")
    assert done.returncode == 2
    assert "DSP-E006" in done.stderr and "neither vLLM nor SGLang is installed" in done.stderr
    assert "Traceback" not in done.stderr


def test_check_never_imports_the_installed_runtime(tmp_path: Path) -> None:
    """A vllm package that raises on import sits beside its metadata: check must not touch it."""
    site = fake_install(tmp_path / "site", "vllm", "0.31.0")
    (site / "vllm").mkdir()
    (site / "vllm" / "__init__.py").write_text("raise RuntimeError('check imported vllm')\n")
    draft = make_checkpoint(tmp_path / "d", vocab=96, draft_vocab=96, target_vocab=96)
    done = run_cli("check", str(draft), "--target-vocab-size", "96", "--runtime", "installed", "-v",
                   env=with_path(site))  # -v: the matrix names the release
    assert done.returncode == 0, done.stderr
    assert "vllm 0.31.0" in done.stdout and "check imported vllm" not in done.stderr


def test_range_and_unregistered_version_on_the_command_line(tmp_path: Path) -> None:
    draft = make_checkpoint(tmp_path / "d", vocab=96, draft_vocab=96, target_vocab=96)
    older = f"0.{release_key(VLLM_RELEASES[0], precision=2)[1] - 1}.0"  # before every listed release
    done = run_cli("check", str(draft), "--target-vocab-size", "96", "--runtime", "vllm~=0.31",
                   "--runtime", "vllm==0.24.0", "--runtime", f"vllm=={older}", "--format", "json")
    entry = _json(done)
    assert [c["version"] for c in entry["compatibility"]] == ["0.31.0", "0.32.0", "0.33.0", "0.34.0", "0.24.0", older]
    assert done.returncode == 1
    listed, unlisted = entry["compatibility"][-2:]
    # 0.24.0 is read: its registry has no Qwen3DSparkModel (registry.py @ v0.24.0 L606-615), refused in its words
    # (registry.py L1062 @ v0.24.0)
    assert listed["error_code"] == "DSP309" and listed["error"] == ("Model architectures ['Qwen3DSparkModel'] are not "
                                                                    "supported for now.")
    # older than every release read: the registration table's bisection says no (first in 0.25.0)
    assert unlisted["error_code"] == "DSP309" and f"not registered in vLLM {older}" in unlisted["error"]


def test_a_range_matching_nothing_is_a_usage_error(tmp_path: Path) -> None:
    draft = make_checkpoint(tmp_path / "d", vocab=96, draft_vocab=96, target_vocab=96)
    done = run_cli("check", str(draft), "--target-vocab-size", "96", "--runtime", "vllm>=0.40")
    assert done.returncode == 2 and "DSP-E007" in done.stderr and "Traceback" not in done.stderr
