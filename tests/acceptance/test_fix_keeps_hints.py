"""`--for all` is best effort (DSP505 names what no repair can make load, and why); a runtime named explicitly that no
repair satisfies refuses (DSP502); every command a hint suggests runs as pasted: path, T and --for included."""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path
from typing import Any

from conftest import make_checkpoint, run_cli
from listed import vllm_before

PRUNED = dict(vocab=128, draft_vocab=32, target_vocab=128, t2d=True)  # d2t missing, rebuildable from t2d
PADDED = dict(vocab=100, draft_vocab=100, target_vocab=96)
COMMAND = re.compile(r"`(dspark-ckpt (?:fix|check) [^`]+)`")
# Why SGLang cannot load it: the known case in words, else the code each attempt fails with (per release range).
REASON = re.compile(r"SGLang's Qwen3 DSpark|fails with DSP\d{3}")
# The vLLM releases that register Qwen3DSparkModel (registry.py @ v0.25.0 L597 first); no repair loads it before.
VLLM = "vllm>=0.25.0"


def flat(text: str) -> str:
    return " ".join(text.split())


def doc_of(*args: str) -> dict[str, Any]:
    done = run_cli(*args, "--format", "json")
    return json.loads(done.stdout)["checkpoints"][0]


def commands(text: str) -> list[list[str]]:
    found = [shlex.split(c) for c in COMMAND.findall(flat(text))]
    assert found, f"no runnable command in {text!r}"
    return found


def run_pasted(argv: list[str], cwd: Path | None = None) -> Any:
    assert argv[0] == "dspark-ckpt"
    return run_cli(*argv[1:], cwd=cwd)


def test_for_all_repairs_for_vllm_and_names_sglang_and_why(tmp_path: Path) -> None:
    folder = make_checkpoint(tmp_path / "d", **PRUNED)
    done = run_cli("fix", str(folder), "--target-vocab-size", "128", "--out", str(tmp_path / "o"), "--for", "all")
    text = flat(done.stdout)
    # SGLang 0.5.16+ stays broken and `--for all` gates on it (issue 41): exit 1, said on the line after the name
    assert done.returncode == 1, done.stdout + done.stderr
    assert done.stdout.splitlines()[1].startswith("FAILS sglang 0.5.16-0.5.23 stays broken")
    assert "strategy rebuild-d2t" in text and "check passes" in text and "warning DSP505" in text
    older = vllm_before("0.25.0")  # older than Qwen3DSparkModel (registry.py @ v0.25.0 L597): a warning of its own
    assert (f"not repaired for vllm {older[0]}-{older[-1]}, sglang 0.4.2-0.5.15, older than the draft's architecture "
            "Qwen3DSparkModel"
            in text), "names the older releases"
    assert "not repaired for sglang 0.5.16-0.5.23, which no repair can make load" in text, "names what"
    assert REASON.search(text.split("warning DSP505")[1]), "names why"
    [check] = commands(text.split("warning DSP505")[1])
    assert check[:3] == ["dspark-ckpt", "check", str(folder)] and "--runtime" in check
    shown = run_pasted(check)
    assert shown.returncode == 1 and "sglang" in shown.stdout, "the check it suggests shows the SGLang failure"
    for_vllm = run_cli("check", str(tmp_path / "o"), "--target-vocab-size", "128", "--runtime", VLLM)
    assert for_vllm.returncode == 0, for_vllm.stdout
    assert "DSP505" in {w["code"] for w in doc_of("fix", str(folder), "--target-vocab-size", "128",
                                                    "--dry-run")["warnings"]}


def test_sglang_named_explicitly_refuses_with_a_runnable_alternative(tmp_path: Path) -> None:
    folder = make_checkpoint(tmp_path / "d", **PRUNED)
    for named in (["--for", "sglang"], ["--for", VLLM, "--for", "sglang"]):
        done = run_cli("fix", str(folder), "--target-vocab-size", "128", *named)
        text = flat(done.stdout)
        assert done.returncode == 1 and "refused DSP502" in text and "no repair makes this draft load on sglang" in text
        assert REASON.search(text.split("no repair makes this draft load on sglang")[1]), "names why"
        assert "CODE" not in text and not (tmp_path / "d-fixed").exists()
    [alternative] = commands(text.split("hint:")[1])
    assert alternative == ["dspark-ckpt", "fix", str(folder), "--target-vocab-size", "128", "--for", VLLM]
    pasted = run_pasted(alternative)
    assert pasted.returncode == 0 and "check passes" in pasted.stdout, pasted.stdout + pasted.stderr


def test_a_runtime_conflict_refusal_suggests_runnable_fixes(tmp_path: Path) -> None:
    """mask_token_id >= T keeps the input side whole: the trim vLLM 0.29 needs cannot serve SGLang (which sizes
    lm_head by V) as well. Whatever the refusal's reason, each command in its hint runs as pasted."""
    folder = make_checkpoint(tmp_path / "d", **PADDED, config_extra={"mask_token_id": 99})
    refusal = doc_of("fix", str(folder), "--target-vocab-size", "96", "--for", "vllm==0.29.0", "--for", "sglang",
                     "--dry-run")["refusal"]
    assert refusal["code"] == "DSP502" and "CODE" not in refusal["hint"]
    found = commands(refusal["hint"])
    assert any(c[c.index("--for") + 1] == "vllm==0.29.0" for c in found)
    for argv in found:
        assert argv[2] == str(folder) and argv[3:5] == ["--target-vocab-size", "96"] and "--for" in argv
        pasted = run_pasted(argv)
        assert pasted.returncode == 0 and "check passes" in pasted.stdout, pasted.stdout + pasted.stderr


def test_forced_strategy_refusal_suggests_the_runtimes_it_loads_on(tmp_path: Path) -> None:
    folder = make_checkpoint(tmp_path / "d", **PADDED)
    refusal = doc_of("fix", str(folder), "--target-vocab-size", "96", "--strategy", "identity-d2t",
                     "--for", "vllm==0.29.0", "--for", "vllm==0.33.0", "--dry-run")["refusal"]
    assert refusal["code"] == "DSP503"
    narrower, unforced = commands(refusal["hint"])
    assert narrower[2:] == [str(folder), "--target-vocab-size", "96", "--for", "vllm==0.29.0", "--strategy",
                            "identity-d2t"]
    assert unforced[2:] == [str(folder), "--target-vocab-size", "96", "--for", "vllm==0.29.0", "--for",
                            "vllm==0.33.0"]
    for argv in (narrower, unforced):
        pasted = run_cli(*argv[1:], "--dry-run")
        assert pasted.returncode == 1 and "refused" not in pasted.stdout, pasted.stdout + pasted.stderr


def test_safe_only_skip_hint_is_runnable(tmp_path: Path) -> None:
    folder = make_checkpoint(tmp_path / "d", **PADDED)
    done = run_cli("fix", str(folder), "--target-vocab-size", "96", "--for", VLLM, "--safe-only")
    assert done.returncode == 1 and "skipped (--safe-only)" in flat(done.stdout)
    [argv] = commands(done.stdout.split("hint:")[1])
    assert argv[:5] == ["dspark-ckpt", "fix", str(folder), "--target-vocab-size", "96"] and "--for" in argv
    pasted = run_pasted(argv)
    assert pasted.returncode == 0 and (tmp_path / "d-fixed" / "config.json").is_file(), pasted.stdout


def test_unrepairable_refusals_name_real_codes(tmp_path: Path) -> None:
    folder = make_checkpoint(tmp_path / "d", vocab=96, draft_vocab=96, target_vocab=96, d2t="zeros", lm_head=False)
    refusal = doc_of("fix", str(folder), "--target-vocab-size", "128", "--for", "vllm", "--dry-run")["refusal"]
    assert refusal is not None and "CODE" not in (refusal["hint"] or "") + refusal["message"]
    for argv in COMMAND.findall(flat(refusal["message"] + " " + (refusal["hint"] or ""))):
        assert str(folder) in argv and "--target-vocab-size 128" in argv
