"""SGLang EAGLE-3's first draft step as each release's own code ran it (tools/probe_first_step_eagle3.py, recorded as
`eagle3` in release_data/sglang-X/first_step.json, 0.5.12+): the head's logits cropped to draft_vocab_size (or V
where it is null), the top id mapped through hot_token_id (d2t + arange). check reports, release by release, what
was recorded, in the release's words; the expectation is read from the JSON itself, on real tiny checkpoints."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from sglang_support import EAGLE3_READY, Drafts, T
from test_sglang_eagle3 import midlayer

from dspark_ckpt.check.analysis import inspect_checkpoint
from dspark_ckpt.model.report import Compatibility
from dspark_ckpt.model.target import TargetVocab
from dspark_ckpt.runtimes.release_model import release_record
from dspark_ckpt.runtimes.release_store import DATA
from dspark_ckpt.runtimes.selectors import parse_selectors
from dspark_ckpt.runtimes.table import SGLANG_VERSIONS
from dspark_ckpt.sources.local import local_source

RECORDED = {v: doc["eagle3"]["steps"] for v in SGLANG_VERSIONS if (DATA / f"sglang-{v}" / "first_step.json").is_file()
            and "eagle3" in (doc := json.loads((DATA / f"sglang-{v}" / "first_step.json").read_text(encoding="utf-8")))}
FIRST = "0.5.12"  # the first release with LogitsProcessor._copy_logits_to_buffer: the probe runs from it
# (kind, V, D or None, target head rows R, d2t length L or None): own head, null (the target's head), tied, tied-null
CASES = [("own", 96, d, r, length) for d in (64, 96, 128) for r in (96, 128)
         for length in (None, d, d - 16, d + 16)]
CASES += [("null", v, None, r, length) for v in (96, 112) for r in (96, 128) for length in (None, 80, v)]
CASES += [("tied", 96, d, r, length) for d in (64, 96) for r in (96, 128) for length in (None, 48, d)]
CASES += [("tied-null", 96, None, r, None) for r in (96, 128)]
CODES = {"crop": "DSP342", "lookup": "DSP324", "head": "DSP342"}


def order(sizes: dict[str, int]) -> str:
    names = sorted(sizes, key=lambda n: (sizes[n], n))
    return names[0] + "".join(("=" if sizes[b] == sizes[a] else "<") + b for a, b in zip(names, names[1:]))


def recorded_outcome(steps: dict[str, Any], kind: str, c: int, r: int, length: int | None) -> tuple[str, str] | None:
    """(code, text) of what the release raised for these sizes: the capture's, else the head's last id's unless
    it is the next step's embedding (an id the draft must pick: not a first-step failure)."""
    seen = steps[kind][order({"C": c, "R": r, **({"L": length} if length is not None else {})})]
    for anchor in ("capture", "last"):
        o = seen[anchor]
        if o != "ok" and (anchor == "capture" or o["stage"] != "embed"):
            sizes = {"c-1": c - 1, "r-1": r - 1, "c": c, "r": r, "l": length}
            text = o["text"]
            for name, value in sizes.items():
                text = text.replace(f"{{{name}}}", str(value))
            return CODES[o["stage"]], text
    return None


def test_every_release_from_0_5_12_with_eagle3_has_its_step_recorded() -> None:
    with_eagle3 = {v for v in SGLANG_VERSIONS[SGLANG_VERSIONS.index(FIRST):]
                   if (rec := release_record("sglang", v)) is not None and "LlamaForCausalLMEagle3" in rec["architectures"]}
    assert set(RECORDED) == with_eagle3 and with_eagle3
    for steps in RECORDED.values():
        assert set(steps) == {"own", "null", "tied", "tied-null"}
        assert all(len(table) == 16 for table in steps.values())  # 3 orders of C, R; 13 of C, R, L
        wheres = {o["where"] for table in steps.values() for anchors in table.values() for o in anchors.values()
                  if isinstance(o, dict) and o["stage"] != "embed"}
        assert wheres and all(w.startswith("sglang/srt/") for w in wheres)


def checked(path: Path, r: int) -> dict[str, Compatibility]:
    report = inspect_checkpoint(local_source(path), target=TargetVocab(T, "test", head_rows=r if r != T else None),
                                runtimes=parse_selectors(["sglang"]))
    return {e.version: e for e in report.compatibility if e.runtime == "sglang"}


@pytest.mark.parametrize(("kind", "v", "d", "r", "length"), CASES,
                         ids=[f"{k}-V{v}-D{d}-R{r}-L{n}" for k, v, d, r, n in CASES])
def test_check_reports_the_recorded_eagle3_first_step(tmp_path: Path, kind: str, v: int, d: int | None, r: int,
                                                      length: int | None) -> None:
    tied = kind.startswith("tied")
    tensors = midlayer(vocab=v, draft_vocab=d or v, target_vocab=T, d2t=length is not None, lm_head=not tied)
    if length is not None:  # a d2t of another length than D: cut, or zero entries appended
        rows = d or v
        tensors["d2t"] = tensors["d2t"][:length] if length <= rows else np.concatenate(
            [tensors["d2t"], np.zeros(length - rows, dtype=tensors["d2t"].dtype)])
    path = Drafts(tmp_path)(family="eagle3-llama", vocab=v, draft_vocab=d or v, markov=False, tensors=tensors,
                            config_extra={**EAGLE3_READY, "tie_word_embeddings": tied,
                                          **({"draft_vocab_size": None} if d is None else {})})
    found = checked(path, r)
    compared = 0
    for version, steps in RECORDED.items():
        got = found[version]
        if got.error_code is not None:  # refused before the step (start-up or load): nothing to compare
            continue
        compared += 1
        want = recorded_outcome(steps, kind, d or v, r, length)
        if want is None:
            assert got.first_step_error_code is None, (version, got.first_step_error)
        else:
            assert got.first_step_error_code == want[0], (version, want, got.first_step_error)
            assert want[1] in (got.first_step_error or ""), (version, want, got.first_step_error)
    assert compared, "every release refused the draft before its first step"
