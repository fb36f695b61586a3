"""The contract table: every runtime's rows, the versions they cover, and the lookup the evaluator uses."""

from __future__ import annotations

from dspark_ckpt.model.families import Family
from dspark_ckpt.runtimes.contracts import Contract
from dspark_ckpt.runtimes.releases import beyond_table
from dspark_ckpt.runtimes.rows import CONTRACTS, covers
from dspark_ckpt.runtimes.sglang_rows import SGLANG_VERSIONS
from dspark_ckpt.runtimes.versions import VLLM_RELEASES

VLLM_VERSIONS = VLLM_RELEASES  # the one list (runtimes/versions.py)
RUNTIMES = ("vllm", "sglang")
__all__ = ["CONTRACTS", "RUNTIMES", "SGLANG_VERSIONS", "VLLM_VERSIONS", "contract_for", "covers"]


def contract_for(runtime: str, version: str, family: Family) -> Contract | None:
    for contract in CONTRACTS:
        if contract.runtime == runtime and contract.family == family and covers(contract, version):
            return contract
    return beyond_table(runtime, version, family)  # a release no row describes: assumed, or not registered yet
