"""verify's memory budget: what a run would allocate, counted from the config and headers before torch allocates it.

A config whose vocab says 2**34 rows would make torch ask for terabytes (and die of it, or take the machine down):
the run is refused first, against a stated budget (DSPARK_CKPT_VERIFY_MEMORY, else 90% of what this machine or
process may use, or of the free memory of the CUDA device).
"""

from __future__ import annotations

import math
import os
import re
import resource
from collections.abc import Iterable
from typing import TYPE_CHECKING, NoReturn

from dspark_ckpt.errors import UsageError

if TYPE_CHECKING:
    import torch

    from dspark_ckpt.runtimes.contracts import Contract
    from dspark_ckpt.verify.runtime_model import Dims

BUDGET_ENV = "DSPARK_CKPT_VERIFY_MEMORY"
_SIZE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([kmgt]?)i?b?\s*$", re.IGNORECASE)
_UNITS = {"": 1, "k": 2**10, "m": 2**20, "g": 2**30, "t": 2**40}
_PROBE_ROWS = 64  # the smallest probe batch's logits, [rows, D] float32, on top of the parameters


def parse_size(text: str) -> int | None:
    """`64G`, `512MiB`, `1.5t` or a plain byte count; None when it is none of those."""
    match = _SIZE.match(text)
    return int(float(match[1]) * _UNITS[match[2].lower()]) if match else None


def _host_limit() -> int:
    """Physical memory, or the address-space limit of this process when that is lower (RLIMIT_AS)."""
    try:
        physical = os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):
        physical = 2**40
    soft, _ = resource.getrlimit(resource.RLIMIT_AS)
    return min(physical, soft) if soft != resource.RLIM_INFINITY else physical


def memory_budget(device: torch.device | None = None) -> tuple[int, str]:
    """(bytes, where that figure comes from, in words for the error message) for what `device` holds (None: this
    machine's memory, where the landing loader's masks live)."""
    stated = os.environ.get(BUDGET_ENV)
    if stated:
        size = parse_size(stated)
        if size is None:
            raise UsageError(f"{BUDGET_ENV}={stated[:40]!r} is not a size such as 16G or 512M", code="DSP-E013",
                             hint="give bytes, or a number with K, M, G or T")
        return size, BUDGET_ENV
    if device is not None and device.type == "cuda":
        import torch

        free, _ = torch.cuda.mem_get_info(device)
        return int(free * 0.9), f"90% of the free memory of {device}"
    # The estimate counts a parameter beside the tensor it is loaded from, so it is above the true peak.
    return int(_host_limit() * 0.9), "90% of this machine's memory (or of this process's address-space limit)"


def planned_bytes(contracts: Iterable[Contract], dims: Dims, tensor_bytes: int) -> int:
    """The tensors read, every parameter a runtime's `__init__` creates (each distinct one once, as ParamStore
    shares them), and one probe batch of logits: what the run holds at its peak, at least."""
    from dspark_ckpt.verify.runtime_model import param_specs

    specs = {spec for contract in contracts for spec in param_specs(contract, dims).values()}
    params = sum(math.prod(spec.shape) * spec.dtype.itemsize for spec in specs)
    return tensor_bytes + params + _PROBE_ROWS * max(dims.draft_vocab, dims.vocab) * 4


def check_budget(contracts: Iterable[Contract], dims: Dims, tensor_bytes: int, device: torch.device,
                 what: str) -> None:
    """Refuse (DSP-E013, exit 2) a run that would allocate more than the budget, before anything is allocated."""
    needed = planned_bytes(contracts, dims, tensor_bytes)
    budget, source = memory_budget(device)
    if needed > budget:
        _refuse(f"{what}: verify would allocate about {_gib(needed)} (D = {dims.draft_vocab:,}, V = {dims.vocab:,}, "
                f"H = {dims.hidden:,})", budget, source)


def check_masks(rows: int, parameter: str, size: int, budget: tuple[int, str]) -> None:
    """Refuse (DSP-E013) the landing loader's row masks (one bool per row of each parameter it loads into) where
    they would pass the budget (memory_budget(), taken once per load), before they are allocated: a config's
    intermediate_size or head count of 2**40 sizes them, and no other estimate counts them."""
    if rows > budget[0]:
        _refuse(f"verify's loader of the release's generated record would allocate about {_gib(rows)} of row masks "
                f"({parameter}: {size:,} rows)", *budget)


def _refuse(allocation: str, budget: int, source: str) -> NoReturn:
    """DSP-E013 (exit 2): `allocation` would pass the budget; nothing was allocated."""
    raise UsageError(f"{allocation}, above its memory budget of {_gib(budget)} ({source}); nothing was allocated",
                     code="DSP-E013",
                     hint=f"`dspark-ckpt check` reports what is wrong with these sizes; for a draft this large, raise "
                          f"the budget with {BUDGET_ENV}=64G on a machine that has it")


def _gib(n: int) -> str:
    return f"{n / 2**30:,.1f} GiB" if n >= 2**30 else f"{n / 2**20:,.1f} MiB"
