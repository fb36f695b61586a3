"""The config class a runtime builds a draft's config.json with, by its model_type: the class an AttributeError names.

Read from the generated records: each record's `config` says which class its samples' model_type picked in that
release (transformers' AutoConfig, or the runtime's own registered class); tools/config_classes.py gathers them per
runtime into `release_data/config_classes.json`, so a run reads one small file, not every record. A model_type no
record of the runtime samples takes `UNSAMPLED`, the one hand-kept table: drafts are shipped with these model types
(Qwen2 and Qwen3-MoE EAGLE heads, Gemma 4 drafts typed `gemma4`, GPT-OSS EAGLE-3 heads, vLLM's speculators format),
but no registered draft class of that runtime is built from one, so no generator ever sees their class.
tests/unit/test_config_classes.py holds the index to the records and fails on an UNSAMPLED entry the records sample
(delete it there) and on a second model_type -> class table anywhere in the package.
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path

INDEX = Path(__file__).resolve().parent / "release_data" / "config_classes.json"
# model_type -> class where no record of the runtime samples the model_type: transformers' own classes
# (configuration_qwen2.py, configuration_qwen3_moe.py, configuration_gemma4.py, configuration_gpt_oss.py) and vLLM's
# registered SpeculatorsConfig (vllm/transformers_utils/configs/speculators/base.py).
UNSAMPLED: dict[str, dict[str, str]] = {
    "vllm": {"qwen2": "Qwen2Config", "qwen3_moe": "Qwen3MoeConfig", "gemma4": "Gemma4Config",
             "speculators": "SpeculatorsConfig"},
    "sglang": {"gpt_oss": "GptOssConfig"},
}


@cache
def sampled(runtime: str) -> dict[str, str]:
    """model_type -> class, as the runtime's generated records say (the index; empty for a runtime it lacks)."""
    doc = json.loads(INDEX.read_text(encoding="utf-8")) if INDEX.is_file() else {}
    found = doc.get(runtime, {})
    return dict(found) if isinstance(found, dict) else {}


def config_class(runtime: str, model_type: object) -> str | None:
    """The class `runtime` builds a config of this model_type with; None where neither the records nor UNSAMPLED
    know it (the caller's PretrainedConfig, or its own spelling)."""
    if not isinstance(model_type, str):
        return None
    return sampled(runtime).get(model_type) or UNSAMPLED.get(runtime, {}).get(model_type)
