"""vLLM's first draft step as each release's own code ran it over the probe's matrix (tools/probe_vllm_first_step.py,
release_data/vllm-X/first_step.json, 0.30.0-0.34.0): check reports a recorded failure as DSP371 in the release's
words, at the draft's own sizes, and nothing where the step ran. Read from the committed data only."""

from __future__ import annotations

import json
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


def vllm_row(path: Path, t: int, release: str):  # type: ignore[no-untyped-def]
    report = inspect_checkpoint(local_source(path), target=TargetVocab(t, "test"),
                                runtimes=parse_selectors([f"vllm=={release}"]))
    (row,) = [e for e in report.compatibility if e.runtime == "vllm"]
    return row


def test_the_recorded_releases_and_their_cells() -> None:
    """0.30+: every family (their loaders share through eagle/utils.py maybe_share_target_embed); 0.22-0.29: the
    EAGLE-3 ones (load_eagle_model, run as the release's own function); 64 cells a family (4 kinds x 16 shipped
    subsets)."""
    assert {"0.22.0", "0.29.0", "0.30.0", "0.34.0"} <= set(RECORDED)
    for release in RECORDED:
        doc = json.loads((DATA / f"vllm-{release}" / "first_step.json").read_text(encoding="utf-8"))
        assert (doc["runtime"], doc["release"], doc["target_vocab"]) == ("vllm", release, 96)
        every = VLLM_RELEASES.index(release) >= VLLM_RELEASES.index("0.30.0")
        families = ["eagle3-llama", "eagle3-qwen3"] + (["dflash", "qwen3-dspark"] if every else [])
        assert len(doc["cells"]) == 64 * len(families), release
        for family in families:
            assert sum(name.startswith(f"{family}-") for name in doc["cells"]) == 64, (release, family)


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
    from dspark_ckpt.runtimes.vllm_first_step import FAMILIES, KINDS

    family = next(f for f in FAMILIES if name.startswith(f"{f}-"))
    kind, *ships = name.removeprefix(f"{family}-").split("-")
    lm, d2t, t2d, embed = (bool(int(s[-1])) for s in ships)
    v, d = KINDS[kind]
    return make_checkpoint(root / name, family=family, vocab=v, draft_vocab=d, target_vocab=96, lm_head=lm, d2t=d2t,
                           t2d=t2d, embed=embed, markov="dspark" in family)


@pytest.mark.parametrize("release", RECORDED)
def test_check_agrees_with_every_recorded_cell(tmp_path: Path, release: str) -> None:
    """Each cell the release ran, rebuilt and checked: where it refused the load, check's row refuses it in those
    words (check's own model of the load); where it loaded, check's first-step finding is the recorded failure (the
    capture's, else the last id's) in the release's words, or none where the step ran (that half holds check's
    mapping of a draft onto its cell: the cell's record answers it; `probe_vllm_first_step.py X --agreement` runs
    the release at other sizes)."""
    doc = json.loads((DATA / f"vllm-{release}" / "first_step.json").read_text(encoding="utf-8"))
    wrong = []
    for name, seen in doc["cells"].items():
        row = vllm_row(_cell_checkpoint(tmp_path, name), 96, release)
        if "load" in seen:  # refused in those words, or not registered (the registry's answer, DSP309)
            ok = not row.loads and (row.error_code == "DSP309" if seen["load"].get("unregistered") else
                                    seen["load"]["message"] in (row.error or ""))
        else:
            failed = next((f"{seen[a]['raises']}: {seen[a]['text']}" for a in ("capture", "last")
                           if seen[a] != "ok"), None)
            ok = row.loads and row.first_step_error == failed and \
                row.first_step_error_code == ("DSP371" if failed else None)
        if not ok:
            wrong.append((name, row.loads, row.error, row.first_step_error))
    assert not wrong, f"{len(wrong)}/{len(doc['cells'])} cells disagree: {wrong[:5]}"
