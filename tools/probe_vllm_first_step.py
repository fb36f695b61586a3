#!/usr/bin/env python3
"""Maintainer command: run one vLLM release's own first draft step (EAGLE-3, DFlash, Qwen3 DSpark) on CPU over the
probe's fixture matrix and record what it raised, per cell, in release_data/vllm-X/first_step.json.

    python tools/probe_vllm_first_step.py 0.34.0            # write the file
    python tools/probe_vllm_first_step.py 0.34.0 --check    # regenerate and compare with the committed file
    python tools/probe_vllm_first_step.py 0.34.0 --agreement  # check against the release at sizes never recorded

Each checkpoint (tools/probe_runtime.py's `realistic` matrix, Markov heads only in DSpark drafts, over the nine
relations of runtimes/vllm_first_step.py RELATIONS; T = 96; --check: the relations the committed file holds) is built
and loaded by the release's own code (verify/engine_vllm.py), then tools/vllm_first_step_worker.py shares the
target's embedding and head as the release's loaders do and runs the step twice: hidden states of zeros (what a
CUDA-graph capture feeds: `capture`) and a head whose last row wins (`last`). Every family runs where
v1/worker/gpu/spec_decode/eagle/utils.py holds _should_share and maybe_share_target_embed (0.30+); the EAGLE-3
families where it holds load_eagle_model sharing inline (0.24-0.29: the function itself runs, its get_model
answered by the loaded draft), and DFlash and DSpark where dflash/utils.py load_dflash_model and dspark/utils.py
load_dspark_model share inline (0.26-0.29: run the same way, engine_vllm._load_inline); every family before is not
run (the sharing sits in the proposer's load_model, v1/spec_decode/). Exit 0 on success (or, with
--check, when the file is unchanged), 1 when it differs, 2 when the release cannot be run.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "tools")]

from probe_runtime import DEFAULT_CACHE, FAMILY_CONFIG, SHIPS, T, ensure_deps, fetch_sources

from dspark_ckpt.runtimes.release_store import folder as data_folder
from dspark_ckpt.runtimes.release_store import lined_text
from dspark_ckpt.runtimes.vllm_first_step import CELLS, FILE, RELATIONS, SCHEMA_1

FAMILIES = ("eagle3-llama", "eagle3-qwen3", "dflash", "qwen3-dspark")
assert T == 96  # runtimes/vllm_first_step.py RELATIONS are sized for it


def families_here(tree: Path) -> tuple[str, ...]:
    """The families whose first step runs here (verify/engine_vllm.py sharing): every one from 0.30 (the loaders'
    sharing goes through eagle/utils.py _should_share and maybe_share_target_embed); the EAGLE-3 ones where
    load_eagle_model shares inline with _should_share (0.24-0.29: run as the release's own function); none before."""
    spec = tree / "vllm" / "v1" / "worker" / "gpu" / "spec_decode"

    def text(part: str) -> str:
        return (spec / part / "utils.py").read_text(encoding="utf-8") if (spec / part / "utils.py").is_file() else ""

    eagle = text("eagle")
    if "def _should_share" in eagle and "def maybe_share_target_embed" in eagle:
        return FAMILIES
    if "def _should_share" in eagle and "def load_eagle_model" in eagle:  # and each inline loader there (0.26-0.29)
        inline = {"dflash": "def load_dflash_model(" in text("dflash"),
                  "qwen3-dspark": "def load_dspark_model(" in text("dspark")}
        return tuple(f for f in FAMILIES if f.startswith("eagle3-") or inline.get(f))
    return ()


def execute(version: str, cases: list[dict[str, Any]], timeout: float = 1200) -> dict[str, Any]:
    """Each case ({id, folder, target_vocab, family}) through the release's load and first step."""
    tree, deps = fetch_sources(version, DEFAULT_CACHE), ensure_deps(DEFAULT_CACHE)
    dflash = tree / "vllm" / "v1" / "worker" / "gpu" / "spec_decode" / "dflash" / "utils.py"
    flag = dflash.is_file() and "config, \"has_own_lm_head\"" in dflash.read_text(encoding="utf-8")
    with tempfile.TemporaryDirectory(prefix="dspark-first-step-") as tmp:
        request, out = Path(tmp) / "request.json", Path(tmp) / "out.json"
        request.write_text(json.dumps({"cases": cases, "dflash_flag": flag}))
        env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tree), str(deps), str(ROOT)]),
               "VLLM_TARGET_DEVICE": "cpu"}
        done = subprocess.run([sys.executable, str(ROOT / "tools" / "vllm_first_step_worker.py"), str(request),
                               str(out)], env=env, capture_output=True, text=True, timeout=timeout, check=False)
        if done.returncode != 0 or not out.is_file():
            raise SystemExit(f"probe_vllm_first_step: vLLM {version} could not be run:\n{done.stderr[-3000:]}")
        result: dict[str, Any] = json.loads(out.read_text())
    return result


def matrix(root: Path, families: tuple[str, ...], relations: tuple[str, ...]) -> list[Path]:
    """One checkpoint per family, relation of (V, D) to T (runtimes/vllm_first_step.py RELATIONS) and shipped subset
    of lm_head, d2t, t2d, embed_tokens: tools/probe_runtime.py's `realistic` matrix (a Markov head only in DSpark
    drafts) over these relations."""
    import itertools

    from conftest import make_checkpoint  # type: ignore[import-not-found]

    return [make_checkpoint(root / f"{family}-{k}-lm{lm:d}-d2t{d2t:d}-t2d{t2d:d}-emb{emb:d}", family=family,
                            vocab=RELATIONS[k][0], draft_vocab=RELATIONS[k][1], target_vocab=T, lm_head=lm, d2t=d2t,
                            t2d=t2d, embed=emb, markov="dspark" in family, config_extra=FAMILY_CONFIG.get(family))
            for family in families for k, (lm, d2t, t2d, emb) in itertools.product(relations, SHIPS)]


def record(version: str, relations: tuple[str, ...] = tuple(RELATIONS),
           only: tuple[str, ...] | None = None) -> dict[str, Any] | None:
    """The release's first step over the matrix of `relations` (and the families in `only`, where given); a file of
    the first four alone is written as the schema-1 files were (no "relations" key), so a release not re-recorded
    still checks byte for byte."""
    families = tuple(f for f in families_here(fetch_sources(version, DEFAULT_CACHE)) if only is None or f in only)
    if not families:
        return None
    with tempfile.TemporaryDirectory(prefix="dspark-first-step-") as tmp:
        paths = matrix(Path(tmp), families, relations)
        result = execute(version, [{"id": p.name, "folder": str(p), "target_vocab": T,
                                    "family": next(f for f in FAMILIES if p.name.startswith(f + "-"))}
                                   for p in paths])
    cells = {r.pop("id"): r for r in sorted(result["results"], key=lambda r: r["id"])}
    for cell in cells.values():  # the refusal's words up to where they list the parameters (a set: unordered)
        if "load" in cell:
            error = cell["load"]["error"]
            text = error.get("message", "") if isinstance(error, dict) else str(error)
            cell["load"] = {"type": error.get("type") if isinstance(error, dict) else None,
                            "message": text.split(" The available", 1)[0],
                            **({"unregistered": True} if cell["load"].get("unregistered") else {})}
    wide = relations != SCHEMA_1
    return {"schema": 2 if wide else 1, "runtime": "vllm", "release": version, "target_vocab": T,
            **({"relations": {k: list(RELATIONS[k]) for k in relations}} if wide else {}),
            "generated_by": f"python tools/probe_vllm_first_step.py {version}", "cells": cells}


# --agreement: the matrix at a target size the recording never used (T = 80; V, D per relation, each of the same
# relation to T as RELATIONS' at 96), each cell loaded and stepped by the release through verify's engine worker
# (verify/engine_vllm.py, the step `verify --engine installed` runs), against check's verdict for the release
AGREEMENT_T = 80
AGREEMENT_RELATIONS = {"pruned": (80, 48), "equal": (80, 80), "padded": (112, 112), "expanded": (112, 80),
                       "pruned-both": (48, 48), "narrow-input": (48, 80), "narrow-pruned": (40, 48),
                       "expanded-pruned": (112, 48), "expanded-padded": (112, 104)}


def agreement(version: str) -> tuple[int, list[str], int, int]:
    """How many cells check agrees with the release on (the load's outcome and words, then the first step's
    failure in its words, or none), each disagreement, how many cells loaded and then failed the step, and how many
    loaded where check says the step is not modelled (their load is compared, their step is not)."""
    import itertools

    from conftest import make_checkpoint  # type: ignore[import-not-found]

    from dspark_ckpt.check.analysis import inspect_checkpoint
    from dspark_ckpt.model.target import TargetVocab
    from dspark_ckpt.runtimes.selectors import parse_selectors
    from dspark_ckpt.runtimes.vllm_first_step import signature
    from dspark_ckpt.sources.local import local_source
    from dspark_ckpt.verify.engine import run_worker

    assert all(signature(*AGREEMENT_RELATIONS[k], AGREEMENT_T) == signature(*RELATIONS[k], T) for k in RELATIONS)
    wrong: list[str] = []
    failing = unmodelled = 0
    with tempfile.TemporaryDirectory(prefix="dspark-first-step-") as tmp:
        paths = {f"{family}-{k}-lm{lm:d}-d2t{d2t:d}-t2d{t2d:d}-emb{emb:d}": make_checkpoint(
            Path(tmp) / f"{family}-{k}-lm{lm:d}-d2t{d2t:d}-t2d{t2d:d}-emb{emb:d}", family=family, vocab=v,
            draft_vocab=d, target_vocab=AGREEMENT_T, lm_head=lm, d2t=d2t, t2d=t2d, embed=emb,
            markov="dspark" in family)
            for family, (k, (v, d)), (lm, d2t, t2d, emb) in itertools.product(FAMILIES, AGREEMENT_RELATIONS.items(),
                                                                              SHIPS)}
        tree, deps = fetch_sources(version, DEFAULT_CACHE), ensure_deps(DEFAULT_CACHE)
        env = {"PYTHONPATH": os.pathsep.join([str(tree), str(deps), str(ROOT)]), "VLLM_TARGET_DEVICE": "cpu"}
        run = run_worker([{"id": n, "folder": str(f), "target_vocab": AGREEMENT_T} for n, f in paths.items()],
                         device="cpu", env=env)
        if not run.ok:
            raise SystemExit(f"probe_vllm_first_step: vLLM {version} could not be run: {run.reason}")
        for name, folder in paths.items():
            seen = run.observed.get(name)
            failing += seen is not None and seen.step_error is not None
            report = inspect_checkpoint(local_source(folder), target=TargetVocab(AGREEMENT_T, "probe"),
                                        runtimes=parse_selectors([f"vllm=={version}"]))
            (row,) = [e for e in report.compatibility if e.runtime == "vllm"]
            if seen is None:
                wrong.append(f"{name}: the worker could not run it ({run.adapter_errors.get(name)})")
            elif seen.loads != row.loads or (not seen.loads and (seen.error or "").split(" The available")[0]
                                             not in (row.error or "")):
                wrong.append(f"{name}: vLLM {'loads' if seen.loads else seen.verbatim}; check "
                             f"{'loads' if row.loads else row.error}")
            elif seen.loads and row.first_step == "not_modelled":
                unmodelled += 1
            elif seen.loads and (not seen.stepped or seen.step_error != row.first_step_error):
                wrong.append(f"{name}: vLLM's step {seen.step_error or seen.first_step}; check "
                             f"{row.first_step_error_code}: {row.first_step_error}")
    return len(paths) - len(wrong), wrong, failing, unmodelled


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("version")
    parser.add_argument("--check", action="store_true")
    parser.add_argument("--agreement", action="store_true")
    args = parser.parse_args(argv)
    if args.agreement:
        agree, wrong, failing, unmodelled = agreement(args.version)
        print("\n".join(f"DISAGREE {w}" for w in wrong))
        print(f"probe_vllm_first_step: vLLM {args.version}, T = {AGREEMENT_T}: {agree}/{agree + len(wrong)} cells "
              f"agree (load, then first step; {failing} loaded and then failed the step; {unmodelled} loaded where "
              "check says the step is not modelled: their load agrees, their step is not compared)")
        return 0 if not wrong else 1
    path = data_folder("vllm", args.version) / FILE
    have = path.read_text(encoding="utf-8") if path.is_file() else None
    # --check regenerates the relations the committed file recorded (a schema-1 file: the first four)
    committed = json.loads(have) if args.check and have else None
    relations = tuple(committed.get("relations") or SCHEMA_1) if committed else tuple(RELATIONS)
    # --check: the families the committed file recorded (one written before 0.26-0.29's inline DFlash and DSpark ran)
    only = tuple(f for f in FAMILIES if any(n.startswith(f + "-") for n in committed["cells"])) if committed else None
    doc = record(args.version, relations, only)
    if doc is None:
        print(f"probe_vllm_first_step: vLLM {args.version}: not modelled (its loaders share the target's head "
              "inside the proposer; see the docstring)")
        return 0
    want = lined_text(doc, CELLS)
    if args.check:
        print(f"probe_vllm_first_step: {path.name} of vLLM {args.version} "
              + ("is what the release does" if want == have else "differs from what the release does"))
        return 0 if want == have else 1
    path.write_text(want, encoding="utf-8")
    print(f"probe_vllm_first_step: wrote {path.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
