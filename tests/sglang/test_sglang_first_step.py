"""SGLang DSpark's first draft step as each release's own code ran it (tools/probe_first_step.py wrote
release_data/sglang-X/first_step.json; tests/producers/test_sglang_first_step_data.py regenerates it): check reports,
release by release, what was recorded, in the release's words. The expectation here is read from the JSON itself."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from sglang_support import DSPARK_READY, Drafts

from dspark_ckpt.check.analysis import inspect_checkpoint
from dspark_ckpt.model.report import Compatibility
from dspark_ckpt.model.target import TargetVocab
from dspark_ckpt.runtimes.release_model import release_record
from dspark_ckpt.runtimes.release_store import DATA
from dspark_ckpt.runtimes.selectors import parse_selectors
from dspark_ckpt.runtimes.table import SGLANG_VERSIONS
from dspark_ckpt.sources.local import local_source

FILE = "first_step.json"
T_DFLASH2 = 96
SELECTOR = {"architectures": ["DFlash2DraftModel"], "dflash_config": {"selector_rank": 4, "selector_top_k": 8}}
RECORDED = {v: json.loads((DATA / f"sglang-{v}" / FILE).read_text(encoding="utf-8"))
            for v in SGLANG_VERSIONS if (DATA / f"sglang-{v}" / FILE).is_file()}
# (head type, V, T, W): padded (V > W), pruned (V < T), equal, and V = T under a target head padded to W
CASES = [("vanilla", 128, 96, 96), ("vanilla", 64, 96, 96), ("vanilla", 96, 96, 96), ("vanilla", 96, 96, 128),
         ("vanilla", 112, 96, 128), ("gated", 128, 96, 96), ("gated", 64, 96, 96), ("rnn", 128, 96, 96),
         ("rnn", 64, 96, 96)]


def recorded_outcome(doc: dict[str, Any], head: str, v: int, t: int, w: int) -> str | None:
    """What the release raised, formatted for these sizes: the capture's previous token (0) first, then a token
    the target proposes: the first one without a markov_w1 row where V < min(T, W), else the last one with one."""
    relation = "V<W" if v < w else "V=W" if v == w else "V>W"
    table = doc["dspark"]["steps"][head][relation]
    for anchor in ("capture", "outside" if v < min(t, w) else "inside"):
        seen = table[anchor]
        if seen not in ("ok", None):
            text: str = seen["text"].replace("{v}", str(v)).replace("{w}", str(w))
            return text
    return None


def checked(path: Path, t: int, w: int) -> dict[str, Compatibility]:
    target = TargetVocab(t, "test", head_rows=w if w != t else None)
    report = inspect_checkpoint(local_source(path), target=target, runtimes=parse_selectors(["sglang"]))
    return {e.version: e for e in report.compatibility if e.runtime == "sglang"}


def test_every_release_with_a_dflash2_class_has_its_selector_recorded() -> None:
    with_dflash2 = {v for v in SGLANG_VERSIONS if (r := release_record("sglang", v)) is not None
                    and "DFlash2DraftModel" in r["architectures"]}
    assert {v for v, doc in RECORDED.items() if "dflash2" in doc} == with_dflash2 and with_dflash2
    for version in with_dflash2:
        table = RECORDED[version]["dflash2"]["steps"]
        assert set(table) == {"V<W", "V=W", "V>W"}
        assert all(set(anchors) == {"capture", "inside", "outside"} for anchors in table.values())


@pytest.mark.parametrize(("v", "w"), [(64, 96), (96, 96), (128, 96), (96, 128)])
def test_check_reports_the_recorded_dflash2_selector_step(tmp_path: Path, v: int, w: int) -> None:
    path = Drafts(tmp_path)(family="dflash", vocab=v, draft_vocab=v, target_vocab=T_DFLASH2, markov=False,
                            config_extra=SELECTOR)
    found = checked(path, T_DFLASH2, w)
    for version, doc in RECORDED.items():
        if "dflash2" not in doc:
            continue
        table = doc["dflash2"]["steps"]["V<W" if v < w else "V=W" if v == w else "V>W"]
        want = next((o for o in (table["capture"], table["outside" if v < w else "inside"]) if o not in ("ok", None)),
                    None)
        got = found[version]
        if want is None:
            assert got.first_step_error_code is None, (version, got.first_step_error)
        else:
            text = want["text"].replace("{v}", str(v)).replace("{w}", str(w))
            assert got.first_step_error_code == "DSP340" and text in (got.first_step_error or ""), (version, got)


def test_every_release_with_a_dspark_class_has_its_step_recorded() -> None:
    with_dspark = {v for v in SGLANG_VERSIONS if (r := release_record("sglang", v)) is not None
                   and "Qwen3DSparkModel" in r["architectures"]}
    assert {v for v, doc in RECORDED.items() if "dspark" in doc} == with_dspark and with_dspark
    for version, doc in RECORDED.items():
        if "dspark" not in doc:
            continue
        assert (doc["runtime"], doc["release"], doc["schema"]) == ("sglang", version, 1)
        steps = doc["dspark"]["steps"]
        assert set(steps) == {"vanilla", "gated", "rnn"}
        for table in steps.values():
            assert set(table) == {"V<W", "V=W", "V>W"}
            assert all(set(anchors) == {"capture", "inside", "outside"} for anchors in table.values())
            failures = [o for anchors in table.values() for o in anchors.values() if isinstance(o, dict)]
            assert failures and all(o["where"].startswith("sglang/") for o in failures)


@pytest.mark.parametrize(("head", "v", "t", "w"), CASES, ids=[f"{h}-V{v}-T{t}-W{w}" for h, v, t, w in CASES])
def test_check_reports_the_recorded_first_step_release_by_release(tmp_path: Path, head: str, v: int, t: int,
                                                                   w: int) -> None:
    path = Drafts(tmp_path)(vocab=v, draft_vocab=v, target_vocab=t,
                            config_extra={**DSPARK_READY, "markov_head_type": head})
    found = checked(path, t, w)
    for version, doc in RECORDED.items():
        if "dspark" not in doc:
            continue
        want, got = recorded_outcome(doc, head, v, t, w), found[version]
        assert got.error_code is None, (version, got.error)
        if want is None:
            assert got.first_step_error_code is None, (version, got.first_step_error)
        else:
            assert got.first_step_error_code == "DSP340" and got.first_step_error is not None, (version, got)
            assert want in got.first_step_error, (version, want, got.first_step_error)
