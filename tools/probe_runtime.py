#!/usr/bin/env python3
"""Maintainer probe: run a vLLM release's own loaders over the fixture matrix on CPU and print where the contract
table disagrees.

    python tools/probe_runtime.py 0.34.0                  # download, extract the .py files, probe
    python tools/probe_runtime.py 0.30.0 --source DIR     # an already extracted tree (DIR/vllm/...)
    python tools/probe_runtime.py 0.30.0 --prepare-only   # just fetch and extract (prints the tree's path)

Steps: `pip download --no-deps vllm==V` into the cache; only the wheel's `.py` files (and its METADATA) are
extracted; vLLM's import-time dependencies go into a deps folder with `pip install --target`, at the exact
versions tools/probe-deps.txt pins (torch is never installed: the interpreter's CPU build is used); the fixture matrix (every family x
pruned/equal/padded/expanded x each subset of lm_head, d2t, t2d, embed_tokens; tests/conftest.py) is written to a
temp folder; one subprocess with VLLM_TARGET_DEVICE=cpu imports that vLLM and runs, per checkpoint, the registered
model class's real __init__ and load_weights (dspark_ckpt/verify/engine_vllm.py); each cell is compared with
`check`'s verdict for vllm==V. Exit 0 when every cell agrees, 1 on disagreements, 2 when the probe cannot run.
"""

from __future__ import annotations

import argparse
import hashlib
import itertools
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]  # the package, and the project's own fixture factory (conftest)

T = 96
FAMILIES = ("dflash", "eagle3-llama", "eagle3-qwen3", "gemma4-dspark", "qwen3-dspark", "qwen3-omni-dspark")
KINDS = {"pruned": (96, 64), "equal": (96, 96), "padded": (128, 128), "expanded": (128, 96)}  # kind: (V, D)
SHIPS = list(itertools.product([True, False], repeat=4))  # lm_head, d2t, t2d, embed_tokens
# A Gemma4 DSpark config names the target layers it reads (its __init__ has no default for them).
FAMILY_CONFIG: dict[str, dict[str, Any]] = {"gemma4-dspark": {"target_layer_ids": [0], "model_type": "gemma4_text"}}
# What vLLM's model modules import at import time, beside torch (pip names). Installed only when missing.
IMPORT_DEPS = ("regex", "psutil", "pyzmq", "urllib3", "transformers", "tokenizers", "cbor2", "aiohttp", "requests",
               "openai-harmony", "openai", "pillow", "pybase64", "cachetools", "msgspec", "cloudpickle", "uvloop",
               "py-cpuinfo", "prometheus_client", "fastapi", "partial-json-parser", "llguidance", "einops",
               "apache-tvm-ffi", "gguf", "setproctitle", "blake3",  # 0.8-0.23 import these at start-up
               "loguru")  # compressed_tensors (below) imports it
# Installed alone: xgrammar's and compressed-tensors' requirements pull a CUDA torch (0.10-0.33 import
# compressed_tensors from the quantization and MoE layers every MTP head builds); numba (the Inkling/MiniMax-M3/GLM-5
# MTP heads of 0.26+) would pull its own numpy into deps.
NO_DEPS = ("xgrammar", "compressed-tensors", "numba", "llvmlite")
PINS = ROOT / "tools" / "probe-deps.txt"  # the exact versions every deps folder holds
# what each release did with the project matrix: read by the tests alone, so kept out of the package
VOCAB_DATA = ROOT / "tests" / "data" / "release_vocab"
DEFAULT_CACHE = Path(os.environ.get("DSPARK_PROBE_CACHE", Path.home() / ".cache" / "dspark-ckpt" / "probe"))


def log(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


def fail(text: str) -> SystemExit:
    """The probe cannot run (exit 2, as the docstring says); raise what this returns."""
    log(f"probe: {text}")
    return SystemExit(2)


def pip(*args: str) -> None:
    done = subprocess.run([sys.executable, "-m", "pip", *args], capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise fail(f"pip {' '.join(args[:3])} ... failed:\n{done.stderr.strip()[-2000:]}")


def fetch_sources(version: str, cache: Path) -> Path:
    """`pip download --no-deps vllm==V`, then only the .py files and the dist-info METADATA are extracted."""
    tree = cache / f"vllm-{version}"
    if (tree / "vllm" / "__init__.py").exists():
        return tree
    wheels = cache / "wheels"
    wheels.mkdir(parents=True, exist_ok=True)
    log(f"probe: pip download --no-deps vllm=={version}")
    pip("download", "--no-deps", "--only-binary", ":all:", "--dest", str(wheels), f"vllm=={version}")
    wheel = next(iter(sorted(wheels.glob(f"vllm-{version}-*.whl"))), None)
    if wheel is None:
        raise fail(f"pip downloaded no vllm-{version} wheel into {wheels}")
    staging = Path(tempfile.mkdtemp(prefix=f"vllm-{version}-", dir=cache))
    with zipfile.ZipFile(wheel) as zf:
        for name in zf.namelist():
            if name.endswith((".py", ".dist-info/METADATA")):
                zf.extract(name, staging)
    staging.rename(tree)
    wheel.unlink()  # hundreds of MB of compiled kernels the probe never reads
    return tree


def pinned_folder(cache: Path, stem: str) -> Path:
    """The deps folder for the pins in force: `<stem>-<digest of tools/probe-deps.txt>`."""
    return cache / f"{stem}-{hashlib.sha256(PINS.read_bytes()).hexdigest()[:12]}"


def install_pinned(folder: Path, *steps: tuple[str, ...]) -> Path:
    """Each step (`pip install` arguments) into a staging folder under the pins, then renamed into place, so a folder
    that exists is complete (another process, an xdist worker, may finish first: its folder is kept)."""
    if folder.exists():
        return folder
    folder.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f"{folder.name}.", dir=folder.parent))
    try:
        for args in steps:
            log(f"probe: pip install --target {folder} {' '.join(args)}")
            pip("install", "--quiet", "--target", str(staging), "-c", str(PINS), *args)
        for stray in ("torch", "triton", "nvidia", "torchgen", "functorch"):  # never shadow the CPU torch
            if stray not in {a for args in steps for a in args}:
                shutil.rmtree(staging / stray, ignore_errors=True)
        staging.rename(folder)
    except OSError:
        if not folder.exists():
            raise
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return folder


def ensure_deps(cache: Path) -> Path:
    """vLLM's import-time dependencies (IMPORT_DEPS, then NO_DEPS alone), at the versions tools/probe-deps.txt pins."""
    deps = install_pinned(pinned_folder(cache, "deps"), IMPORT_DEPS, ("--no-deps", *NO_DEPS))
    sys.path.insert(0, str(deps))
    return deps


def fixture_matrix(root: Path, families: list[str], *, markov_everywhere: bool = True) -> Iterator[Path]:
    """tests/conftest.py's matrix. Its drafts ship a Markov head whatever the family (markov_everywhere: vLLM's
    DFlash/EAGLE-3 refuse it by name, DSP350); the `--matrix realistic` variant gives it only to the DSpark
    families, as real DFlash/EAGLE-3 exports do."""
    from conftest import make_checkpoint

    for family in families:
        markov = markov_everywhere or "dspark" in family
        for (kind, (v, d)), (lm, d2t, t2d, embed) in itertools.product(KINDS.items(), SHIPS):
            yield make_checkpoint(root / f"{family}-{kind}-lm{lm:d}-d2t{d2t:d}-t2d{t2d:d}-emb{embed:d}",
                                  family=family, vocab=v, draft_vocab=d, target_vocab=T, lm_head=lm, d2t=d2t,
                                  t2d=t2d, embed=embed, markov=markov, config_extra=FAMILY_CONFIG.get(family))


def _said(text: Any) -> str:
    return "loads" if text is None else f"{text.code}: {text.text}"


def _seen(o: Any) -> str:
    return "loads" if o.loads else (o.verbatim or "?")


def probe(version: str, tree: Path, deps: Path, families: list[str], timeout: float,
          matrix: str = "project") -> dict[str, Any]:
    from dspark_ckpt.check.analysis import analyze
    from dspark_ckpt.model.target import TargetVocab
    from dspark_ckpt.runtimes.selectors import RuntimeVersion
    from dspark_ckpt.sources.local import local_source
    from dspark_ckpt.verify.engine import at_load, disagreement, predicted, run_worker

    with tempfile.TemporaryDirectory(prefix="dspark-probe-") as tmp:
        paths = list(fixture_matrix(Path(tmp), families, markov_everywhere=matrix == "project"))
        cases = [{"id": p.name, "folder": str(p), "target_vocab": T} for p in paths]
        env = {"PYTHONPATH": os.pathsep.join([str(tree), str(deps), str(ROOT)]), "VLLM_TARGET_DEVICE": "cpu"}
        started = time.monotonic()
        run = run_worker(cases, device="cpu", env=env, timeout=timeout)
        seconds = time.monotonic() - started
        if not run.ok:
            raise fail(f"vLLM {version} could not be run: {run.reason}")
        cells: list[dict[str, Any]] = []
        for path in paths:
            analysis = analyze(local_source(path), target=TargetVocab(T, "probe"),
                               runtimes=[RuntimeVersion("vllm", version)])
            assert analysis.facts is not None
            full, said = predicted(analysis.facts, version), at_load(analysis.facts, version)
            config_time = full is not None and said is not None and full.error != said.error
            seen = run.observed.get(path.name)
            if seen is None:
                why = f"adapter: {run.adapter_errors.get(path.name, 'no result')}"
                cells.append({"case": path.name, "agrees": False, "why": why, "table": _said(said and said.error)})
                continue
            why = disagreement(seen, said, analysis.facts)
            cells.append({"case": path.name, "agrees": why is None, "why": why, "vllm": _seen(seen),
                          "class": seen.model_class, "table": _said(said.error) if said else "no row",
                          "config_time": _said(full.error) if config_time and full else None,
                          "observed": observation(seen)})
    return {"version": version, "matrix": matrix, "vllm_reported": run.version, "tree": str(tree), "seconds": round(seconds, 1),
            "cells": cells, "agree": sum(c["agrees"] for c in cells), "total": len(cells)}


def observation(seen: Any) -> dict[str, Any]:
    """What the release itself did with one fixture, as the committed tests/data/release_vocab/vllm-X.json keeps it: enough to rebuild the
    engine's Observed for the vocabulary comparison (verify.engine.disagreement), the error's words up to where they
    list the available parameters (which vary with the build)."""
    error = seen.error.split(" The available", 1)[0] if isinstance(seen.error, str) else seen.error
    return {"registered": seen.registered, "architecture": seen.architecture, "class": seen.model_class,
            "phase": seen.phase, "error_type": seen.error_type, "error": error,
            "d2t_param": seen.state.get("d2t_param") if seen.state else None}


def vocab_data(result: dict[str, Any]) -> str:
    """tests/data/release_vocab/vllm-X.json: the release's own outcome for every cell of the project matrix."""
    outcomes: list[str] = []  # each distinct outcome once; a cell names its index
    cells: dict[str, int] = {}
    for cell in sorted(result["cells"], key=lambda c: c["case"]):
        if "observed" in cell:
            text = json.dumps(cell["observed"], sort_keys=True)
            if text not in outcomes:
                outcomes.append(text)
            cells[cell["case"]] = outcomes.index(text)
    head = {"schema": 1, "generated_by": f"python tools/probe_runtime.py {result['version']} --write",
            "target_vocab": T, "kinds": KINDS}
    lines = [f'{json.dumps(head)[:-1]}, "outcomes": [', ",\n".join(f"  {o}" for o in outcomes), '], "cells": {',
             ",\n".join(f"  {json.dumps(k)}: {v}" for k, v in cells.items()), "}}"]
    return "\n".join(lines) + "\n"


def report(result: dict[str, Any]) -> None:
    from conftest import ARCH

    print(f"vLLM {result['version']}, {result['matrix']} matrix ({result['tree']}; worker {result['seconds']} s): "
          f"{result['agree']}/{result['total']} cells agree with the contract table")
    for family in sorted(ARCH):
        mine = [c for c in result["cells"] if c["case"].startswith(family + "-")]
        if mine:
            print(f"  {family:<18} {sum(c['agrees'] for c in mine)}/{len(mine)}")
    refused = [c for c in result["cells"] if c.get("config_time")]
    if refused:
        print(f"  {len(refused)} cells the table refuses at config time (vllm/config/speculative.py, not run by "
              f"the probe) were compared on their load step: {sorted({c['config_time'][:6] for c in refused})}")
    for c in result["cells"]:
        if not c["agrees"]:
            print(f"  DISAGREE {c['case']}: {c['why']}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("version", help="a vLLM release, e.g. 0.34.0 ('newest' asks pip for the latest)")
    parser.add_argument("--cache", type=Path, default=DEFAULT_CACHE, help="where wheels sources and deps go")
    parser.add_argument("--source", type=Path, help="use this extracted tree (DIR/vllm/...) instead of downloading")
    parser.add_argument("--family", action="append", choices=FAMILIES, help="only these families")
    parser.add_argument("--matrix", choices=("project", "realistic"), default="project",
                        help="project: tests/conftest.py's drafts as they are (a Markov head in every family); "
                             "realistic: Markov heads only in DSpark drafts")
    parser.add_argument("--prepare-only", action="store_true", help="fetch, extract and install deps; no probe")
    parser.add_argument("--json", type=Path, help="also write the cells here")
    parser.add_argument("--write", action="store_true",
                        help="write the release's observations to tests/data/release_vocab/vllm-X.json (project matrix; "
                             "tests/unit/test_vocab_observed.py holds every listed release's rows to them)")
    parser.add_argument("--check", action="store_true", help="compare the observations with the committed file")
    parser.add_argument("--timeout", type=float, default=1800.0, help="seconds for the worker subprocess")
    args = parser.parse_args(argv)
    version = newest_release() if args.version == "newest" else base_release(args.version)
    args.cache.mkdir(parents=True, exist_ok=True)
    tree = args.source or fetch_sources(version, args.cache)
    deps = ensure_deps(args.cache)
    if args.prepare_only:
        print(json.dumps({"tree": str(tree), "deps": str(deps)}))
        return 0
    if (args.write or args.check) and (args.family or args.matrix != "project"):
        raise fail("--write/--check observe the whole project matrix: no --family, no --matrix realistic")
    result = probe(version, tree, deps, args.family or list(FAMILIES), args.timeout, args.matrix)
    report(result)
    if args.json:
        args.json.write_text(json.dumps(result, indent=2))
    committed = VOCAB_DATA / f"vllm-{version}.json"
    if args.check:
        same = committed.is_file() and committed.read_text() == vocab_data(result)
        log(f"probe: {committed} {'is' if same else 'is NOT'} what vLLM {version} does")
        return 0 if same else 1
    if args.write:
        committed.parent.mkdir(parents=True, exist_ok=True)
        committed.write_text(vocab_data(result))
        log(f"probe: wrote {committed}")
    return 0 if result["agree"] == result["total"] else 1


def base_release(text: str) -> str:
    """X.Y.Z of a version string (what the contract table and pip's `vllm==` agree on)."""
    parts = [p for p in text.split("+")[0].split(".")]
    digits = [p for p in parts if p.isdigit()]
    return ".".join((digits + ["0", "0"])[: max(3, len(digits))])


def newest_release() -> str:
    """The newest vLLM on the index, as pip sees it (`pip index versions` lists newest first)."""
    done = subprocess.run([sys.executable, "-m", "pip", "index", "versions", "vllm"], capture_output=True,
                          text=True, check=False)
    for line in done.stdout.splitlines():
        if line.startswith("vllm (") and line.endswith(")"):
            return base_release(line[len("vllm ("):-1])
    raise fail(f"cannot tell the newest vLLM release: {done.stderr.strip() or done.stdout.strip()}")


if __name__ == "__main__":
    sys.exit(main())
