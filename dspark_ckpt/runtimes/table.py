"""The contract table: every runtime's rows, the versions they cover, and the lookup the evaluator uses."""

from __future__ import annotations

from dspark_ckpt.model.families import Family
from dspark_ckpt.runtimes.contracts import Contract
from dspark_ckpt.runtimes.sglang_rows import SGLANG_ROWS, SGLANG_VERSIONS
from dspark_ckpt.runtimes.versions import VLLM_RELEASES, in_range
from dspark_ckpt.runtimes.vllm_rows import VLLM_ROWS

CONTRACTS: tuple[Contract, ...] = VLLM_ROWS + SGLANG_ROWS
VLLM_VERSIONS = VLLM_RELEASES  # the one list (runtimes/versions.py)
RUNTIMES = ("vllm", "sglang")
__all__ = ["CONTRACTS", "RUNTIMES", "SGLANG_VERSIONS", "VLLM_VERSIONS", "contract_for", "covers", "version_key"]


def version_key(version: str) -> tuple[int, ...]:
    return tuple(int(p) for p in version.split("."))


def covers(contract: Contract, version: str) -> bool:
    if contract.first == "*":
        return True
    if contract.runtime == "sglang":  # SGLang rows end at post releases (0.5.4.post1 | 0.5.4.post2)
        return in_range("sglang", contract.first, contract.last, version)
    major_minor = version_key(version)[:2]
    return version_key(contract.first)[:2] <= major_minor <= version_key(contract.last)[:2]


def contract_for(runtime: str, version: str, family: Family) -> Contract | None:
    for contract in CONTRACTS:
        if contract.runtime == runtime and contract.family == family and covers(contract, version):
            return contract
    from dspark_ckpt.runtimes.releases import beyond_table  # releases reads this table: imported when needed

    return beyond_table(runtime, version, family)  # a release no row describes: assumed, or not registered yet
