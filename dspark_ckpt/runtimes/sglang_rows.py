"""SGLang's contract rows, one per (release range, family), each citing the released file it was read from."""

from __future__ import annotations

from dspark_ckpt.model.families import Family
from dspark_ckpt.runtimes.contracts import Contract, Share, Unknown, When

SGLANG_ROWS: tuple[Contract, ...] = (
    # SGLang: hot_token_id = d2t + arange(D) with no checks, t2d ignored (python/sglang/srt/models/llama_eagle3.py).
    Contract("sglang", "*", "*", Family.EAGLE3_LLAMA, "LlamaForCausalLMEagle3",
             "sglang python/sglang/srt/models/llama_eagle3.py", d2t_param=When.ALWAYS, unknown_weights=Unknown.IGNORE,
             lm_head_share=Share.IF_NOT_OWN_AND_FITS, embed_share=Share.IF_NOT_OWN),
    Contract("sglang", "*", "*", Family.EAGLE3_QWEN3, "LlamaForCausalLMEagle3",
             "sglang python/sglang/srt/models/llama_eagle3.py", d2t_param=When.ALWAYS, unknown_weights=Unknown.IGNORE,
             lm_head_share=Share.IF_NOT_OWN_AND_FITS, embed_share=Share.IF_NOT_OWN),
    # SGLang Qwen3 DSpark never reads draft_vocab_size: lm_head and markov_w2 have V rows, and any d2t/t2d is an
    # error raised when that tensor's turn comes (after the row-checked heads in sorted-name order).
    Contract("sglang", "*", "*", Family.QWEN3_DSPARK, "Qwen3DSparkForCausalLM",
             "sglang python/sglang/srt/models/qwen3_dspark.py", lm_head_rows="V", markov_w2_rows="V",
             mapping_tensors_rejected=True,
             lm_head_share=Share.IF_NOT_OWN_AND_FITS, embed_share=Share.IF_NOT_OWN_AND_FITS),
)
