"""The config rewrites each vLLM release executes (runtimes/release_data/vllm-X/config_rewrites.json, written by
tools/release_config_rewrites.py from the release's own hf_config_override and EAGLEConfig) are what check and the
deploy preflight replay: the hand-written rename agrees with every recorded outcome, and the override is read."""

from __future__ import annotations

import pytest

from dspark_ckpt.model.families import Family
from dspark_ckpt.runtimes import config_rewrites, vllm_hf_config
from dspark_ckpt.runtimes.config_build import build_config
from dspark_ckpt.runtimes.versions import VLLM_RELEASES
from dspark_ckpt.runtimes.vllm_release import RELEASE_RULES


@pytest.mark.parametrize("release", VLLM_RELEASES)
def test_every_listed_release_has_its_executed_record(release: str) -> None:
    names = config_rewrites.renames(release)
    assert "LlamaForCausalLM" in names and config_rewrites.override(release, "deepseek_v3") is not None


@pytest.mark.parametrize("release", VLLM_RELEASES)
def test_the_replayed_rename_is_what_the_release_s_eagle_config_does(release: str) -> None:
    r = RELEASE_RULES[release]
    compared = 0
    for arch, per_method in config_rewrites.renames(release).items():
        for method, outcome in per_method.items():
            if isinstance(outcome, dict):  # the release's EAGLEConfig refuses the method (dflash before 0.20)
                assert method not in r.methods or method == "dflash", (arch, method, outcome)
                continue
            assert vllm_hf_config.rename(arch, method, r.dflash_keep_extra) == outcome, (arch, method)
            compared += 1
    assert compared >= 2 * len(config_rewrites.renames(release))


@pytest.mark.parametrize("release", VLLM_RELEASES)
def test_deepseek_v3_becomes_the_mtp_head_whatever_the_method(release: str) -> None:
    """speculative.py hf_config_override, every listed release: deepseek_v3 -> deepseek_mtp, DeepSeekMTPModel."""
    r = RELEASE_RULES[release]
    cites: list[str] = []
    hf = vllm_hf_config.overridden(r, {"architectures": ["Eagle3DeepseekV2ForCausalLM"], "model_type": "deepseek_v3"},
                                   cites)
    assert hf["model_type"] == "deepseek_mtp" and hf["architectures"] == ["DeepSeekMTPModel"]
    assert cites and "vllm/config/speculative.py @ v" + release in cites[0]
    as_written = {"architectures": ["LlamaForCausalLM"], "model_type": "llama"}
    assert vllm_hf_config.overridden(r, as_written) == as_written


def test_an_outcome_the_stand_in_could_not_replay_is_not_guessed() -> None:
    """A model_type whose rewrite raised over the stand-in config (recorded as `raises`) is left as written."""
    raised = [(release, mt) for release in VLLM_RELEASES
              for mt, entry in config_rewrites._record(release)["hf_config_override"]["model_types"].items()
              if "raises" in entry]
    assert raised, "every rewrite replayed: drop this test"
    for release, model_type in raised:
        assert config_rewrites.override(release, model_type) is None


@pytest.mark.parametrize("release", VLLM_RELEASES)
def test_a_medusa_config_without_architectures_is_completed_where_the_release_has_medusa_config(release: str) -> None:
    """MedusaConfig.__init__ (transformers_utils/configs/medusa.py, 0.12-0.32) sets ["MedusaModel"] when config.json
    names none; 0.33 dropped the file (and the model_type), so nothing completes it there."""
    r = RELEASE_RULES[release]
    raw = {"model_type": "medusa", "hidden_size": 16, "vocab_size": 96}
    recorded = config_rewrites._record(release)["medusa_config"]
    hf = vllm_hf_config.overridden(r, raw)
    if recorded["line"] is None:
        assert "architectures" not in hf
    else:
        assert hf["architectures"] == ["MedusaModel"]
        assert vllm_hf_config.overridden(r, {**raw, "architectures": ["Mine"]})["architectures"] == ["Mine"]
    assert (recorded["line"] is None) == (VLLM_RELEASES.index(release) >= VLLM_RELEASES.index("0.33.0"))


def _dflash2(**extra: object) -> dict[str, object]:
    return {"architectures": ["DFlash2DraftModel"], "model_type": "qwen3", "vocab_size": 64, "hidden_size": 16,
            "dflash_config": {"conv_kernel_size": 3, "conv_group_size": 2, "selector_rank": 4, "selector_top_k": 2},
            **extra}


# the releases whose executed hf_config_override rewrites a registered draft name of its own (a recorded outcome)
REWRITING = [r for r in VLLM_RELEASES if config_rewrites.architecture_override(r, _dflash2(no_rope_layers=[0]))]


def test_only_the_releases_registering_the_ricursive_class_rewrite_a_nope_dflash2_draft() -> None:
    """The executed record holds the rewrite exactly where the generated registry has its target class."""
    assert REWRITING == [r for r in VLLM_RELEASES if RELEASE_RULES[r].registers("DFlash2RicursiveDraftModel")]
    assert REWRITING  # 0.34.0 on


@pytest.mark.parametrize("release", VLLM_RELEASES)
@pytest.mark.parametrize(("layers", "rewritten"),
                         [([0], True), ([0, 2], True), ([], False), (None, False), ("absent", False)])
def test_a_dflash2_draft_with_nope_layers_is_built_as_the_release_rewrites_it(
        release: str, layers: list[int] | str | None, rewritten: bool) -> None:
    """speculative.py hf_config_override (L796-801 @ 0.34.0): a DFlash2DraftModel whose no_rope_layers is non-empty
    becomes DFlash2RicursiveDraftModel, before the registry and EAGLEConfig; the rows describe DFlash2 only, so the
    rewritten build has no family (its generated model judges it). An empty or null list is left as written, and
    so is every release without the branch."""
    raw = _dflash2() if layers == "absent" else _dflash2(no_rope_layers=layers)
    built = build_config(raw, "vllm", release)
    if rewritten and release in REWRITING:
        assert (built.architecture, built.family, built.error) == ("DFlash2RicursiveDraftModel", None, None)
        assert f"speculative.py @ v{release} L" in built.source and "no_rope_layers" in built.source
        return
    assert built.architecture == "DFlash2DraftModel" and "hf_config_override: architectures" not in built.source
    assert built.family is (Family.DFLASH2 if RELEASE_RULES[release].registers("DFlash2DraftModel") else None)


def test_the_architecture_override_needs_its_first_architecture() -> None:
    """The branch reads `hf_config.architectures[0]`: the name anywhere else, or no list, is no rewrite."""
    latest = REWRITING[-1]
    assert config_rewrites.architecture_override(latest, _dflash2(no_rope_layers=[0]))
    for archs in (["Other", "DFlash2DraftModel"], [], None, "DFlash2DraftModel"):
        assert config_rewrites.architecture_override(latest, {**_dflash2(no_rope_layers=[0]), "architectures": archs}) \
            is None, archs
