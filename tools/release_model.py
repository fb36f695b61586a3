#!/usr/bin/env python3
"""Maintainer command: generate one vLLM release's data file by executing that release's own code.

    python tools/release_model.py 0.33.0                       # fetch the wheel, run it, write the data file
    python tools/release_model.py 0.33.0 --check               # regenerate and compare with the committed file
    python tools/release_model.py 0.33.0 --only Eagle3LlamaForCausalLM --out /tmp/x

Steps: the wheel's .py files and vLLM's import-time dependencies as tools/probe_runtime.py fetches them (torch is
the interpreter's CPU build); one worker subprocess (tools/release_model_worker.py) imports the release on CPU and,
for every architecture in its `_SPECULATIVE_DECODING_MODELS`, builds the registered class at tiny sizes over a set
of config samples and feeds checkpoint layouts through its real `load_weights`; this command then fits each
parameter's and each checkpoint tensor's shape as an expression of the config keys (and of the target's), and
writes `dspark_ckpt/runtimes/release_data/vllm-V/` (release.json, a behaviour file per architecture whose behaviour
is not the previous release's, and citations.json: tools/release_layout.py): per architecture the class and its
file:line, the keys it reads, the layer count, every parameter, every checkpoint name and where it lands (or that it is skipped), what
the release does with a name it has no parameter for, with a tensor one row or column off (raises, in its words,
or cuts it silently), which parameters no checkpoint name fills, and what each optional key falls back to. Nothing
here is transcribed: a fact that could not be observed is absent, and an architecture that cannot be built on CPU
carries the error that stopped it. Exit 0 on success (or, with --check, when the file is unchanged), 1 when the
committed file differs, 2 when the release cannot be run.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import re
import subprocess
import sys
import tempfile
from collections.abc import Iterable
from fractions import Fraction
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "tools")]

import release_layout as store

from dspark_ckpt.runtimes.landing import sorted_sets
from dspark_ckpt.runtimes.release_model import EXPERT, LAYER, SCHEMA, head_index, normal

DATA = ROOT / "dspark_ckpt" / "runtimes" / "release_data"
WORKER = ROOT / "tools" / "release_model_worker.py"
OMISSIONS = ("omit:", "bare-omit:")  # samples leaving one key out: of the model_type's config class, of a bare one
ONE_AT_A_TIME = re.compile(r"^([\w.]+)=(\d+)$")

# The config a sample starts from, by architecture (everything else is sampled by the worker). Only what a
# producer's config.json carries for that family; the model_type picks the transformers config class, as vLLM's
# own config loading does.
TARGET_IS_DRAFT = "__target_is_draft__"  # release_model_worker.TARGET_IS_DRAFT: a recipe key, not a config key
TARGET_TEXT = "__target_text__"  # release_model_worker.TARGET_TEXT: the target's text-config attributes read
TIED = "__tied__"  # release_model_worker.TIED: sampled keys the class refuses to see apart, tied to another
PER_LAYER = "__per_layer__"  # release_model_worker.PER_LAYER: a key listing one value per layer
VARY = "__vary__"  # release_model_worker.VARY: the recipe's keys that are sampled too (2x, 3x the recipe's value)
CHOICES = "__choices__"  # release_model_worker.CHOICES: keys whose values are names, each probed as an alternate
RENAMES = "__renames__"  # release_model_worker.RENAMES: other namings of the layouts a producer saves
REQUIRES = "__requires__"  # release_model_worker.REQUIRES: record the keys the recipe sets that __init__ requires
# Small expert counts under every name the MoE configs use (transformers' defaults build hundreds of experts).
_MOE_SIZES = ("n_routed_experts", "num_experts", "moe_num_experts", "moe_intermediate_size",
              "shared_expert_intermediate_size")
_SMALL_MOE: dict[str, Any] = {"n_routed_experts": 4, "num_experts": 4, "moe_num_experts": 4, "num_experts_per_tok": 2,
                              "moe_k": 2, "moe_intermediate_size": 8, "shared_expert_intermediate_size": 8,
                              "n_shared_experts": 1, "n_group": 1, "topk_group": 1, VARY: _MOE_SIZES}
# DeepSeek-style multi-head latent attention at tiny sizes (transformers' deepseek_v3 defaults: 512/1536/128/64/128).
_MLA_SIZES = ("kv_lora_rank", "q_lora_rank", "qk_nope_head_dim", "qk_rope_head_dim", "v_head_dim")
_MLA: dict[str, Any] = {"kv_lora_rank": 8, "q_lora_rank": 12, "qk_nope_head_dim": 4, "qk_rope_head_dim": 4,
                        "v_head_dim": 4, "first_k_dense_replace": 0, VARY: _MLA_SIZES}
# The config every sample starts from before the recipes that match the architecture's name.
DEFAULT_RECIPE: dict[str, Any] = {"model_type": "llama", "rms_norm_eps": 1e-6}
RECIPES: dict[str, dict[str, Any]] = {
    "Qwen3": {"model_type": "qwen3"},
    "DSpark": {"model_type": "qwen3"},
    "DFlash": {"model_type": "qwen3"},
    "Gemma4DSpark": {"model_type": "gemma4_text", "target_layer_ids": [0], "attention_k_eq_v": True},
    # vllm_rows.DFLASH2_KEYS: the dflash_config entries DFlash2's __init__ indexes (no default)
    "DFlash2": {"model_type": "qwen3", "dflash_config": {"conv_kernel_size": 3, "conv_group_size": 2,
                                                         "selector_rank": 4, "selector_top_k": 2,
                                                         "target_layer_ids": [0]}},
    # An MTP head is built from the target's own config (vLLM's draft model config is the target's): the layers it
    # predicts, and the model_type whose transformers class the target's config.json names.
    "MTP": {TARGET_IS_DRAFT: True, "num_nextn_predict_layers": 1, **_SMALL_MOE},
    # DeepSeek-style MLA (EAGLE-3 for DeepSeek/Kimi, DeepSeek's MTP, Mistral Large 3's EAGLE): the MLA ranks.
    "Deepseek": {"model_type": "deepseek_v3", **_MLA, **_SMALL_MOE, VARY: _MLA_SIZES + _MOE_SIZES},
    "DeepSeek": {"model_type": "deepseek_v3", **_MLA, **_SMALL_MOE, VARY: _MLA_SIZES + _MOE_SIZES},
    "MistralLarge3": {"model_type": "deepseek_v3", **_MLA, **_SMALL_MOE, VARY: _MLA_SIZES + _MOE_SIZES},
    # Llama 4's EAGLE head is dense and has no YOCO layers (llama4_eagle.py validate_and_update_config asserts so)
    "Llama4": {"model_type": "llama4_text", "interleave_moe_layer_step": 0, "yoco_global_kv_layer": None,
               "yoco_local_kv_layer": None, "moe_layers": []},
    # Heads whose config class vLLM registers itself (transformers_utils/config.py _CONFIG_REGISTRY): its defaults
    "Inkling": {"model_type": "inkling_model"},
    "MiniMaxM3": {"model_type": "minimax_m3_mtp"},
    "HYV4": {"model_type": "hy_v4"},
    "K3DSpark": {"model_type": "k3_dspark", "omit": ["draft_vocab_size"], "target_layer_ids": [0],
                 "num_target_layers": 1},  # it shares the target's head
    "Step5": {"model_type": "step5"},
    # Muse Spark's DSpark draft is dense (configs/muse_spark.py MuseSparkDSparkConfig: "a dense Muse Spark DSpark
    # draft"; its MoEArgs default to enabled, so the draft's config.json says moe.is_enabled false), and its
    # confidence-head flags are read plainly (qwen3_dspark.py's default when absent: no confidence head). REQUIRES (here
# and below): the keys the recipe sets that __init__ reads plainly are recorded as required (absent_keys)
    "MuseSparkDSpark": {"model_type": "muse_spark_dspark", "target_layer_ids": [0], "mask_token_id": 0,
                        "moe": {"is_enabled": False}, "enable_confidence_head": False,
                        "confidence_head_with_markov": False, REQUIRES: True},
    "Cohere": {"model_type": "cohere2"},
    # DeepSeek-V4.1's DSpark draft (models/deepseek_v41/nvidia/dspark.py, 0.30.0-0.34.0; the package imports the nvidia
    # module on every platform but ROCm) ships in the target checkpoint (mtp.*) and builds its layers from the
    # target's config (DeepseekV4DecoderLayer reads vllm_config.model_config.hf_config), as an MTP head: transformers'
    # deepseek_v4 config, its hyper-connection keys as transformers defaults them (vLLM 0.30-0.32 register their own
    # DeepseekV4Config, which has none), the dspark_* keys DSparkDeepseekV4Model reads plainly, tiny experts.
    # On CPU it stops at the attention's torch.cuda.Event (deepseek_v41/attention.py): recorded as not built
    "DSparkV41": {TARGET_IS_DRAFT: True, "model_type": "deepseek_v4", "hc_mult": 4, "hc_sinkhorn_iters": 20,
                  "hc_eps": 1e-6, "dspark_target_layer_ids": [0], "dspark_markov_rank": 4, "index_topk": 4,
                  "index_n_heads": 2, "index_head_dim": 8, "o_groups": 2, "o_lora_rank": 8, "q_lora_rank": 12,
                  "sliding_window": 8, "swiglu_limit": 10.0, "n_shared_experts": 1, "scoring_func": "sqrtsoftplus",
                  "norm_topk_prob": True, "routed_scaling_factor": 1.5, "num_nextn_predict_layers": 1,
                  "compress_rope_theta": 160000.0, "qk_rope_head_dim": 4, **_SMALL_MOE},
    # Cohere2's EAGLE head is served with a Cohere2 target: CohereEagleModel prepends the target's layer_types to the
    # draft's and each layer indexes them at its absolute index, target layers + i (cohere_eagle.py, commandr.py
    # CohereAttention @ 0.21.0-0.34.0); without them every build raises IndexError. The probe's target: 4 layers,
    # Cohere2's pattern (3 sliding, then full)
    "EagleCohere": {TARGET_TEXT: {"layer_types": ["sliding_attention"] * 3 + ["full_attention"]}},
    "Gemma4MTP": {"model_type": "gemma4_text"},
    "Qwen3Next": {"model_type": "qwen3_next"},
    "Glm4Moe": {"model_type": "glm4_moe"},
    "Glm4MoeLite": {"model_type": "glm4_moe_lite", **_MLA},
    "Ernie": {"model_type": "ernie4_5_moe"},
    # LongCat-Flash's config.json scales both MLA LoRA norms (mla_scale_q_lora, mla_scale_kv_lora: true).
    "LongCat": {"model_type": "longcat_flash", **_MLA, "mla_scale_q_lora": True, "mla_scale_kv_lora": True},
    "HYV3": {"model_type": "hunyuan_v1_moe", "first_k_dense_replace": 0, "expert_hidden_dim": 8,
             "num_shared_experts": 1, "routed_scaling_factor": 1.0, "norm_topk_prob": True, "route_norm": True},
    # OpenPangu's and Bailing's MTP configs name their dense prefix and shared experts (no transformers class).
    "OpenPangu": {"first_k_dense_replace": 0, "routed_scaling_factor": 1.0, "norm_topk_prob": True, **_SMALL_MOE},
    "Bailing": {"num_shared_experts": 1, "moe_shared_expert_intermediate_size": 8, "first_k_dense_replace": 0,
                "use_bias": False, "use_qkv_bias": False, **_SMALL_MOE},
    "ExaoneMoe": {"model_type": "exaone_moe"},
    "Step3p5": {"model_type": "step3p5"},
    # LiLiCorr (lilicorr.py LiLiCorrHead; SGLang's speculative/lilicorr_utils.py, which names them required, with no
    # defaults): the head's lilicorr_* geometry and the trained block_size in dflash_config, tiny (candidate_topk a
    # power of two, block_size above the one speculative token); its candidates need the target's full vocabulary
    # (LiLiCorrForCausalLM refuses a draft_id_to_target_id, built where D differs from T: lilicorr.py L480-481 @
    # 0.34.0), so the target's vocabulary is tied to draft_vocab_size, and the samples that vary it build
    "LiLiCorr": {"model_type": "qwen3", TIED: {"target.vocab_size": "draft_vocab_size"},
                 "dflash_config": {"target_layer_ids": [0], "block_size": 4, "lilicorr_hidden_size": 0,
                                   "lilicorr_candidate_topk": 2, "lilicorr_num_layers": 1, "lilicorr_num_heads": 2,
                                   "lilicorr_mlp_ratio": 2.0, "lilicorr_factor_dim": 4, "lilicorr_vector_eps": 1e-6,
                                   "lilicorr_logit_scale": 1.0}},
    # Laguna's DFlash draft shares the target's lm_head and refuses a draft_vocab_size other than the target's
    # vocabulary (laguna_dflash.py DFlashLagunaForCausalLM.__init__ @ 0.33.0): the target's is tied to it
    # (the shapes are then expressions of the draft's own key). Its config class is transformers' laguna (0.31+) or
    # vLLM's own (0.25-0.30, no default layer_types): a uniform full-attention layer_types, as the class requires, a
    # dense first layer then MoE ones (tiny), and the dflash_config entries it reads
    "DFlashLaguna": {"model_type": "laguna", "dflash_config": {"target_layer_ids": [0], "mask_token_id": 0},
                     **_SMALL_MOE, TIED: {"target.vocab_size": "draft_vocab_size"},
                     PER_LAYER: {"layer_types": "full_attention"}},
    # Ricursive Ripple's DFlash2 draft (ricursive_dflash2.py @ 0.34.0): the layers listed in no_rope_layers (no
    # default: read plainly) swap their rotary embedding for an identity (_NoRope), which holds no parameter; layer 0
    # NoPE, so that the base build takes that path and the alternates ([0, 1], ...) show it changes no tensor
    "DFlash2Ricursive": {"no_rope_layers": [0], REQUIRES: True},
    # DFlash2 for Beam: vLLM's own BeamConfig (model_type beam: every layer sliding-window attention, as the class
    # asserts), non-causal, and the DFlash2 entries plus the softcap its logits processor reads (dflash2.py @ 0.33.0)
    "DFlash2Beam": {"model_type": "beam", "is_causal": False,
                    "dflash_config": {"conv_kernel_size": 3, "conv_group_size": 2, "selector_rank": 4,
                                      "selector_top_k": 2, "target_layer_ids": [0], "final_logit_softcapping": 30.0}},
    # MiniMax M3's DSpark draft: the text config it annotates (minimax_m3/common/dspark.py: MiniMaxM3VLTextConfig,
    # transformers' minimax_m3_vl_text), its dense FFN (MiniMaxM3DSparkDecoderLayer refuses any other: the draft's
    # config.json says dspark_use_dense_ffn) and that FFN's width, dspark_ffn_hidden_size (sampled)
    "DSparkMiniMax": {"model_type": "minimax_m3_vl_text", "dspark_use_dense_ffn": True, "dspark_ffn_hidden_size": 24,
                      VARY: ("dspark_ffn_hidden_size",), REQUIRES: True},
    # Medusa's config class is vLLM's own (transformers_utils/configs/medusa.py MedusaConfig), whose from_pretrained
    # renames every key holding "num" and "heads" to num_heads (a Medusa config.json ships no attention heads: they
    # are left out; num_attention_heads is a property there, 0). Its heads and each head's residual layers are
    # sampled, from one head: a head's index (`blocks.{h}`, `lm_heads.{h}`: release_model.HEAD) is generalised and
    # the count of heads fitted (`heads`), as a layer's. FasterDecoding's own checkpoints (medusa/model/medusa_model.py: per head an nn.Sequential of ResBlocks, `linear`
    # each, then the head's lm_head) are fed too, which vLLM renames from 0.25.0 (medusa.py _remap_old_checkpoint_key)
    "Medusa": {"model_type": "medusa", "num_heads": 1, "omit": ["num_attention_heads", "num_key_value_heads"],
               VARY: ("num_heads",),
               RENAMES: {"fasterdecoding": [[r"^blocks\.(\d+)\.layers\.(\d+)\.", r"\1.\2.linear."],
                                            [r"^lm_heads\.(\d+)\.", r"\1.{layers}."]]}},
    # XPress refuses a draft vocabulary other than the target's: its draft_vocab_size, vocab_size where the config
    # has none (qwen3_xpress.py Qwen3XPressForCausalLM.__init__ L279-304 @ 0.33.0): the target's is tied to it
    "XPress": {TIED: {"target.vocab_size": "draft_vocab_size"}},
    # Qwen3.5's MTP layer is built from the text config transformers names qwen3_5_text / qwen3_5_moe_text (the
    # "Qwen3" rule's qwen3 is refused: qwen3_5.py raises "Invalid model_type").
    "Qwen3_5": {"model_type": "qwen3_5_text"},
    "Qwen3_5Moe": {"model_type": "qwen3_5_moe_text"},
    # MiMo-V2-Flash's own config.json names (vLLM reads them; transformers' mimo_v2_flash class has none of them):
    # layernorm_epsilon 1e-5 and the sliding-window attention's heads, here at the probe's tiny sizes.
    "MiMoV2": {"layernorm_epsilon": 1e-5, "swa_head_dim": 8, "swa_num_attention_heads": 2,
               "swa_num_key_value_heads": 1, "attention_bias": False},
    # MiniCPM's muP scaling (MiniCPM-2B's config.json: dim_model_base 256, scale_emb 12, scale_depth 1.4), dense.
    "MiniCPM": {"dim_model_base": 256, "scale_emb": 12, "scale_depth": 1.4, "num_experts": 0,
                "num_experts_per_tok": 0},
}


def run_worker(tree: Path, deps: Path, architectures: list[str] | None, timeout: float) -> dict[str, Any]:
    names = architectures or []
    with tempfile.TemporaryDirectory(prefix="dspark-release-model-") as tmp:
        request = Path(tmp) / "request.json"
        out = Path(tmp) / "out.json"
        recipes: dict[str, Any] = {}
        request.write_text(json.dumps({"architectures": names, "recipes": recipes, "recipe_rules": RECIPES,
                                       "default_recipe": DEFAULT_RECIPE}))
        env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tree), str(deps)]), "VLLM_TARGET_DEVICE": "cpu"}
        try:
            subprocess.run([sys.executable, str(WORKER), str(request), str(out)], env=env, timeout=timeout,
                           stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, check=False)
        except subprocess.TimeoutExpired:
            pass
        if not out.exists():
            return {"ok": False, "reason": "the worker wrote nothing"}
        doc: dict[str, Any] = json.loads(out.read_text())
        return doc


# --- fitting -------------------------------------------------------------------------------------------------

Term = tuple[Fraction, tuple[str, ...]]


def _solve(points: list[tuple[dict[str, int], int]], monomials: list[tuple[str, ...]]) -> list[Term] | None:
    rows = np.array([[float(np.prod([v[k] for k in m])) if m else 1.0 for m in monomials] for v, _ in points])
    target = np.array([float(y) for _, y in points])
    coef, *_ = np.linalg.lstsq(rows, target, rcond=None)
    terms = [(Fraction(float(c)).limit_denominator(12), m) for c, m in zip(coef, monomials, strict=True)]
    terms = [(c, m) for c, m in terms if c != 0]
    for values, y in points:
        if sum(c * int(np.prod([values[k] for k in m])) for c, m in terms) != y:
            return None
    return terms


def _monomials(dep: list[str], degree: int) -> list[tuple[str, ...]]:
    monomials: list[tuple[str, ...]] = [()]
    for d in range(1, degree + 1):
        monomials += list(itertools.combinations(dep, d))
    return monomials


def _determined(points: list[tuple[dict[str, int], int]], monomials: list[tuple[str, ...]]) -> bool:
    """Whether the points tell every polynomial over these monomials apart (the design matrix has full column rank)."""
    if len(monomials) > len(points):
        return False
    rows = np.array([[float(np.prod([v[k] for k in m])) if m else 1.0 for m in monomials] for v, _ in points])
    return int(np.linalg.matrix_rank(rows)) == len(monomials)


MAX_DEGREE = 3
SPARSE_TERMS = 3  # the most terms a fit the points do not determine may have


def _sparsest(points: list[tuple[dict[str, int], int]], dep: list[str], fewer_than: int) -> list[Term] | None:
    """The exact fit with the fewest terms (fewer than `fewer_than`, at most SPARSE_TERMS) over the monomials up to
    MAX_DEGREE, of the lowest degree among those; None when there is none, or when two such fits disagree somewhere
    (the points cannot tell which one the release computes)."""
    monomials = _monomials(dep, MAX_DEGREE)
    probe = {k: 7919 + 104729 * i for i, k in enumerate(dep)}  # a point far from every sample
    for size in range(1, min(fewer_than, SPARSE_TERMS + 1)):
        found: dict[int, dict[int, list[Term]]] = {}  # highest degree -> value at the probe -> fit
        for subset in itertools.combinations(monomials, size):
            if (terms := _solve(points, list(subset))) is not None and len(terms) == size:
                at_probe = int(sum(c * int(np.prod([probe[k] for k in m])) for c, m in terms))
                found.setdefault(max(len(m) for m in subset), {}).setdefault(at_probe, terms)
        if found:  # the lowest degree first: a product of three keys is rarer in a shape than one of two
            fits = found[min(found)]
            return next(iter(fits.values())) if len(fits) == 1 else None
    return None


def fit(points: list[tuple[dict[str, int], int]], variables: Iterable[str],
        depends: set[str]) -> list[Term] | None:
    """The smallest polynomial in `depends` that gives every observed value exactly; None when none does.

    Smallest: the full polynomial of the lowest degree (constant, then linear, then products of two and three of
    `depends`) where the points determine the next degree too. Where they do not (a product such as
    head_dim*num_attention_heads seen only with one factor changed at a time is, on those points, the linear
    -16 + 2*head_dim + 8*num_attention_heads), or where no full polynomial is determined at all, the fit with the
    fewest terms, when the points single one out."""
    dep = sorted(depends & set(variables))
    for degree in range(MAX_DEGREE + 1):
        monomials = _monomials(dep, degree)
        if len(monomials) > len(points):
            return _sparsest(points, dep, SPARSE_TERMS + 1)
        if (terms := _solve(points, monomials)) is not None:
            if degree == MAX_DEGREE or _determined(points, _monomials(dep, degree + 1)):
                return terms
            return _sparsest(points, dep, len(terms)) or terms
    return None


def render(terms: list[Term]) -> list[list[Any]]:
    """JSON form of an expression: [[numerator, denominator, [variables...]], ...] (empty: the value 0)."""
    return [[c.numerator, c.denominator, list(m)] for c, m in terms]


def text(terms: list[Term]) -> str:
    parts = []
    for c, m in terms:
        factor = "*".join(m)
        coef = "" if c == 1 and factor else (str(c) + ("*" if factor else ""))
        parts.append(coef + factor)
    return " + ".join(parts) or "0"


def dependencies(samples: dict[str, dict[str, Any]], read: Any) -> set[str]:
    """The variables whose one-at-a-time change moved the observed value."""
    base = read(samples["base"])
    moved = set()
    for label, sample in samples.items():
        match = ONE_AT_A_TIME.match(label)
        if match and (value := read(sample)) is not None and value != base:
            moved.add(match.group(1))
    return moved


def _index(pattern: re.Pattern[str], name: str) -> int | None:
    """The layer (LAYER) or expert (EXPERT) index in a name; None where it has none."""
    found = pattern.search(name)
    return int(found.group(0)) if found else None


def _indices(pattern: re.Pattern[str], names: Iterable[str]) -> set[int]:
    return {i for n in names if (i := _index(pattern, n)) is not None}


def _firsts(names: dict[str, Any]) -> dict[str, Any]:
    """normal name -> value, of the first layer, the first expert and the first head only (every other one is built
    alike; the first layer's index is the sample's own, an MTP head's follows its target's layers)."""
    first = min(_indices(LAYER, names), default=0)
    return {normal(n): v for n, v in names.items()
            if _index(LAYER, n) in (None, first) and _index(EXPERT, n) in (None, 0) and head_index(n) in (None, 0)}


def fit_shapes(samples: dict[str, dict[str, Any]], field: str) -> dict[str, Any]:
    """name -> [expression per dim] for every name in the base sample's `field` (parameters or expected)."""
    built = {k: s for k, s in samples.items() if field in s and not k.startswith(OMISSIONS)}
    variables = list(built["base"]["values"])
    firsts = {label: _firsts(s[field]) for label, s in built.items()}
    out: dict[str, Any] = {}
    for key, shape in firsts["base"].items():
        dims = []
        for axis in range(len(shape)):
            def read(sample: dict[str, Any], axis: int = axis, key: str = key) -> int | None:
                got = firsts[sample["sample"]].get(key)
                return got[axis] if got is not None and len(got) > axis else None

            points = [(s["values"], v) for s in built.values() if (v := read(s)) is not None]
            terms = fit(points, variables, dependencies(built, read))
            dims.append({"expr": render(terms), "text": text(terms)} if terms is not None
                        else {"unfitted": sorted({v for _, v in points})})
        out[key] = dims
    return out


def fit_count(samples: dict[str, dict[str, Any]], read: Any, field: str = "parameters") -> dict[str, Any] | None:
    """A number each sample's names show (how many layers, the first layer's index, how many experts), as an
    expression of the config."""
    built = {k: s for k, s in samples.items() if field in s and not k.startswith(OMISSIONS)}
    points = [(s["values"], read(s[field])) for s in built.values()]
    terms = fit(points, list(built["base"]["values"]), dependencies(built, lambda s: read(s[field])))
    return {"expr": render(terms), "text": text(terms)} if terms is not None else None


def fit_layers(samples: dict[str, dict[str, Any]]) -> dict[str, Any] | None:
    return fit_count(samples, lambda names: len(_indices(LAYER, names)))


def fit_first_layer(samples: dict[str, dict[str, Any]]) -> dict[str, Any] | None:
    """The first layer's index; None where it is 0 in every sample (a draft's own layers)."""
    found = fit_count(samples, lambda names: min(_indices(LAYER, names), default=0))
    return found if found is not None and found["expr"] else None


def fit_nextn(arch: dict[str, Any]) -> dict[str, Any]:
    """A NextN head's one layer (its parameters are `model.decoder.*`, no index; its checkpoint names are
    `model.layers.<N>.*`): layers 1, first_layer N as an expression of num_hidden_layers fitted where the config has
    more than one layer, and the counts where N is otherwise (SGLang: 0 for a one-layer config, the exported
    head's) in first_layer_exceptions. Empty for any other head."""
    seen = {int(k): v for k, v in (arch.get("nextn_layer") or {}).items() if v is not None}
    if not seen:
        return {}
    points = [({"num_hidden_layers": k}, v) for k, v in sorted(seen.items())]
    terms = fit([p for p in points if p[0]["num_hidden_layers"] > 1] or points, ["num_hidden_layers"],
                {"num_hidden_layers"})
    one: list[Term] = [(Fraction(1), ())]
    out: dict[str, Any] = {"layers": {"expr": render(one), "text": text(one)}}
    if terms is not None:
        out["first_layer"] = {"expr": render(terms), "text": text(terms)}
        exceptions = {f"num_hidden_layers={k}": v for k, v in seen.items()
                      if evaluate(render(terms), {"num_hidden_layers": k}) != v}
        if exceptions:
            out["first_layer_exceptions"] = exceptions
    return out


def fit_experts(samples: dict[str, dict[str, Any]]) -> dict[str, Any] | None:
    """How many experts a layer's checkpoint names carry (`experts.{e}`); None where no name has one."""
    if not _indices(EXPERT, samples["base"].get("expected", {})):
        return None
    return fit_count(samples, lambda names: len(_indices(EXPERT, names)), "expected")


def fit_heads(samples: dict[str, dict[str, Any]]) -> dict[str, Any] | None:
    """How many heads (release_model.HEAD: `blocks.{h}`, `lm_heads.{h}`) the class builds; None where no parameter
    names one."""
    def count(names: Iterable[str]) -> int:
        return len({i for n in names if (i := head_index(n)) is not None})

    if not count(samples["base"].get("parameters", {})):
        return None
    return fit_count(samples, count)


def evaluate(expr: list[list[Any]], values: dict[str, int]) -> Fraction:
    return sum((Fraction(n, d) * int(np.prod([values[v] for v in vs])) for n, d, vs in expr), Fraction(0))


def implied(sample: dict[str, Any], key: str, uses: list[tuple[str, int]], shapes: dict[str, Any]) -> set[Fraction]:
    """The values of `key` the shapes observed in `sample` imply, from each dim linear in it."""
    values = {k: v for k, v in sample["values"].items() if not k.startswith(("omit:", "bare"))}
    found = set()
    firsts = _firsts(sample["parameters"])
    for name, axis in uses:
        got = firsts.get(name)
        terms = shapes[name][axis]["expr"]
        if got is None or any(vs.count(key) > 1 for _, _, vs in terms):
            continue
        coef = sum((Fraction(n, d) * int(np.prod([values[v] for v in vs if v != key]))
                    for n, d, vs in terms if key in vs), Fraction(0))
        rest = evaluate([t for t in terms if key not in t[2]], values)
        found.add((got[axis] - rest) / coef)
    return found


def fallbacks(samples: dict[str, dict[str, Any]], shapes: dict[str, Any], prefix: str = "omit:") -> dict[str, Any]:
    """For each optional key: what the release builds with when the config leaves it out (observed by omitting
    it at two bases): another key's value, hidden_size // num_attention_heads, a constant, or 'required' when the
    build then fails; 'unused' when no shape depends on it."""
    out: dict[str, Any] = {}
    keys = sorted({label.split(":")[1] for label in samples if label.startswith(prefix)})
    for key in keys:
        trials = [s for label, s in samples.items() if label.startswith(f"{prefix}{key}:")]
        if any("error" in s for s in trials):
            failed = next(s for s in trials if "error" in s)
            named = f"'{key}'" in failed["error"]["message"]  # the release's error is about this key
            out[key] = {"required": failed["error"]} if named else {"falls_back_to": None,
                                                                     "refused": words(failed["error"]["message"])}
            continue
        uses = [(n, a) for n, dims in shapes.items() for a, d in enumerate(dims)
                if "expr" in d and any(key in vs for _, _, vs in d["expr"])]
        if not uses:
            out[key] = "unused"
            continue

        seen = [implied(s, key, uses, shapes) for s in trials]
        if any(len(v) != 1 for v in seen):
            out[key] = {"falls_back_to": None, "implied": sorted(str(x) for v in seen for x in v)}
            continue
        per_trial = [next(iter(v)) for v in seen]
        bases = [{k: v for k, v in s["values"].items() if not k.startswith(("omit:", "bare"))} for s in trials]
        candidates: dict[str, Any] = {other: (lambda v, o=other: v[o]) for other in bases[0] if other != key}
        candidates["hidden_size // num_attention_heads"] = lambda v: v["hidden_size"] // v["num_attention_heads"]
        found = next((label for label, f in candidates.items()
                      if all(f(b) == got for b, got in zip(bases, per_trial, strict=True))), None)
        if found is None and len(set(per_trial)) == 1:
            found = str(per_trial[0])
        out[key] = {"falls_back_to": found}
    return out


# --- the record ------------------------------------------------------------------------------------------------


def words(message: str, limit: int = 500) -> str:
    """The release's words, without the set of available parameters vLLM appends, and with any set of names they
    print sorted (a Python set's order varies per run: the loader's "not initialized" names)."""
    return sorted_sets(message.split(" The available", 1)[0])[:limit]


def _size_template(message: str, fed: list[int], want: list[int]) -> str:
    """The loader's words with the probe's sizes as placeholders: {got}/{want} for whole shapes, {got_dim} and
    {want_dim} for the one dimension the probe changed (a number in the words equal to either)."""
    for shape, mark in ((fed, "{got}"), (want, "{want}")):
        message = message.replace(f"torch.Size({shape})", mark)
    axis = next((i for i, (f, w) in enumerate(zip(fed, want, strict=True)) if f != w), None)
    if axis is None:
        return message
    dims = _dim_template(message, fed[axis], want[axis])
    # shapes printed as Python tuples (SGLang's Domino projector: "expected embed_proj.2.weight(96, 7), got (95,
    # 7)"): where a dimension the probe did not change would stay a literal number, each whole tuple is a
    # placeholder, {got_tuple} / {want_tuple} (the DFlash fc words, whose every number is a changed dimension, keep
    # their form)
    tuples = {str(tuple(fed)): "{got_tuple}", str(tuple(want)): "{want_tuple}"}
    kept = [n for i, n in enumerate(want) if i != axis and n not in (fed[axis], want[axis])]
    if len(fed) > 1 and all(t in message for t in tuples) and any(
            re.search(rf"(?<![\w.{{]){n}(?![\w.}}])", dims) for n in kept):
        for text, mark in tuples.items():
            message = message.replace(text, mark)
        return _dim_template(message, fed[axis], want[axis])
    return dims


def _dim_template(message: str, got: int, want: int) -> str:
    for number, mark in ((got, "{got_dim}"), (want, "{want_dim}")):
        message = re.sub(rf"(?<![\w.]){number}(?![\w.])", mark, message)
    return message


def _most(landed: list[list[Any]]) -> str:
    """The parameter a tensor's marker filled most of (the first of those): where a loader transforms another
    tensor's values after loading, they may equal this marker somewhere (XPress folds its raw mixer into
    `mix_L * tril + I`, whose diagonal then holds the next tensor's marker)."""
    return str(max(landed, key=lambda hit: hit[1])[0])


def tensor_facts(arch: dict[str, Any], expected: dict[str, Any]) -> dict[str, Any]:
    """Checkpoint name -> where it lands (normalised parameter), its expected shape, and off-by-one outcomes."""
    tensors: dict[str, Any] = {}
    for layout_key, layout in arch["layouts"].items():
        if layout["error"] is not None or not layout["landed"]:
            continue  # a layout that raised, or that the loader skipped name by name (unknown_name says so)
        for ckpt in layout["names"]:
            key = normal(ckpt)
            landed = layout["landed"].get(ckpt)
            fact = tensors.setdefault(key, {})
            if landed:
                fact["parameter"] = normal(_most(landed))
                fact["shape"] = expected.get(key)
            else:
                fact.setdefault("skipped", True)
            fact.setdefault("layouts", []).append(layout_key)
    for key, fact in tensors.items():
        if "parameter" in fact:
            fact.pop("skipped", None)
    for name, result in arch.get("extras", {}).items():  # names that are no parameter (t2d, mask_hidden)
        err = result["error"]
        landed = result["landed"].get(name)
        tensors[normal(name)] = ({"refused": {"raises": err["type"], "where": err["where"],
                                              "message": words(err["message"])}}
                         if err is not None else {"parameter": normal(landed[0][0])} if landed else {"skipped": True})
    for probe, outcome in arch.get("off_by_one", {}).items():
        ckpt, axis = probe.rsplit("@", 1)  # axis: "0+" one row more than the parameter, "1-" one column fewer
        fact = tensors.get(normal(ckpt))
        if fact is None or "parameter" not in fact:
            continue
        fed = int(np.prod(outcome["fed"]))
        if outcome["error"] is not None:
            err = outcome["error"]
            seen = {"raises": err["type"], "where": err["where"],
                    "message": _size_template(words(err["message"]), outcome["fed"], outcome["shape"])}
        else:
            landed = sum(count for _, count in outcome["landed"] or [])
            want = int(np.prod(outcome["shape"]))
            # a shorter tensor whose parameter is written whole all the same: the loader padded the rest (SGLang's
            # CUDA merged/row and MoE loaders write zeros there); an observation without `partly` predates the
            # question and keeps the older reading
            padded = 0 < landed < want and "partly" in outcome and not outcome["partly"]
            pad = {"pads": True, **({"with": outcome["fills"][0]} if len(outcome.get("fills") or ()) == 1 else {})}
            seen = {"cuts": True} if landed < fed else pad if padded \
                else {"leaves_unwritten": True} if landed < want else {"accepts": True}
        fact.setdefault("off_by_one", {})[axis] = seen
    for fact in tensors.values():  # names of other layouts (midlayer., fused) take the canonical name's outcomes
        if "parameter" in fact and "off_by_one" not in fact:
            twin = next((f for f in tensors.values() if f.get("off_by_one") and f.get("parameter") == fact["parameter"]
                         and f.get("shape") == fact.get("shape")), None)
            if twin is not None:
                fact["off_by_one"] = twin["off_by_one"]
    return dict(sorted(tensors.items()))


def _name_template(message: str, fed: str, whole: bool = False) -> str:
    """The loader's words about the name the probe fed (at the model's first layer), with that name as a
    placeholder: {name} where it quotes the module path it walked (the fed name less its last component, or the
    part of it past a prefix its mapping drops: `mtp.`, `model.`); {leaf} and {i} where it quotes its own rewrite
    of the name (DeepSeek's MTP: `model.layers.{i}.mtp_block.{leaf}`; {leaf}: the name past its layer)."""
    parts = fed.split(".")[:-1]
    index = _index(LAYER, fed)
    at_layer = f"layers.{index}." if index is not None else ""
    leaf = fed.split(at_layer, 1)[-1] if at_layer else fed
    if whole and at_layer and at_layer + leaf in message:  # the whole name from its layer on (an expert's KeyError)
        return message.replace(at_layer + leaf, "layers.{i}.{leaf}")
    for start in range(len(parts)):
        suffix = ".".join(parts[start:])
        if suffix in message and at_layer in suffix + ".":
            return message.replace(suffix, "{name}")
    if leaf not in message:
        return message
    message = message.replace(leaf, "{leaf}")
    return re.sub(rf"(?<=layers\.){index}(?=\.)", "{i}", message) if at_layer else message


def unknown_facts(arch: dict[str, Any]) -> dict[str, Any]:
    """What the release does with a name it has no parameter for, per form of name (the probe's name in its
    message generalised to {name}; the list of available parameters that follows is left out)."""
    out = {}
    for probe, result in arch.get("unknown", {}).items():
        err = result["error"]
        if err is None:
            out[probe] = {"skipped": True}
            continue
        message = words(err["message"])
        out[probe] = {"raises": err["type"], "where": err["where"],
                      "message": _name_template(message, result.get("fed", probe), whole=probe == "experts.past")}
    return out


def _missing_template(message: str, parameter: str) -> str:
    """The words about a parameter no tensor filled, with it as a placeholder: {parameters} where they quote the set
    of such parameters (vLLM's loader, `{'model.norm.weight'}`: one set for all of them; {parameter_list} where they
    quote a sorted list), else the part of its name
    they quote with its layer and expert indices generalised ({i}, {e}: Llama 4's EAGLE `layers.{i}.... is not
    loaded!`, the name less the prefix its loader drops)."""
    if f"{{'{parameter}'}}" in message:
        return message.replace(f"{{'{parameter}'}}", "{parameters}")
    if re.search(rf"\['{re.escape(parameter)}'\]\.?$", message):  # ending in the sorted list of them all
        return message.replace(f"['{parameter}']", "{parameter_list}")  # (SGLang's Domino check: `sorted(missing)`)
    parts = parameter.split(".")
    for start in range(len(parts) - 1):
        suffix = ".".join(parts[start:])
        if suffix in message:
            return message.replace(suffix, normal(suffix))
    return message


def missing_facts(arch: dict[str, Any]) -> dict[str, Any]:
    """Parameter (normalised) -> what the release raises when no tensor of the checkpoint fills it (its loader's
    not-initialised check, a class's own assertion); the parameters it loads without a word are left out."""
    out = {}
    for parameter, seen in arch.get("missing", {}).items():
        err = seen["error"]
        if err is not None:
            out[normal(parameter)] = {"raises": err["type"], "where": err["where"],
                                      "message": _missing_template(words(err["message"]), parameter)}
    return dict(sorted(out.items()))


def nested_fact(arch: dict[str, Any]) -> dict[str, Any] | None:
    """What the release does with `<bare parameter>.weight` ({name}: the shipped name, {param}: the parameter)."""
    nested = arch.get("nested")
    if nested is None or nested["error"] is None:
        return None if nested is None else {"skipped": True}
    err = nested["error"]
    message = words(err["message"])
    for found, mark in ((f"{nested['name']}.weight", "{name}"), (nested["name"], "{param}")):
        message = message.replace(found, mark)
    return {"raises": err["type"], "where": err["where"], "message": message}


UNTIED = "untied:"  # release_model_worker.samples: a tied key at another value than its source's


def refused_apart(samples: dict[str, dict[str, Any]]) -> list[dict[str, Any]]:
    """The pairs of keys the class refuses to differ (a recipe ties them; the `untied:` sample sets them apart), in
    its words: `keys` the tied key and its source (`target.*`: the target's)."""
    out = []
    for label, sample in sorted(samples.items()):
        if label.startswith(UNTIED) and "error" in sample:
            err, keys = sample["error"], label[len(UNTIED):].split("=", 1)
            message = words(err["message"], 300)
            for key in keys:  # the two values in its words, as placeholders: {draft_vocab_size}, {target.vocab_size}
                message = re.sub(rf"(?<![\w.]){sample['values'][key]}(?![\w.])", f"{{{key}}}", message)
            out.append({"keys": keys, "raises": err["type"], "message": message, "where": err["where"]})
    return out


def _only_difference(a: dict[str, Any], b: dict[str, Any]) -> str | None:
    """The one variable two points differ in; None where they differ in none or several."""
    differ = [k for k in set(a) | set(b) if a.get(k) != b.get(k)]
    return differ[0] if len(differ) == 1 else None


def fit_sized(points: list[dict[str, Any]]) -> dict[str, Any]:
    """parameter -> [expression per dim] over the points a sizing key was built at (the key, `len(<key>)` for a
    list, and the sampled sizes that move it): what the evaluator computes at the draft's own value of the key."""
    if not points:
        return {}
    variables = sorted({k for point in points for k in point["values"]})
    out: dict[str, Any] = {}
    for parameter in sorted({p for point in points for p in point["parameters"]}):
        shapes = [(point["values"], point["parameters"][parameter]) for point in points
                  if parameter in point["parameters"]]
        dims = []
        for axis in range(len(shapes[0][1])):
            seen = [(v, s[axis]) for v, s in shapes if len(s) > axis]
            moving = {k for (a, ya), (b, yb) in itertools.combinations(seen, 2) if ya != yb
                      for k in [_only_difference(a, b)] if k is not None}
            terms = fit(seen, variables, moving)
            dims.append({"expr": render(terms), "text": text(terms)} if terms is not None
                        else {"unfitted": sorted({y for _, y in seen})})
        out[normal(parameter)] = dims
    return out


def structural_record(seen: dict[str, Any]) -> dict[str, Any]:
    """One structural key as the data file keeps it: its sampled values, what another value does (the parameters
    that appear, disappear, are resized; the shapes of the resized ones as expressions of the key where it sizes
    them; what the alternate and each named value make appear, `appearing`: appearing_record), the values the class
    refused (in its words) and those that build what the base builds."""
    out = {k: v for k, v in seen.items() if k not in ("error", "sized_points", "refused_values", "appearing")}
    if appearing := appearing_record(seen.get("appearing")):
        out["appearing"] = appearing
    if isinstance(seen.get("values"), dict):  # each named value's own (its appearing parameters recorded alike)
        out["values"] = {name: {k: v for k, v in named.items() if k != "appearing"}
                         | ({"appearing": found} if (found := appearing_record(named.get("appearing"))) else {})
                         for name, named in seen["values"].items()}
    if "error" in seen:
        out["refused"] = words(seen["error"]["message"], 300)
    if seen.get("refused_values"):
        out["refused_values"] = {k: words(v, 300) for k, v in sorted(seen["refused_values"].items())}
    for field in ("appears", "disappears", "resized"):
        if field in out and not out[field]:
            del out[field]
    if shapes := fit_sized(seen.get("sized_points", [])):
        out["shapes"] = shapes
    return out


def appearing_record(seen: dict[str, Any] | None) -> dict[str, Any] | None:
    """What a structural key's value makes appear, as the data file keeps it (`appearing`, beside `appears`): the
    appearing parameters' shapes (`parameters`) and the checkpoint tensors that fill them (`tensors`: parameter,
    shape, off-by-one outcomes in the release's words), fitted over the worker's points and written as the
    architecture's own `parameters` and `tensors` are, so that check judges them at the draft's values alike
    (release_worker.appearing_at); `moved_by`: the keys read only at that value that move them (key -> the value the
    shapes hold at). None where the worker saw no point at the base sizes."""
    points = {p["sample"]: p for p in (seen or {}).get("points", ())}
    if seen is None or "base" not in points:
        return None
    parameters = fit_shapes(points, "parameters")
    arch = {"layouts": seen["layouts"], "off_by_one": seen["off_by_one"]}
    tensors = {k: fact for k, fact in tensor_facts(arch, fit_shapes(points, "expected")).items()
               if fact.get("parameter") in parameters}
    return {"parameters": parameters, "tensors": tensors, "moved_by": seen.get("moved_by") or {}}


def absent_record(seen: dict[str, Any]) -> dict[str, Any]:
    """One key's absence as the data file keeps it: what appears, disappears, is resized; for a key taken only with
    others (`with_absent`), the class's refusal of it left out or null beside them, and what a null does alone
    ("as_absent", its refusal, or "other"), each refusal in its words; for a key __init__ requires (the recipe's
    REQUIRES), `required` with its words."""
    def said(err: Any) -> Any:
        return {"raises": err["type"], "message": words(err["message"], 300), "where": err["where"]} \
            if isinstance(err, dict) else err
    if "required" in seen:  # __init__ refuses the config without it: its words, as fallbacks' `required` keeps them
        err = seen["required"]
        return {"required": {"type": err["type"], "message": words(err["message"], 300), "where": err["where"]}}
    return {f: said(v) for f, v in seen.items() if v}


def architecture_record(arch: dict[str, Any]) -> dict[str, Any]:
    record: dict[str, Any] = {"class": arch.get("class"), "where": arch.get("where")}
    for failure in ("import_error", "worker_error"):
        if failure in arch:
            return {**record, "not_built": arch[failure]}
    samples = {s["sample"]: s for s in arch.get("samples", [])}
    base = samples.get("base")
    if base is None or "parameters" not in base:
        return {**record, "not_built": (base or {}).get("error", {"message": "no sample"})}
    refused = {label: s["error"] for label, s in samples.items()
               if "error" in s and not label.startswith((*OMISSIONS, UNTIED))}
    parameters = fit_shapes(samples, "parameters")
    expected = fit_shapes(samples, "expected")
    canonical = arch["layouts"][arch["canonical"]]
    if canonical["error"] is not None:  # no layout loads: the probe's config is not one this class accepts
        err = canonical["error"]
        return {**record, "not_built": {"type": err["type"], "message": words(err["message"]), "where": err["where"],
                                        "phase": "load_weights of every layout the probe fed"}}
    unwritten, built = len(set(canonical["unwritten"])), len(base["parameters"])
    if built and unwritten * 2 > built:
        # the loader skipped the names of every layout the probe fed (a head whose checkpoint names are none of
        # them, e.g. a NextN layer renamed from its target's `model.layers.N.`): a model of it would call every
        # correct checkpoint incomplete
        return {**record, "not_built": {
            "type": "NoLayout", "where": arch.get("where"), "phase": "load_weights of every layout the probe fed",
            "message": f"no checkpoint layout the probe fed fills its parameters ({unwritten} of {built} stay "
                       "unwritten under the best one): the names its load_weights takes are not modelled"}}
    record.update({
        "reads": base["reads"], "target_reads": base["target_reads"],
        **({"config": arch["config"]} if arch.get("config") else {}),
        "layers": fit_layers(samples),
        **({"first_layer": first} if (first := fit_first_layer(samples)) else {}),
        **fit_nextn(arch),
        **({"experts": experts} if (experts := fit_experts(samples)) else {}),
        **({"heads": heads} if (heads := fit_heads(samples)) else {}),
        "parameters": parameters,
        "tensors": tensor_facts(arch, expected),
        # the names of the layout that fills the most (prefix, layer naming, split projections): what to export
        "layout": {"form": arch["canonical"], "names": sorted({normal(n) for n in canonical["names"]})},
        "unknown_name": unknown_facts(arch),
        "nested_weight": nested_fact(arch),
        "unfilled": sorted({normal(p) for p in canonical["unwritten"]}),
        # a parameter none of whose tensors is shipped: what the release raises (silence: DSP363)
        "missing": missing_facts(arch),
        "fallbacks": fallbacks(samples, parameters),
        # the same for a config that is a bare PretrainedConfig (vLLM's SpeculatorsConfig: no transformers defaults)
        "fallbacks_bare": fallbacks(samples, parameters, "bare-omit:"),
        "structural": {k: structural_record(v) for k, v in sorted(arch.get("structural", {}).items())},
        # a key the base config holds, left out: what the class builds without it (docs/upstream-notes.md, "A key's
        # absence"); only where it moves a parameter, so that a class with none keeps its record as it was
        **({"absent_keys": {k: absent_record(e) for k, e in sorted(absent.items())}}
           if (absent := arch.get("absent_keys")) else {}),
        # (the `mtp.` and NextN forms, fed to every class of their kind, are worth a line only where they load)
        "layouts_refused": {k: {"raises": v["error"]["type"], "message": words(v["error"]["message"], 300),
                                "where": v["error"]["where"]}
                            for k, v in arch["layouts"].items() if v["error"] is not None and not k.startswith("mtp.")
                            and ".nextn" not in k},
    })
    if apart := refused_apart(samples):
        record["refused_apart"] = apart
    if refused:
        record["samples_refused"] = {k: {"raises": v["type"], "message": words(v["message"], 300), "where": v["where"]}
                                     for k, v in sorted(refused.items())}
    return record


def release_record(version: str, worker: dict[str, Any]) -> dict[str, Any]:
    return {
        "schema": SCHEMA, "runtime": "vllm", "release": version,
        "generated_by": f"python tools/release_model.py {version}",
        "observed_version": worker.get("version"),
        "stubbed": worker.get("stubbed", []),  # what the worker provided that the release could not import on CPU
        "registry": dict(sorted(worker["registry"].items())),
        "architectures": {name: architecture_record(arch)
                          for name, arch in sorted(worker["architectures"].items())},
    }


# What the data must not hold (tests/unit/test_release_data_format.py scans every file for it): where this machine
# keeps the wheel (a cache under the home folder, a site-packages), the version in a documentation URL, and the
# probe's own names (the worker runs as __main__; the recording subclass of a config class it builds is
# `Recorded<Class>`, which the release itself would call `<Class>`).
_MACHINE_PATH = re.compile(r"(?<![\w.])/[^\s'\"()<>,]*?/(?=(?:vllm|sglang|transformers|torch|triton|pydantic)/)")
_PYDANTIC_URL = re.compile(r"\n *For further information visit https://errors\.pydantic\.dev/\S*")
_VERSIONED_URL = re.compile(r"(https?://[^\s/]+)/v?\d+(?:\.\d+)+(?=/)")
_PROBE_NAMES = ((re.compile(r"\b__main__\."), ""), (re.compile(r"\bRecorded(?=[A-Z]\w*Config\b)"), ""))


def normalised(value: Any) -> Any:
    """The record with every string as any machine would write it (see above)."""
    if isinstance(value, dict):
        return {k: normalised(v) for k, v in value.items()}
    if isinstance(value, list):
        return [normalised(v) for v in value]
    if not isinstance(value, str):
        return value
    value = _VERSIONED_URL.sub(r"\1", _PYDANTIC_URL.sub("", _MACHINE_PATH.sub("", value)))
    for pattern, by in _PROBE_NAMES:
        value = pattern.sub(by, value)
    return value


def stored(record: dict[str, Any]) -> store.Release:
    """The release as the data folder holds it (tools/release_layout.py: behaviour files and citations)."""
    return store.from_record(normalised(record))


def check_folder(folder: Path, release: store.Release, verdict: str) -> int:
    """--check: the committed release against the regenerated one, by what each says (whichever folder holds a
    behaviour file); `verdict` has a `{}` for "is" / "is NOT". Exit 0 when they are the same, 1 otherwise (with the
    first names that differ)."""
    differ = store.check(folder, release)
    print(verdict.format("is NOT" if differ else "is") + (f" ({differ[:8]})" if differ else ""))
    return 1 if differ else 0


def partial_refused(tool: str, only: list[str] | None, out: Path | None, merge: bool = False) -> bool:
    """`--only` without `--out` or `--merge`: a partial record written into the package folder would delete every
    other architecture's file (and --check would compare a part with the whole). Says so; True when refused."""
    if only and out is None and not merge:
        print(f"{tool}: --only writes a partial record; give --out DIR, or --merge to put these classes into the "
              "committed release (the package folder takes whole releases)", file=sys.stderr)
        return True
    if merge and not only:
        print(f"{tool}: --merge puts the --only classes into the committed release; name them", file=sys.stderr)
        return True
    return False


def merged_release(runtime: str, version: str, part: store.Release) -> store.Release | None:
    """--merge: the committed release with the regenerated classes in place (None: nothing committed to merge into;
    the classes of a recipe change are regenerated alone, the rest of the release is as the last whole run wrote)."""
    held = store.read(DATA / f"{runtime}-{version}")
    return None if held is None else store.merged(held, part)


def write_release(runtime: str, version: str, release: store.Release, out: Path | None) -> Path:
    """The release into the package's data (its runtime laid out again: a class that behaves as in the release
    before stores no copy), or, with --out, into that folder alone, every behaviour file in it."""
    if out is not None:
        store.write_folder(out, store.layout({version: release})[version])
        return out
    store.write(runtime, {version: release})
    return DATA / f"{runtime}-{version}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("version")
    parser.add_argument("--only", action="append", help="only these architectures (default: all registered)")
    parser.add_argument("--out", type=Path, help="write this folder instead of the package's data folder")
    parser.add_argument("--check", action="store_true", help="compare with the committed file; write nothing")
    parser.add_argument("--raw", type=Path, help="also keep the worker's observations here")
    parser.add_argument("--merge", action="store_true",
                        help="with --only: put these classes into the committed release (the others as they are)")
    parser.add_argument("--timeout", type=float, default=3000.0)
    args = parser.parse_args(argv)
    if partial_refused("release_model", args.only, args.out, args.merge):
        return 2
    from probe_runtime import DEFAULT_CACHE, ensure_deps, fetch_sources

    DEFAULT_CACHE.mkdir(parents=True, exist_ok=True)
    tree = fetch_sources(args.version, DEFAULT_CACHE)
    deps = ensure_deps(DEFAULT_CACHE)
    worker = run_worker(tree, deps, args.only, args.timeout)
    if not worker.get("ok"):
        print(f"release_model: vLLM {args.version} could not be run: {worker.get('reason')}", file=sys.stderr)
        return 2
    if args.raw:
        args.raw.write_text(json.dumps(worker, indent=1))
    release = stored(release_record(args.version, worker))
    if args.merge and args.out is None:
        whole = merged_release("vllm", args.version, release)
        if whole is None:
            print(f"release_model: no committed vllm-{args.version} to merge into", file=sys.stderr)
            return 2
        release = whole
    folder = args.out or DATA / f"vllm-{args.version}"
    if args.check:
        return check_folder(folder, release, f"release_model: {folder} {{}} what vLLM {args.version} does")
    folder = write_release("vllm", args.version, release, args.out)
    print(f"release_model: wrote {folder} ({len(worker['architectures'])} architectures)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
