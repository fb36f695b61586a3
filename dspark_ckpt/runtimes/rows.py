"""Every runtime's contract rows as one tuple, and whether a row covers a version: the leaf that the lookup
(table.py) and the releases beyond the rows (releases.py) both read."""

from __future__ import annotations

from dspark_ckpt.runtimes import release
from dspark_ckpt.runtimes.contracts import Contract
from dspark_ckpt.runtimes.sglang_rows import SGLANG_ROWS
from dspark_ckpt.runtimes.vllm_rows import VLLM_ROWS

CONTRACTS: tuple[Contract, ...] = VLLM_ROWS + SGLANG_ROWS


def covers(contract: Contract, version: str) -> bool:
    """A row covers a release at its runtime's granularity (release.covers: vLLM rows by minor, SGLang rows by
    release and post: 0.5.4.post1 | 0.5.4.post2)."""
    if contract.first == "*":
        return True
    return release.covers(contract.runtime, contract.first, contract.last, version)
