"""The I/O edge of the analysis: read config.json, the index, every shard header and the small d2t/t2d, once."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from dspark_ckpt.formats.json_doc import Document, JsonProblem, document_finding, read_document
from dspark_ckpt.formats.layout import (
    ShardIndex,
    capped_shards,
    index_findings,
    index_from_data,
    shard_status_findings,
)
from dspark_ckpt.formats.mapping import MAX_MAPPING_ENTRIES, decode_ints, mapping_byte_limit
from dspark_ckpt.formats.safetensors_header import SafetensorsHeader, read_header
from dspark_ckpt.model.draft_config import DraftConfig, parse_draft_config
from dspark_ckpt.model.findings import Finding, finding
from dspark_ckpt.model.tensors import TensorInfo
from dspark_ckpt.sources.base import CONFIG_NAME, INDEX_NAME, CheckpointSource, FileChanged, PathStatus


@dataclass(frozen=True, slots=True)
class JsonDoc:
    """A JSON file as read: its raw object beside the text it came from (fix edits the text, check reads the dict)."""

    raw: dict[str, Any]
    text: str


@dataclass(frozen=True, slots=True)
class Loaded:
    """What was read from the source: everything later steps reason about, with no I/O left."""

    config: DraftConfig | None
    tensors: dict[str, TensorInfo]
    headers: dict[str, SafetensorsHeader]
    findings: list[Finding]
    config_doc: JsonDoc | None = None
    index: ShardIndex | None = None
    index_doc: JsonDoc | None = None
    mapping_bytes: dict[str, bytes] = field(default_factory=dict)  # tensor name -> raw d2t/t2d bytes
    # Neither a config.json nor any *.safetensors file (listed or indexed): not a checkpoint at all, a mistyped path.
    empty: bool = False


def read_config(source: CheckpointSource) -> tuple[DraftConfig | None, list[Finding], JsonDoc | None]:
    return parse_config(read_config_document(source))


def read_config_document(source: CheckpointSource) -> Document | JsonProblem | None:
    """config.json as read (None: there is none), bounded; encoding and value guard included."""
    return read_document(lambda: source.read_text_file(CONFIG_NAME))


def parse_config(doc: Document | JsonProblem | None) -> tuple[DraftConfig | None, list[Finding], JsonDoc | None]:
    if doc is None:
        return None, [finding("DSP201", "no config.json: vocab sizes and architecture are unknown.",
                              file=CONFIG_NAME)], None
    if isinstance(doc, JsonProblem):
        return None, [document_finding(CONFIG_NAME, doc)], None
    config, problems = parse_draft_config(doc.data)
    return config, problems, JsonDoc(doc.data, doc.text)


def read_index(source: CheckpointSource) -> tuple[ShardIndex | None, list[Finding], JsonDoc | None]:
    doc = read_document(lambda: source.read_text_file(INDEX_NAME))
    if doc is None:
        return None, [], None
    if isinstance(doc, JsonProblem):
        return None, [document_finding(INDEX_NAME, doc)], None
    index, problems = index_from_data(doc.data)
    return index, problems, JsonDoc(doc.data, doc.text) if index is not None else None


def read_shard_header(source: CheckpointSource, name: str) -> tuple[SafetensorsHeader | None, list[Finding]]:
    try:
        with source.open(name) as stream:
            result = read_header(stream, source.size(name))
    except OSError as exc:
        return None, [finding("DSP018", f"{name} cannot be read: {exc.strerror or exc}.", file=name)]
    problems = [finding(p.code, p.message, file=name, tensor=p.tensor) for p in result.problems]
    return result.header, problems


def load(source: CheckpointSource) -> Loaded:
    """Headers and JSON files; the mapping tables are read by `read_mappings` once the vocab tensors are known."""
    config_file = read_config_document(source)
    config, findings, config_doc = parse_config(config_file)
    index, index_problems, index_doc = read_index(source)
    findings += index_problems
    on_disk = source.safetensors_files()
    indexed = index.files if index else frozenset()
    names, too_many = capped_shards(indexed.union(on_disk))
    findings += too_many
    statuses = {name: source.status(name) for name in names}
    findings += shard_status_findings(statuses, indexed)
    headers: dict[str, SafetensorsHeader] = {}
    for name in (n for n, s in statuses.items() if s is PathStatus.OK):
        header, problems = read_shard_header(source, name)
        findings += problems
        if header is not None:
            headers[name] = header
    if not names:
        findings.append(finding("DSP101", "no *.safetensors file and no index in the checkpoint."))
    if index is not None:
        findings += index_findings(index, headers, on_disk)
    tensors = {
        e.name: TensorInfo(e.name, e.dtype, e.shape, shard, h.data_start + e.begin, e.nbytes)
        for shard, h in headers.items() for e in h.entries
    }
    return Loaded(config, tensors, headers, findings, config_doc, index, index_doc,
                  empty=config_file is None and not names)


def read_mapping(source: CheckpointSource, info: TensorInfo) -> tuple[bytes | None, list[Finding]]:
    """The only tensor data check ever reads: the small d2t/t2d tables, as raw little-endian bytes."""
    def unreadable(why: str) -> tuple[None, list[Finding]]:
        return None, [finding("DSP406", f"{info.name} {why}; its contents were not validated.",
                              file=info.file, tensor=info.name)]

    if info.nbytes > (limit := mapping_byte_limit(info.dtype)):
        return unreadable(f"is {info.nbytes:,} bytes, above the {limit:,}-byte read limit "
                          f"({MAX_MAPPING_ENTRIES:,} entries)")
    try:
        with source.open(info.file) as stream:
            stream.seek(info.begin)
            raw = stream.read(info.nbytes)
    except FileChanged as exc:
        return None, [finding("DSP020", f"{exc}; {info.name} was not validated.", file=info.file, tensor=info.name)]
    except OSError as exc:
        return unreadable(f"cannot be read ({exc.strerror or exc})")
    if len(raw) != info.nbytes:
        return unreadable("is truncated")
    if decode_ints(raw, info.dtype) is None:
        return unreadable(f"has dtype {info.dtype}")
    return raw, []
