"""Pure: a config key a SGLang draft class refuses to find null, hand-read where the release's samples never set
it so (the generator samples numbers; runtimes/release_data has no null sample to observe).

SGLang's EAGLE-3 for DeepSeek/Kimi (`Eagle3DeepseekV2ForCausalLM`, models/kimi_k25_eagle3.py) replaces the MLA
layer's fused QKV-down projection, sized `q_lora_rank + kv_lora_rank + qk_rope_head_dim`, and checks first:
`if attn.q_lora_rank is None: raise ValueError("Eagle3 MLA layer requires q_lora_rank in the draft config")`. A
config that states `q_lora_rank: null` (DeepSeek-V2-Lite's MLA, or a Llama-shaped config rewritten to MLA) fails in
__init__, before any weight; a config without the key takes the config class's default (1536) and builds. The line
of that check per release (every release that registers the class) is data: sglang_null_refusals.json.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from dspark_ckpt.model.codes import FindingCode
from dspark_ckpt.runtimes.records import Issue

CODE: FindingCode = "DSP372"
FILE = Path(__file__).resolve().parent / "sglang_null_refusals.json"  # the lines per release: data, not code


@functools.cache
def table() -> Mapping[str, Any]:
    """architecture -> key -> {raises, message, file, lines: release -> line}."""
    try:
        doc = json.loads(FILE.read_text())
    except (OSError, ValueError):
        return {}
    return {k: v for k, v in doc.items() if isinstance(v, dict)} if isinstance(doc, dict) else {}


def refused_null(version: str, arch: str | None, raw: Mapping[str, Any]) -> Issue | None:
    """The class's refusal of a key config.json sets to null, on a release whose line was read; else None."""
    for key, said in (table().get(arch or "") or {}).items():
        lines = said.get("lines") or {}
        if key in raw and raw[key] is None and version in lines:
            return Issue(CODE, f"{said.get('raises')}: {said.get('message')} ({said.get('file')}:{lines[version]} @ "
                               f"{version}, in __init__: {key} is null)")
    return None
