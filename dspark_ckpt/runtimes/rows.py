"""Every runtime's contract rows as one tuple, and whether a row covers a version: the leaf that the lookup
(table.py) and the releases beyond the rows (releases.py) both read."""

from __future__ import annotations

from functools import cache

from dspark_ckpt.runtimes.contracts import Contract
from dspark_ckpt.runtimes.sglang_rows import SGLANG_ROWS
from dspark_ckpt.runtimes.versions import in_range
from dspark_ckpt.runtimes.vllm_rows import VLLM_ROWS

CONTRACTS: tuple[Contract, ...] = VLLM_ROWS + SGLANG_ROWS


@cache  # every row is tested against every release a run evaluates
def version_key(version: str) -> tuple[int, ...]:
    return tuple(int(p) for p in version.split("."))


def covers(contract: Contract, version: str) -> bool:
    if contract.first == "*":
        return True
    if contract.runtime == "sglang":  # SGLang rows end at post releases (0.5.4.post1 | 0.5.4.post2)
        return in_range("sglang", contract.first, contract.last, version)
    major_minor = version_key(version)[:2]
    return version_key(contract.first)[:2] <= major_minor <= version_key(contract.last)[:2]
