"""fix's set-aux-count (issue 21 item 5): the hint check gives for DSP329 / DSP356 on an EAGLE-3 draft whose fc.weight
was trained on the layers its aux list names, run as a shell would, leaves a draft that checks clean on every vLLM
release, with only config.json changed; where fc's width fits no list, the hint says what to re-export.

The counts each class reads are runtimes/eagle3_aux.py's (docs/upstream-notes.md section 11).
"""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from conftest import backbone_config, draft_tensors, make_checkpoint, run_cli, write_safetensors
from listed import vllm_minors

H, T = 16, 96
IDS4 = [1, 5, 9, 13]
NESTED = {"eagle_aux_hidden_state_layer_ids": IDS4}  # SGLang's model runner reads only eagle_config's list
COMMAND = re.compile(r"`(dspark-ckpt fix [^`]+)`")


def tensors(fc_cols: int) -> dict[str, np.ndarray]:
    found = draft_tensors(vocab=T, draft_vocab=T, target_vocab=T, hidden=H, markov=False)
    found["fc.weight"] = np.zeros((H, fc_cols), dtype=np.float32)
    return found


def draft(root: Path, family: str, config: dict[str, Any], fc_cols: int = 4 * H) -> Path:
    return make_checkpoint(root, family=family, vocab=T, draft_vocab=T, target_vocab=T, hidden=H,
                           config_extra=config, tensors=tensors(fc_cols))


def speculators_llama(root: Path) -> Path:
    """A speculators eagle3 Llama head: update_eagle3 copies the top-level list, not a top-level count."""
    root.mkdir(parents=True)
    layer = {"model_type": "llama", "vocab_size": T, "hidden_size": H, **backbone_config(H)}
    config = {"architectures": ["Eagle3Speculator"], "speculators_model_type": "eagle3", "draft_vocab_size": T,
              "speculators_config": {"proposal_methods": [{"speculative_tokens": 3}],
                                     "verifier": {"name_or_path": "target"}},
              "transformer_layer_config": layer, "eagle_aux_hidden_state_layer_ids": IDS4}
    (root / "config.json").write_text(json.dumps(config))
    write_safetensors(root / "model.safetensors", tensors(4 * H))
    return root


def check(cwd: Path, name: str, *runtimes: str) -> dict[str, Any]:
    flags = [w for r in runtimes for w in ("--runtime", r)]
    result = run_cli("check", name, "--target-vocab-size", str(T), *flags, "--format", "json", "--isolated", cwd=cwd)
    assert result.returncode in (0, 1), result.stderr
    doc: dict[str, Any] = json.loads(result.stdout)["checkpoints"][0]
    return doc


def hint(doc: dict[str, Any], code: str) -> str:
    (found,) = [f["hint"] for f in doc["findings"] if f["code"] == code]
    assert isinstance(found, str)
    return found


def files(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir())}


BUILDS: dict[str, Any] = {
    # llama_eagle3.py never reads the top-level list: fc is built for 3 and fc.weight [H, 4H] fails to load
    "llama-top-level": lambda root: draft(root, "eagle3-llama", {"eagle_aux_hidden_state_layer_ids": IDS4}),
    # a count that contradicts the list and fc
    "llama-count-3": lambda root: draft(root, "eagle3-llama", {"eagle_aux_hidden_state_layer_ids": IDS4,
                                                               "num_aux_hidden_states": 3}),
    # the list only in eagle_config: fc loads, model runner V2 hands fc the default 3 layers
    "llama-nested": lambda root: draft(root, "eagle3-llama",
                                       {"eagle_config": {"eagle_aux_hidden_state_layer_ids": IDS4}}),
    # qwen3_eagle3.py reads num_aux_layers first
    "qwen3-num-aux-layers-3": lambda root: draft(root, "eagle3-qwen3", {"eagle_aux_hidden_state_layer_ids": IDS4,
                                                                        "num_aux_layers": 3}),
    "speculators-llama": speculators_llama,
}
# The releases the count can repair, which the hint names: EAGLE-3 Llama reads a count from 0.22 (0.20/0.21 size fc
# for 3 whatever the config says: llama_eagle3.py L174-178 @ v0.20.0; num_aux_hidden_states from L179-185 @ v0.22.0);
# EAGLE-3 Qwen3 is registered from 0.24.0 (registry.py @ v0.24.0 L614).
LLAMA, QWEN3 = "vllm>=0.22.0", "vllm>=0.24.0"
CASES = [
    ("llama-top-level", "DSP329", {"num_aux_hidden_states": 4, "eagle_config": NESTED}, LLAMA),
    ("llama-top-level", "DSP356", {"num_aux_hidden_states": 4, "eagle_config": NESTED}, LLAMA),
    ("llama-count-3", "DSP329", {"num_aux_hidden_states": 4, "eagle_config": NESTED}, LLAMA),
    ("llama-nested", "DSP356", {"num_aux_hidden_states": 4, "eagle_aux_hidden_state_layer_ids": IDS4}, LLAMA),
    ("qwen3-num-aux-layers-3", "DSP329", {"num_aux_layers": 4, "num_aux_hidden_states": 4, "eagle_config": NESTED},
     QWEN3),
    ("speculators-llama", "DSP329", {"transformer_layer_config": {"model_type": "llama", "vocab_size": T,
                                                                  "hidden_size": H, **backbone_config(H),
                                                                  "num_aux_hidden_states": 4}}, LLAMA),
]


@pytest.mark.parametrize(("build", "code", "written", "runtimes"), CASES, ids=[f"{c[0]}-{c[1]}" for c in CASES])
def test_the_hint_command_sets_the_count(tmp_path: Path, build: str, code: str, written: dict[str, Any],
                                         runtimes: str) -> None:
    source = BUILDS[build](tmp_path / "my draft")
    before = files(source)
    (line,) = COMMAND.findall(hint(check(tmp_path, "my draft"), code))
    argv = shlex.split(line)
    assert argv[:3] == ["dspark-ckpt", "fix", "my draft"] and argv[argv.index("--strategy") + 1] == "set-aux-count"
    # a repair that loads on every release of the gate that registers the class names the gate, `vllm` (issue 41: one
    # command per repair; fix leaves the releases before EAGLE-3 Qwen3's registration out, with a DSP505 warning)
    assert argv[argv.index("--for") + 1] == ("vllm" if runtimes == QWEN3 else runtimes)
    fixed = run_cli(*argv[1:], "--isolated", cwd=tmp_path)
    assert fixed.returncode == 0, fixed.stdout + fixed.stderr
    out = tmp_path / "my draft-fixed"
    after = files(out)
    assert files(source) == before  # the checkpoint itself is untouched
    assert {n for n in after if after[n] != before.get(n)} == {"config.json"}  # only config.json changed
    config = json.loads(after["config.json"])
    assert {k: config[k] for k in written} == written
    assert {k: v for k, v in config.items() if k not in written} == \
        {k: v for k, v in json.loads(before["config.json"]).items() if k not in written}
    doc = check(tmp_path, "my draft-fixed", runtimes)
    assert [(c["version"], c["loads"], c["first_step_error_code"]) for c in doc["compatibility"]] == \
        [(v, True, None) for v in vllm_minors(runtimes.removeprefix("vllm>="))]
    assert not {"DSP329", "DSP356", "DSP357"} & {f["code"] for f in doc["findings"]}


def test_dry_run_shows_the_plan_and_writes_nothing(tmp_path: Path) -> None:
    source = BUILDS["llama-top-level"](tmp_path / "d")
    before = files(source)
    done = run_cli("fix", "d", "--target-vocab-size", str(T), "--for", LLAMA, "--dry-run", "--isolated",
                   cwd=tmp_path)
    assert done.returncode == 1, done.stdout + done.stderr  # docs/fix.md: 1 when something would change
    assert "strategy set-aux-count" in done.stdout
    assert "[DSP329] set config.json num_aux_hidden_states: None -> 4" in done.stdout
    counted = vllm_minors("0.22.0")  # one verdict before and after on each: one folded row
    assert f"vllm {counted[0]}-{counted[-1]} fails (DSP329) -> loads" in " ".join(done.stdout.split())
    assert '+  "num_aux_hidden_states": 4' in done.stdout and "dry run: nothing was written" in done.stdout
    assert files(source) == before and not (tmp_path / "d-fixed").exists()


def test_an_fc_that_fits_no_list_is_refused_with_what_to_re_export(tmp_path: Path) -> None:
    """fc.weight [H, 3H] with 4 ids: loads (fc built for 3), fails at the first step; the list or fc is wrong."""
    BUILDS["llama-top-level"](tmp_path / "d")
    (tmp_path / "d" / "model.safetensors").unlink()
    write_safetensors(tmp_path / "d" / "model.safetensors", tensors(3 * H))
    doc = check(tmp_path, "d")
    for code in ("DSP329", "DSP356"):
        said = hint(doc, code)
        assert "fix cannot repair this checkpoint" in said and "fc.weight is [16, 48], not [16, 4 x hidden_size 16]" \
            in said, said
        assert said.endswith("re-export the draft with fc.weight of [hidden_size, n x target_hidden_size] for the n "
                             "aux layers it was trained on, num_aux_hidden_states = n and those n layer ids in "
                             "eagle_aux_hidden_state_layer_ids at the top level of config.json."), said
        assert not COMMAND.search(said)
    done = run_cli("fix", "d", "--target-vocab-size", str(T), "--for", "vllm", "--strategy", "set-aux-count",
                   "--isolated", cwd=tmp_path)
    assert done.returncode != 0 and not (tmp_path / "d-fixed").exists()
    assert "DSP503" in done.stdout + done.stderr and "set-aux-count does not apply" in done.stdout + done.stderr


def test_a_draft_every_release_reads_right_is_left_alone(tmp_path: Path) -> None:
    """Qwen3 reads the top-level list itself: nothing to set (no needless edit), on every release that has it."""
    draft(tmp_path / "d", "eagle3-qwen3", {"eagle_aux_hidden_state_layer_ids": IDS4})
    done = run_cli("fix", "d", "--target-vocab-size", str(T), "--for", QWEN3, "--strategy", "set-aux-count",
                   "--dry-run", "--isolated", cwd=tmp_path)
    assert "set-aux-count does not apply (every release judged here already sizes fc for" in done.stdout, \
        done.stdout + done.stderr
