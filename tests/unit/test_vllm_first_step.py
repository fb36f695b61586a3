"""vLLM's first draft step as each release's own code ran it over the probe's matrix (tools/probe_vllm_first_step.py,
release_data/vllm-X/first_step.json, 0.30.0-0.34.0): check reports a recorded failure as DSP371 in the release's
words, at the draft's own sizes, and nothing where the step ran. Read from the committed data only."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import make_checkpoint

from dspark_ckpt.check.analysis import inspect_checkpoint
from dspark_ckpt.model.target import TargetVocab
from dspark_ckpt.runtimes.release_store import DATA
from dspark_ckpt.runtimes.selectors import parse_selectors
from dspark_ckpt.runtimes.versions import VLLM_RELEASES
from dspark_ckpt.sources.local import local_source

RECORDED = sorted(p.parent.name.removeprefix("vllm-") for p in DATA.glob("vllm-*/first_step.json"))
# The first release whose loader of the class the probe runs (tools/probe_vllm_first_step.py families_here: an
# inline loader in v1/worker/gpu/spec_decode/<class>/utils.py, then eagle/utils.py's shared one from 0.30)
INLINE_FROM = {"dflash": "0.24.0", "qwen3-dspark": "0.25.0"}


def vllm_row(path: Path, t: int, release: str):  # type: ignore[no-untyped-def]
    report = inspect_checkpoint(local_source(path), target=TargetVocab(t, "test"),
                                runtimes=parse_selectors([f"vllm=={release}"]))
    (row,) = [e for e in report.compatibility if e.runtime == "vllm"]
    return row


def test_the_recorded_releases_and_their_cells() -> None:
    """0.30+: every family (their loaders share through eagle/utils.py maybe_share_target_embed); before, EAGLE-3
    from 0.22 (load_eagle_model), DFlash from 0.24 (dflash/utils.py load_dflash_model), Qwen3 DSpark from 0.25
    (dspark/utils.py load_dspark_model), each run as the release's own function; 16 cells a family and relation (the shipped
    subsets): a schema-1 file holds the first four relations, a schema-2 file lists the relations it recorded, each
    one of RELATIONS at its sizes."""
    from dspark_ckpt.runtimes.vllm_first_step import RELATIONS, SCHEMA_1

    assert {"0.22.0", "0.29.0", "0.30.0", "0.34.0"} <= set(RECORDED)
    widened = []
    for release in RECORDED:
        doc = json.loads((DATA / f"vllm-{release}" / "first_step.json").read_text(encoding="utf-8"))
        assert (doc["runtime"], doc["release"], doc["target_vocab"]) == ("vllm", release, 96)
        relations = doc.get("relations") or {k: list(RELATIONS[k]) for k in SCHEMA_1}
        assert (doc["schema"] == 2) == ("relations" in doc) and set(SCHEMA_1) <= set(relations), release
        assert all(RELATIONS[k] == tuple(vd) for k, vd in relations.items()), release
        widened += [release] if doc["schema"] == 2 else []
        families = ["eagle3-llama", "eagle3-qwen3"] + [f for f, first in INLINE_FROM.items()
                                                         if VLLM_RELEASES.index(release) >= VLLM_RELEASES.index(first)]
        assert len(doc["cells"]) == 16 * len(relations) * len(families), release
        for family in families:
            for k in relations:
                assert sum(name.startswith(f"{family}-{k}-lm") for name in doc["cells"]) == 16, (release, family, k)
    assert "0.34.0" in widened


# 0.30+ creates no d2t parameter where D == T (llama_eagle3.py, qwen3_eagle3.py), so compute_logits asserts; before,
# EAGLE-3 always has one and scatters into vocab_size columns
ASSERTS = [r for r in RECORDED if VLLM_RELEASES.index(r) >= VLLM_RELEASES.index("0.30.0")]


@pytest.mark.parametrize("release", RECORDED)
@pytest.mark.parametrize("family", ["eagle3-llama", "eagle3-qwen3"])
@pytest.mark.parametrize(("t", "v"), [(96, 128), (80, 112)])  # the recorded sizes, and others
def test_an_expanded_eagle3_draft_loads_then_fails_compute_logits(tmp_path: Path, release: str, family: str,
                                                                  t: int, v: int) -> None:
    path = make_checkpoint(tmp_path / "d", family=family, vocab=v, draft_vocab=t, target_vocab=t, markov=False)
    row = vllm_row(path, t, release)
    if release not in ASSERTS:  # loads and runs (Qwen3 EAGLE-3 is not registered on 0.22-0.23: no step at all)
        assert row.first_step_error_code is None and (row.loads or row.error_code == "DSP309"), row
        return
    assert row.error_code is None and row.first_step_error_code == "DSP371", row
    assert row.first_step_error == (f"AssertionError: Expected logits to have shape (*, {v}), but got "
                                    f"torch.Size([2, {t}])")


@pytest.mark.parametrize("release", RECORDED)
@pytest.mark.parametrize("family", ["eagle3-llama", "eagle3-qwen3", "dflash", "qwen3-dspark"])
def test_a_pruned_draft_with_its_head_and_d2t_runs_its_first_step(tmp_path: Path, release: str,
                                                                  family: str) -> None:
    path = make_checkpoint(tmp_path / "d", family=family, vocab=96, draft_vocab=64, target_vocab=96, d2t=True,
                           markov=family == "qwen3-dspark")
    row = vllm_row(path, 96, release)
    assert row.first_step_error_code is None, row


def _cell_checkpoint(root: Path, name: str) -> Path:
    """The probe's checkpoint of a recorded cell (tools/probe_runtime.py fixture_matrix, `realistic`: a Markov head
    only in DSpark drafts), rebuilt from its name."""
    from dspark_ckpt.runtimes.vllm_first_step import FAMILIES, RELATIONS

    family = next(f for f in FAMILIES if name.startswith(f"{f}-"))
    kind, ships = name.removeprefix(f"{family}-").split("-lm")
    lm, d2t, t2d, embed = (bool(int(s[-1])) for s in f"lm{ships}".split("-"))
    v, d = RELATIONS[kind]
    return make_checkpoint(root / name, family=family, vocab=v, draft_vocab=d, target_vocab=96, lm_head=lm, d2t=d2t,
                           t2d=t2d, embed=embed, markov="dspark" in family)


@pytest.fixture(scope="module")
def cells(tmp_path_factory: pytest.TempPathFactory) -> Callable[[str], Path]:
    """A cell's checkpoint, written once per module and read by every release's check (checking writes nothing):
    the releases record the same cells, so each was rebuilt once per release."""
    root = tmp_path_factory.mktemp("first-step-cells")
    built: dict[str, Path] = {}

    def cell(name: str) -> Path:
        if name not in built:
            built[name] = _cell_checkpoint(root, name)
        return built[name]

    return cell


@pytest.mark.parametrize("release", RECORDED)
def test_check_agrees_with_every_recorded_cell(cells: Callable[[str], Path], release: str) -> None:
    """Each cell the release ran, rebuilt and checked: where it refused the load, check's row refuses it in those
    words (check's own model of the load); where it loaded, check's first-step finding is the recorded failure (the
    capture's, else the last id's) in the release's words, or none where the step ran (that half holds check's
    mapping of a draft onto its cell: the cell's record answers it; `probe_vllm_first_step.py X --agreement` runs
    the release at other sizes)."""
    doc = json.loads((DATA / f"vllm-{release}" / "first_step.json").read_text(encoding="utf-8"))
    wrong = []
    for name, seen in doc["cells"].items():
        row = vllm_row(cells(name), 96, release)
        if "load" in seen:  # refused in those words, or not registered (the registry's answer, DSP309)
            ok = not row.loads and (row.error_code == "DSP309" if seen["load"].get("unregistered") else
                                    seen["load"]["message"] in (row.error or ""))
        else:
            failed = next((f"{seen[a]['raises']}: {seen[a]['text']}" for a in ("capture", "last")
                           if seen[a] != "ok"), None)
            ok = row.loads and row.first_step_error == failed and \
                row.first_step_error_code == ("DSP371" if failed else None) and \
                row.first_step == ("fails" if failed else "ran")
        if not ok:
            wrong.append((name, row.loads, row.error, row.first_step_error))
    assert not wrong, f"{len(wrong)}/{len(doc['cells'])} cells disagree: {wrong[:5]}"


@pytest.mark.parametrize(("v", "d"), [(64, 64), (64, 96), (48, 64), (128, 64), (128, 112), (64, 128)])
def test_a_relation_a_file_does_not_hold_is_not_modelled_never_ran(tmp_path: Path, v: int, d: int) -> None:
    """A draft whose relation of V, D and T a release's file did not record (schema 1: the first four; (64, 128),
    V < T < D, is in no file) gets no DSP371 and no "ran": the row says the step is not modelled, and why."""
    from dspark_ckpt.runtimes.vllm_first_step import RELATIONS, relation

    path = make_checkpoint(tmp_path / "d", family="eagle3-llama", vocab=v, draft_vocab=d, target_vocab=96, d2t=True,
                           markov=False)
    for release in RECORDED:
        doc = json.loads((DATA / f"vllm-{release}" / "first_step.json").read_text(encoding="utf-8"))
        row = vllm_row(path, 96, release)
        held = relation(v, d, 96, tuple(doc.get("relations") or ()) or tuple(RELATIONS)[:4])
        if not row.loads or held is not None:
            continue
        assert row.first_step == "not_modelled" and row.first_step_error is None, (release, row)
        assert row.first_step_not_modelled_why == "vllm-relation-not-recorded", (release, row)
        assert f"V = {v}, D = {d}, T = 96" in (row.first_step_not_modelled or ""), row


def test_before_the_recorded_releases_every_step_is_not_modelled(tmp_path: Path) -> None:
    """A release the probe does not run (before 0.22): a draft that loads says so, whatever its relation."""
    before = [r for r in VLLM_RELEASES if r not in RECORDED and VLLM_RELEASES.index(r) < VLLM_RELEASES.index("0.22.0")]
    path = make_checkpoint(tmp_path / "d", family="eagle3-llama", vocab=96, draft_vocab=64, target_vocab=96, d2t=True,
                           markov=False)
    assert before
    rows = [vllm_row(path, 96, release) for release in before[-3:]]
    assert any(r.loads for r in rows)
    for row in rows:
        if row.loads:
            assert (row.first_step, row.first_step_not_modelled_why) == ("not_modelled", "vllm-release-not-run"), row


def test_dflash_before_its_inline_loader_is_not_modelled(tmp_path: Path) -> None:
    """0.22-0.23 recorded the EAGLE-3 classes only (DFlash shares in the running proposer): a DFlash draft that
    loads there is not modelled (the family's reason), and runs where its cell was recorded (0.24+, its inline
    loader)."""
    path = make_checkpoint(tmp_path / "d", family="dflash", vocab=96, draft_vocab=96, target_vocab=96, markov=False)
    for release in RECORDED:
        row = vllm_row(path, 96, release)
        if not row.loads:
            continue
        every = VLLM_RELEASES.index(release) >= VLLM_RELEASES.index(INLINE_FROM["dflash"])
        assert row.first_step == ("ran" if every else "not_modelled"), (release, row)
        assert row.first_step_not_modelled_why == (None if every else "vllm-family-not-run"), (release, row)
