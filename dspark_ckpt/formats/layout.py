"""Pure: the shard index and the shards' headers -> layout findings (missing, escaping, misplaced tensors)."""

from __future__ import annotations

import heapq
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from typing import Any

from dspark_ckpt.formats.json_doc import JsonProblem, decode_document, document_finding
from dspark_ckpt.formats.names import INDEX_NAME, PathStatus
from dspark_ckpt.formats.safetensors_header import SafetensorsHeader
from dspark_ckpt.model.codes import FindingCode
from dspark_ckpt.model.findings import Finding, finding

MAX_SHARDS = 4096  # real checkpoints have at most a few hundred shards; each one checked costs a stat or a request
MAX_FINDINGS_PER_CODE = 1000  # per kind of layout finding; the rest are counted in one more


@dataclass(frozen=True, slots=True)
class ShardIndex:
    """model.safetensors.index.json: which shard holds each tensor, and the total size it states."""

    weight_map: dict[str, str]
    total_size: int | None
    files: frozenset[str] = field(init=False)  # the shard names it gives, derived once (a million entries cost 0.1 s)

    def __post_init__(self) -> None:
        object.__setattr__(self, "files", frozenset(self.weight_map.values()))


def parse_index(raw: bytes) -> tuple[ShardIndex | None, list[Finding]]:
    """The index from its bytes, through the one bounded JSON reader (encoding, size and value guard included)."""
    doc = decode_document(raw)
    if isinstance(doc, JsonProblem):
        return None, [document_finding(INDEX_NAME, doc)]
    return index_from_data(doc.data)


def index_from_data(doc: dict[str, Any]) -> tuple[ShardIndex | None, list[Finding]]:
    weight_map = doc.get("weight_map")
    if not isinstance(weight_map, dict) or not set(map(type, weight_map.values())) <= {str}:  # C speed, 10^6 ok
        return None, [finding("DSP102", f"{INDEX_NAME} has no weight_map object of tensor name -> file name.",
                              file=INDEX_NAME)]
    metadata = doc.get("metadata")
    total = metadata.get("total_size") if isinstance(metadata, dict) else None
    total = total if isinstance(total, int) and not isinstance(total, bool) else None
    return ShardIndex(weight_map=dict(weight_map), total_size=total), []


def capped_shards(names: Iterable[str]) -> tuple[list[str], list[Finding]]:
    """The names sorted, at most MAX_SHARDS of them (the first by name), and a DSP111 finding when there were more.
    A million names cost a partial sort, not a full one."""
    unique = names if isinstance(names, (set, frozenset)) else set(names)
    if len(unique) <= MAX_SHARDS:
        return sorted(unique), []
    kept = heapq.nsmallest(MAX_SHARDS, unique)
    return kept, [finding("DSP111", f"{len(unique):,} safetensors files are named or present; only the first "
                                    f"{MAX_SHARDS:,} (by name) were checked, up to {kept[-1]!r}.")]


def capped(findings: list[Finding], limit: int = MAX_FINDINGS_PER_CODE) -> list[Finding]:
    """The first `limit` findings of each code, then one that counts the rest (same code, severity and hint)."""
    counts = Counter(f.code for f in findings)
    if all(n <= limit for n in counts.values()):
        return findings
    kept: list[Finding] = []
    seen: Counter[str] = Counter()
    last: dict[str, Finding] = {}
    for f in findings:
        seen[f.code] += 1
        if seen[f.code] <= limit:
            kept.append(f)
        last[f.code] = f
    for code, n in counts.items():
        if n > limit:
            kept.append(replace(last[code], message=f"and {n - limit:,} more {code} findings like the ones above "
                                                    f"({n:,} in all; the first {limit:,} are listed).",
                                file=None, tensor=None))
    return kept


def shard_status_findings(statuses: dict[str, PathStatus], indexed: frozenset[str] | set[str]) -> list[Finding]:
    findings: list[Finding] = []
    for name, status in statuses.items():
        if status is PathStatus.MISSING and name not in indexed:  # listed on disk, so a dangling or looping link
            findings.append(finding("DSP018", f"{name!r} is a symlink that leads nowhere (dangling or looping).",
                                    file=name))
        elif status is PathStatus.MISSING:
            findings.append(finding("DSP103", f"{INDEX_NAME} names {name!r}, which does not exist.", file=name))
        elif status is PathStatus.ESCAPES:
            findings.append(finding("DSP104", f"{name!r} is not a plain file name inside the checkpoint folder "
                                              "(absolute, with `..`, a backslash or a control character, or a link "
                                              "that leaves it); it was not read.", file=name))
        elif status in (PathStatus.NOT_A_FILE, PathStatus.UNREADABLE):
            what = "is not a regular file" if status is PathStatus.NOT_A_FILE else "is not readable"
            findings.append(finding("DSP018", f"{name!r} {what}.", file=name))
    return capped(findings)


def index_findings(index: ShardIndex, headers: dict[str, SafetensorsHeader], on_disk: list[str]) -> list[Finding]:
    """Cross-check the weight_map against the headers of the shards that could be read.

    Linear in the entries, and each kind of finding is capped (`capped`): an index of a million entries costs a
    pass over them, not a million findings.
    """
    findings: list[Finding] = []
    holders: dict[str, list[str]] = {}
    for shard, header in headers.items():
        for entry in header.entries:
            holders.setdefault(entry.name, []).append(shard)
    for tensor, shards in sorted((t, s) for t, s in holders.items() if len(s) > 1):
        findings.append(finding("DSP106", f"{tensor} is in {len(shards)} shards: {_names(shards)}.",
                                file=shards[0], tensor=tensor))
    misplaced = [(tensor, shard) for tensor, shard in index.weight_map.items()
                 if shard in headers and shard not in holders.get(tensor, ())]
    for tensor, shard in sorted(misplaced[:MAX_FINDINGS_PER_CODE]):
        where = f" (it is in {_names(holders[tensor])})" if tensor in holders else ""
        findings.append(finding("DSP105", f"the index puts {tensor} in {shard}, whose header lacks it{where}.",
                                file=shard, tensor=tensor))
    findings += _more("DSP105", len(misplaced), "tensors the index puts in a shard whose header lacks them")
    indexed_files = index.files
    unindexed = [(shard, entry.name) for shard, header in sorted(headers.items()) if shard in indexed_files
                 for entry in header.entries if entry.name not in index.weight_map]
    for shard, name in unindexed[:MAX_FINDINGS_PER_CODE]:
        findings.append(finding("DSP109", f"{name} is in {shard} but not in the index.", file=shard, tensor=name))
    findings += _more("DSP109", len(unindexed), "tensors in an indexed shard but not in the index")
    for shard in on_disk:
        if shard not in indexed_files:
            findings.append(finding("DSP107", f"{shard} is not referenced by {INDEX_NAME}.", file=shard))
    if index.total_size is not None and all(s in headers for s in indexed_files):
        actual = sum(e.nbytes for s in indexed_files for e in headers[s].entries)
        if actual != index.total_size:
            findings.append(finding("DSP108", f"total_size is {index.total_size}, the indexed shards hold "
                                              f"{actual} tensor bytes.", file=INDEX_NAME))
    return capped(findings)


def _more(code: FindingCode, total: int, what: str) -> list[Finding]:
    if total <= MAX_FINDINGS_PER_CODE:
        return []
    return [finding(code, f"and {total - MAX_FINDINGS_PER_CODE:,} more {what} ({total:,} in all; the first "
                          f"{MAX_FINDINGS_PER_CODE:,} are listed).")]


def _names(shards: list[str], limit: int = 5) -> str:
    shown = ", ".join(shards[:limit])
    return shown + (f" and {len(shards) - limit} more" if len(shards) > limit else "")
