"""Benchmark `verify` on the real-sized Inkling case (T=200058, D=V=201024, H=4096, bf16 heads of 1.6 GB each).

Builds the draft in a temporary folder (deleted afterwards), runs the torch verify path on the chosen device and
prints load / predicate / mapping / probe times, plus two ratios against the naive approach measured in the same
run: the vectorised mapping check against the pure-Python one `check` uses on header-read tables, and the batched
probe against one probe at a time.

    python bench/bench_verify.py                          # CPU, 256 probes
    python bench/bench_verify.py --device cuda --probe 65536
    python bench/bench_verify.py --draft-vocab 4096 --target-vocab 4000 --hidden 256   # a quick small run
"""

from __future__ import annotations

import argparse
import json
import resource
import shutil
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from dspark_ckpt.formats.mapping import check_d2t
from dspark_ckpt.formats.safetensors_writer import TensorSpec, encode_header
from dspark_ckpt.runtimes.selectors import parse_selectors
from dspark_ckpt.sources.local import local_source
from dspark_ckpt.sources.target import explicit_target
from dspark_ckpt.verify.checkpoint import verify_checkpoint
from dspark_ckpt.verify.torch_loader import Stopwatch, VerifyOptions, resolve_device

ROWS_PER_CHUNK = 8192


def _bf16_rows(rng: np.random.Generator, rows: int, cols: int, scale: float) -> bytes:
    """Random normal values as bfloat16 bits (the top half of float32), little-endian."""
    values = rng.standard_normal((rows, cols), dtype=np.float32) * np.float32(scale)
    return (values.view(np.uint32) >> 16).astype("<u2").tobytes()


def build(folder: Path, *, target: int, draft: int, hidden: int, rank: int, seed: int) -> int:
    """A padded Qwen3 DSpark draft written in row chunks, so building it never holds a whole tensor in memory."""
    (folder / "config.json").write_text(json.dumps({
        "architectures": ["Qwen3DSparkModel"], "model_type": "qwen3", "vocab_size": draft, "draft_vocab_size": draft,
        "hidden_size": hidden, "markov_rank": rank, "torch_dtype": "bfloat16", "rms_norm_eps": 1e-6}))
    specs = [TensorSpec("embed_tokens.weight", "BF16", (draft, hidden)),
             TensorSpec("lm_head.weight", "BF16", (draft, hidden)),
             TensorSpec("markov_head.markov_w1.weight", "BF16", (draft, rank)),
             TensorSpec("markov_head.markov_w2.weight", "BF16", (draft, rank)),
             TensorSpec("norm.weight", "BF16", (hidden,))]
    rng = np.random.default_rng(seed)
    with open(folder / "model.safetensors", "wb") as f:
        f.write(encode_header(specs, {"format": "pt"}))
        for spec in specs:
            rows, cols = (spec.shape[0], spec.shape[1]) if len(spec.shape) == 2 else (1, spec.shape[0])
            scale = 1.0 if spec.name == "embed_tokens.weight" else 0.02 if len(spec.shape) == 2 else 1.0
            for start in range(0, rows, ROWS_PER_CHUNK):
                if spec.name == "norm.weight":
                    f.write(np.full(cols, 0x3F80, dtype="<u2").tobytes())  # 1.0
                else:
                    f.write(_bf16_rows(rng, min(ROWS_PER_CHUNK, rows - start), cols, scale))
    return (folder / "model.safetensors").stat().st_size


def naive_mapping_ms(draft: int, target: int) -> float:
    start = time.perf_counter()
    check_d2t([0] * draft, target_vocab_size=target, pruned=draft < target, file="m", tensor="d2t")
    return (time.perf_counter() - start) * 1000


def probe_rate(folder: Path, device_name: str, target: int, probes: int, batch: int | None) -> float:
    """ms per probe vector of the probe phase alone, optionally forcing the batch size."""
    import dspark_ckpt.verify.probe as probe_module

    original = probe_module.batch_size
    if batch is not None:
        probe_module.batch_size = lambda rows, device: batch  # type: ignore[assignment]
    try:
        _, result = verify_checkpoint(local_source(folder), target=explicit_target(target),
                                      runtimes=parse_selectors(["vllm==0.33.0"]),
                                      options=VerifyOptions(device=device_name, probes=probes))
    finally:
        probe_module.batch_size = original
    return result.timings_ms["probe"] / max(1, probes)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--probe", type=int, default=256)
    ap.add_argument("--target-vocab", type=int, default=200058)
    ap.add_argument("--draft-vocab", type=int, default=201024)
    ap.add_argument("--hidden", type=int, default=4096)
    ap.add_argument("--rank", type=int, default=256)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--naive-probes", type=int, default=8, help="probes for the one-at-a-time comparison")
    ap.add_argument("--dir", type=Path, default=None, help="where to build the draft (default: a temp dir)")
    args = ap.parse_args()
    device = resolve_device(args.device)
    root = Path(tempfile.mkdtemp(prefix="dspark-verify-bench-", dir=args.dir))
    try:
        t0 = time.perf_counter()
        size = build(root, target=args.target_vocab, draft=args.draft_vocab, hidden=args.hidden, rank=args.rank,
                     seed=args.seed)
        build_s = time.perf_counter() - t0
        runs = []
        for _ in range(2):  # the first run pays for torch/CUDA start-up; report both
            _, result = verify_checkpoint(local_source(root), target=explicit_target(args.target_vocab),
                                          runtimes=parse_selectors(None),
                                          options=VerifyOptions(device=args.device, probes=args.probe, seed=args.seed),
                                          device=device)
            runs.append(result)
        result = runs[-1]
        naive_ms = naive_mapping_ms(args.draft_vocab, args.target_vocab)
        batched = probe_rate(root, args.device, args.target_vocab, max(args.naive_probes, min(args.probe, 1024)), None)
        single = probe_rate(root, args.device, args.target_vocab, args.naive_probes, 1)
        Stopwatch(device)._sync()
        report = {
            "device": result.device, "torch": result.torch_version,
            "shape": {"T": args.target_vocab, "D": args.draft_vocab, "H": args.hidden, "r": args.rank},
            "file_bytes": size, "build_s": round(build_s, 1), "probes": args.probe,
            "bytes_read": sum(t.nbytes for t in result.tensors_read),
            "timings_ms_first_run": {k: round(v, 2) for k, v in runs[0].timings_ms.items()},
            "timings_ms": {k: round(v, 2) for k, v in result.timings_ms.items()},
            "predicate_plus_mapping_ms": round(result.timings_ms["predicate"] + result.timings_ms["mapping"], 2),
            "mapping_naive_python_ms": round(naive_ms, 2),
            "mapping_speedup_vs_naive": round(naive_ms / max(result.timings_ms["mapping"], 1e-6), 1),
            "probe_ms_per_vector_batched": round(batched, 4), "probe_ms_per_vector_one_at_a_time": round(single, 4),
            "probe_speedup_vs_one_at_a_time": round(single / max(batched, 1e-9), 1),
            "probe_argmax_illegal": {f"{s.source}/{s.logits}": f"{s.argmax_illegal}/{s.probes}"
                                     for s in result.probe.stats},
            "peak_rss_gib": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20, 2),
        }
        print(json.dumps(report, indent=2))
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
