"""SGLang's Domino projector (0.5.20+) judged by the generated record, held against SGLang's own code (issue 42).

DFlashDraftModel.__init__ builds `prefix_gru` (nn.GRU without bias: weight_ih_l0 [3G, H], weight_hh_l0 [3G, G])
and `embed_proj` (Linear(H + G, E), SiLU, Linear(E, V)) where parse_dflash_draft_config's projector_type is
"domino" (each field from dflash_config, else the top level; models/dflash.py L775-800, speculative/dflash_utils.py
L718-775 @ 0.5.23); load_weights refuses the names where it is not (L923-929), a projector weight of another shape
(L975-983) and a projector with a weight missing (L987-999). The DFlash recipe now builds the projector
(tools/sglang_release_model.py RECIPES), so the record judges its parameters' shapes and presence; check keeps by
hand only the refusal of an undeclared projector (DSP352) and the worker's vocabulary check (DSP353). z-lab's DFlash
export (`dflash-0.1.0-dflash`, H = 16, V = T = 96) with a projector (G = 8, E = 8) added, each case through the
release's own get_config, __init__ and load_weights on CPU (the worker's load mode); the answers are recorded in
tests/data/observed/sglang-domino (tests/recorded.py).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from conftest import write_safetensors
from producers import layout
from recorded import observations, sources
from test_sglang_absent_keys_agreement import judged
from test_sglang_whole_agreement import _compare
from test_sglang_whole_classes_agreement import _observe

from dspark_ckpt.runtimes.release_model import generated_releases

RELEASES = ("0.5.23", "0.5.22", "0.5.21", "0.5.20")
LAYOUT = "dflash-0.1.0-dflash"
T, H, G, E = 96, 16, 8, 8
FIELDS = {"projector_type": "domino", "shift_label": True, "pure_draft_prefix_len": 1, "gru_hidden_dim": G,
          "emb_dim": E}
PROJECTOR = {"prefix_gru.weight_ih_l0": (3 * G, H), "prefix_gru.weight_hh_l0": (3 * G, G),
             "embed_proj.0.weight": (E, H + G), "embed_proj.2.weight": (T, E)}


def _nested(cfg: dict[str, Any]) -> None:
    cfg["dflash_config"].update(FIELDS)


def _top(cfg: dict[str, Any]) -> None:
    cfg.update(FIELDS)


def _wider(cfg: dict[str, Any]) -> None:
    cfg["dflash_config"].update({**FIELDS, "gru_hidden_dim": 2 * G, "emb_dim": 3 * E})


# name -> (config edit, projector tensors: name -> shape, whether the release refuses it)
CASES: dict[str, tuple[Any, dict[str, tuple[int, ...]], bool]] = {
    "declared-in-dflash-config": (_nested, PROJECTOR, False),
    "declared-at-the-top-level": (_top, PROJECTOR, False),
    "declared-wider": (_wider, {"prefix_gru.weight_ih_l0": (6 * G, H), "prefix_gru.weight_hh_l0": (6 * G, 2 * G),
                                "embed_proj.0.weight": (3 * E, H + 2 * G), "embed_proj.2.weight": (T, 3 * E)}, False),
    "undeclared": (None, PROJECTOR, True),
    "embed-proj-rows": (_nested, {**PROJECTOR, "embed_proj.2.weight": (T - 1, E)}, True),
    "gru-width": (_nested, {**PROJECTOR, "prefix_gru.weight_hh_l0": (3 * G, G + 1)}, True),
    "declared-gru-dim-differs": (_wider, PROJECTOR, True),
    "no-embed-proj-0": (_nested, {k: v for k, v in PROJECTOR.items() if k != "embed_proj.0.weight"}, True),
    "declared-without-projector": (_nested, {}, True),
    "not-declared-nor-shipped": (None, {}, False),
}


def _write(folder: Path, edit: Any, projector: dict[str, tuple[int, ...]]) -> None:
    doc = layout(LAYOUT)
    folder.mkdir(parents=True)
    cfg = json.loads(json.dumps(doc["config"]))
    if edit is not None:
        edit(cfg)
    (folder / "config.json").write_text(json.dumps(cfg, indent=2, sort_keys=True))
    rng = np.random.default_rng(0)
    (specs,) = (shard["tensors"] for shard in doc["shards"].values())
    shapes = {**{n: tuple(shape) for n, (_, shape) in specs.items()}, **projector}
    write_safetensors(folder / "model.safetensors",
                      {n: rng.standard_normal(s, dtype=np.float32) * 0.02 for n, s in sorted(shapes.items())})


def _cases(tmp_path: Path, release: str) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    cases, predicted = [], {}
    for name, (edit, projector, _) in CASES.items():
        folder = tmp_path / name
        _write(folder, edit, projector)
        case, predicted[name] = judged(folder, name, release)
        cases.append(case)
    return cases, predicted


@pytest.mark.parametrize("source", sources("sglang"))
@pytest.mark.parametrize("release", RELEASES)
def test_check_agrees_with_sglang_on_the_domino_projector(tmp_path: Path, release: str, source: str) -> None:
    assert release in generated_releases("sglang")
    cases, predicted = _cases(tmp_path, release)
    observed = observations("sglang-domino", "sglang", release, cases, source, lambda: _observe(release, cases))
    assert _compare(predicted, observed) == []
    for name, (_, _, refused) in CASES.items():
        verdict, seen = predicted[name][0], observed[name]
        assert (seen["error"] is not None) == refused, (name, seen)
        if refused:  # in the release's own words: the record's (shape, a missing weight) or DSP352's
            assert verdict.error is not None and seen["error"]["message"] in verdict.error.text, (
                name, seen["error"], verdict.error)
        else:  # what the release left unwritten, check names; no projector parameter among them
            assert not any(p.startswith(("prefix_gru", "embed_proj")) for p in seen["unwritten"]), (name, seen)
