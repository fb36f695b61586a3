#!/usr/bin/env python3
"""Maintainer command: generate one SGLang release's data files by executing that release's own code.

    python tools/sglang_release_model.py 0.5.23                  # fetch the wheel, run it, write the data folder
    python tools/sglang_release_model.py 0.5.23 --check          # regenerate and compare with the committed folder
    python tools/sglang_release_model.py 0.5.23 --only LlamaForCausalLMEagle3 --out /tmp/x
    python tools/sglang_release_model.py 0.5.23 --only Gemma4AssistantForCausalLM --merge   # one recipe's classes

The SGLang twin of tools/release_model.py, writing the same schema (runtimes/release_model.py reads both):
`pip download --no-deps --no-cache-dir sglang==V`, extracted without its compiled libraries, with the transformers
release the wheel pins (its config classes' defaults are what the release builds from); the draft
architectures the release registers are the EntryClass names of its sglang/srt/models/*.py that
tools/registry_data.py calls drafts (the same reading as runtimes/registered_architectures.json); one worker
subprocess (tools/sglang_release_model_worker.py) imports the release on CPU and runs tools/release_model_worker.py's
observation on each class; tools/release_model.py's fitting turns the samples into the record, written to
`dspark_ckpt/runtimes/release_data/sglang-V/` (release.json, behaviour files, citations.json:
tools/release_layout.py). An architecture that cannot be built on CPU carries the error that stopped it, with its file:line; release.json says what was stubbed
and how the process group was set up. Exit 0 on success (or, with --check, when the folder is unchanged), 1 when
the committed folder differs, 2 when the release cannot be run.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "tools")]

import release_model as fitting
from probe_runtime import DEFAULT_CACHE, ensure_deps, install_pinned, log, pinned_folder, pip
from registry_data import sglang_entries

from dspark_ckpt.verify.sglang_worker import STUB, STUB_EVERYONE

DATA = fitting.DATA
WORKER = ROOT / "tools" / "sglang_release_model_worker.py"
# What SGLang's model modules import at import time beside vLLM's set (tools/probe_runtime.py IMPORT_DEPS) and
# torch (pip names, installed without their dependencies into their own folder). triton: SGLang imports it
# unconditionally (sglang/srt/utils/common.py) and decorates kernels at module level; on CPU nothing compiles them.
SGLANG_DEPS = ("orjson", "ipython", "traitlets", "dill", "sentencepiece", "uvicorn", "triton")
# The GPU-only packages answered by inert modules, and torchvision served to every importer: the worker's own
# (dspark_ckpt/verify/sglang_worker.py STUB, STUB_EVERYONE), which `verify --engine installed` sends too.
# The config a sample starts from, by a marker in the architecture's name (tools/release_model_worker.py recipe_for:
# every marker found applies, in this order); the model_type picks the transformers config class, as SGLang's
# get_config does for a draft. The MLA ranks and expert counts are tools/release_model.py's (small, and sampled:
# VARY), so that the shapes they decide are fitted as expressions of them.
MLA = {"model_type": "deepseek_v3", **fitting._MLA, **fitting._SMALL_MOE,
       fitting.VARY: fitting._MLA_SIZES + fitting._MOE_SIZES}
# DeepSeek-V3's config.json routing keys that transformers' class does not define and deepseek_v2.py reads
DEEPSEEK = {**MLA, "topk_method": "noaux_tc", "scoring_func": "sigmoid", "moe_layer_freq": 1}
# models/dflash.py (0.5.20+): DFlashDraftModel.__init__, which every DFlash, DFlash2, DSpark and LiLiCorr class
# runs, builds the Domino projector (prefix_gru, embed_proj) where parse_dflash_draft_config's projector_type is
# "domino" (speculative/dflash_utils.py L718-775 @ 0.5.23: each field from dflash_config, else the top level;
# shift_label a bool, pure_draft_prefix_len 1). At the top level, where the record's keys are read: each of its
# two sizes is a structural key whose shapes are fitted (`structural.<key>.shapes`: the key at three values against
# the samples); leaving projector_type out builds the plain backbone (absent_keys). Not sampled (VARY): more samples
# would move every other sample of every DFlash class, also in releases before 0.5.20, which read none of these keys
# (their records are unchanged: docs/upstream-notes.md section 38).
DOMINO = {"projector_type": "domino", "shift_label": True, "pure_draft_prefix_len": 1, "gru_hidden_dim": 5,
          "emb_dim": 7}
# models/dspark_minimax.py (0.5.23): MiniMaxDraftBackbone.__init__ reads block_size, dflash_config["target_layer_ids"]
# and use_gemma_norm plainly (L110-112), minimax_m3.py's decoder layer moe_layer_freq per layer (L1792: absent, every
# layer is MoE) and sparse_attention_config: the flat draft config configs/minimax_vl.py configure_minimax_m3_dspark
# (L64-110) makes of an M3.1 checkpoint (dense layers: moe_layer_freq 0, for up to 4 sampled layers; a
# dense_intermediate_size, sampled; no sparse attention). minimax_m2: the model_type transformers defines for M3's text
# config. Its load_weights keeps only names under language_model.model.dspark., model.dspark. or dspark. (L277-289)
# and raises on any parameter left unloaded (L316-322): the layouts are fed under the first, the prefix its own
# modules are built with (L121, L136); so are the unknown names, which it refuses there (L300-301). REQUIRES: the
# keys it reads plainly are recorded as required (absent_keys).
DSPARK_MINIMAX = {"model_type": "minimax_m2", "block_size": 4, "use_gemma_norm": False,
                  "dflash_config": {"target_layer_ids": [0]}, "sparse_attention_config": None,
                  "moe_layer_freq": [0, 0, 0, 0], "dense_intermediate_size": 24,
                  fitting.VARY: ["dense_intermediate_size"],
                  fitting.RENAMES: {"dspark": [["^", "language_model.model.dspark."]]}, fitting.REQUIRES: True}
# models/gemma4_mtp.py (0.5.12+): Gemma 4's assistant reads backbone_hidden_size plainly (L80 @ 0.5.23, L78 @ 0.5.12;
# sampled: pre_projection and post_projection are sized by it) and builds Gemma4TextModel on its text config
# (_get_text_config L41-44: the config itself where it has no text_config); the assistant's own constraints
# (transformers' Gemma4AssistantConfig: no per-layer input, no MoE block, no double-wide MLP). global_head_dim tied to
# head_dim: under transformers 5.19 (0.5.23's pin) one apart makes head_dim a per-layer attribute, and
# gemma4_causal.py:569 reads config.head_dim (AmbiguousGlobalPerLayerAttributeError: the `untied:` sample records
# it, refused_apart). REQUIRES: backbone_hidden_size is recorded as required (absent_keys)
GEMMA4_ASSISTANT = {"model_type": "gemma4_text", "backbone_hidden_size": 16, "hidden_size_per_layer_input": 0,
                    "vocab_size_per_layer_input": 0, "enable_moe_block": False, "use_double_wide_mlp": False,
                    "global_head_dim": 8, fitting.VARY: ["global_head_dim", "backbone_hidden_size"],
                    fitting.TIED: {"global_head_dim": "head_dim"}, fitting.REQUIRES: True}
# configs/dots3.py (0.5.19+): Dots3Config (model_type dots3_note, which SGLang registers), whose draft form
# configure_draft_model (L187-199 @ 0.5.23) makes of the target's: one shared MTP layer, `sliding_attention`, the
# swa_* MLA geometry; at tiny sizes here (the DeepSeek MLA ranks and small experts), the layer_types one per layer as
# Dots3Config's validator requires. The class then stops at models/dots3_common/modeling.py `_require_cuda` (L147-149 @ 0.5.23:
# "Dots3 model only supports CUDA backend."), which is the release on CPU: the record keeps that raise.
DOTS3 = {**MLA, **fitting._SMALL_MOE, "model_type": "dots3_note", fitting.VARY: fitting._MLA_SIZES + fitting._MOE_SIZES,
         "sliding_window_size": 128, "swa_q_lora_rank": 12, "swa_kv_lora_rank": 8, "swa_qk_nope_head_dim": 4,
         "swa_qk_rope_head_dim": 4, "swa_v_head_dim": 4, "swa_num_attention_heads": 2, "swa_num_key_value_heads": 2,
         fitting.PER_LAYER: {"layer_types": "sliding_attention"}}
RECIPES: dict[str, dict[str, Any]] = {
    "Qwen2": {"model_type": "qwen2"},
    "Qwen3": {"model_type": "qwen3"},
    "Qwen3Moe": {"model_type": "qwen3_moe", **fitting._SMALL_MOE},
    "Qwen3Next": {"model_type": "qwen3_next", **fitting._SMALL_MOE},
    # speculative/dspark_components/dspark_config.py: a Markov head needs its type; the mask id every DSpark
    # config carries (tools/probe_sglang.py DSPARK_CONFIGS "ready"); the other Markov heads build_markov_head
    # accepts (models/dspark.py L392-405 @ 0.5.23), each probed for what it adds
    "DSpark": {"model_type": "qwen3", "markov_head_type": "vanilla", "mask_token_id": 0, **DOMINO,
               fitting.CHOICES: {"markov_head_type": ["gated", "rnn"]}},
    "DSparkMiniMax": DSPARK_MINIMAX,  # after "DSpark": its model_type wins
    "DFlash": {"model_type": "qwen3", **DOMINO},
    # models/dflash.py: the selector draft's dflash_config entries (as tools/release_model.py's DFlash2 recipe)
    "DFlash2": {"dflash_config": {"conv_kernel_size": 3, "conv_group_size": 2, "selector_rank": 4,
                                  "selector_top_k": 2, "target_layer_ids": [0]}},
    "Mistral": {"model_type": "mistral"},
    "Deepseek": DEEPSEEK,  # EAGLE-3 for DeepSeek/Kimi (kimi_k25_eagle3.py), DeepSeek's NextN
    "MistralLarge3": DEEPSEEK,
    "Glm4Moe": {"model_type": "glm4_moe", **fitting._SMALL_MOE},
    "Glm4MoeLite": {"model_type": "glm4_moe_lite", **fitting._MLA},
    "LongcatFlash": fitting.RECIPES["LongCat"],  # LongCat-Flash's config.json MLA LoRA scaling, as vLLM's recipe
    "Ernie": {"model_type": "ernie4_5_moe", **fitting._SMALL_MOE},
    "HYV3": {**fitting.RECIPES["HYV3"], **fitting._SMALL_MOE},  # HY-V3's config.json routing keys
    # Not K-EXAONE's is_moe_layer (exaone_moe.py reads it per layer): with it the head builds, but its checkpoint names
    # fc and pre_fc_norm_* under `mtp.` (exaone_moe.py load_weights, is_mtp), which no layout the probe feeds carries,
    # so the record would call them unwritten on a real checkpoint; left not_built until the probe feeds that form
    "ExaoneMoE": {"model_type": "exaone_moe", **fitting._SMALL_MOE},
    "Step3p5": {"model_type": "step3p5"},
    # heads on DeepSeek's MLA layer (deepseek_nextn.py, deepseek_v2.py, hunyuan_v4.py read its ranks)
    # GigaChat 3.5's own model_type (configs/gigachat35.py GigaChat35Config, which SGLang registers with AutoConfig: its
    # is_linear_attention_layer, which gigachat35.py calls), on DeepSeek's MLA layer
    "GigaChat35": {**DEEPSEEK, "model_type": "gigachat3_5"},
    "Glm5Next": DEEPSEEK,
    "GlmMoeDsa": DEEPSEEK,
    "HYV4": DEEPSEEK,
    # the MTP configs tools/release_model.py's recipes give vLLM's heads of the same families
    # Ling's config.json norm_topk_prob true (bailing_moe.py's MoE block reads it plainly, for the target too)
    "Bailing": {**fitting.RECIPES["Bailing"], "norm_topk_prob": True},
    # MiMo-V2-Flash's config.json sliding_window_size 128 (mimo_v2.py reads it plainly for the target's SWA layers,
    # mimo_v2_nextn.py for the MTP layer)
    "MiMoV2": {**fitting.RECIPES["MiMoV2"], "sliding_window_size": 128},
    # configs/iquest_q1.py IQuestQ1MTPConfig (the MTP head's model_type); its rotary_dim (32 of head_dim 128) must be
    # at most head_dim: 4 at the probe's sizes; its experts small
    "IQuestQ1": {"model_type": "iquest_q1_mtp", "rotary_dim": 4, **fitting._SMALL_MOE},
    # the lilicorr_* geometry lilicorr_utils.py requires (no defaults); a DFlashDraftModel, so the projector too
    "LiLiCorr": {**fitting.RECIPES["LiLiCorr"], **DOMINO},
    # an MTP/NextN head's layer count (models/*_nextn.py read it as a plain attribute)
    "Gemma4Assistant": GEMMA4_ASSISTANT,
    "Gemma4UnifiedAssistant": GEMMA4_ASSISTANT,
    "Dots3Note": DOTS3,
    "NextN": {"num_nextn_predict_layers": 1},
    "MTP": {"num_nextn_predict_layers": 1},
}


def fetch_sources(version: str, cache: Path) -> Path:
    """`pip download --no-deps --no-cache-dir sglang==V`, extracted without its compiled libraries (SGLang looks
    its JIT kernel sources up at import time: sglang/kernels/jit must exist)."""
    tree = cache / f"sglang-{version}"
    if (tree / "sglang" / "__init__.py").exists():
        return tree
    with tempfile.TemporaryDirectory(prefix=f"sglang-{version}-", dir=cache) as scratch:
        log(f"sglang_release_model: pip download --no-deps sglang=={version}")
        pip("download", "--no-deps", "--no-cache-dir", "--only-binary", ":all:", "--dest", scratch,
            f"sglang=={version}")
        wheel = next(Path(scratch).glob(f"sglang-{version}-*.whl"))
        staging = Path(scratch) / "tree"
        with zipfile.ZipFile(wheel) as zf:
            for name in zf.namelist():
                if not name.endswith(".so") and ".." not in name:
                    zf.extract(name, staging)
        staging.rename(tree)
    return tree


def ensure_sglang_deps(cache: Path) -> Path:
    """SGLang's few more import-time dependencies (SGLANG_DEPS, each alone), at the versions tools/probe-deps.txt
    pins."""
    return install_pinned(pinned_folder(cache, "sglang-deps"), ("--no-deps", *SGLANG_DEPS))


def pinned_transformers(tree: Path, cache: Path) -> Path | None:
    """The transformers release the wheel pins (`Requires-Dist: transformers==X`), in its own folder: its config
    classes' defaults are what the release builds from (and an older SGLang registers config names a newer
    transformers already holds). None when the wheel pins none."""
    metadata = next(tree.glob("sglang-*.dist-info/METADATA"), None)
    # the pin's marker is dropped: 0.5.1 and 0.5.2 pin it under `extra == "runtime-common"` (METADATA L254), the
    # extra their server's `srt` installs
    pins = [line.split("==", 1)[1].split(";", 1)[0].strip()
            for line in (metadata.read_text().splitlines() if metadata else ())
            if line.replace(" ", "").startswith("Requires-Dist:transformers==")]
    if not pins:
        return None
    folder = cache / f"transformers-{pins[0]}"
    if not (folder / "transformers").is_dir():
        log(f"sglang_release_model: pip install --target {folder} transformers=={pins[0]}")
        pip("install", "--quiet", "--target", str(folder), f"transformers=={pins[0]}")
        for stray in ("numpy", "numpy.libs", "torch"):  # never shadow the interpreter's own
            shutil.rmtree(folder / stray, ignore_errors=True)
    return folder


# What a 0.4.x release imports at module level that SGLANG_DEPS' newer releases no longer hold, each with the test
# on the release's own files (and the transformers it runs under) that asks for it; installed alone, without its
# dependencies, into its own folder ahead of SGLANG_DEPS. None of it runs: it is what the release's import statements
# name. triton 3.3.1 is the triton torch 2.7.1 pins (the newest torch a 0.4.x wheel pins, `Requires-Dist:
# torch==2.7.1; extra == "srt"` @ 0.4.7-0.4.10); compressed-tensors 0.9.2 predates its import of
# transformers.masking_utils (compressed_tensors/modeling/attention.py @ 0.20.1), which transformers added in 4.53.
OLDER_DEPS: tuple[tuple[str, str], ...] = (
    ("triton==3.3.1", ("sglang/srt/utils.py imports default_cache_dir from triton.runtime.cache (0.4.0-0.4.9.post3, "
                       "sglang/srt/utils.py:58 @ 0.4.2), which the triton of SGLANG_DEPS no longer has")),
    ("compressed-tensors==0.9.2", ("the transformers the wheel pins has no masking_utils, which the probe's "
                                   "compressed-tensors imports (layers/quantization/compressed_tensors/"
                                   "compressed_tensors.py imports compressed_tensors at module level)")),
)


def older_deps(tree: Path, transformers: Path | None) -> list[str]:
    """The OLDER_DEPS requirements this release's files ask for (none from 0.4.10 on: its data and every 0.5.x
    release's are generated with SGLANG_DEPS alone)."""
    utils = tree / "sglang" / "srt" / "utils.py"
    wanted = []
    if utils.is_file() and "default_cache_dir" in utils.read_text(encoding="utf-8"):
        wanted.append(OLDER_DEPS[0][0])
    if transformers is not None and not (transformers / "transformers" / "masking_utils.py").is_file():
        wanted.append(OLDER_DEPS[1][0])
    return wanted


def older_folder(requirement: str, cache: Path) -> Path:
    """One OLDER_DEPS requirement, alone (`--no-deps`), in its own folder."""
    folder = cache / requirement.replace("==", "-")
    if not folder.is_dir():
        log(f"sglang_release_model: pip install --no-deps --target {folder} {requirement}")
        with tempfile.TemporaryDirectory(prefix=f"{folder.name}.", dir=cache) as scratch:
            staging = Path(scratch) / "tree"
            pip("install", "--quiet", "--no-deps", "--target", str(staging), requirement)
            staging.rename(folder)
    return folder


def registry(tree: Path) -> dict[str, list[str]]:
    """architecture -> [module under sglang/srt/models, class name], for every draft an EntryClass lists."""
    out = {}
    for arch, (kind, where) in sglang_entries(tree).items():
        if kind == "draft":
            out[arch] = [where.split(":", 1)[0].rsplit("/", 1)[1].removesuffix(".py"), arch]
    return dict(sorted(out.items()))


DEFAULT_RECIPE = {"model_type": "llama", "rms_norm_eps": 1e-6}


def release_paths(version: str) -> tuple[list[Path], dict[str, list[str]]]:
    """What the worker imports SGLang `version` from (its tree, the transformers it pins, the deps), and its drafts."""
    DEFAULT_CACHE.mkdir(parents=True, exist_ok=True)
    tree = fetch_sources(version, DEFAULT_CACHE)
    pinned = pinned_transformers(tree, DEFAULT_CACHE)
    older = [older_folder(requirement, DEFAULT_CACHE) for requirement in older_deps(tree, pinned)]
    return [tree, *([pinned] if pinned else []), *older, ensure_sglang_deps(DEFAULT_CACHE),
            ensure_deps(DEFAULT_CACHE)], registry(tree)


def run_worker(paths: list[Path], reg: dict[str, list[str]], architectures: list[str] | None,
               timeout: float, cases: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    """The worker's observations of each architecture; with `cases`, its load mode instead: each whole checkpoint
    (config and tensor shapes) through the release's own __init__ and load_weights. Either way the loaders take
    their CUDA branch, as on a deploy's GPU (verify/sglang_worker.py gpu_loaders)."""
    with tempfile.TemporaryDirectory(prefix="dspark-sglang-release-model-") as tmp:
        request, out = Path(tmp) / "request.json", Path(tmp) / "out.json"
        request.write_text(json.dumps({"architectures": architectures or [], "registry": reg, "stub": list(STUB),
                                       "stub_everyone": STUB_EVERYONE,
                                       "recipes": {}, "recipe_rules": RECIPES, "default_recipe": DEFAULT_RECIPE,
                                       **({"mode": "load", "loaders": "gpu", "cases": cases}
                                          if cases is not None else {})}))
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(str(p) for p in paths), "SGLANG_USE_CPU_ENGINE": "1"}
        try:
            subprocess.run([sys.executable, str(WORKER), str(request), str(out)], env=env, timeout=timeout,
                           stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, check=False)
        except subprocess.TimeoutExpired:
            pass
        if not out.exists():
            return {"ok": False, "reason": "the worker wrote nothing"}
        doc: dict[str, Any] = json.loads(out.read_text())
        return doc


def release_record(version: str, worker: dict[str, Any]) -> dict[str, Any]:
    vllm_shaped = fitting.release_record(version, worker)
    for name, arch in worker["architectures"].items():  # the class's own word on where its lm_head comes from
        record = vllm_shaped["architectures"][name]
        if "head_from_target" in arch and "not_built" not in record:
            record["lm_head_from_target"] = arch["head_from_target"]
        if worker.get("cuda_loaders") and "not_built" not in record:  # observed through the loaders' CUDA branch
            record["loaders"] = "cuda"
    return {"schema": fitting.SCHEMA, "runtime": "sglang", "release": version,
            "generated_by": f"python tools/sglang_release_model.py {version}",
            "observed_version": worker.get("version"), "transformers": worker.get("transformers"),
            "stubbed": worker.get("stubbed", []),
            **({"older_deps": worker["older_deps"]} if worker.get("older_deps") else {}),
            "set_up": worker.get("set_up"), "registry": vllm_shaped["registry"],
            "architectures": vllm_shaped["architectures"]}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("version")
    parser.add_argument("--only", action="append", help="only these architectures (default: all registered drafts)")
    parser.add_argument("--out", type=Path, help="write this folder instead of the package's data folder")
    parser.add_argument("--check", action="store_true", help="compare with the committed folder; write nothing")
    parser.add_argument("--raw", type=Path, help="also keep the worker's observations here")
    parser.add_argument("--merge", action="store_true",
                        help="with --only: put these classes into the committed release (the others as they are)")
    parser.add_argument("--timeout", type=float, default=3000.0)
    args = parser.parse_args(argv)
    if fitting.partial_refused("sglang_release_model", args.only, args.out, args.merge):
        return 2
    paths, reg = release_paths(args.version)
    worker = run_worker(paths, reg, args.only, args.timeout)
    if not worker.get("ok"):
        print(f"sglang_release_model: SGLang {args.version} could not be run: {worker.get('reason')}\n"
              f"{worker.get('traceback', '')[-3000:]}", file=sys.stderr)
        return 2
    why = dict(OLDER_DEPS)  # what was installed beside SGLANG_DEPS, and the release's file that asked for it
    worker["older_deps"] = [f"{req} ({why[req]})" for req in why
                            if any(p.name == req.replace("==", "-") for p in paths)]
    if args.raw:
        args.raw.write_text(json.dumps(worker, indent=1))
    release = fitting.stored(release_record(args.version, worker))
    if args.merge and args.out is None:
        whole = fitting.merged_release("sglang", args.version, release)
        if whole is None:
            print(f"sglang_release_model: no committed sglang-{args.version} to merge into", file=sys.stderr)
            return 2
        release = whole
    folder = args.out or DATA / f"sglang-{args.version}"
    if args.check:
        return fitting.check_folder(folder, release,
                                    f"sglang_release_model: {folder} {{}} what SGLang {args.version} does")
    folder = fitting.write_release("sglang", args.version, release, args.out)
    built = sum("not_built" not in a for a in release_record(args.version, worker)["architectures"].values())
    print(f"sglang_release_model: wrote {folder} ({len(worker['architectures'])} architectures, {built} built)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
