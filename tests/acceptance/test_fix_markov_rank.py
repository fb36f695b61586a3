"""fix's set-markov-rank (issue 21 item 5): a Qwen3 DSpark draft whose config.json has no markov_rank fails before
any weight loads on every vLLM release that registers it (DSP333: its __init__ reads `config.markov_rank` as a
plain attribute). The
rank is the Markov head's width (markov_w1 [V, r], markov_w2 [D, r]); the hint's command writes it and nothing
else. Heads of two widths are refused; a rank nested in dflash_config is hoist-dspark-settings' (DSP215). Real
checkpoints on disk, the real CLI.
"""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path
from typing import Any

import numpy as np
from conftest import fix_refused, make_checkpoint, run_cli, write_safetensors
from listed import vllm_minors
from safetensors.numpy import load_file

T, RANK = 96, 4
# the releases that register Qwen3DSparkModel (registry.py @ v0.25.0 L597 first); __init__ reads the rank from its
# first release on (qwen3_dspark.py L90 @ v0.25.0)
VLLM = "vllm>=0.25.0"
COMMAND = re.compile(r"`(dspark-ckpt fix [^`]+)`")


def draft(root: Path, **config: Any) -> Path:
    make_checkpoint(root, rank=RANK)
    raw = json.loads((root / "config.json").read_text())
    del raw["markov_rank"]
    (root / "config.json").write_text(json.dumps({**raw, **config}, indent=2))
    return root


def files(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir())}


def check(cwd: Path, name: str) -> dict[str, Any]:
    result = run_cli("check", name, "--target-vocab-size", str(T), "--runtime", VLLM, "--format", "json",
                     "--isolated", cwd=cwd)
    assert result.returncode in (0, 1), result.stderr
    doc: dict[str, Any] = json.loads(result.stdout)["checkpoints"][0]
    return doc


def test_the_hint_command_writes_the_heads_width(tmp_path: Path) -> None:
    source = draft(tmp_path / "my draft")
    before = files(source)
    doc = check(tmp_path, "my draft")
    assert {c["error_code"] for c in doc["compatibility"]} == {"DSP333"}
    (said,) = [f["hint"] for f in doc["findings"] if f["code"] == "DSP333"]
    (line,) = COMMAND.findall(said)
    argv = shlex.split(line)
    assert argv[:3] == ["dspark-ckpt", "fix", "my draft"] and argv[argv.index("--strategy") + 1] == "set-markov-rank"
    fixed = run_cli(*argv[1:], "--isolated", cwd=tmp_path)
    assert fixed.returncode == 0, fixed.stdout + fixed.stderr
    after = files(tmp_path / "my draft-fixed")
    assert files(source) == before
    assert {n for n in after if after[n] != before.get(n)} == {"config.json"}
    old, new = json.loads(before["config.json"]), json.loads(after["config.json"])
    assert new == {**old, "markov_rank": RANK}
    doc = check(tmp_path, "my draft-fixed")
    assert [(c["version"], c["loads"], c["error_code"]) for c in doc["compatibility"]] == \
        [(v, True, None) for v in vllm_minors("0.25.0")]
    assert "DSP333" not in {f["code"] for f in doc["findings"]}


def test_heads_of_two_widths_are_refused(tmp_path: Path) -> None:
    root = draft(tmp_path / "d")
    tensors = load_file(str(root / "model.safetensors"))
    tensors["markov_head.markov_w2.weight"] = np.zeros((T, RANK + 1), dtype=np.float32)
    write_safetensors(root / "model.safetensors", tensors)
    out = fix_refused(tmp_path, "d", "--target-vocab-size", str(T), "--runtime", "vllm", "--strategy",
                      "set-markov-rank")
    assert "set-markov-rank does not apply" in out and "do not give one width" in out, out


def test_a_nested_rank_is_hoisted_not_guessed(tmp_path: Path) -> None:
    draft(tmp_path / "d", dflash_config={"markov_rank": RANK})
    done = run_cli("fix", "d", "--target-vocab-size", str(T), "--runtime", VLLM, "--dry-run", "--isolated",
                   cwd=tmp_path)
    assert "strategy hoist-dspark-settings" in done.stdout and "set-markov-rank" not in done.stdout, \
        done.stdout + done.stderr
