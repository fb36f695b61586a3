"""Nothing from outside the checkpoint enters a fixed copy, no special file is opened, hostile layouts get a code:
links leaving the checkpoint, HF-cache destinations behind links, FIFOs, lone surrogates, shards in a subfolder."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from conftest import make_checkpoint, run_cli
from test_fix_repairs import tree_digest

PADDED = dict(vocab=100, draft_vocab=100, target_vocab=96)
FIX = ("--target-vocab-size", "96")


def flat(text: str) -> str:
    return " ".join(text.split())


def inodes(folder: Path) -> set[tuple[int, int]]:
    return {(p.stat().st_dev, p.stat().st_ino) for p in folder.rglob("*") if p.is_file()}


@pytest.mark.parametrize("target", ["file", "folder", "dangling"])
def test_out_refuses_a_link_that_leaves_the_checkpoint(tmp_path: Path, target: str) -> None:
    folder = make_checkpoint(tmp_path / "d", **PADDED)
    outside = tmp_path / "private"
    outside.mkdir()
    (outside / "secret.txt").write_text("not part of the checkpoint\n")
    link = {"file": "../private/secret.txt", "folder": "../private", "dangling": "../private/gone.txt"}[target]
    (folder / "notes").symlink_to(link)
    original = tree_digest(outside)
    done = run_cli("fix", str(folder), *FIX, "--out", str(tmp_path / "o"))
    assert done.returncode == 2 and "[DSP-E075]" in done.stderr and "notes is a link" in flat(done.stderr)
    assert not (tmp_path / "o").exists() and sorted(p.name for p in tmp_path.iterdir()) == ["d", "private"]
    assert tree_digest(outside) == original


def test_in_place_leaves_an_outside_link_alone(tmp_path: Path) -> None:
    folder = make_checkpoint(tmp_path / "d", **PADDED)
    (tmp_path / "secret.txt").write_text("outside\n")
    (folder / "notes.txt").symlink_to("../secret.txt")
    done = run_cli("fix", str(folder), *FIX, "--in-place")
    assert done.returncode == 0, done.stdout + done.stderr
    assert os.readlink(folder / "notes.txt") == "../secret.txt" and (tmp_path / "secret.txt").read_text() == "outside\n"


def test_links_inside_the_checkpoint_stay_inside_the_copy(tmp_path: Path) -> None:
    folder = make_checkpoint(tmp_path / "d", **PADDED)
    (folder / "docs").mkdir()
    (folder / "docs" / "card.md").write_text("# card\n")
    (folder / "README.md").symlink_to("docs/card.md")
    (folder / "latest-docs").symlink_to("docs")
    done = run_cli("fix", str(folder), *FIX, "--out", str(tmp_path / "o"))
    assert done.returncode == 0, done.stdout + done.stderr
    out = tmp_path / "o"
    assert (out / "README.md").read_text() == "# card\n" and os.readlink(out / "latest-docs") == "docs"
    assert inodes(out) - inodes(folder) == {(p.stat().st_dev, p.stat().st_ino) for p in
                                            (out / "config.json", out / "model.safetensors")}, \
        "every file of the copy is a new file or a hard link to a file of the checkpoint"


def test_hf_cache_destinations_are_refused_behind_links_and_in_blobs(tmp_path: Path) -> None:
    folder = make_checkpoint(tmp_path / "d", **PADDED)
    repo = tmp_path / "hf" / "hub" / "models--org--draft"
    (repo / "snapshots" / ("a" * 40)).mkdir(parents=True)
    (repo / "blobs").mkdir()
    (tmp_path / "cached").symlink_to(repo / "snapshots" / ("a" * 40))
    for out in (tmp_path / "cached" / "fixed", repo / "blobs" / "fixed", tmp_path / "cached"):
        done = run_cli("fix", str(folder), *FIX, "--out", str(out))
        assert done.returncode == 2 and "[DSP-E063]" in done.stderr, (out, done.stderr)
    assert sorted(p.name for p in repo.rglob("*")) == sorted(["snapshots", "blobs", "a" * 40]), "nothing written"


def test_special_files_are_refused_up_front_and_never_opened(tmp_path: Path) -> None:
    folder = make_checkpoint(tmp_path / "d", **PADDED)
    os.mkfifo(folder / "events.pipe")  # opening it for reading would wait for a writer forever
    out = run_cli("fix", str(folder), *FIX, "--out", str(tmp_path / "o"), timeout=60)
    assert out.returncode == 2 and "[DSP-E076]" in out.stderr and "events.pipe" in out.stderr
    assert not (tmp_path / "o").exists()
    in_place = run_cli("fix", str(folder), *FIX, "--in-place", timeout=60)
    assert in_place.returncode == 0, in_place.stderr  # nothing to copy: the FIFO is left as it is
    assert (folder / "events.pipe").is_fifo()


def test_fifo_as_destination_or_as_config_never_hangs(tmp_path: Path) -> None:
    folder = make_checkpoint(tmp_path / "d", **PADDED)
    os.mkfifo(tmp_path / "out.pipe")
    dest = run_cli("fix", str(folder), *FIX, "--out", str(tmp_path / "out.pipe"), timeout=60)
    assert dest.returncode == 2 and "[DSP-E065]" in dest.stderr
    broken = make_checkpoint(tmp_path / "b", **PADDED)
    (broken / "config.json").unlink()
    os.mkfifo(broken / "config.json")
    config = run_cli("fix", str(broken), *FIX, "--in-place", timeout=60)
    assert config.returncode in (1, 2) and "internal error" not in config.stderr, config.stdout + config.stderr
    assert "DSP" in config.stdout + config.stderr


@pytest.mark.parametrize("where", ["config.json", "model.safetensors.index.json"])
def test_a_lone_surrogate_is_an_error_with_a_code(tmp_path: Path, where: str) -> None:
    folder = make_checkpoint(tmp_path / "d", **PADDED, shards=2)
    path = folder / where
    doc = json.loads(path.read_text())
    doc["note"] = "\ud800"
    path.write_text(json.dumps(doc, indent=2))  # ensure_ascii: the file holds the escape "\ud800"
    assert '"\\ud800"' in path.read_text()
    before = tree_digest(folder)
    for mode in (["--in-place"], ["--out", str(tmp_path / "o")], ["--dry-run", "--format", "json"]):
        done = run_cli("fix", str(folder), *FIX, *mode)
        assert done.returncode in (1, 2) and "internal error" not in done.stderr, done.stdout + done.stderr
        assert "DSP" in done.stdout + done.stderr and "surrogate" in flat(done.stdout + done.stderr)
    assert tree_digest(folder) == before and not (tmp_path / "o").exists()


@pytest.mark.parametrize("mode", ["--in-place", "--out"])
def test_an_index_with_shards_in_a_subfolder_is_fixed(tmp_path: Path, mode: str) -> None:
    folder = make_checkpoint(tmp_path / "d", **PADDED, shards=2)
    (folder / "weights").mkdir()
    index = json.loads((folder / "model.safetensors.index.json").read_text())
    for shard in sorted({*index["weight_map"].values()}):
        (folder / shard).rename(folder / "weights" / shard)
    index["weight_map"] = {n: f"weights/{f}" for n, f in index["weight_map"].items()}
    (folder / "model.safetensors.index.json").write_text(json.dumps(index, indent=2))
    dest = folder if mode == "--in-place" else tmp_path / "o"
    done = run_cli("fix", str(folder), *FIX, *([mode] if mode == "--in-place" else [mode, str(dest)]))
    assert done.returncode == 0 and "check passes" in done.stdout, done.stdout + done.stderr
    checked = run_cli("check", str(dest), *FIX)
    assert checked.returncode == 0, checked.stdout
    fixed = json.loads((dest / "model.safetensors.index.json").read_text())
    assert set(fixed["weight_map"].values()) <= {f"weights/{f}" for f in os.listdir(dest / "weights")}
    assert json.loads((dest / "config.json").read_text())["draft_vocab_size"] == 96
    assert sorted(os.listdir(dest)) == ["config.json", "model.safetensors.index.json", "weights"]
