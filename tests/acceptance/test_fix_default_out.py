"""`fix DIR` with no destination writes DIR-fixed beside it; several checkpoints in one run; destination conflicts."""

from __future__ import annotations

import json
from pathlib import Path

from conftest import make_checkpoint, run_cli
from test_fix_repairs import tree_digest

PADDED = dict(vocab=100, draft_vocab=100, target_vocab=96)
CLEAN = dict(vocab=96, draft_vocab=96, target_vocab=96)


def test_default_destination_is_name_fixed_beside_the_draft(tmp_path: Path) -> None:
    folder = make_checkpoint(tmp_path / "draft", **PADDED)
    original = tree_digest(folder)
    done = run_cli("fix", str(folder), "--target-vocab-size", "96", "--strategy", "identity-d2t",
                   "--for", "vllm==0.29.0")
    fixed = tmp_path / "draft-fixed"
    assert done.returncode == 0, done.stdout + done.stderr
    assert f"wrote {fixed} to a new folder" in " ".join(done.stdout.split())
    assert tree_digest(folder) == original, "the default mode never touches the source"
    assert (fixed / "dspark-fix-d2t.safetensors").is_file() and (fixed / "model.safetensors.index.json").is_file()
    again = run_cli("fix", str(fixed), "--target-vocab-size", "96", "--for", "vllm==0.29.0", "--strategy",
                    "identity-d2t")
    assert again.returncode == 0 and "nothing to do" in again.stdout, again.stdout
    assert not (tmp_path / "draft-fixed-fixed").exists(), "nothing to do: no folder is created"


def test_relative_path_and_trailing_slash(tmp_path: Path) -> None:
    make_checkpoint(tmp_path / "d", **PADDED)
    done = run_cli("fix", "d/", "--target-vocab-size", "96", "--format", "json", cwd=tmp_path)
    doc = json.loads(done.stdout)["checkpoints"][0]
    assert done.returncode == 0 and doc["status"] == "applied", done.stderr
    assert doc["result"]["destination"] == str(tmp_path / "d-fixed") and not doc["result"]["in_place"]


def test_existing_default_destination_is_refused_with_a_hint(tmp_path: Path) -> None:
    folder = make_checkpoint(tmp_path / "draft", **PADDED)
    (tmp_path / "draft-fixed").mkdir()
    (tmp_path / "draft-fixed" / "notes.txt").write_text("mine")
    result = run_cli("fix", str(folder), "--target-vocab-size", "96")
    err = " ".join(result.stderr.split())
    assert result.returncode == 2 and "[DSP-E065]" in err and str(tmp_path / "draft-fixed") in err
    assert "default destination" in err and "--out DIR or --in-place" in err
    assert [p.name for p in (tmp_path / "draft-fixed").iterdir()] == ["notes.txt"]
    empty = tmp_path / "empty"
    make_checkpoint(empty, **PADDED)
    (tmp_path / "empty-fixed").mkdir()  # an empty folder is fine, as for --out
    assert run_cli("fix", str(empty), "--target-vocab-size", "96").returncode == 0
    assert (tmp_path / "empty-fixed" / "config.json").is_file()


def test_clean_draft_and_dry_run_create_nothing(tmp_path: Path) -> None:
    clean = make_checkpoint(tmp_path / "clean", **CLEAN)
    ok = run_cli("fix", str(clean), "--target-vocab-size", "96")
    assert ok.returncode == 0 and "nothing to do" in ok.stdout
    padded = make_checkpoint(tmp_path / "padded", **PADDED)
    dry = run_cli("fix", str(padded), "--target-vocab-size", "96", "--dry-run")
    assert dry.returncode == 1 and "dry run: nothing was written" in dry.stdout
    assert sorted(p.name for p in tmp_path.iterdir()) == ["clean", "padded"]


def test_out_and_in_place_conflict(tmp_path: Path) -> None:
    folder = make_checkpoint(tmp_path / "d", **PADDED)
    result = run_cli("fix", str(folder), "--target-vocab-size", "96", "--out", str(tmp_path / "o"), "--in-place")
    assert result.returncode == 2 and "[DSP-E068]" in result.stderr and not (tmp_path / "o").exists()


def test_several_checkpoints_each_get_their_own_copy(tmp_path: Path) -> None:
    a = make_checkpoint(tmp_path / "a", **PADDED)
    b = make_checkpoint(tmp_path / "b", **CLEAN)
    done = run_cli("fix", str(a), str(b), "--target-vocab-size", "96", "--format", "json")
    document = json.loads(done.stdout)
    assert (document["schema_version"], document["command"]) == (2, "fix")
    docs = document["checkpoints"]
    assert done.returncode == 0, done.stderr
    assert [d["status"] for d in docs] == ["applied", "nothing-to-do"]
    assert (tmp_path / "a-fixed" / "config.json").is_file() and not (tmp_path / "b-fixed").exists()
    one_out = run_cli("fix", str(a), str(b), "--target-vocab-size", "96", "--out", str(tmp_path / "o"))
    assert one_out.returncode == 2 and "[DSP-E073]" in one_out.stderr and not (tmp_path / "o").exists()


def test_one_failing_checkpoint_does_not_stop_the_others(tmp_path: Path) -> None:
    good = make_checkpoint(tmp_path / "good", **PADDED)
    done = run_cli("fix", str(tmp_path / "missing"), str(good), "--target-vocab-size", "96", "--in-place",
                   "--format", "json")
    docs = json.loads(done.stdout)["checkpoints"]
    assert done.returncode == 2, "an unreadable checkpoint is never a pass"
    assert docs[0]["status"] == "error" and docs[0]["error"]["code"] == "DSP-E010"  # no such folder: said at once
    assert "[DSP-E010]" in done.stderr and docs[1]["status"] == "applied"
    assert json.loads((good / "config.json").read_text())["draft_vocab_size"] == 96
