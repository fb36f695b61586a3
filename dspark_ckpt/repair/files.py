"""Pure: a plan's actions -> the files to write (shards as byte ranges, the index, config.json) and the write steps."""

from __future__ import annotations

import json
import math
import re
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from dspark_ckpt.formats.safetensors_header import DTYPE_BITS
from dspark_ckpt.repair import actions as a
from dspark_ckpt.sources.base import CONFIG_NAME, INDEX_NAME

_SURROGATE = re.compile("[\ud800-\udfff]")

if TYPE_CHECKING:
    from dspark_ckpt.repair.situation import Situation


def dump_like(doc: Any, original: str | None) -> str:
    """JSON in the original file's indentation (2 when unknown or minified-but-new), ending as it ended."""
    indent: int | None = 2
    if original is not None:
        match = re.search(r"\n([ \t]+)\S", original)
        indent = len(match.group(1)) if match else (None if original.strip() and "\n" not in original.strip()
                                                    else 2)
    text = json.dumps(doc, indent=indent, ensure_ascii=False)
    return text + ("\n" if original is None or original.endswith("\n") else "")


def _fix_metadata(old: dict[str, str] | None, done: Sequence[a.Action]) -> dict[str, str]:
    meta = dict(old or {"format": "pt"})
    history: list[Any] = []
    try:
        previous = json.loads(meta.get(a.METADATA_KEY, "[]"))
        history = previous if isinstance(previous, list) else []
    except json.JSONDecodeError:
        pass
    meta[a.METADATA_KEY] = json.dumps(history + [a.action_json(x) for x in done], separators=(",", ":"))
    return meta


def _shard(s: Situation, file: str, acts: Sequence[a.Action]) -> a.ShardWrite:
    trims = {x.tensor: x.rows for x in acts if isinstance(x, a.TrimRows)}
    drops = {x.tensor for x in acts if isinstance(x, a.DropTensor)}
    puts = {x.tensor: x for x in acts if isinstance(x, a.PutTensor)}
    renames = _renames(acts)
    out: list[a.TensorWrite] = []
    for info in sorted((t for t in s.tensors.values() if t.file == file), key=lambda t: t.begin):
        if info.name in drops:
            continue
        if info.name in puts:
            put = puts.pop(info.name)
            out.append(a.TensorWrite(put.tensor, put.dtype, put.shape, len(put.data), data=put.data))
        elif info.name in trims:
            shape = (trims[info.name], *info.shape[1:])
            nbytes = math.prod(shape) * DTYPE_BITS[info.dtype] // 8
            out.append(a.TensorWrite(info.name, info.dtype, shape, nbytes, info.file, info.begin))
        else:  # copied whole, under its new name where it is renamed: the same byte range of the source
            name = renames.get(info.name, info.name)
            out.append(a.TensorWrite(name, info.dtype, info.shape, info.nbytes, info.file, info.begin,
                                     source_name=info.name if name != info.name else None))
    out += [a.TensorWrite(p.tensor, p.dtype, p.shape, len(p.data), data=p.data) for p in puts.values()]
    new = file not in s.shard_metadata
    return a.ShardWrite(file, tuple(out), _fix_metadata(None if new else s.shard_metadata[file], acts), new)


def _renames(actions: Sequence[a.Action]) -> dict[str, str]:
    return {x.tensor: x.new_name for x in actions if isinstance(x, a.RenameTensor)}


def _index(s: Situation, shards: Sequence[a.ShardWrite], removed: Sequence[str],
           renames: dict[str, str]) -> a.TextWrite | None:
    if s.index is None and not any(sh.new for sh in shards):
        return None  # a single-file or unindexed checkpoint stays so unless a shard is added
    placed = {name: info.file for name, info in s.tensors.items()}
    sizes = {name: info.nbytes for name, info in s.tensors.items()}
    for sh in shards:
        for name in [n for n, f in placed.items() if f == sh.file]:
            del placed[name]
        placed.update({t.name: sh.file for t in sh.tensors})
        sizes.update({t.name: t.nbytes for t in sh.tensors})
    doc: dict[str, Any] = dict(s.index) if s.index is not None else {"metadata": {}, "weight_map": {}}
    old_map = [renames.get(n, n) for n in doc.get("weight_map") or {}]  # a renamed entry keeps its place
    weight_map = {n: placed[n] for n in old_map if n in placed}
    weight_map.update({n: f for n, f in sorted(placed.items()) if n not in weight_map and f not in removed})
    meta = dict(doc.get("metadata") or {})
    meta["total_size"] = sum(sizes[n] for n in weight_map)
    doc["metadata"], doc["weight_map"] = meta, weight_map
    return a.TextWrite(INDEX_NAME, s.index_text, dump_like(doc, s.index_text))


def file_changes(s: Situation, actions: Sequence[a.Action]) -> a.FileChanges:
    by_file: dict[str, list[a.Action]] = {}
    for x in actions:
        if not isinstance(x, a.SetConfig):
            by_file.setdefault(x.file, []).append(x)
    every = [_shard(s, file, acts) for file, acts in by_file.items()]
    removed = tuple(sh.file for sh in every if not sh.tensors)  # a shard left empty is deleted
    shards = sorted((sh for sh in every if sh.tensors), key=lambda sh: (not sh.new, sh.file))
    texts = [t for t in (_index(s, every, removed, _renames(actions)),) if t is not None]
    settings = {x.key: x.new for x in actions if isinstance(x, a.SetConfig)}
    if settings:
        texts.append(a.TextWrite(CONFIG_NAME, s.config_text, dump_like({**s.config, **settings}, s.config_text)))
    return a.FileChanges(tuple(shards), removed, tuple(texts))


def write_steps(changes: a.FileChanges, in_place: bool) -> tuple[str, ...]:
    """Every point at which apply can be interrupted, in order (the names DSPARK_CKPT_CRASH_AT accepts). In place, a
    run killed from `commit` on is completed by the next fix or check (the journal); before it, rolled back."""
    writes = [f"write:{name}" for name in changes.put_order]
    if not in_place:
        return ("lock", "stage-dir", "linked", *writes, "fsync-dir", "verified", "commit", "committed")
    puts = [f"put:{name}" for name in changes.put_order]
    return ("lock", "journal", "stage-dir", "linked", *writes, "fsync-dir", "verified", "commit", *puts, "committed")


def lone_surrogates(changes: a.FileChanges) -> list[str]:
    """JSON files fix would write holding a lone surrogate escape (e.g. \\ud800): no UTF-8 file can hold one."""
    found = []
    for t in changes.texts:
        match = _SURROGATE.search(t.new)
        if match:
            line = t.new.count("\n", 0, match.start()) + 1
            found.append(f"{t.file} line {line} holds the escape \\u{ord(match.group()):04x}, a lone surrogate")
    return found
