"""Pure: SGLang serving a base-class architecture (`LlamaForCausalLM`) as an EAGLE or EAGLE-3 draft.

SGLang never renames a draft's architecture by method (vLLM's EAGLEConfig does: runtimes/vllm_hf_config.rename):
its draft ModelConfig resolves `architectures[0]` as written, rewriting only the MTP/NextN heads that ship inside a
target checkpoint (`ModelConfig._config_draft_model`, sglang/srt/configs/model_config.py:1010-1212 @ 0.5.23;
:DRAFT_RENAMED below). So an EAGLE-1 head exported as `LlamaForCausalLM` is built as the target class itself: its
parameters are `model.*` and `lm_head.*`, and its load_weights skips every name it has no parameter for with a
warning ("Parameter ... not found in params_dict", models/llama.py:708-779 @ 0.5.23), so the draft's `fc` and its
un-prefixed layers land nowhere and the draft proposes from initial values. Under EAGLE3 the draft worker then reads
the class's `hot_token_id`, which no target class defines: AttributeError at start-up
(speculative/eagle_worker_v2.py:366 @ 0.5.23, :355 @ 0.5.21, :333 @ 0.5.16, :226 @ 0.5.12; eagle_worker.py:191
@ 0.5.12). Read from the wheels of 0.5.12-0.5.23; the releases before are assumed to route the same way.
"""

from __future__ import annotations

from dspark_ckpt.model.codes import FindingCode
from dspark_ckpt.runtimes.records import Issue
from dspark_ckpt.runtimes.registered import registration

CODE: FindingCode = "DSP369"
# The algorithms (vLLM's method names) whose draft worker takes the draft's class as it is built.
EAGLE_METHODS = frozenset({"eagle", "eagle3"})
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
WHERE = "sglang/srt/configs/model_config.py:1010-1212 @ 0.5.23 (_config_draft_model: no rename for it)"


def routed_as_target(version: str, arch: str | None, method: str | None) -> bool:
    """The release builds a registered target class for a draft served under EAGLE/EAGLE3."""
    if arch is None or method not in EAGLE_METHODS or arch in DRAFT_RENAMED:
        return False
    found = registration("sglang", version, arch)
    return found is not None and not found.draft


def raises(method: str) -> bool:
    """EAGLE3's worker fails at start-up on the target class; EAGLE's loads it and drafts from initial values."""
    return method == "eagle3"


def issue(arch: str, method: str) -> Issue:
    then = ("; then the EAGLE-3 draft worker reads the class's hot_token_id, which a target class lacks: "
            f"AttributeError: '{arch}' object has no attribute 'hot_token_id' at start-up "
            "(speculative/eagle_worker_v2.py:366 @ 0.5.23)" if method == "eagle3" else "")
    return Issue(CODE, f"SGLang serves {arch} under {method.upper()} as the target class {arch}, not a draft "
                       f"class: it renames no architecture by algorithm ({WHERE}). The class's load_weights skips "
                       "every tensor it has no parameter for (anything outside `model.` and `lm_head.`: an EAGLE "
                       "head's fc and its un-prefixed layers; models/llama.py:708-779 @ 0.5.23), so the draft's "
                       f"layers keep their initial values{then}.", verbatim=False)
