"""One fixture per deploy rule, through the real CLI: each selected vLLM release's start-up error (or the method and
model class it settles on), as the released wheel's config/speculative.py decides it, per version where it changed."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from conftest import make_checkpoint
from listed import vllm_before, vllm_minors

from dspark_ckpt.check.analysis import analyze
from dspark_ckpt.check.deploy import plan_deploy
from dspark_ckpt.output.records import checkpoint_json
from dspark_ckpt.runtimes import speculative_config as sc
from dspark_ckpt.runtimes import vllm_release
from dspark_ckpt.runtimes.config_rewrites import method_override
from dspark_ckpt.runtimes.selectors import parse_selectors
from dspark_ckpt.sources.resolve import open_source
from dspark_ckpt.sources.target import resolve_target

V = vllm_release.VERSIONS
# vLLM's own words (vllm/config/speculative.py of each release), as the deploy preflight must repeat them
M_TOPK_ARCH_028 = "dspark_draft_topk is only supported by Qwen3DSparkModel"
M_TOPK_ARCH_029 = "dspark_draft_topk is only supported by Qwen3DSparkModel and Qwen3OmniDSparkModel"
M_ADAPTIVE_028 = "Adaptive verification only supported with DSpark"
M_ADAPTIVE_030 = ("Adaptive verification estimates per-position acceptance from the draft logits, which "
                  "use_local_argmax_reduction never materializes. Disable one of them.")

OLD, NEW = vllm_minors("0.27.0", "0.30.0"), vllm_minors("0.31.0")
# Before 0.34 SpeculativeConfig.__post_init__ detects and checks the method itself; 0.34 hands it to one
# SpeculatorConfig class per method (v1/worker/gpu/spec_decode/speculator_config.py and each <method>/config.py)
TO_033, V034 = V[:V.index("0.34.0")], "0.34.0"
# The releases before 0.25 know no method "dspark": SpeculativeMethod (speculative.py @ v0.24.0 L60-69, field L87)
# refuses it as pydantic's literal_error before __post_init__ runs, beside any other field error (an unknown key,
# DSP803, with DSP804 as its note); and they register no Qwen3DSparkModel (registry.py @ v0.25.0 L597 first), so a
# draft ModelConfig built for one fails in inspect_model_cls (registry.py L999 @ v0.20.0, L1062 @ v0.24.0) before
# the method detection that follows it (speculative.py @ v0.24.0 L713-733, then L735-771).
NO_DSPARK = vllm_before("0.25.0")
V027, V028 = vllm_minors("0.27.0", "0.27.0"), vllm_minors("0.28.0", "0.28.0")  # 0.27.1: 0.27.0's speculative.py
# no Qwen3OmniDSparkModel before 0.29 (registry.py @ v0.29.0 L626), no Gemma4DSparkModel before 0.26 (@ v0.26.0 L612)
OMNI_UNREGISTERED, GEMMA4_UNREGISTERED = vllm_minors("0.25.0", "0.28.0"), vllm_before("0.26.0")
NO_TOPK = vllm_before("0.28.0")  # dspark_draft_topk / enable_adaptive_verification: fields from 0.28.0 (grep)
# 0.16 and older set no default method (0.17.0 does: speculative.py L339-343): an unset one stays None through the
# draft ModelConfig (a DSP809 there names no method) and the detection raises `Unsupported speculative method: 'None'`
# for a path and model_type it does not recognise (L391-431 @ v0.16.0)
NO_DEFAULT = vllm_before("0.17.0")
M_NONE = "Unsupported speculative method: 'None'"
# 0.14 and older serve no independent draft model: the detection's fallback refuses every draft it does not
# recognise, whatever the method given (speculative.py L388-393 @ v0.14.0, L379-384 @ v0.12.0)
NO_DRAFT_MODEL = vllm_before("0.15.0")
OLD_WORDS = {**{v: M_NONE for v in NO_DEFAULT}, **{v: sc.M_DRAFT_REFUSED for v in NO_DRAFT_MODEL}}
WITH_DEFAULT = tuple(v for v in V if v not in NO_DEFAULT)
NO_INDEX_SHARE = vllm_before("0.29.0")
# 0.15 and older: SpeculativeConfig is a plain pydantic @dataclass (speculative.py L56-57 @ v0.15.0), which drops an
# extra key without a word; 0.16.0's `config` decorator adds extra="forbid" (config/utils.py L55 @ v0.16.0)
DROPS_EXTRA = vllm_before("0.16.0")  # index_share_for_mtp_iteration: a field from 0.29.0 (grep)
M_MISSING_020 = ("A speculative model was provided, but neither `speculative_token_tree` nor "
                 "`num_speculative_tokens` was provided")  # speculative.py L567-569 @ v0.18.0, L673-677 @ v0.20.0
M_DECLARED_034 = "speculative_config requested method='dspark', but the draft model"

OMNI_TEXT = {"vocab_size": 96, "hidden_size": 16, "num_attention_heads": 2, "num_key_value_heads": 2,
             "head_dim": 8, "num_hidden_layers": 4}
OMNI_DRAFT = {"architectures": ["Qwen3OmniDSparkModel"], "target_hidden_size": 16, "num_attention_heads": 2,
              "num_key_value_heads": 2, "head_dim": 8, "block_size": 8, "target_layer_ids": [0, 2],
              "use_aux_hidden_state": True, "markov_head_type": "vanilla", "mask_token_id": 5}


def speculators(root: Path, kind: str, verifier: str, tokens: int = 3, **extra: Any) -> Path:
    """A speculators-format draft: no model_type, the layer config nested, the verifier recorded."""
    make_checkpoint(root, vocab=96, draft_vocab=96, target_vocab=96)
    config = {"speculators_model_type": kind, "architectures": ["Qwen3DSparkModel"],
              "speculators_config": {"proposal_methods": [{"speculative_tokens": tokens}],
                                     "verifier": {"name_or_path": verifier}},
              "transformer_layer_config": {"model_type": "qwen3", "vocab_size": 96, "hidden_size": 16},
              "draft_vocab_size": 96, "markov_rank": 4, "aux_hidden_state_layer_ids": [1, 3], "mask_token_id": 5,
              **extra}
    (root / "config.json").write_text(json.dumps(config))
    return root


@dataclass(frozen=True)
class Case:
    build: Callable[[Path], Path]  # writes the checkpoint, returns the path given on the command line
    spec: Callable[[str], Any]  # the speculative config, given that path
    errors: dict[str, str | None]  # version -> first start-up error code (None: it starts)
    notes: dict[str, tuple[str, ...]] = field(default_factory=dict)  # version -> note codes
    target: str = "target"
    expect: dict[str, dict[str, Any]] = field(default_factory=dict)  # version -> fields of the deploy object
    message: dict[str, str] = field(default_factory=dict)  # version -> a substring of its error
    exact: dict[str, str] = field(default_factory=dict)  # version -> its whole error


MEDUSA_SERVED = tuple(v for v in V if method_override(v, "medusa") is not None)  # its generated record says so


def _all(code: str | None, versions: tuple[str, ...] = V) -> dict[str, str | None]:
    return {v: code for v in versions}


def _dspark(code: str | None, versions: tuple[str, ...] = V) -> dict[str, str | None]:
    """`code` on the releases given that have method "dspark"; DSP804 on the older ones (NO_DSPARK)."""
    return {v: "DSP804" if v in NO_DSPARK else code for v in versions}


def _omni(code: str | None, versions: tuple[str, ...] = V) -> dict[str, str | None]:
    """A Qwen3-Omni DSpark draft with method dspark: `code` from 0.29; before, the draft ModelConfig fails on the
    unregistered Qwen3OmniDSparkModel (DSP809), and before 0.25 the method itself is refused (DSP804)."""
    return {v: "DSP804" if v in NO_DSPARK else "DSP809" if v in OMNI_UNREGISTERED else code for v in versions}


def _also_dsp804(versions: tuple[str, ...]) -> dict[str, tuple[str, ...]]:
    """method "dspark" refused beside another field error: DSP804 noted on the releases before 0.25."""
    return {v: ("DSP804",) for v in versions if v in NO_DSPARK}


def _draft(family: str = "qwen3-dspark", vocab: int = 96, **config: Any) -> Callable[[Path], Path]:
    def build(root: Path) -> Path:
        make_checkpoint(root, family=family, vocab=vocab, draft_vocab=vocab, target_vocab=96,
                        markov=family.endswith("dspark"), config_extra=config)
        return root
    return build


def _in(folder: str, build: Callable[[Path], Path]) -> Callable[[Path], Path]:
    return lambda root: build(root / folder)


def _spec(**keys: Any) -> Callable[[str], Any]:
    return lambda path: {"model": path, **keys}


CASES: dict[str, Case] = {
    "starts": Case(_draft(), _spec(method="dspark", num_speculative_tokens=8), _dspark(None),
                   expect={v: {"method": "dspark", "model_class": "Qwen3DSparkForCausalLM",
                               "num_speculative_tokens": 8, "draft_vocab_size": 96} for v in V if v not in NO_DSPARK},
                   message={v: "got 'dspark'" for v in NO_DSPARK}),
    "DSP803-typo": Case(_draft(), _spec(method="dspark", num_speculative_token=8), _all("DSP803"),
                        notes=_also_dsp804(V), message={v: "did you mean 'num_speculative_tokens'?" for v in V}),
    "DSP803-topk-before-0.28": Case(_draft(), _spec(method="dspark", num_speculative_tokens=8, dspark_draft_topk=4),
                                    {**_all(None), **_all("DSP803", NO_TOPK)}, notes=_also_dsp804(NO_TOPK),
                                    message={v: "it is a field from vLLM 0.28.0" for v in NO_TOPK}),
    "DSP804-zero-tokens": Case(_draft(), _spec(method="dspark", num_speculative_tokens=0), _all("DSP804")),
    "DSP804-lax-int": Case(_draft(), _spec(method="dspark", num_speculative_tokens="8"), _dspark(None),
                           expect={v: {"num_speculative_tokens": 8} for v in V if v not in NO_DSPARK}),
    "DSP805-no-model": Case(_draft(), lambda path: {"method": "dspark", "num_speculative_tokens": 8},
                            _dspark("DSP805"),
                            message={v: "drafts with the target's own weights" for v in V if v not in NO_DSPARK}),
    "DSP805-no-model-nor-method": Case(_draft(), lambda path: {"num_speculative_tokens": 8}, _all("DSP805"),
                                       message={v: sc.M_NO_MODEL for v in V}),
    # The example: a DSpark draft in an `eagle3-ablation` folder, no method: detected as eagle3, renamed.
    # 0.34: the class Qwen3DSparkModel maps to declares DSparkSpeculatorConfig, which decides before the path
    # (speculator_config.py _resolve_checkpoint_config_class L431-433).
    # Before 0.25 the draft ModelConfig already fails on Qwen3DSparkModel, with vLLM's default method draft_model.
    "DSP807-eagle3-path": Case(_in("eagle3-ablation/d", _draft()), _spec(num_speculative_tokens=8),
                               {**_all("DSP809", TO_033), V034: None},
                               notes={v: ("DSP807",) for v in TO_033 if v not in NO_DEFAULT},
                               expect={**{v: {"method": "eagle3", "architecture": "Eagle3Qwen3DSparkModel"}
                                          for v in TO_033 if v not in NO_DSPARK},
                                       **{v: {"method": "draft_model" if v not in NO_DEFAULT else None,
                                              "architecture": "Qwen3DSparkModel"} for v in NO_DSPARK},
                                       V034: {"method": "dspark", "architecture": "Qwen3DSparkModel"}},
                               message={**{v: "['Eagle3Qwen3DSparkModel'] are not supported for now" for v in TO_033},
                                        **{v: "['Qwen3DSparkModel'] are not supported for now" for v in NO_DSPARK}}),
    "DSP807-dflash-beats-dspark": Case(_in("dspark-vs-dflash/d", _draft()), _spec(num_speculative_tokens=8),
                                       {**_all("DSP809", TO_033), V034: None},
                                       notes={v: ("DSP807",) for v in TO_033 if v not in NO_DEFAULT},
                                       expect={**{v: {"method": "dflash"} for v in TO_033 if v not in NO_DSPARK},
                                               **{v: {"method": "draft_model" if v not in NO_DEFAULT else None}
                                                  for v in NO_DSPARK},
                                               V034: {"method": "dspark"}}),
    "DSP807-eagle3-as-draft-model": Case(_draft("eagle3-llama", model_type="llama"), _spec(num_speculative_tokens=3),
                                         {**_all(None), **_all("DSP810", NO_DEFAULT)},
                                         notes={v: ("DSP807",) for v in WITH_DEFAULT},
                                         expect={v: {"method": "draft_model",
                                                     "model_class": "Eagle3LlamaForCausalLM"} for v in WITH_DEFAULT},
                                         exact=OLD_WORDS),
    # 0.25-0.28 keep only Qwen3DSparkModel (and Gemma4DSparkModel from 0.26) from method dspark's DeepSeek-V4
    # rewrite (speculative.py @ v0.25.0 L899-908, @ v0.26.0 L934-944)
    "DSP808-qwen3-typed-dspark-draft": Case(
        _draft(architectures=["DSparkDraftModel"]), _spec(method="dspark", num_speculative_tokens=8), _dspark(None),
        notes={v: ("DSP808",) for v in vllm_minors("0.25.0", "0.28.0")},
        expect={**{v: {"model_class": "DSparkDeepseekV4ForCausalLM", "architecture": "DSparkDraftModel"}
                   for v in vllm_minors("0.25.0", "0.28.0")},
                **{v: {"model_class": "Qwen3DSparkForCausalLM", "architecture": "Qwen3DSparkModel"}
                   for v in vllm_minors("0.29.0")}}),
    # 0.34: DFlashDraftModel's class declares DFlashSpeculatorConfig: a configured dspark is refused against it
    # (speculator_config.py L413-425) before any rewrite.
    "DSP808-dflash-as-dspark": Case(_draft("dflash"), _spec(method="dspark", num_speculative_tokens=8),
                                    {**_dspark(None, TO_033), V034: "DSP810"},
                                    notes={v: ("DSP807", "DSP808") for v in TO_033 if v not in NO_DSPARK},
                                    expect={v: {"model_class": "DSparkDeepseekV4ForCausalLM"} for v in TO_033
                                            if v not in NO_DSPARK},
                                    message={V034: M_DECLARED_034}),
    "DSP809-omni-before-0.29": Case(_draft("qwen3-omni-dspark", **OMNI_DRAFT),
                                    _spec(method="dspark", num_speculative_tokens=8),
                                    _omni(None),
                                    message={v: "['Qwen3OmniDSparkModel'] are not supported for now"
                                             for v in OMNI_UNREGISTERED}),
    # 0.34: a configured method is kept and the EAGLE-3 class declares no speculator config: mtp starts on it
    # (speculator_config.py L413-426; MTPSpeculatorConfig wraps nothing), the wrong method for its family.
    "DSP810-mtp-for-eagle3": Case(_draft("eagle3-llama", model_type="llama"),
                                  _spec(method="mtp", num_speculative_tokens=3),
                                  {**_all("DSP810", TO_033), V034: None}, notes={V034: ("DSP807",)},
                                  expect={V034: {"method": "mtp"}},
                                  message={**{v: "Unsupported speculative method: 'mtp'" for v in TO_033},
                                           **{v: sc.M_DRAFT_REFUSED for v in NO_DRAFT_MODEL}}),
    # 0.25-0.32 type the draft config medusa when served so (config_rewrites.method_override): MedusaConfig,
    # detected as medusa, starts (executed on 0.28.0)
    "DSP810-medusa-gone-in-0.33": Case(_draft("eagle3-llama", model_type="llama"),
                                       _spec(method="medusa", num_speculative_tokens=3),
                                       {**_all("DSP810", tuple(v for v in V[:-1] if v not in MEDUSA_SERVED)),
                                        **_all(None, tuple(v for v in V[:-1] if v in MEDUSA_SERVED)),
                                        "0.33.0": "DSP804"},
                                       notes={v: ("DSP807",) for v in V if v in MEDUSA_SERVED}),  # run as medusa
    "DSP811-block-default-from-0.31": Case(_draft(block_size=8), _spec(method="dspark"),
                                           _dspark("DSP811", vllm_before("0.31.0")) | _all(None, NEW),
                                           expect={v: {"num_speculative_tokens": 8} for v in NEW}),
    # no method "dflash" before 0.20 (speculative.py L52-60 @ v0.19.1); the words differ before 0.21
    # (speculative.py L567-569 @ v0.18.0, L673-677 @ v0.20.0); 0.21-0.30: L739-742 @ v0.21.0 .. L1024 @ v0.27.0
    "DSP811-dflash-never-defaults": Case(_draft("dflash", block_size=8), _spec(method="dflash"),
                                         {**_all("DSP811"), **_all("DSP804", vllm_before("0.20.0"))},
                                         exact={v: M_MISSING_020 if v in vllm_before("0.21.0") else sc.M_MISSING
                                                for v in vllm_minors("0.20.0", "0.30.0")}),
    # Gemma4DSparkModel from 0.26 (registry.py @ v0.26.0 L612): before, the draft ModelConfig fails on it, with
    # vLLM's default method draft_model; 0.26 has 0.27's n_predict := block_size (speculative.py @ v0.26.0 L957-961)
    "DSP812-gemma4-n-predict": Case(_draft("gemma4-dspark", block_size=7), _spec(num_speculative_tokens=10),
                                    {**_all("DSP809", GEMMA4_UNREGISTERED),
                                     **_all("DSP812", vllm_minors("0.26.0", "0.30.0")), **_all(None, NEW)},
                                    notes={v: ("DSP807",) for v in GEMMA4_UNREGISTERED if v not in NO_DEFAULT},
                                    message={v: "num_speculative_tokens:10 must be divisible by n_predict=7"
                                             for v in vllm_minors("0.26.0", "0.30.0")}),
    "DSP812-gemma4-default": Case(_draft("gemma4-dspark", block_size=7), _spec(),
                                  {**_all("DSP809", GEMMA4_UNREGISTERED), **_all(None, vllm_minors("0.26.0"))},
                                  notes={v: ("DSP807",) for v in GEMMA4_UNREGISTERED if v not in NO_DEFAULT},
                                  expect={v: {"num_speculative_tokens": 7} for v in vllm_minors("0.26.0")},
                                  message={v: "['Gemma4DSparkModel'] are not supported for now"
                                           for v in GEMMA4_UNREGISTERED}),
    # DSpark's floor num_speculative_tokens >= dspark_block_size: speculative.py L1005 @ v0.26.0, L1036 @ v0.27.0
    # and v0.27.1; absent in 0.25.0 and from 0.28.0
    "DSP813-block-minimum-0.26-0.27": Case(_draft(dspark_block_size=7),
                                           _spec(method="dspark", num_speculative_tokens=5),
                                           _dspark(None) | _all("DSP813", vllm_minors("0.26.0", "0.27.0"))),
    "DSP814-draft-model-vocab": Case(_draft("eagle3-llama", model_type="llama", vocab=64),
                                     _spec(num_speculative_tokens=3), {**_all("DSP814"), **_all("DSP810", NO_DEFAULT)},
                                     notes={v: ("DSP807",) for v in WITH_DEFAULT},
                                     message={**{v: "Target model vocab_size=96. Draft model vocab_size=64"
                                                 for v in WITH_DEFAULT}, **OLD_WORDS}),
    "DSP815-topk-needs-dspark": Case(_draft("eagle3-llama", model_type="llama"),
                                     _spec(method="eagle3", num_speculative_tokens=3, dspark_draft_topk=4),
                                     {**_all("DSP815"), **_all("DSP803", NO_TOPK)}),
    "DSP816-topk-range": Case(_draft(), _spec(method="dspark", num_speculative_tokens=8, dspark_draft_topk=97),
                              {**_all("DSP816"), **_all("DSP803", NO_TOPK)}, notes=_also_dsp804(NO_TOPK),
                              message={v: "draft vocabulary size (96)" for v in vllm_minors("0.28.0")}),
    "DSP817-topk-gemma4": Case(_draft("gemma4-dspark", block_size=8),
                               _spec(num_speculative_tokens=8, dspark_draft_topk=4),
                               {**_all("DSP817"), **_all("DSP803", NO_TOPK)},
                               exact={**{v: M_TOPK_ARCH_028 for v in V028},
                                      **{v: M_TOPK_ARCH_029 for v in vllm_minors("0.29.0")}}),
    "DSP209-topk-from-config-json": Case(_draft(dspark_draft_topk=200), _spec(method="dspark", num_speculative_tokens=8),
                                         _dspark(None, NO_TOPK) | _all("DSP209", vllm_minors("0.28.0"))),
    "DSP818-omni-no-block-size": Case(_draft("qwen3-omni-dspark", **{**OMNI_DRAFT, "block_size": None}),
                                      _spec(method="dspark", num_speculative_tokens=8), _omni("DSP818"),
                                      target="omni-target"),
    "DSP819-omni-tokens": Case(_draft("qwen3-omni-dspark", **OMNI_DRAFT),
                               _spec(method="dspark", num_speculative_tokens=4), _omni("DSP819"),
                               target="omni-target",
                               message={v: "match the trained block_size (8); got 4." for v in vllm_minors("0.29.0")}),
    "DSP819-omni-default-matches": Case(_draft("qwen3-omni-dspark", **OMNI_DRAFT), _spec(method="dspark"),
                                        _omni("DSP811", vllm_before("0.31.0")) | _all(None, NEW),
                                        target="omni-target"),
    "DSP819-omni-target-only": Case(_draft("qwen3-omni-dspark", **OMNI_DRAFT),
                                    _spec(method="dspark", num_speculative_tokens=4), _omni(None)),
    "DSP820-omni-markov-head": Case(_draft("qwen3-omni-dspark", **{**OMNI_DRAFT, "markov_head_type": "gated"}),
                                    _spec(method="dspark", num_speculative_tokens=8), _omni("DSP820"),
                                    target="omni-target",
                                    message={v: "requires markov_head_type='vanilla'; got 'gated'."
                                             for v in vllm_minors("0.29.0")}),
    "DSP820-omni-hidden": Case(_draft("qwen3-omni-dspark", **{**OMNI_DRAFT, "target_hidden_size": 32}),
                               _spec(method="dspark", num_speculative_tokens=8), _omni("DSP820"),
                               target="omni-target",
                               message={v: "text hidden size (16); got 32." for v in vllm_minors("0.29.0")}),
    "DSP308-omni-mask": Case(_draft("qwen3-omni-dspark", **{**OMNI_DRAFT, "mask_token_id": 96}),
                             _spec(method="dspark", num_speculative_tokens=8), _omni("DSP308"),
                             target="omni-target"),
    # the Omni target is validated from 0.29 (speculative.py @ v0.29.0 L159)
    "DSP309-omni-target-generic-draft": Case(_draft(), _spec(method="dspark", num_speculative_tokens=8),
                                             _dspark(None, vllm_before("0.29.0"))
                                             | _all("DSP309", vllm_minors("0.29.0")),
                                             target="omni-target"),
    # _verify_args is a model_validator(mode="after") (speculative.py L862-868 @ v0.20.0): the method's literal error
    # comes first before 0.25
    "DSP824-tensor-parallel": Case(_draft(), _spec(method="dspark", num_speculative_tokens=8, tensor_parallel_size=2),
                                   _dspark("DSP824"), message={v: "Please pass 'draft_tensor_parallel_size'" for v in V
                                                               if v not in NO_DSPARK}),
    # 0.34: use_heterogeneous_vocab is no SpeculativeConfig field (extra="forbid"); nor before 0.25 (no
    # use_heterogeneous_vocab in speculative.py @ v0.20.0 .. v0.24.0)
    "DSP824-heterogeneous-vocab": Case(_draft(), _spec(method="dspark", num_speculative_tokens=8,
                                                       use_heterogeneous_vocab=True),
                                       {**_all("DSP824", TO_033), **_all("DSP803", NO_DSPARK), V034: "DSP803"},
                                       notes=_also_dsp804(NO_DSPARK),
                                       message={V034: "it is a field of vLLM 0.33.0 and earlier, gone from 0.34.0"}),
    # 0.34's per-method option check (speculative.py L1394-1402), in its words
    "DSP815-topk-option-034": Case(_draft("eagle3-llama", model_type="llama"),
                                   _spec(method="eagle3", num_speculative_tokens=3, dspark_draft_topk=4),
                                   {**_all("DSP803", NO_TOPK), **_all("DSP815", vllm_minors("0.28.0"))},
                                   exact={V034: "dspark_draft_topk is not supported with speculative method 'eagle3'."}),
    "DSP824-index-share-034": Case(_draft(), _spec(method="dspark", num_speculative_tokens=8,
                                                   index_share_for_mtp_iteration=True),
                                   {**_all("DSP803", NO_INDEX_SHARE), **_all("DSP824", vllm_minors("0.29.0"))},
                                   notes=_also_dsp804(NO_INDEX_SHARE),
                                   exact={V034: "index_share_for_mtp_iteration is not supported with speculative "
                                                "method 'dspark'."}),
    # 0.34 _verify_args: parallel_drafting is ignored, but refused outside dflash/dspark (L1689-1693)
    "DSP824-parallel-drafting-034": Case(_draft("eagle3-llama", model_type="llama"),
                                         _spec(method="eagle3", num_speculative_tokens=3, parallel_drafting=True),
                                         {**_all(None, TO_033), V034: "DSP824"},
                                         exact={V034: "parallel_drafting is only supported by the dflash and dspark "
                                                      "methods, not 'eagle3'."}),
    "parallel-drafting-ignored-034": Case(_draft(), _spec(method="dspark", num_speculative_tokens=8,
                                                          parallel_drafting=True), _dspark(None)),
    # 0.34 DSparkSpeculatorConfig.apply_options: draft_lm_head_quantization for the DeepSeek-V4/V4.1 drafters only
    "DSP824-lm-head-quantization-034": Case(_draft(), _spec(method="dspark", num_speculative_tokens=8,
                                                            draft_lm_head_quantization="fp8"),
                                            {V034: "DSP824"},
                                            exact={V034: sc.M_LM_HEAD_QUANT}),
    # 0.34: a configured draft_model is kept and checked: the Qwen3 DSpark class declares dspark (0.33: the
    # architecture replaces it with dspark)
    "DSP810-draft-model-for-dspark-034": Case(_draft(), _spec(method="draft_model", num_speculative_tokens=8),
                                              {"0.33.0": None, V034: "DSP810"},
                                              expect={"0.33.0": {"method": "dspark"}},
                                              message={V034: "requested method='draft_model', but the draft model"}),
    # 0.34: build_vllm_speculative_config refuses P-EAGLE (speculators/base.py L133-134; 0.33: eagle3 + parallel)
    "DSP810-peagle-034": Case(lambda root: speculators(root / "spec-p", "peagle", verifier="Qwen/Qwen3-8B"),
                              lambda path: {}, {V034: "DSP810"}, exact={V034: sc.M_PEAGLE}),
    # 0.34 _validate_method: a name outside the Literal unless a plugin registered it
    "DSP804-unknown-method-034": Case(_draft(), _spec(method="dspark2", num_speculative_tokens=8), _all("DSP804"),
                                      message={V034: "Unknown speculative method 'dspark2'. Built-in methods: ["}),
    "DSP824-adaptive": Case(_draft("eagle3-llama", model_type="llama"),
                            _spec(method="eagle3", num_speculative_tokens=3, enable_adaptive_verification=True),
                            {**_all("DSP803", NO_TOPK), **_all("DSP824", vllm_minors("0.28.0", "0.29.0")),
                             **_all(None, vllm_minors("0.30.0"))},
                            exact={v: M_ADAPTIVE_028 for v in vllm_minors("0.28.0", "0.29.0")}),
    "DSP824-adaptive-with-local-argmax": Case(
        _draft("eagle3-llama", model_type="llama"),
        _spec(method="eagle3", num_speculative_tokens=3, enable_adaptive_verification=True,
              use_local_argmax_reduction=True),
        {**_all("DSP803", NO_TOPK), **_all("DSP824", vllm_minors("0.28.0"))},
        exact={v: M_ADAPTIVE_030 for v in vllm_minors("0.30.0")}),
    "DSP824-index-share": Case(_draft(), _spec(method="dspark", num_speculative_tokens=8,
                                               index_share_for_mtp_iteration=True),
                               {**_all("DSP803", NO_INDEX_SHARE), **_all("DSP824", vllm_minors("0.29.0"))},
                               notes=_also_dsp804(NO_INDEX_SHARE)),
    "DSP824-xpress": Case(_draft(), _spec(method="dspark", num_speculative_tokens=8, xpress_topc=4),
                          {**_all("DSP803", V[:-1]), "0.33.0": "DSP824"}, notes=_also_dsp804(V)),
    # The speculators type becomes the method as it is (speculators/base.py L133-136 @ v0.20.0, L130-133 @ v0.24.0):
    # before 0.25 SpeculativeMethod refuses "dspark"
    "DSP822-local-verifier-0.33": Case(lambda root: speculators(root / "spec-d", "dspark", verifier="target"),
                                       lambda path: {}, _dspark(None, V[:-2]) | _all("DSP822", V[-2:]),
                                       expect={v: {"method": "dspark", "num_speculative_tokens": 3}
                                               for v in V[:-2] if v not in NO_DSPARK}),
    # before 0.29 maybe_override_with_speculators replaces the user's speculative config with the speculators one
    # (transformers_utils/config.py L613-618 @ v0.20.0; merged from L677 @ v0.29.0)
    "DSP823-speculators-override": Case(lambda root: speculators(root / "spec-e", "dspark", verifier="Qwen/Qwen3-8B"),
                                        lambda path: {"method": "eagle3", "num_speculative_tokens": 5}, _dspark(None),
                                        notes={v: ("DSP823",) for v in V},
                                        expect={**{v: {"num_speculative_tokens": 3, "method": "dspark"}
                                                   for v in vllm_minors("0.25.0", "0.27.0")},
                                                **{v: {"num_speculative_tokens": 3} for v in V028},
                                                **{v: {"num_speculative_tokens": 5, "method": "dspark"}
                                                   for v in vllm_minors("0.29.0")}}),
}


@pytest.fixture(scope="module")
def ws(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("deploy")
    (root / "target").mkdir()
    (root / "target" / "config.json").write_text(json.dumps({"vocab_size": 96, "hidden_size": 16}))
    (root / "omni-target").mkdir()
    (root / "omni-target" / "config.json").write_text(json.dumps({
        "model_type": "qwen3_omni_moe", "architectures": ["Qwen3OmniMoeForConditionalGeneration"],
        "thinker_config": {"text_config": OMNI_TEXT}}))
    return root


def deploy_of(ws: Path, name: str, case: Case, monkeypatch: pytest.MonkeyPatch, suffix: str = ""
              ) -> tuple[dict[str, Any], dict[str, Any]]:
    """What `check PATH --target T --runtime vllm --speculative-config SPEC --format json` reports, run in-process
    on the real files (the CLI itself is exercised by test_deploy_cli.py and the golden files)."""
    folder = case.build(ws / f"case{sorted(CASES).index(name):02d}{suffix}")  # a neutral name: paths pick the method
    path = str(folder.relative_to(ws))
    monkeypatch.chdir(ws)
    target = resolve_target(case.target, None)
    runtimes = parse_selectors(["vllm"])
    plan = plan_deploy(json.dumps(case.spec(path)), target=target, target_spec=case.target,
                       runtimes=[(r.runtime, r.version) for r in runtimes])
    assert plan is not None
    analysis = analyze(open_source(path), target=target, runtimes=runtimes)
    report = plan.pair([path], hook=False).apply(analysis.report, path, analysis.raw_config,
                                                 analysis.config.family if analysis.config else None)
    checkpoint = json.loads(json.dumps(checkpoint_json(report)))
    return checkpoint, {r["version"]: r for r in checkpoint["deploy"]["runtimes"]}


@pytest.mark.parametrize("name", sorted(CASES))
def test_each_release_starts_or_raises_as_its_source_does(ws: Path, name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    case = CASES[name]
    checkpoint, by_version = deploy_of(ws, name, case, monkeypatch)
    assert sorted(by_version) == list(V)
    for version, code in case.errors.items():
        if version in DROPS_EXTRA and _dropped(case, version):
            continue  # the keys this release has no field for are dropped: test_0_15_drops_what_it_has_no_field_for
        got = by_version[version]
        assert got["error_code"] == code, (version, got)
        assert got["starts"] is (code is None)
        assert tuple(got["note_codes"]) == case.notes.get(version, ()), (version, got["note_codes"])
        for key, value in case.expect.get(version, {}).items():
            assert got[key] == value, (version, key, got)
        if version in case.message:
            assert case.message[version] in got["error"], (version, got["error"])
        if version in case.exact:
            assert got["error"] == case.exact[version], (version, got["error"])
        if code is not None:
            assert got["source"].startswith("vllm/"), got["source"]
    # Each code raised or noted is a finding of the checkpoint, once, naming the releases it applies to.
    codes = {r["error_code"] for r in by_version.values()} | {c for r in by_version.values() for c in r["note_codes"]}
    reported = [f["code"] for f in checkpoint["findings"]]
    for code in codes - {None}:
        assert reported.count(code) == 1, (code, reported)


def test_a_speculators_verifier_is_compared_with_the_target(ws: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    other, _ = deploy_of(ws, "DSP823-speculators-override", CASES["DSP823-speculators-override"], monkeypatch)
    (warning,) = [f for f in other["findings"] if f["code"] == "DSP821"]
    assert warning["severity"] == "warning" and "'Qwen/Qwen3-8B', but the target given is 'target'" in warning["message"]
    same, _ = deploy_of(ws, "DSP822-local-verifier-0.33", CASES["DSP822-local-verifier-0.33"], monkeypatch)
    assert "DSP821" not in [f["code"] for f in same["findings"]]


def _dropped(case: Case, version: str) -> set[str]:
    return set(case.spec("x")) - vllm_release.RELEASE_RULES[version].fields


@pytest.mark.parametrize("name", sorted(n for n in CASES if any(_dropped(CASES[n], v) for v in DROPS_EXTRA)))
def test_0_15_drops_what_it_has_no_field_for(ws: Path, name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """On 0.15 a case's keys that are no field of the release change nothing but a DSP828 note: its outcome is the
    one of the same config without them (where 0.16 and newer refuse them, DSP803)."""
    case = CASES[name]
    _, given = deploy_of(ws, name, case, monkeypatch)
    fields = {vllm_release.RELEASE_RULES[v].fields for v in DROPS_EXTRA if _dropped(case, v)}
    for i, known in enumerate(fields):  # 0.14 has fewer fields than 0.15 (tensor_parallel_size)
        kept = dataclasses.replace(case, spec=lambda path, known=known: {k: v for k, v in case.spec(path).items()
                                                                          if k in known})
        _, without = deploy_of(ws, name, kept, monkeypatch, suffix=f"-kept{i}")
        _same_but_the_note(case, given, without, known)


def _same_but_the_note(case: Case, given: dict[str, Any], without: dict[str, Any], known: frozenset[str]) -> None:
    for version in (v for v in DROPS_EXTRA if _dropped(case, v) and vllm_release.RELEASE_RULES[v].fields == known):
        got, base = given[version], without[version]
        assert got["note_codes"] == ["DSP828", *base["note_codes"]], (version, got["note_codes"])
        assert all(f"drops {key!r}" in got["notes"][0] for key in _dropped(case, version))
        for key in ("starts", "error_code", "error", "method", "model_class", "num_speculative_tokens"):
            assert got[key] == base[key], (version, key, got[key], base[key])
