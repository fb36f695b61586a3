"""fix's set-target-hidden (issue 21 item 5): an EAGLE-3 draft exported with `target_hidden_size: null` does not load
on any vLLM release (DSP358: getattr finds the null, `None * n` raises building fc). The hint's command writes the
width fc.weight was trained for, and nothing else; a width that is not the target's (DSP359) or that fc's shape does
not give is refused with the reason. Real checkpoints on disk, the real CLI, as a shell would run the hint.
"""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from conftest import draft_tensors, fix_refused, make_checkpoint, run_cli
from listed import vllm_minors

from dspark_ckpt.runtimes.versions import VLLM_RELEASES

H, T = 16, 96
IDS = [1, 5, 9]
COMMAND = re.compile(r"`(dspark-ckpt fix [^`]+)`")


def draft(root: Path, family: str, fc_cols: int, **config: Any) -> Path:
    tensors = draft_tensors(vocab=T, draft_vocab=T, target_vocab=T, hidden=H, markov=False)
    tensors["fc.weight"] = np.zeros((H, fc_cols), dtype=np.float32)
    extra = {"eagle_aux_hidden_state_layer_ids": IDS, "target_hidden_size": None, **config}
    return make_checkpoint(root, family=family, vocab=T, draft_vocab=T, target_vocab=T, hidden=H,
                           config_extra=extra, tensors=tensors)


def target(root: Path, hidden: int) -> Path:
    root.mkdir(parents=True)
    (root / "config.json").write_text(json.dumps({"architectures": ["LlamaForCausalLM"], "model_type": "llama",
                                                  "vocab_size": T, "hidden_size": hidden, "num_hidden_layers": 16}))
    return root


def files(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir())}


def check(cwd: Path, name: str, *args: str, runtimes: str = "vllm") -> dict[str, Any]:
    result = run_cli("check", name, *args, "--runtime", runtimes, "--format", "json", "--isolated", cwd=cwd)
    assert result.returncode in (0, 1), result.stderr
    doc: dict[str, Any] = json.loads(result.stdout)["checkpoints"][0]
    return doc


# The releases the repair makes it load on, which the hint names: EAGLE-3 Llama every listed one; EAGLE-3 Qwen3 those
# that register it (registry.py @ v0.24.0 L614 first); a 4-aux-state fc only where the count is read (0.20/0.21
# size fc for 3 whatever the config says: llama_eagle3.py L174-178 @ v0.20.0; the count from L179-185 @ v0.22.0).
@pytest.mark.parametrize(("family", "width", "extra", "runtimes"), [
    ("eagle3-llama", H, {}, "vllm"),
    ("eagle3-qwen3", H, {}, "vllm>=0.24.0"),
    # fc trained on 4 aux states of a 24-wide target: the width is 4H'/4, not hidden_size
    ("eagle3-llama", 24, {"num_aux_hidden_states": 4, "eagle_aux_hidden_state_layer_ids": [1, 5, 9, 13]},
     "vllm>=0.22.0"),
], ids=["llama", "qwen3", "llama-4-aux-wider-target"])
def test_the_hint_command_writes_the_width_fc_was_trained_for(tmp_path: Path, family: str, width: int,
                                                             extra: dict[str, Any], runtimes: str) -> None:
    n = extra.get("num_aux_hidden_states", 3)
    source = draft(tmp_path / "my draft", family, n * width, **extra)
    target(tmp_path / "tgt", width)
    before = files(source)
    # `None * n` building fc, in every release that has the class (llama_eagle3.py L175-176 @ v0.20.0: hasattr is
    # true for a null key; qwen3_eagle3.py L193 @ v0.24.0)
    releases = VLLM_RELEASES if runtimes == "vllm" else vllm_minors(runtimes.removeprefix("vllm>="))
    doc = check(tmp_path, "my draft", "--target", "tgt", runtimes=runtimes)
    assert {c["error_code"] for c in doc["compatibility"]} == {"DSP358"} and \
        [c["version"] for c in doc["compatibility"]] == list(releases)
    (said,) = [f["hint"] for f in check(tmp_path, "my draft", "--target", "tgt")["findings"] if f["code"] == "DSP358"]
    (line,) = COMMAND.findall(said)
    argv = shlex.split(line)
    assert argv[:3] == ["dspark-ckpt", "fix", "my draft"] and argv[argv.index("--strategy") + 1] == "set-target-hidden"
    # the gate's `vllm` where the repair loads on every release of it that registers the class (issue 41)
    assert argv[argv.index("--target") + 1] == "tgt" and \
        argv[argv.index("--for") + 1] == ("vllm" if family == "eagle3-qwen3" else runtimes)
    fixed = run_cli(*argv[1:], "--isolated", cwd=tmp_path)
    assert fixed.returncode == 0, fixed.stdout + fixed.stderr
    after = files(tmp_path / "my draft-fixed")
    assert files(source) == before  # the checkpoint itself is untouched
    assert {name for name in after if after[name] != before.get(name)} == {"config.json"}
    old, new = json.loads(before["config.json"]), json.loads(after["config.json"])
    assert new["target_hidden_size"] == width and {k: v for k, v in new.items() if k != "target_hidden_size"} == \
        {k: v for k, v in old.items() if k != "target_hidden_size"}
    doc = check(tmp_path, "my draft-fixed", "--target", "tgt", runtimes=runtimes)
    assert [(c["loads"], c["error_code"], c["first_step_error_code"]) for c in doc["compatibility"]] == \
        [(True, None, None)] * len(releases)
    assert not {"DSP358", "DSP359"} & {f["code"] for f in doc["findings"]}


def test_dry_run_shows_the_plan_and_writes_nothing(tmp_path: Path) -> None:
    source = draft(tmp_path / "d", "eagle3-llama", 3 * H)
    before = files(source)
    done = run_cli("fix", "d", "--target-vocab-size", str(T), "--runtime", "vllm", "--dry-run", "--isolated",
                   cwd=tmp_path)
    assert done.returncode == 1, done.stdout + done.stderr  # docs/fix.md: 1 when something would change
    assert "strategy set-target-hidden" in done.stdout
    assert f"[DSP358] set config.json target_hidden_size: None -> {H}" in done.stdout
    # every listed release fails the same way before and is fixed the same way after: one folded row
    assert f"vllm {VLLM_RELEASES[0]}-{VLLM_RELEASES[-1]} fails (DSP358) -> loads" in " ".join(done.stdout.split())
    assert "dry run: nothing was written" in done.stdout
    assert files(source) == before and not (tmp_path / "d-fixed").exists()


def test_a_width_that_is_not_the_targets_is_refused(tmp_path: Path) -> None:
    """fc trained on 24-wide hidden states, the target's are 16 wide: setting the key would only move the failure
    to the first draft step (DSP359)."""
    draft(tmp_path / "d", "eagle3-llama", 3 * 24)
    target(tmp_path / "tgt", H)
    out = fix_refused(tmp_path, "d", "--target", "tgt", "--runtime", "vllm")
    assert "DSP502" in out and "set-target-hidden does not apply: fc.weight was trained for hidden states of width " \
        "24, but the target's hidden_size is 16" in out, out


def test_an_fc_whose_width_gives_no_per_state_width_is_refused(tmp_path: Path) -> None:
    draft(tmp_path / "d", "eagle3-llama", 3 * H + 1)
    out = fix_refused(tmp_path, "d", "--target-vocab-size", str(T), "--runtime", "vllm", "--strategy",
                      "set-target-hidden")
    assert "set-target-hidden does not apply" in out and "is not a multiple of the 3 aux hidden states" in out, out


def test_a_draft_without_the_null_is_left_alone(tmp_path: Path) -> None:
    root = draft(tmp_path / "d", "eagle3-llama", 3 * H)
    config = json.loads((root / "config.json").read_text())
    del config["target_hidden_size"]
    (root / "config.json").write_text(json.dumps(config))
    done = run_cli("fix", "d", "--target-vocab-size", str(T), "--runtime", "vllm", "--strategy", "set-target-hidden",
                   "--dry-run", "--isolated", cwd=tmp_path)
    assert "set-target-hidden does not apply (no release judged here reads `target_hidden_size: null`" in \
        done.stdout, done.stdout + done.stderr


def test_a_list_that_disagrees_with_the_count_is_refused(tmp_path: Path) -> None:
    """Four aux ids, fc sized for the default 3 and 4 x 16 = 64 columns wide: 64 / 3 gives no width, and a fc of
    [16, 96] would give 32 per state for 3, or 24 for 4: which is right cannot be told while the count is wrong."""
    draft(tmp_path / "d", "eagle3-llama", 96, eagle_aux_hidden_state_layer_ids=[1, 5, 9, 13])
    out = fix_refused(tmp_path, "d", "--target-vocab-size", str(T), "--runtime", "vllm", "--strategy",
                      "set-target-hidden")
    assert "the aux layer list names 4 layers while fc is sized for 3" in out, out
