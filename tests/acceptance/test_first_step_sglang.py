"""Through the CLI: a DSpark draft that SGLang loads and whose first draft step then fails, in the words each
release's own step raised when it was run (release_data/sglang-X/first_step.json, tools/probe_first_step.py): a padded
draft (V = D > T) in every DSpark release 0.5.16-0.5.23, a pruned one (V = D < T) whose previous token has no
markov_w1 row from 0.5.22; fix trims the padded one and says it cannot repair the pruned one."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from conftest import make_checkpoint, run_cli

from dspark_ckpt.runtimes.release_store import DATA
from dspark_ckpt.runtimes.table import SGLANG_VERSIONS

T = 96
READY = {"markov_head_type": "vanilla", "mask_token_id": 0}
DSPARK = [v for v in SGLANG_VERSIONS if (DATA / f"sglang-{v}" / "first_step.json").is_file()
          and '"dspark"' in (DATA / f"sglang-{v}" / "first_step.json").read_text(encoding="utf-8")]


def recorded(version: str, relation: str, anchor: str) -> Any:
    doc = json.loads((DATA / f"sglang-{version}" / "first_step.json").read_text(encoding="utf-8"))
    return doc["dspark"]["steps"]["vanilla"][relation][anchor]  # "ok", null or {raises, text, where}


def words(outcome: dict[str, Any], v: int, w: int) -> str:
    return str(outcome["text"]).replace("{v}", str(v)).replace("{w}", str(w))


def rows(tmp_path: Path, draft: Path, *flags: str) -> tuple[int, dict[str, dict[str, Any]]]:
    result = run_cli("check", str(draft), "--target-vocab-size", str(T), "--runtime", "sglang", *flags,
                     "--format", "json", cwd=tmp_path)
    (checkpoint,) = json.loads(result.stdout)["checkpoints"]
    return result.returncode, {c["version"]: c for c in checkpoint["compatibility"]}


def test_a_padded_draft_loads_then_fails_its_first_step_in_every_dspark_release(tmp_path: Path) -> None:
    draft = make_checkpoint(tmp_path / "padded", vocab=128, draft_vocab=128, target_vocab=T, config_extra=READY)
    code, found = rows(tmp_path, draft)
    assert code == 1 and {"0.5.16", "0.5.23"} <= set(DSPARK)
    for version in DSPARK:
        row = found[version]
        assert row["loads"] and row["error_code"] is None and row["first_step_error_code"] == "DSP340", row
        assert row["first_step_error"] == words(recorded(version, "V>W", "capture"), 128, T), version
    text = run_cli("check", str(draft), "--target-vocab-size", str(T), "--runtime", "sglang==0.5.23", cwd=tmp_path)
    assert "loads on sglang==0.5.23, then fails at the first draft step: AssertionError" in text.stdout


def test_a_pruned_draft_fails_the_markov_w1_lookup_where_the_add_no_longer_fails(tmp_path: Path) -> None:
    draft = make_checkpoint(tmp_path / "pruned", vocab=64, draft_vocab=64, target_vocab=T, config_extra=READY)
    code, found = rows(tmp_path, draft)
    assert code == 1
    for version in DSPARK:
        capture, outside = recorded(version, "V<W", "capture"), recorded(version, "V<W", "outside")
        row = found[version]
        assert row["first_step_error_code"] == "DSP340", row
        seen = capture if capture != "ok" else outside
        assert words(seen, 64, T) in row["first_step_error"], version
        if capture == "ok":  # the lookup of a target token >= V, said as such
            assert "markov_w1 (V = 64 rows)" in row["first_step_error"] and not row["first_step_error_verbatim"]
    assert recorded("0.5.23", "V<W", "capture") == "ok" and recorded("0.5.16", "V<W", "capture") != "ok"


def test_fix_trims_a_padded_draft_and_refuses_a_pruned_one(tmp_path: Path) -> None:
    padded = make_checkpoint(tmp_path / "padded", vocab=128, draft_vocab=128, target_vocab=T, config_extra=READY)
    out = tmp_path / "fixed"
    done = run_cli("fix", str(padded), "--target-vocab-size", str(T), "--for", "sglang==0.5.16", "--for",
                   "sglang==0.5.23", "--out", str(out), cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    _, found = rows(tmp_path, out)
    assert all(found[v]["loads"] and found[v]["first_step_error_code"] is None for v in DSPARK)
    pruned = make_checkpoint(tmp_path / "pruned", vocab=64, draft_vocab=64, target_vocab=T, config_extra=READY)
    refused = run_cli("fix", str(pruned), "--target-vocab-size", str(T), "--for", "sglang==0.5.23", "--dry-run",
                      cwd=tmp_path)
    said = " ".join(refused.stdout.split())
    assert refused.returncode == 1 and "refused DSP502" in said and "fails with DSP340" in said, said
