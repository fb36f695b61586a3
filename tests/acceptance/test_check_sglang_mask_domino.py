"""The real CLI `check` on tiny real safetensors checkpoints: DSpark's mask_token_id against a --target folder whose
text config pads its vocabulary (SGLang 0.5.18+ bounds it by padded_vocab_size), and a DFlash draft that ships a
Domino projector without declaring it (refused from SGLang 0.5.20, ignored before)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
from conftest import draft_tensors, make_checkpoint, run_cli

from dspark_ckpt.runtimes import messages as m

T, PADDED, H = 96, 128, 16


def inkling_target(root: Path) -> Path:
    root.mkdir(parents=True)
    (root / "config.json").write_text(json.dumps({"model_type": "inkling", "architectures": ["InklingForCausalLM"],
                                                  "text_config": {"vocab_size": T, "padded_vocab_size": PADDED}}))
    return root


def domino_dflash(root: Path, *, seed: int, projector: bool) -> Path:
    """A DFlash draft shipping a Domino GRU (G = 8), and with `projector` its embed_proj (E = 8) too."""
    rng = np.random.default_rng(seed)
    tensors = draft_tensors(vocab=T, draft_vocab=T, target_vocab=T, markov=False)
    shapes = {"prefix_gru.weight_ih_l0": (24, H), "prefix_gru.weight_hh_l0": (24, 8)}
    if projector:
        shapes |= {"embed_proj.0.weight": (8, H + 8), "embed_proj.2.weight": (T, 8)}
    tensors.update({name: rng.standard_normal(shape, dtype=np.float32) for name, shape in shapes.items()})
    return make_checkpoint(root, family="dflash", vocab=T, draft_vocab=T, tensors=tensors)


def by_version(stdout: str) -> tuple[dict[str, dict[str, object]], dict[str, dict[str, object]]]:
    (ckpt,) = json.loads(stdout)["checkpoints"]
    return {e["version"]: e for e in ckpt["compatibility"]}, {f["code"]: f for f in ckpt["findings"]}


def test_cli_check_a_mask_in_the_targets_padded_rows(tmp_path: Path) -> None:
    target = inkling_target(tmp_path / "target")
    draft = make_checkpoint(tmp_path / "draft", vocab=PADDED, draft_vocab=PADDED, target_vocab=T,
                            config_extra={"markov_head_type": "vanilla", "mask_token_id": 100})
    result = run_cli("check", str(draft), "--target", str(target), "--runtime", "sglang==0.5.17",
                     "--runtime", "sglang==0.5.18", "--format", "json")
    assert result.returncode == 1, result.stderr
    versions, findings = by_version(result.stdout)
    old, new = versions["0.5.17"], versions["0.5.18"]
    assert (old["loads"], old["error_code"]) == (False, "DSP343")
    assert old["error"] == "DSpark mask_token_id=100 is outside the target vocab size 96."
    assert new["loads"] and new["error_code"] is None and "DSP343" not in new["silent_codes"]
    assert "sglang==0.5.17" in str(findings["DSP343"]["message"])

    # the same draft with --target-vocab-size: no padded size is known, so no release is said to accept it
    plain = run_cli("check", str(draft), "--target-vocab-size", str(T), "--runtime", "sglang==0.5.18",
                    "--format", "json")
    versions, _ = by_version(plain.stdout)
    assert versions["0.5.18"]["error"] == m.E_DSPARK_MASK_OUTSIDE.format(m=100, t=T)


def test_cli_check_an_undeclared_domino_projector(tmp_path: Path) -> None:
    draft = domino_dflash(tmp_path / "draft", seed=0, projector=True)
    args = ("--target-vocab-size", str(T), "--runtime", "sglang==0.5.19", "--runtime", "sglang==0.5.23",
            "--format", "json")
    result = run_cli("check", str(draft), *args)
    assert result.returncode == 1, result.stderr
    versions, findings = by_version(result.stdout)
    assert versions["0.5.19"]["loads"] and "DSP354" in versions["0.5.19"]["silent_codes"]
    assert (versions["0.5.23"]["error_code"], versions["0.5.23"]["error"]) == (
        "DSP352", "DFLASH checkpoint contains Domino projector weights but projector_type=None.")
    assert findings["DSP352"]["severity"] == "error" and findings["DSP354"]["severity"] == "info"

    # declared, complete and V == T: it loads on 0.5.23 too
    config = json.loads((draft / "config.json").read_text())
    config["dflash_config"] = {"projector_type": "domino", "shift_label": True, "pure_draft_prefix_len": 1,
                               "gru_hidden_dim": 8, "emb_dim": 8}
    (draft / "config.json").write_text(json.dumps(config))
    declared = run_cli("check", str(draft), *args)
    versions, findings = by_version(declared.stdout)
    assert versions["0.5.23"]["loads"] and "DSP352" not in findings, declared.stdout


def test_cli_verify_agrees_on_the_domino_projector_and_the_padded_mask(tmp_path: Path) -> None:
    """verify loads the tensors with torch and runs check's own start-up, Domino and worker checks: no DSP605."""
    rng = np.random.default_rng(1)
    tensors = draft_tensors(vocab=T, draft_vocab=T, target_vocab=T, markov=False)
    tensors["model.embed_proj.2.weight"] = rng.standard_normal((T, 8), dtype=np.float32)
    domino = make_checkpoint(tmp_path / "domino", family="dflash", vocab=T, draft_vocab=T, tensors=tensors)
    result = run_cli("verify", str(domino), "--target-vocab-size", str(T), "--runtime", "sglang==0.5.19",
                     "--runtime", "sglang==0.5.20", "--device", "cpu", "--format", "json")
    assert result.returncode == 1, result.stderr
    codes = [f["code"] for c in json.loads(result.stdout)["checkpoints"] for f in c["findings"]]
    assert "DSP352" in codes and "DSP354" in codes and "DSP605" not in codes

    target = inkling_target(tmp_path / "target")
    draft = make_checkpoint(tmp_path / "dspark", vocab=PADDED, draft_vocab=PADDED, target_vocab=T,
                            config_extra={"markov_head_type": "vanilla", "mask_token_id": 100})
    result = run_cli("verify", str(draft), "--target", str(target), "--runtime", "sglang==0.5.17",
                     "--runtime", "sglang==0.5.18", "--device", "cpu", "--format", "json")
    codes = [f["code"] for c in json.loads(result.stdout)["checkpoints"] for f in c["findings"]]
    assert "DSP343" in codes and "DSP605" not in codes, result.stdout


def test_vllm_refuses_the_domino_projector_by_name_and_verify_agrees(tmp_path: Path) -> None:
    """No vLLM release has a Domino module: a DFlash draft shipping prefix_gru.*/embed_proj.* reaches the backbone's
    AutoWeightsLoader like a stray head (DSP350), declared or not; check and verify say the same."""
    draft = domino_dflash(tmp_path / "draft", seed=2, projector=False)
    args = ("--target-vocab-size", str(T), "--runtime", "vllm==0.27.0", "--runtime", "vllm==0.33.0",
            "--format", "json")
    result = run_cli("check", str(draft), *args)
    assert result.returncode == 1, result.stderr
    versions, findings = by_version(result.stdout)
    for version in ("0.27.0", "0.33.0"):
        assert versions[version]["error_code"] == "DSP350", versions[version]
        assert str(versions[version]["error"]).startswith("There is no module or parameter named 'prefix_gru' in ")
    checked = run_cli("verify", str(draft), *args, "--device", "cpu")
    codes = [f["code"] for c in json.loads(checked.stdout)["checkpoints"] for f in c["findings"]]
    assert "DSP350" in codes and "DSP605" not in codes, checked.stdout
