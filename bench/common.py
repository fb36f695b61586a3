"""Benchmark helpers: a Qwen3 DSpark draft layout, real or sparse shard writers, child meters, page cache."""

from __future__ import annotations

import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from dspark_ckpt.formats.safetensors_writer import TensorSpec, encode_header

# RedHatAI Qwen3.6-35B-A3B DSpark speculator shapes (CONTRACT.md "Real shapes"): a pruned draft.
TARGET_VOCAB = 248320
DRAFT_VOCAB = 32000
# F16, not BF16: safetensors.numpy (the naive side) cannot load BF16; the byte count is the same.
WEIGHT_DTYPE = "F16"
CHUNK = 64 * 2**20


@dataclass(frozen=True, slots=True)
class DraftLayout:
    """A Qwen3 DSpark draft: embed [V,H], decoder layers, fc over 3 aux states, markov head, lm_head [D,H]."""

    hidden: int
    layers: int
    vocab: int = TARGET_VOCAB  # V == T: the draft reads the target's full vocabulary
    draft_vocab: int = DRAFT_VOCAB
    target_vocab: int = TARGET_VOCAB
    aux_layers: int = 3

    @property
    def rank(self) -> int:
        return max(4, self.hidden // 16)  # 256 at H = 4096

    @property
    def heads(self) -> tuple[int, int, int]:
        """(attention heads, kv heads, head dim): head dim 128 as in Qwen3, fewer heads when H is tiny."""
        head_dim = 128 if self.hidden >= 1024 else max(8, self.hidden // 8)
        heads = max(1, self.hidden // head_dim)
        return heads, max(1, heads // 8), head_dim

    def tensors(self) -> list[TensorSpec]:
        h, w = self.hidden, WEIGHT_DTYPE
        heads, kv_heads, head_dim = self.heads
        inter = 3 * h
        specs = [TensorSpec("embed_tokens.weight", w, (self.vocab, h))]
        for i in range(self.layers):
            p = f"layers.{i}."
            specs += [
                TensorSpec(p + "input_layernorm.weight", w, (h,)),
                TensorSpec(p + "self_attn.q_proj.weight", w, (heads * head_dim, h)),
                TensorSpec(p + "self_attn.k_proj.weight", w, (kv_heads * head_dim, h)),
                TensorSpec(p + "self_attn.v_proj.weight", w, (kv_heads * head_dim, h)),
                TensorSpec(p + "self_attn.o_proj.weight", w, (h, heads * head_dim)),
                TensorSpec(p + "self_attn.q_norm.weight", w, (head_dim,)),
                TensorSpec(p + "self_attn.k_norm.weight", w, (head_dim,)),
                TensorSpec(p + "post_attention_layernorm.weight", w, (h,)),
                TensorSpec(p + "mlp.gate_proj.weight", w, (inter, h)),
                TensorSpec(p + "mlp.up_proj.weight", w, (inter, h)),
                TensorSpec(p + "mlp.down_proj.weight", w, (h, inter)),
            ]
        return specs + [
            TensorSpec("norm.weight", w, (h,)),
            TensorSpec("hidden_norm.weight", w, (h,)),
            TensorSpec("fc.weight", w, (h, self.aux_layers * h)),
            TensorSpec("markov_head.markov_w1.weight", w, (self.vocab, self.rank)),
            TensorSpec("markov_head.markov_w2.weight", w, (self.draft_vocab, self.rank)),
            TensorSpec("lm_head.weight", w, (self.draft_vocab, h)),
            TensorSpec("d2t", "I64", (self.draft_vocab,)),
            TensorSpec("t2d", "BOOL", (self.target_vocab,)),
        ]

    def total_bytes(self) -> int:
        return sum(t.nbytes for t in self.tensors())

    def config(self) -> dict[str, Any]:
        heads, kv_heads, head_dim = self.heads
        return {
            "architectures": ["Qwen3DSparkModel"], "model_type": "qwen3", "torch_dtype": "float16",
            "vocab_size": self.vocab, "draft_vocab_size": self.draft_vocab, "hidden_size": self.hidden,
            "intermediate_size": 3 * self.hidden, "num_hidden_layers": self.layers,
            "num_attention_heads": heads, "num_key_value_heads": kv_heads, "head_dim": head_dim,
            "markov_rank": self.rank, "block_size": 8, "target_layer_ids": [1, 23, 45],
            "mask_token_id": self.vocab - 1, "rms_norm_eps": 1e-6,
        }


def layout_for(budget_bytes: int, layers: int) -> DraftLayout:
    """The smallest hidden size (step 8, or 128 from 1024 up) whose checkpoint holds >= budget bytes."""
    hidden = 8
    while DraftLayout(hidden, layers).total_bytes() < budget_bytes:
        hidden += 128 if hidden >= 1024 else 8
    return DraftLayout(hidden, layers)


def plan_shards(specs: Sequence[TensorSpec], count: int) -> list[list[TensorSpec]]:
    """Cut the tensors, in order, into exactly `count` contiguous shards, each near its share of the rest."""
    shards: list[list[TensorSpec]] = [[]]
    left_bytes = sum(t.nbytes for t in specs)
    share, filled = left_bytes / count, 0
    for i, spec in enumerate(specs):
        shards[-1].append(spec)
        filled += spec.nbytes
        left, needed = len(specs) - i - 1, count - len(shards)
        if needed and left and (filled >= share or left == needed):
            left_bytes -= filled
            share, filled = left_bytes / needed, 0
            shards.append([])
    if len(shards) != count:
        raise ValueError(f"{len(specs)} tensors cannot fill {count} shards")
    return shards


def shard_plan(layers: int, count: int) -> list[list[str]]:
    """Tensor names per shard, cut at H = 4096 proportions so that every size shares one name -> shard map."""
    return [[t.name for t in part] for part in plan_shards(DraftLayout(4096, layers).tensors(), count)]


def mapping_bytes(layout: DraftLayout, seed: int = 0) -> dict[str, bytes]:
    """A valid pruned mapping, made the way EAGLE/SpecForge do: D sorted target ids."""
    rng = np.random.default_rng(seed)
    ids = np.sort(rng.choice(layout.target_vocab, size=layout.draft_vocab, replace=False)).astype("<i8")
    t2d = np.zeros(layout.target_vocab, dtype=bool)
    t2d[ids] = True
    return {"d2t": (ids - np.arange(layout.draft_vocab, dtype="<i8")).tobytes(), "t2d": t2d.tobytes()}


def shard_name(i: int, count: int) -> str:
    return f"model-{i + 1:05d}-of-{count:05d}.safetensors"


def _write_random(f: Any, nbytes: int, rng: np.random.Generator) -> None:
    while nbytes:
        n = min(nbytes, CHUNK)
        f.write(rng.bytes(n))
        nbytes -= n


def write_checkpoint(root: Path, layout: DraftLayout, shards: int, *, sparse: bool) -> int:
    """Write config, index and shards; weights are random bytes, or holes if `sparse`. Returns disk use."""
    root.mkdir(parents=True)
    (root / "config.json").write_text(json.dumps(layout.config(), indent=2))
    mapping, rng = mapping_bytes(layout), np.random.default_rng(1)
    specs = {t.name: t for t in layout.tensors()}
    weight_map: dict[str, str] = {}
    for i, names in enumerate(shard_plan(layout.layers, shards)):
        name, part = shard_name(i, shards), [specs[n] for n in names]
        weight_map.update({t.name: name for t in part})
        header = encode_header(part)
        with open(root / name, "wb") as f:
            f.write(header)
            for spec in part:
                if spec.name in mapping:  # the only data `check` reads is real even in a sparse file
                    f.write(mapping[spec.name])
                elif sparse:
                    f.seek(spec.nbytes, os.SEEK_CUR)
                else:
                    _write_random(f, spec.nbytes, rng)
            f.truncate(len(header) + sum(t.nbytes for t in part))
    index = {"metadata": {"total_size": layout.total_bytes()}, "weight_map": weight_map}
    (root / "model.safetensors.index.json").write_text(json.dumps(index, indent=2))
    return sum(p.stat().st_blocks * 512 for p in root.iterdir())


@dataclass(frozen=True, slots=True)
class ChildRun:
    wall_s: float
    # wait4's ru_maxrss. Caveat: Linux exec folds the forking parent's RSS high-water into it, so for the
    # child of a big parent it overstates; use the child's own /proc/self/status VmHWM for peak RSS.
    max_rss_bytes: int
    returncode: int
    stdout: str
    stderr: str


def run_child(argv: Sequence[str], env: dict[str, str] | None = None) -> ChildRun:
    """Run a child to completion; wait4 gives this one child's rusage (RUSAGE_CHILDREN is a max over all)."""
    # Temp files, not pipes: a pipe could fill up while we sit in wait4.
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        start = time.perf_counter()
        proc = subprocess.Popen(list(argv), stdout=out, stderr=err, env={**os.environ, **(env or {})})
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - start
        proc.returncode = os.waitstatus_to_exitcode(status)  # so Popen does not wait again
        out.seek(0)
        err.seek(0)
        return ChildRun(wall, usage.ru_maxrss * 1024, proc.returncode, out.read().decode(),
                        err.read().decode())


def timed(fn: Callable[[], Any], repeat: int) -> list[float]:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return times


def summary(times: Sequence[float]) -> dict[str, float | int]:
    return {"median_s": statistics.median(times), "min_s": min(times), "max_s": max(times),
            "runs": len(times)}


def drop_caches() -> str:
    """Try to empty the page cache (needs root and a writable /proc/sys); returns 'ok' or why not."""
    os.sync()
    try:
        with open("/proc/sys/vm/drop_caches", "w") as f:
            f.write("3\n")
    except OSError as exc:
        return f"failed: {exc.strerror or exc}"
    return "ok"


def vm_hwm_bytes() -> int:
    """This process's own peak RSS (VmHWM belongs to the address space exec made, unlike ru_maxrss)."""
    with open("/proc/self/status") as f:
        line = next(x for x in f if x.startswith("VmHWM:"))
    return int(line.split()[1]) * 1024


def resident_bytes(paths: Sequence[Path]) -> int | None:
    """Bytes of these files now in the page cache (util-linux fincore), or None when it is unavailable."""
    if not shutil.which("fincore"):
        return None
    argv = ["fincore", "--bytes", "--noheadings", "--output", "RES", *map(str, paths)]
    done = subprocess.run(argv, capture_output=True, text=True)
    if done.returncode:
        return None
    return sum(int(line) for line in done.stdout.split())


def shard_files(folder: Path) -> list[Path]:
    return sorted(folder.glob("*.safetensors"))


def evict(folder: Path) -> dict[str, Any]:
    """Make the next read of these shards cold: drop_caches when allowed, and fadvise(DONTNEED) per file."""
    how = drop_caches()
    for path in shard_files(folder):
        fd = os.open(path, os.O_RDONLY)
        try:
            os.fsync(fd)
            os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)  # drops clean pages only: hence the fsync
        finally:
            os.close(fd)
    return {"drop_caches": how, "resident_bytes_after": resident_bytes(shard_files(folder))}


def environment() -> dict[str, Any]:
    import platform

    import safetensors

    import dspark_ckpt
    return {"python": platform.python_version(), "platform": platform.platform(), "cpus": os.cpu_count(),
            "numpy": np.__version__, "safetensors": safetensors.__version__,
            "dspark_ckpt": dspark_ckpt.__version__, "loadavg_start": os.getloadavg()}


def write_json(path: Path, doc: dict[str, Any]) -> None:
    """Atomically: a temp file in the same folder, fsync, os.replace."""
    tmp = path.with_name(path.name + ".tmp")
    with open(tmp, "w") as f:
        json.dump(doc, f, indent=2, default=str)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)


def log(text: str) -> None:
    print(f"[bench] {text}", file=sys.stderr, flush=True)


PYTHON = sys.executable
