"""`check --report FORMAT=FILE`: more renderings of the same run's report, each file guarded like --output."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from conftest import make_checkpoint, run_cli


@pytest.fixture
def padded(tmp_path: Path) -> Path:
    return make_checkpoint(tmp_path / "padded", vocab=120, draft_vocab=120, target_vocab=96)


def test_every_report_is_the_same_report(tmp_path: Path, padded: Path) -> None:
    out = tmp_path / "out"
    out.mkdir()
    done = run_cli("check", str(padded), "--target-vocab-size", "96", "--runtime", "vllm==0.29.0", "--format", "json",
                   "--report", f"sarif={out / 'r.sarif'}", "--report", f"junit={out / 'r.xml'}",
                   "--report", f"json={out / 'r.json'}")
    assert done.returncode == 1, done.stderr
    assert json.loads((out / "r.json").read_text()) == json.loads(done.stdout)
    codes = {f["code"] for c in json.loads(done.stdout)["checkpoints"] for f in c["findings"]}
    sarif = json.loads((out / "r.sarif").read_text())
    assert {r["ruleId"] for r in sarif["runs"][0]["results"]} == codes
    failures = {f.get("type") for f in ET.parse(out / "r.xml").getroot().iter("failure")}
    gated = {r["ruleId"] for r in sarif["runs"][0]["results"] if r["level"] == "error"}
    assert failures == gated and "DSP302" in gated


@pytest.mark.parametrize("value", ["r.sarif", "nope=r.sarif", "sarif=", "=r.sarif"])
def test_a_value_that_is_not_format_equals_file_is_refused(tmp_path: Path, padded: Path, value: str) -> None:
    done = run_cli("check", str(padded), "--target-vocab-size", "96", "--report", value, cwd=tmp_path)
    assert done.returncode == 2 and "[DSP-E039]" in done.stderr
    assert not any(tmp_path.glob("r.*"))


def test_one_file_named_twice_is_refused(tmp_path: Path, padded: Path) -> None:
    twice = run_cli("check", str(padded), "--target-vocab-size", "96", "--report", "sarif=r", "--report", "junit=r",
                    cwd=tmp_path)
    clash = run_cli("check", str(padded), "--target-vocab-size", "96", "-o", "r", "--report", "junit=r", cwd=tmp_path)
    assert [twice.returncode, clash.returncode] == [2, 2]
    assert "[DSP-E039]" in twice.stderr and "[DSP-E039]" in clash.stderr
    assert not (tmp_path / "r").exists()


def test_a_report_into_the_checkpoint_is_refused_and_nothing_is_written(tmp_path: Path, padded: Path) -> None:
    before = {p.name: p.read_bytes() for p in padded.iterdir()}
    done = run_cli("check", str(padded), "--target-vocab-size", "96", "--report", f"junit={tmp_path / 'ok.xml'}",
                   "--report", f"sarif={padded / 'model.safetensors'}")
    assert done.returncode == 2 and "[DSP-E032]" in done.stderr and "--report" in done.stderr
    assert {p.name: p.read_bytes() for p in padded.iterdir()} == before
    assert not (tmp_path / "ok.xml").exists()  # every destination is judged before any is written
