"""A `model` that looks like a dotted class path is read as one only by the releases that have method custom_class.

vLLM 0.22.0 added `custom_class` to SpeculativeMethod (spec.json `methods`; speculative.py @ v0.22.0 L527-534: a
`model` with a dot and no `/` becomes method custom_class); 0.17-0.21 have no such method and only default an unset
method to draft_model (speculative.py L449-453 @ v0.20.0), then detect the method from the path ("eagle3" in it:
L580-622 @ v0.20.0). So `eagle3_head.v1` is an EAGLE-3 draft on 0.21.0 and a class path on 0.22.0.
"""

from __future__ import annotations

import json
from pathlib import Path

from cli_runner import run_cli
from conftest import ARCH, make_checkpoint


def test_dotted_model_is_a_class_path_only_from_0_22(tmp_path: Path) -> None:
    draft = tmp_path / "eagle3_head.v1"
    make_checkpoint(draft, family="eagle3-llama", target_vocab=96, markov=False,
                    config_extra={"architectures": [ARCH["eagle3-llama"]]})
    spec = tmp_path / "spec.json"
    spec.write_text(json.dumps({"model": "eagle3_head.v1", "num_speculative_tokens": 3}))
    done = run_cli("check", str(draft), "--target-vocab-size", "96", "--runtime", "vllm==0.21.0", "--runtime",
                   "vllm==0.22.0", "--speculative-config", str(spec), "--format", "json", cwd=tmp_path)
    runs = {r["version"]: r for r in json.loads(done.stdout)["checkpoints"][0]["deploy"]["runtimes"]}
    old, new = runs["0.21.0"], runs["0.22.0"]
    assert (old["method"], old["starts"]) == ("eagle3", True), old
    assert "'eagle3' in the model path" in old["method_from"]
    assert (new["method"], new["error_code"]) == ("custom_class", "DSP805"), new
