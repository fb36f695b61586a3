"""verify's torch edge, importable without torch: the options, the device, tensor streaming, timings (torch is lazy)."""

from __future__ import annotations

import re
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from dspark_ckpt.check.load import Loaded
from dspark_ckpt.errors import UsageError
from dspark_ckpt.sources.base import CheckpointSource
from dspark_ckpt.verify.budget import AUTO, NoProgress, ProbeBudget, ProgressSink

if TYPE_CHECKING:
    import torch

NORM_NAMES = ("norm.weight", "model.norm.weight")


@dataclass(frozen=True, slots=True)
class VerifyOptions:
    """verify's settings: device, probe count or budget, seed, top-k, progress sink."""

    device: str = "auto"  # auto | cpu | cuda | cuda:N
    probes: int | None = None  # probe vectors in all (half embed rows, half Gaussian); None: `budget` decides
    seed: int = 0
    top_k: int = 8
    budget: ProbeBudget = AUTO  # used when `probes` is None: auto (seconds on CPU, 65,536 on CUDA) or Ns
    progress: ProgressSink = field(default_factory=NoProgress, compare=False)

    @property
    def probe_budget(self) -> ProbeBudget:
        return ProbeBudget(count=self.probes) if self.probes is not None else self.budget


def import_torch() -> Any:
    try:
        import torch
    except ImportError as exc:
        raise UsageError("dspark-ckpt verify needs torch, which is not installed", code="DSP-E040",
                         hint="pip install torch (the CPU build: pip install torch --index-url "
                              "https://download.pytorch.org/whl/cpu); `check` works without it") from exc
    return torch


def resolve_device(spec: str) -> torch.device:
    import_torch()  # DSP-E040 when torch is missing; the plain import below is then typed, not Any
    import torch
    spec = spec.strip().lower()
    if spec == "auto":
        return torch.device("cuda", torch.cuda.current_device()) if torch.cuda.is_available() else torch.device("cpu")
    if spec == "cpu":
        return torch.device("cpu")
    match = re.fullmatch(r"cuda(?::(\d+))?", spec)
    if match is None:
        raise UsageError(f"unknown device {spec!r}; use auto, cpu, cuda or cuda:N", code="DSP-E041")
    if not torch.cuda.is_available():
        raise UsageError(f"--device {spec}: torch sees no CUDA device", code="DSP-E041",
                         hint="use --device cpu (or auto), or install a CUDA build of torch")
    index = int(match[1] or torch.cuda.current_device())
    if index >= torch.cuda.device_count():
        raise UsageError(f"--device {spec}: only {torch.cuda.device_count()} CUDA device(s)", code="DSP-E041")
    return torch.device("cuda", index)


def device_label(device: torch.device) -> str:
    torch = import_torch()
    if device.type == "cuda":
        return f"{device} ({torch.cuda.get_device_name(device)})"
    return str(device)


@dataclass(slots=True)
class Stopwatch:
    """Phase timings; on CUDA the device is synchronised on both edges so queued kernels are counted."""

    device: torch.device
    ms: dict[str, float] = field(default_factory=dict)

    def _sync(self) -> None:
        if self.device.type == "cuda":
            import_torch().cuda.synchronize(self.device)

    @contextmanager
    def phase(self, name: str) -> Iterator[None]:
        self._sync()
        start = time.perf_counter()
        try:
            yield
        finally:
            self._sync()
            self.ms[name] = self.ms.get(name, 0.0) + (time.perf_counter() - start) * 1000


def _natural(name: str) -> list[Any]:
    return [int(p) if p.isdigit() else p for p in re.split(r"(\d+)", name)]


def load_order(loaded: Loaded) -> list[str]:
    """The order vLLM's safetensors iterator yields weights: files naturally sorted, names sorted in each file."""
    by_file: dict[str, list[str]] = {}
    for name, info in loaded.tensors.items():
        by_file.setdefault(info.file, []).append(name)
    return [n for f in sorted(by_file, key=_natural) for n in sorted(by_file[f])]


def local_folder(source: CheckpointSource) -> Path:
    folder = source.local_folder
    if folder is None:
        raise UsageError(f"{source.display}: verify reads tensor data and needs a local checkpoint",
                         code="DSP-E042", hint="download it first (huggingface-cli download ...), then verify "
                                               "the local folder")
    return folder


def read_tensors(folder: Path, loaded: Loaded, names: Sequence[str],
                 device: torch.device) -> dict[str, torch.Tensor]:
    """Stream the named tensors straight to the device, one at a time (never the whole checkpoint)."""
    from safetensors import safe_open

    out: dict[str, torch.Tensor] = {}
    by_file: dict[str, list[str]] = {}
    for name in names:
        by_file.setdefault(loaded.tensors[name].file, []).append(name)
    for file, in_file in by_file.items():
        with safe_open(str(folder / file), framework="pt", device=str(device)) as handle:
            for name in in_file:
                out[name] = handle.get_tensor(name)
    return out
