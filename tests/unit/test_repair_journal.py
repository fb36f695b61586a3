"""The in-place fix's recovery journal on real folders: roll forward from the commit point, back before it, and
refuse (never guess, never delete) what fix did not make."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from dspark_ckpt.cli.check import FIX_LEFTOVERS
from dspark_ckpt.errors import RepairError
from dspark_ckpt.repair import journal as j


def half_done(folder: Path, state: str, moved: int) -> None:
    """A folder as a fix killed after moving `moved` of its three staged files leaves it."""
    folder.mkdir()
    for name in ("a.safetensors", "config.json", "gone.safetensors"):
        (folder / name).write_text(f"old {name}")
    stage = folder / j.STAGE_NAME
    (stage / "sub").mkdir(parents=True)
    (folder / "sub").mkdir()
    (folder / "sub" / "b.safetensors").write_text("old sub/b.safetensors")
    put = ("sub/b.safetensors", "a.safetensors", "config.json")
    for name in put:
        (stage / name).write_text(f"new {name}")
    (stage / "unchanged.json").write_text("a hard link of an unchanged file, for the check of the stage")
    j.write(folder, j.Journal(state, put, ("gone.safetensors",), 12345))
    for name in put[:moved]:
        os.replace(stage / name, folder / name)


def contents(folder: Path) -> dict[str, str]:
    return {p.relative_to(folder).as_posix(): p.read_text() for p in sorted(folder.rglob("*")) if p.is_file()}


FIXED = {"a.safetensors": "new a.safetensors", "config.json": "new config.json",
         "sub/b.safetensors": "new sub/b.safetensors"}


@pytest.mark.parametrize("moved", [0, 1, 3])
def test_a_committing_journal_is_rolled_forward_once(tmp_path: Path, moved: int) -> None:
    folder = tmp_path / "d"
    half_done(folder, j.COMMITTING, moved)
    done = j.recover(folder)
    assert done is not None and done.completed and "completed a fix" in done.message()
    assert contents(folder) == FIXED, "every staged file in place, the removed shard gone, nothing of ours left"
    assert j.recover(folder) is None


def test_a_staging_journal_is_rolled_back(tmp_path: Path) -> None:
    folder = tmp_path / "d"
    half_done(folder, j.STAGING, 0)
    done = j.recover(folder)
    assert done is not None and not done.completed and "nothing changed" in done.message()
    assert contents(folder) == {"a.safetensors": "old a.safetensors", "config.json": "old config.json",
                                "gone.safetensors": "old gone.safetensors",
                                "sub/b.safetensors": "old sub/b.safetensors"}


def test_what_fix_did_not_make_is_refused_not_removed(tmp_path: Path) -> None:
    folder = tmp_path / "d"
    folder.mkdir()
    (folder / j.STAGE_NAME).write_text("a file of the user's with our folder's name")
    with pytest.raises(RepairError, match="is in the way") as refused:
        j.recover(folder)
    assert refused.value.code == "DSP-E080" and (folder / j.STAGE_NAME).is_file()
    (folder / j.STAGE_NAME).unlink()
    (folder / j.JOURNAL_NAME).mkdir()
    with pytest.raises(RepairError, match="not a regular file"):
        j.recover(folder)


@pytest.mark.parametrize("doc", [{"state": "committing", "put": ["../outside"], "remove": []},
                                 {"state": "done", "put": [], "remove": []}, "not json"])
def test_a_journal_fix_cannot_trust_is_never_acted_on(tmp_path: Path, doc: object) -> None:
    folder = tmp_path / "d"
    (folder / j.STAGE_NAME).mkdir(parents=True)
    (folder / j.JOURNAL_NAME).write_text(doc if isinstance(doc, str) else json.dumps(doc))
    (tmp_path / "outside").write_text("keep")
    with pytest.raises(RepairError) as refused:
        j.recover(folder)
    assert refused.value.code == "DSP-E080" and (tmp_path / "outside").read_text() == "keep"
    assert (folder / j.STAGE_NAME).is_dir()


def test_check_looks_for_the_journal_under_its_real_names() -> None:
    assert set(FIX_LEFTOVERS) == {j.JOURNAL_NAME, j.STAGE_NAME}
