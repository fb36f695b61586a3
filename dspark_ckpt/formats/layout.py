"""Pure: the shard index and the shards' headers -> layout findings (missing, escaping, misplaced tensors)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from dspark_ckpt.formats.safetensors_header import SafetensorsHeader
from dspark_ckpt.model.findings import Finding, finding
from dspark_ckpt.sources.base import INDEX_NAME, PathStatus


@dataclass(frozen=True, slots=True)
class ShardIndex:
    weight_map: dict[str, str]
    total_size: int | None


def parse_index(raw: bytes) -> tuple[ShardIndex | None, list[Finding]]:
    def bad(why: str) -> tuple[None, list[Finding]]:
        return None, [finding("DSP102", f"{INDEX_NAME} {why}.", file=INDEX_NAME)]

    try:
        doc: Any = json.loads(raw)
    except (ValueError, RecursionError) as exc:  # ValueError also covers ints over Python's 4300-digit limit
        return bad(f"is not valid JSON ({exc.__class__.__name__})")
    if not isinstance(doc, dict):
        return bad("is not a JSON object")
    weight_map = doc.get("weight_map")
    if not isinstance(weight_map, dict) or not all(isinstance(v, str) for v in weight_map.values()):
        return bad("has no weight_map object of tensor name -> file name")
    metadata = doc.get("metadata")
    total = metadata.get("total_size") if isinstance(metadata, dict) else None
    total = total if isinstance(total, int) and not isinstance(total, bool) else None
    return ShardIndex(weight_map=dict(weight_map), total_size=total), []


def shard_status_findings(statuses: dict[str, PathStatus], indexed: set[str]) -> list[Finding]:
    findings: list[Finding] = []
    for name, status in statuses.items():
        if status is PathStatus.MISSING and name not in indexed:  # listed on disk, so a dangling or looping link
            findings.append(finding("DSP018", f"{name!r} is a symlink that leads nowhere (dangling or looping).",
                                    file=name))
        elif status is PathStatus.MISSING:
            findings.append(finding("DSP103", f"{INDEX_NAME} names {name!r}, which does not exist.", file=name))
        elif status is PathStatus.ESCAPES:
            findings.append(finding("DSP104", f"{name!r} resolves outside the checkpoint folder; it was not read.",
                                    file=name))
        elif status in (PathStatus.NOT_A_FILE, PathStatus.UNREADABLE):
            what = "is not a regular file" if status is PathStatus.NOT_A_FILE else "is not readable"
            findings.append(finding("DSP018", f"{name!r} {what}.", file=name))
    return findings


def index_findings(index: ShardIndex, headers: dict[str, SafetensorsHeader], on_disk: list[str]) -> list[Finding]:
    """Cross-check the weight_map against the headers of the shards that could be read."""
    findings: list[Finding] = []
    holders: dict[str, list[str]] = {}
    for shard, header in headers.items():
        for entry in header.entries:
            holders.setdefault(entry.name, []).append(shard)
    for tensor, shards in sorted(holders.items()):
        if len(shards) > 1:
            findings.append(finding("DSP106", f"{tensor} is in {len(shards)} shards: {', '.join(shards)}.",
                                    file=shards[0], tensor=tensor))
    for tensor, shard in sorted(index.weight_map.items()):
        if shard in headers and shard not in holders.get(tensor, []):
            where = f" (it is in {', '.join(holders[tensor])})" if tensor in holders else ""
            findings.append(finding("DSP105", f"the index puts {tensor} in {shard}, whose header lacks it{where}.",
                                    file=shard, tensor=tensor))
    indexed_files = set(index.weight_map.values())
    for shard, header in sorted(headers.items()):
        if shard in indexed_files:
            for entry in header.entries:
                if entry.name not in index.weight_map:
                    findings.append(finding("DSP109", f"{entry.name} is in {shard} but not in the index.",
                                            file=shard, tensor=entry.name))
    for shard in on_disk:
        if shard not in indexed_files:
            findings.append(finding("DSP107", f"{shard} is not referenced by {INDEX_NAME}.", file=shard))
    if index.total_size is not None and all(s in headers for s in indexed_files):
        actual = sum(e.nbytes for s in indexed_files for e in headers[s].entries)
        if actual != index.total_size:
            findings.append(finding("DSP108", f"total_size is {index.total_size}, the indexed shards hold "
                                              f"{actual} tensor bytes.", file=INDEX_NAME))
    return findings
