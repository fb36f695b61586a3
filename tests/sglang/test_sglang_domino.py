"""SGLang's Domino projector (0.5.20+) judged through check: its parameters' shapes and presence by the release's
generated record (the DFlash recipe builds the projector, tools/sglang_release_model.py), the undeclared projector
(DSP352) and the worker's vocabulary check (DSP353) by hand (runtimes/sglang_eval.py). The release's own answers
for the same cases: tests/producers/test_sglang_domino_agreement.py."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from conftest import draft_tensors
from sglang_support import ANY_LOADS, Drafts, T, check, expect, releases

from dspark_ckpt.model.report import Compatibility

H, G, E = 16, 8, 8
FIELDS = {"projector_type": "domino", "shift_label": True, "pure_draft_prefix_len": 1, "gru_hidden_dim": G,
          "emb_dim": E}
PROJECTOR = {"prefix_gru.weight_ih_l0": (3 * G, H), "prefix_gru.weight_hh_l0": (3 * G, G),
             "embed_proj.0.weight": (E, H + G), "embed_proj.2.weight": (T, E)}
DOMINO = ("0.5.20", "0.5.23")


@pytest.fixture
def drafts(tmp_path: Path) -> Drafts:
    return Drafts(tmp_path)


def _draft(drafts: Drafts, projector: dict[str, tuple[int, ...]], **config: object) -> Path:
    rng = np.random.default_rng(0)
    tensors = draft_tensors(vocab=T, draft_vocab=T, target_vocab=T, markov=False)
    tensors.update({n: rng.standard_normal(s, dtype=np.float32) for n, s in projector.items()})
    return drafts(family="dflash", vocab=T, draft_vocab=T, tensors=tensors, config_extra=config)


def _unnamed(found: dict[str, Compatibility], version: str) -> bool:
    said = " ".join(found[version].silent)
    return "prefix_gru" not in said and "embed_proj" not in said


@pytest.mark.parametrize("where", ["dflash_config", "top level"])
def test_a_declared_projector_of_the_configured_sizes_loads(drafts: Drafts, where: str) -> None:
    config = {"dflash_config": FIELDS} if where == "dflash_config" else FIELDS
    found = check(_draft(drafts, PROJECTOR, **config))
    expect(found, {("0.4.2", "0.5.10"): ("error", "DSP309"), ("0.5.11", "0.5.23"): ANY_LOADS})
    assert all(_unnamed(found, v) for v in releases(*DOMINO))
    # before 0.5.20 no release knows the projector: the loader skips it (DSP354)
    assert "DSP354" in found["0.5.19"].silent_codes and "DSP354" not in found["0.5.20"].silent_codes


def test_the_projector_is_sized_by_the_drafts_own_gru_and_emb_dims(drafts: Drafts) -> None:
    """The record's expressions (3*gru_hidden_dim, gru_hidden_dim + hidden_size, emb_dim, vocab_size) at values
    the samples did not build at: a wider projector loads, the narrower one against the wider config does not."""
    wide = {"prefix_gru.weight_ih_l0": (6 * G, H), "prefix_gru.weight_hh_l0": (6 * G, 2 * G),
            "embed_proj.0.weight": (3 * E, H + 2 * G), "embed_proj.2.weight": (T, 3 * E)}
    sizes = {"dflash_config": {**FIELDS, "gru_hidden_dim": 2 * G, "emb_dim": 3 * E}}
    found = check(_draft(drafts, wide, **sizes))
    assert all(found[v].error_code is None and _unnamed(found, v) for v in releases(*DOMINO))
    narrow = check(_draft(drafts, PROJECTOR, **sizes))
    for version in releases(*DOMINO):
        assert narrow[version].error_code == "DSP361", (version, narrow[version])
        assert "DFLASH Domino projector weight shape mismatch: expected " in (narrow[version].error or "")


def test_a_projector_weight_of_another_shape_is_refused_in_the_releases_words(drafts: Drafts) -> None:
    found = check(_draft(drafts, {**PROJECTOR, "embed_proj.2.weight": (T - 1, E)}, dflash_config=FIELDS))
    for version in releases(*DOMINO):
        assert found[version].error_code == "DSP361", (version, found[version])
        assert (found[version].error or "").startswith(
            "ValueError: DFLASH Domino projector weight shape mismatch: expected "
            f"embed_proj.2.weight({T}, {E}), got ({T - 1}, {E}) from 'embed_proj.2.weight'."), found[version].error


def test_a_missing_projector_weight_is_refused_in_the_releases_words(drafts: Drafts) -> None:
    partial = {n: s for n, s in PROJECTOR.items() if n == "embed_proj.2.weight"}
    found = check(_draft(drafts, partial, dflash_config=FIELDS))
    for version in releases(*DOMINO):
        assert found[version].error_code == "DSP367", (version, found[version])
        assert (found[version].error or "").startswith(
            "ValueError: DFLASH Domino checkpoint is missing required projector weights: ['embed_proj.0.weight', "
            "'prefix_gru.weight_hh_l0', 'prefix_gru.weight_ih_l0']."), found[version].error


def test_an_undeclared_projector_is_refused_by_name(drafts: Drafts) -> None:
    found = check(_draft(drafts, PROJECTOR))
    for version in releases(*DOMINO):
        assert (found[version].error_code, found[version].error) == (
            "DSP352", "DFLASH checkpoint contains Domino projector weights but projector_type=None.")
    # nor is a projector the config does not declare required of a draft without one
    plain = check(_draft(drafts, {}))
    assert all(plain[v].error_code is None and _unnamed(plain, v) for v in releases(*DOMINO))
