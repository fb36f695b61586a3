"""Pure: a config key a SGLang draft class refuses to find null, hand-read where the release's samples never set
it so (the generator samples numbers; runtimes/release_data has no null sample to observe).

SGLang's EAGLE-3 for DeepSeek/Kimi (`Eagle3DeepseekV2ForCausalLM`, models/kimi_k25_eagle3.py) replaces the MLA
layer's fused QKV-down projection, sized `q_lora_rank + kv_lora_rank + qk_rope_head_dim`, and checks first:
`if attn.q_lora_rank is None: raise ValueError("Eagle3 MLA layer requires q_lora_rank in the draft config")`. A
config that states `q_lora_rank: null` (DeepSeek-V2-Lite's MLA, or a Llama-shaped config rewritten to MLA) fails in
__init__, before any weight; a config without the key takes the config class's default (1536) and builds. The line
of that check per release (every release that registers the class, 0.5.12-0.5.23).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from dspark_ckpt.model.codes import FindingCode
from dspark_ckpt.runtimes.records import Issue

CODE: FindingCode = "DSP372"
FILE = "sglang/srt/models/kimi_k25_eagle3.py"
# architecture -> key -> (exception, its words, release -> the line of the check)
REFUSED_NULL: Mapping[str, Mapping[str, tuple[str, str, Mapping[str, int]]]] = {
    "Eagle3DeepseekV2ForCausalLM": {
        "q_lora_rank": ("ValueError", "Eagle3 MLA layer requires q_lora_rank in the draft config", {
            "0.5.12": 103, "0.5.13": 112, "0.5.14": 112, "0.5.15": 113, "0.5.16": 113, "0.5.17": 113,
            "0.5.18": 113, "0.5.19": 113, "0.5.20": 113, "0.5.21": 113, "0.5.22": 113, "0.5.23": 114}),
    },
}


def refused_null(version: str, arch: str | None, raw: Mapping[str, Any]) -> Issue | None:
    """The class's refusal of a key config.json sets to null, on a release whose line was read; else None."""
    for key, (raises, words, lines) in (REFUSED_NULL.get(arch or "") or {}).items():
        if key in raw and raw[key] is None and version in lines:
            return Issue(CODE, f"{raises}: {words} ({FILE}:{lines[version]} @ {version}, in __init__: {key} "
                               "is null)")
    return None
