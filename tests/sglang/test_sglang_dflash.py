"""SGLang's DFlash (0.5.11+) and DFlash2 (0.5.19+), models/dflash.py, and the families no release registers."""

from __future__ import annotations

from pathlib import Path

import pytest
from sglang_support import ANY_LOADS, DSPARK_READY, Drafts, T, check, expect, outcome, releases

from dspark_ckpt.runtimes import messages as m
from dspark_ckpt.runtimes.release_model import generated_releases

ALL = ("0.4.2", "0.5.23")
OWN_IGNORED = frozenset({"DSP307"})
SELECTOR = {"architectures": ["DFlash2DraftModel"], "dflash_config": {"selector_rank": 4, "selector_top_k": 8}}


@pytest.fixture
def drafts(tmp_path: Path) -> Drafts:
    return Drafts(tmp_path)


def test_dflash_is_registered_from_0_5_11_and_ignores_head_embedding_and_mappings(drafts: Drafts) -> None:
    """DFlashDraftModel has no lm_head, embed_tokens or d2t parameter: `# Ignore unexpected weights`."""
    for kwargs in ({"vocab": T, "draft_vocab": T}, {"vocab": T, "draft_vocab": 64, "d2t": True, "t2d": True}):
        found = check(drafts(family="dflash", markov=False, **kwargs))
        expect(found, {("0.4.2", "0.5.10"): ("error", "DSP309"), ("0.5.11", "0.5.23"): ("loads", OWN_IGNORED)})
        assert "'DFlashDraftModel' is not a registered model" in (found["0.5.10"].error or "")


def test_dflash_mask_token_id_beyond_t_is_refused(drafts: Drafts) -> None:
    found = check(drafts(family="dflash", vocab=T, draft_vocab=T, markov=False,
                         config_extra={"dflash_config": {"mask_token_id": T + 4}}))
    expect(found, {("0.4.2", "0.5.10"): ("error", "DSP309"), ("0.5.11", "0.5.23"): ("error", "DSP343")})
    assert found["0.5.11"].error == m.E_DFLASH_MASK_OUTSIDE.format(m=T + 4, t=T, token="<|MASK|>")
    assert (found["0.5.11"].error or "").startswith(f"DFLASH mask_token_id is outside the target vocab size. "
                                                    f"mask_token_id={T + 4}, vocab_size={T}.")


def test_dflash2_is_registered_from_0_5_19_and_needs_its_selector(drafts: Drafts) -> None:
    found = check(drafts(family="dflash", vocab=T, draft_vocab=T, markov=False, config_extra=SELECTOR))
    # Where the release's generated model exists (release_data/sglang-X): DFlash2DraftModel also builds the
    # candidate selector (models/dflash.py:1274 @ 0.5.23), which a DFlash checkpoint lacks; its load_weights leaves
    # it as initialised (DSP363). It builds no grouped convolution for a config without conv_kernel_size and
    # conv_group_size (dflash_utils.py L620-634, models/dflash.py L718-726 @ 0.5.23: `.get(key, 0)`, none where the
    # kernel size is 0), as the record of their absence says (absent_keys), so the convolutions are not named
    expect(found, {("0.4.2", "0.5.18"): ("error", "DSP309"), ("0.5.19", "0.5.23"): ANY_LOADS})
    for version in releases("0.5.19", "0.5.23"):
        generated = version in generated_releases("sglang")
        assert outcome(found[version]) == ("loads", OWN_IGNORED | ({"DSP363"} if generated else set())), version
    for version in ("0.5.19", "0.5.23"):  # the releases executed without the keys (test_sglang_absent_keys_agreement)
        said = " ".join(t for c, t in zip(found[version].silent_codes, found[version].silent) if c == "DSP363")
        assert said.startswith("3 parameters") and "_conv." not in said, (version, said)  # the selector's alone
        assert "candidate_selector.hidden_projection.weight" in said, (version, said)
    with_convs = check(drafts(family="dflash", vocab=T, draft_vocab=T, markov=False, config_extra={
        **SELECTOR, "dflash_config": {**SELECTOR["dflash_config"], "conv_kernel_size": 3, "conv_group_size": 2}}))
    said = " ".join(t for c, t in zip(with_convs["0.5.23"].silent_codes, with_convs["0.5.23"].silent) if c == "DSP363")
    # the selector's three parameters and the four of the convolutions (the text names the first few)
    assert said.startswith("7 parameters") and "layers.0.attention_conv.base_kernel" in said, said
    bare = check(drafts(family="dflash", vocab=T, draft_vocab=T, markov=False,
                        config_extra={"architectures": ["DFlash2DraftModel"]}))
    expect(bare, {("0.4.2", "0.5.18"): ("error", "DSP309"), ("0.5.19", "0.5.23"): ("error", "DSP344")})
    assert bare["0.5.19"].error == "DFlash selector draft requires dflash_config.selector_rank."


@pytest.mark.parametrize(("conv", "said"), [
    ({"conv_kernel_size": 3}, "Got conv_kernel_size=3, conv_group_size=0."),
    ({"conv_group_size": 4}, "Got conv_kernel_size=0, conv_group_size=4."),
    ({"conv_kernel_size": None, "conv_group_size": 2}, "Got conv_kernel_size=None, conv_group_size=2."),
])
def test_dflash2_refuses_one_conv_key_without_the_other(drafts: Drafts, conv: dict[str, object], said: str) -> None:
    """parse_dflash_draft_config reads both with `.get(key, 0)` (a null stays None) and takes them only together
    (dflash_utils.py L620-634 @ 0.5.23): the record's refusal of one left out or null beside the other
    (absent_keys, runtimes/absent_refusal.py), in the release's words at the draft's values (DSP372)."""
    found = check(drafts(family="dflash", vocab=T, draft_vocab=T, markov=False, config_extra={
        **SELECTOR, "dflash_config": {**SELECTOR["dflash_config"], **conv}}))
    expect(found, {("0.4.2", "0.5.18"): ("error", "DSP309"), ("0.5.19", "0.5.23"): ("error", "DSP372")})
    for version in releases("0.5.19", "0.5.23"):
        error = found[version].error or ""
        assert error.startswith("ValueError: DFLASH grouped convolution needs conv_kernel_size and conv_group_size "
                                f"together. {said} (sglang/srt/speculative/dflash_utils.py:"), (version, error)


def test_dflash2_reads_both_conv_keys_null_as_their_absence(drafts: Drafts) -> None:
    """Both null: `_parse_optional_int(None)` is None, `if not draft_config.conv_kernel_size` builds no convolution:
    the record's `null` is "as_absent", and check names no convolution."""
    found = check(drafts(family="dflash", vocab=T, draft_vocab=T, markov=False, config_extra={
        **SELECTOR, "dflash_config": {**SELECTOR["dflash_config"], "conv_kernel_size": None,
                                      "conv_group_size": None}}))
    expect(found, {("0.4.2", "0.5.18"): ("error", "DSP309"), ("0.5.19", "0.5.23"): ANY_LOADS})
    for version in releases("0.5.19", "0.5.23"):
        assert "_conv." not in " ".join(found[version].silent), version


def test_dflash2_codebooks_narrower_than_the_target_head_fail_at_the_first_step(drafts: Drafts) -> None:
    found = check(drafts(family="dflash", vocab=64, draft_vocab=64, markov=False, config_extra=SELECTOR))
    expect(found, {("0.4.2", "0.5.18"): ("error", "DSP309"), ("0.5.19", "0.5.23"): ("first-step", "DSP340")})
    # the release's CandidateSelector.build_lattice as recorded (release_data/sglang-X/first_step.json), fed the first
    # candidate id without a codebook row
    assert "index 64 is out of bounds for dimension 0 with size 64" in (found["0.5.19"].first_step_error or "")
    assert "(up to 95)" in (found["0.5.23"].first_step_error or "")


@pytest.mark.parametrize("family", ["gemma4-dspark", "qwen3-omni-dspark"])
def test_vllm_only_dspark_families_are_registered_in_no_release(drafts: Drafts, family: str) -> None:
    found = check(drafts(family=family, vocab=T, draft_vocab=T, config_extra=DSPARK_READY))
    expect(found, {ALL: ("error", "DSP309")})
    arch = {"gemma4-dspark": "Gemma4DSparkModel", "qwen3-omni-dspark": "Qwen3OmniDSparkModel"}[family]
    assert found["0.5.23"].error == m.E_SGLANG_UNREGISTERED.format(arch=arch)
    assert "registered in no release 0.4.2-0.5.23" in found["0.5.23"].source


def test_a_draft_without_an_architecture_has_no_sglang_class(drafts: Drafts) -> None:
    found = check(drafts(vocab=T, draft_vocab=T, config_extra={**DSPARK_READY, "architectures": []}))
    assert all(e.error_code == "DSP309" and "names no architecture" in (e.error or "") for e in found.values())
