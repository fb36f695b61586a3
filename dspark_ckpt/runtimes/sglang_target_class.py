"""Pure: SGLang serving a base-class architecture (`LlamaForCausalLM`) as an EAGLE, EAGLE-3 or DFlash draft.

SGLang never renames a draft's architecture by algorithm (vLLM's EAGLEConfig does: runtimes/vllm_hf_config.rename):
its draft ModelConfig resolves `architectures[0]` as written, rewriting only the MTP/NextN heads that ship inside a
target checkpoint (`ModelConfig._config_draft_model`; DRAFT_RENAMED below, model_config.py:1032-1211 @ 0.5.23). So an
EAGLE-1 head exported as `LlamaForCausalLM` is built as the target class itself: its parameters are `model.*` and
`lm_head.*`, and its default load_weights skips every name it has no parameter for ("Parameter {name} not found in
params_dict"), so the draft's `fc` and un-prefixed layers land nowhere and it proposes from initial values. Under
EAGLE3 the worker then reads the class's `hot_token_id`, under DFLASH its `candidate_selector` (0.5.19+), which no
target class defines: AttributeError at start-up (an older DFLASH worker calls the model's `project_target_hidden`
at the first request's prefill, which no target class defines either). Each release's lines come from its own files
(`release_data/sglang_target_class.json`, tools/sglang_target_class_lines.py); a release without them (no wheel read)
gets no verdict rather than a guess.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Mapping
from typing import Any

from dspark_ckpt.model.codes import FindingCode
from dspark_ckpt.runtimes.records import Issue
from dspark_ckpt.runtimes.registered import registration
from dspark_ckpt.runtimes.release_store import DATA

CODE: FindingCode = "DSP369"
START_UP = "at start-up"
# The algorithms (vLLM's method names) whose draft worker takes the draft's class as it is built, and the attributes
# of the draft model each worker reads that a target class lacks, in the order it reads them: (attribute, the key of
# its line in the table, when). The first whose line the release's files hold is the read that fails; none: the
# draft loads (EAGLE reads none).
WORKER_READS: dict[str, tuple[tuple[str, str, str], ...]] = {
    "eagle": (),
    "eagle3": (("hot_token_id", "hot_token_id", START_UP),),
    # 0.5.19+ reads the selector when the worker starts; every DFLASH worker v2 projects the target's hidden states
    # through the draft model when the first request's prefill fills the draft's KV cache
    "dflash": (("candidate_selector", "dflash_selector", START_UP),
               ("project_target_hidden", "dflash_project",
                "at the first request's prefill, where it projects the target's hidden states")),
}
EAGLE_METHODS = frozenset(WORKER_READS)
# The architectures `_config_draft_model` rewrites to a draft class (model_config.py:1032-1211 @ 0.5.23): these
# are routed, not built as the target class.
DRAFT_RENAMED = frozenset({
    "DeepseekV3ForCausalLM", "DeepseekV32ForCausalLM", "GlmMoeDsaForCausalLM", "DeepseekV4ForCausalLM",
    "Glm4MoeForCausalLM", "Glm4MoeLiteForCausalLM", "Glm5NextForConditionalGeneration",
    "GlmOcrForConditionalGeneration", "LongcatFlashForCausalLM", "MiMoForCausalLM", "Step3p5ForCausalLM",
    "InklingForConditionalGeneration", "GigaChat35ForCausalLM", "Step3p7ForConditionalGeneration",
    "BailingMoeV2ForCausalLM", "BailingMoeForCausalLM", "BailingMoeV2_5ForCausalLM", "BailingMoeV3ForCausalLM",
    "Ernie4_5_MoeForCausalLM", "Qwen3NextForCausalLM", "Qwen4ExpForConditionalGeneration", "Qwen3MoeForCausalLM",
    "Qwen3_5ForConditionalGeneration", "Qwen3_5MoeForConditionalGeneration", "Qwen3_5ForCausalLM",
    "Qwen3_5MoeForCausalLM", "InternS2PreviewForConditionalGeneration", "InternS2MobiusForConditionalGeneration",
    "ExaoneMoEForCausalLM", "ExaoneMoeForCausalLM", "NemotronH_Omni_Reasoning_V3", "NemotronHForCausalLM",
    "NemotronHPuzzleForCausalLM", "HYV3ForCausalLM", "HYV4ForCausalLM",
})
FILE = "sglang_target_class.json"
# The target classes whose default load_weights was read (`skip_unknown` in the table is models/llama.py's skip);
# another base class (Qwen3, Laguna: its loader checks for dropped expert weights) gets a verdict only under a
# method whose worker then reads an attribute no target class has (it fails, at load or at that read), else none.
READ_LOADERS = frozenset({"LlamaForCausalLM"})


@functools.cache
def _table() -> Mapping[str, Any]:
    try:
        doc = json.loads((DATA / FILE).read_text())
    except (OSError, ValueError):
        return {}
    return doc if isinstance(doc, dict) else {}


def _lines(version: str) -> Mapping[str, int]:
    found = (_table().get("releases") or {}).get(version)
    return found if isinstance(found, dict) else {}


def _cite(version: str, key: str) -> str:
    return f"{(_table().get('files') or {}).get(key)}:{_lines(version).get(key)} @ {version}"


def worker_read(version: str, method: str) -> tuple[str, str, str] | None:
    """The read of `method`'s draft worker in `version` that a target class fails (its line recorded), or None."""
    lines = _lines(version)
    return next((read for read in WORKER_READS.get(method, ()) if read[1] in lines), None)


def routed_as_target(version: str, arch: str | None, method: str | None) -> bool:
    """The release builds a registered target class for a draft served under EAGLE/EAGLE3/DFLASH, and its files
    were read (the lines of that routing are recorded)."""
    if arch is None or method not in WORKER_READS or arch in DRAFT_RENAMED or not _lines(version):
        return False
    read = worker_read(version, method)
    if WORKER_READS[method] and read is None:
        return False  # the worker's read of the attribute was not found in the release's files: no verdict
    if arch not in READ_LOADERS and read is None:
        return False  # a load that succeeds is said only of a loader that was read; a worker's read fails any class
    found = registration("sglang", version, arch)
    return found is not None and not found.draft


def raises(method: str) -> bool:
    """EAGLE3's and DFLASH's workers fail on the target class (at start-up, or at the first request's prefill);
    EAGLE's loads it."""
    return bool(WORKER_READS.get(method))


# models/llama.py LlamaForCausalLM's parameters per decoder layer (L340-370 @ 0.5.23: QKV/o_proj with
# `attention_bias`, the stacked gate_up_proj, two norms), then the model's own; the EAGLE worker replaces the
# embedding and head by the target's (set_embed_and_head, speculative/eagle_worker_v2.py init_lm_head).
LAYER_PARAMETERS = ("self_attn.qkv_proj.weight", "self_attn.o_proj.weight", "mlp.gate_up_proj.weight",
                    "mlp.down_proj.weight", "input_layernorm.weight", "post_attention_layernorm.weight")
BIASED = ("self_attn.qkv_proj.bias", "self_attn.o_proj.bias")


def left_unwritten(raw: Mapping[str, Any]) -> list[str]:
    """The parameters of the target class built from `raw` that nothing writes when it is served as an EAGLE head:
    every decoder layer's and the final norm (the head's tensors are outside `model.`; the worker shares only the
    embedding and the head)."""
    layers = raw.get("num_hidden_layers")
    count = layers if isinstance(layers, int) and not isinstance(layers, bool) and 0 < layers <= 4096 else 1
    per_layer = LAYER_PARAMETERS + (BIASED if raw.get("attention_bias") is True else ())
    return [f"model.layers.{i}.{name}" for i in range(count) for name in per_layer] + ["model.norm.weight"]


def issue(version: str, arch: str, method: str, raw: Mapping[str, Any] | None = None) -> Issue:
    read = worker_read(version, method)
    unwritten = (f" Left at their initial values: {', '.join(left_unwritten(raw))}."
                 if raw is not None and read is None else "")
    then = (f"; then the {method.upper()} draft worker reads the model's {read[0]}, which a target class lacks: "
            f"AttributeError: '{arch}' object has no attribute '{read[0]}' {read[2]} "
            f"({_cite(version, read[1])})" if read is not None else "")
    loader = ("The class's load_weights skips every tensor it has no parameter for (anything outside `model.` and "
              f"`lm_head.`: an EAGLE head's fc and its un-prefixed layers; {_cite(version, 'skip_unknown')}), so "
              "the draft's layers keep their initial values" if arch in READ_LOADERS else
              f"Whether {arch}'s own load_weights takes the draft's tensors was not read (it may raise first)")
    return Issue(CODE, f"SGLang serves {arch} under {method.upper()} as the target class {arch}, not a draft "
                       "class: it renames no architecture by algorithm (_config_draft_model, "
                       f"{_cite(version, 'config_draft_model')}, rewrites only MTP/NextN heads). {loader}{then}."
                       f"{unwritten}", verbatim=False)
