"""fix's unnest-weights (DSP331): z-lab dflash 0.1.0's save_pretrained names DFlash2's candidate selector codebooks
`candidate_selector.{predecessor,successor}_codebook.weight` (nn.Embedding there); vLLM's DFlash2 (0.28+) builds them
as bare nn.Parameters and refuses the `.weight` names, SGLang 0.5.19+ skips them and leaves the codebooks at their
initial values (DSP363). The hint's command renames the two tensors, data unchanged, in a single file or across
shards (the index's weight_map too), and the result loads on vLLM 0.28+ with SGLang filling the codebooks. A draft
without such names, or with both spellings, is refused. Real checkpoints on disk, the real CLI.
"""

from __future__ import annotations

import json
import re
import shlex
import struct
import sys
from pathlib import Path
from typing import Any

import pytest
from conftest import fix_refused, make_checkpoint, run_cli
from listed import vllm_minors

from dspark_ckpt.formats.safetensors_writer import TensorSpec, encode_header

sys.path.insert(0, str(Path(__file__).parents[1] / "producers"))
from producers import materialise

T = 96
LAYOUT = "dflash-0.1.0-dflash2"
INDEX = "model.safetensors.index.json"
COMMAND = re.compile(r"`(dspark-ckpt fix [^`]+)`")
CODEBOOKS = tuple(f"candidate_selector.{c}_codebook" for c in ("predecessor", "successor"))
DFLASH2 = "vllm>=0.28.0"  # DFlash2DraftModel registers in 0.28.0 (registry.py 0.28 L628)
SGLANG = "sglang==0.5.23"

Raw = dict[str, tuple[str, tuple[int, ...], bytes]]


def raw_tensors(folder: Path) -> Raw:
    """Every tensor of every shard: name -> (dtype, shape, its data bytes), read from the file as written."""
    out: Raw = {}
    for path in sorted(folder.glob("*.safetensors")):
        blob = path.read_bytes()
        (n,) = struct.unpack("<Q", blob[:8])
        header = json.loads(blob[8:8 + n])
        header.pop("__metadata__", None)
        for name, entry in header.items():
            begin, end = entry["data_offsets"]
            out[name] = (entry["dtype"], tuple(entry["shape"]), blob[8 + n + begin:8 + n + end])
    return out


def sharded(root: Path) -> Path:
    """The z-lab layout split into two shards with an index, one codebook in each."""
    single = materialise(root.parent / f"{root.name}-single", LAYOUT)
    tensors = raw_tensors(single)
    root.mkdir(parents=True)
    (root / "config.json").write_bytes((single / "config.json").read_bytes())
    names = sorted(tensors)
    weight_map: dict[str, str] = {}
    for i, part in enumerate((names[0::2], names[1::2])):
        file = f"model-{i + 1:05d}-of-00002.safetensors"
        specs = [TensorSpec(n, tensors[n][0], tensors[n][1]) for n in part]
        (root / file).write_bytes(encode_header(specs, {"format": "pt"}) + b"".join(tensors[n][2] for n in part))
        weight_map.update({n: file for n in part})
    assert {weight_map[f"{c}.weight"] for c in CODEBOOKS} == {"model-00001-of-00002.safetensors",
                                                               "model-00002-of-00002.safetensors"}
    total = sum(len(t[2]) for t in tensors.values())
    (root / INDEX).write_text(json.dumps({"metadata": {"total_size": total}, "weight_map": weight_map}, indent=2))
    return root


BUILDS = {"single": lambda root: materialise(root, LAYOUT), "sharded": sharded}


def check(cwd: Path, name: str, *runtimes: str) -> dict[str, Any]:
    flags = [w for r in runtimes for w in ("--runtime", r)]
    result = run_cli("check", name, "--target-vocab-size", str(T), *flags, "--format", "json", "--isolated", cwd=cwd)
    assert result.returncode in (0, 1), result.stdout + result.stderr
    doc: dict[str, Any] = json.loads(result.stdout)["checkpoints"][0]
    return doc


def unfilled(doc: dict[str, Any]) -> list[str]:
    return [f["message"] for f in doc["findings"] if f["code"] == "DSP363"]


@pytest.mark.parametrize("build", sorted(BUILDS))
def test_the_hint_command_renames_the_codebooks_and_nothing_else(tmp_path: Path, build: str) -> None:
    source = BUILDS[build](tmp_path / "my draft")
    shipped = raw_tensors(source)
    texts = {p.name: p.read_bytes() for p in source.iterdir()}
    doc = check(tmp_path, "my draft", DFLASH2, SGLANG)
    fails = {f"{c['runtime']}=={c['version']}": c["error_code"] for c in doc["compatibility"] if not c["loads"]}
    assert fails == {f"vllm=={v}": "DSP331" for v in vllm_minors("0.28.0")}
    assert any(all(c in m for c in CODEBOOKS) for m in unfilled(doc)), unfilled(doc)  # SGLang skips `.weight`
    (said,) = [f["hint"] for f in doc["findings"] if f["code"] == "DSP331"]
    (line,) = COMMAND.findall(said)
    argv = shlex.split(line)
    assert argv[:3] == ["dspark-ckpt", "fix", "my draft"] and argv[argv.index("--strategy") + 1] == "unnest-weights"
    fixed = run_cli(*argv[1:], "--isolated", cwd=tmp_path)
    assert fixed.returncode == 0, fixed.stdout + fixed.stderr
    assert {p.name: p.read_bytes() for p in source.iterdir()} == texts  # the checkpoint itself is untouched
    out = tmp_path / "my draft-fixed"
    assert (out / "config.json").read_bytes() == texts["config.json"]
    renamed = raw_tensors(out)
    want = {n.removesuffix(".weight") if n.removesuffix(".weight") in CODEBOOKS else n: t for n, t in shipped.items()}
    assert renamed == want  # every tensor's dtype, shape and data bytes as shipped; two of them renamed
    if build == "sharded":
        weight_map = json.loads((out / INDEX).read_text())["weight_map"]
        old_map = json.loads(texts[INDEX])["weight_map"]
        assert list(weight_map) == [n.removesuffix(".weight") if n.removesuffix(".weight") in CODEBOOKS else n
                                    for n in old_map]  # renamed in place, the same shard each
        assert all(weight_map[c] == old_map[f"{c}.weight"] for c in CODEBOOKS)
        assert set(weight_map) == set(renamed)
    after = check(tmp_path, "my draft-fixed", DFLASH2, SGLANG)
    assert all(c["loads"] for c in after["compatibility"]), after["compatibility"]
    assert not {"DSP331"} & {f["code"] for f in after["findings"]}
    assert not any(c in m for c in CODEBOOKS for m in unfilled(after)), unfilled(after)


def test_in_place_on_shards_renames_in_the_index_too(tmp_path: Path) -> None:
    source = sharded(tmp_path / "d")
    shipped = raw_tensors(source)
    done = run_cli("fix", "d", "--target-vocab-size", str(T), "--for", DFLASH2, "--in-place", "--isolated",
                   cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    assert set(raw_tensors(source)) == {n.removesuffix(".weight") if n.removesuffix(".weight") in CODEBOOKS else n
                                        for n in shipped}
    assert set(json.loads((source / INDEX).read_text())["weight_map"]) == set(raw_tensors(source))
    assert all(c["loads"] for c in check(tmp_path, "d", DFLASH2)["compatibility"])


def test_dry_run_shows_the_plan_and_writes_nothing(tmp_path: Path) -> None:
    source = materialise(tmp_path / "d", LAYOUT)
    before = {p.name: p.read_bytes() for p in source.iterdir()}
    done = run_cli("fix", "d", "--target-vocab-size", str(T), "--dry-run", "--isolated", cwd=tmp_path)
    assert done.returncode == 1, done.stdout + done.stderr  # a plan that changes something
    assert "strategy unnest-weights" in done.stdout
    for c in CODEBOOKS:
        assert f"[DSP331] rename {c}.weight to {c}, data unchanged (model.safetensors)" in done.stdout, done.stdout
    dflash2 = vllm_minors("0.28.0")
    assert f"vllm {dflash2[0]}-{dflash2[-1]} fails (DSP331) -> loads" in " ".join(done.stdout.split())
    as_json = run_cli("fix", "d", "--target-vocab-size", str(T), "--for", SGLANG, "--dry-run", "--format", "json",
                      "--isolated", cwd=tmp_path)
    (plan,) = json.loads(as_json.stdout)["checkpoints"]
    assert plan["strategy"] == "unnest-weights" and plan["status"] == "planned"
    # for SGLang alone it loads already: the rename resolves the unfilled codebooks (DSP363)
    assert plan["actions"] == [{"action": "rename-tensor", "reason": "DSP363", "tensor": f"{c}.weight",
                                "file": "model.safetensors", "new_name": c} for c in CODEBOOKS]
    (row,) = plan["compatibility"]
    assert "DSP363" in row["before"]["silent_codes"] and row["after"] == {"loads": True, "error_code": None,
                                                                         "silent_codes": []}
    assert {p.name: p.read_bytes() for p in source.iterdir()} == before and not (tmp_path / "d-fixed").exists()


def test_forced_on_a_draft_without_nested_names_is_refused(tmp_path: Path) -> None:
    make_checkpoint(tmp_path / "d", d2t=True)  # an equal Qwen3 DSpark draft with a stray d2t: drop-d2t applies
    out = fix_refused(tmp_path, "d", "--target-vocab-size", str(T), "--for", "vllm>=0.30.0", "--strategy",
                      "unnest-weights")
    assert "DSP503" in out and "unnest-weights does not apply: it ships no `<name>.weight` tensor of a parameter " \
                               "the runtime builds bare" in out, out


def test_both_spellings_shipped_is_refused_as_ambiguous(tmp_path: Path) -> None:
    source = materialise(tmp_path / "d", LAYOUT)
    tensors = raw_tensors(source)
    tensors[CODEBOOKS[0]] = tensors[f"{CODEBOOKS[0]}.weight"]
    names = sorted(tensors)
    specs = [TensorSpec(n, tensors[n][0], tensors[n][1]) for n in names]
    (source / "model.safetensors").write_bytes(encode_header(specs) + b"".join(tensors[n][2] for n in names))
    out = fix_refused(tmp_path, "d", "--target-vocab-size", str(T), "--for", DFLASH2, "--strategy", "unnest-weights")
    assert f"unnest-weights does not apply: it ships both {CODEBOOKS[0]}.weight and {CODEBOOKS[0]}" in out, out
