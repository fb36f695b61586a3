"""Read a local draft folder once into the Situation that planning needs (headers, JSON files, mapping tables)."""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from dspark_ckpt.check.analysis import TargetVocab, draft_facts, inspect_loaded, load, read_mapping
from dspark_ckpt.errors import SourceError
from dspark_ckpt.formats.vocab_tensors import find_vocab_tensors
from dspark_ckpt.repair.plan import Situation
from dspark_ckpt.runtimes.selectors import RuntimeVersion
from dspark_ckpt.sources.base import CONFIG_NAME, INDEX_NAME
from dspark_ckpt.sources.local import LocalFolder


def _json(source: LocalFolder, name: str) -> tuple[dict[str, Any] | None, str | None]:
    try:
        raw = source.read_text_file(name)
        doc = json.loads(raw) if raw is not None else None
    except (OSError, ValueError):
        return None, None  # check reports it; planning refuses on the finding
    if not isinstance(doc, dict) or raw is None:
        return None, None
    return doc, raw.decode("utf-8")


def fingerprints(folder: Path, names: Sequence[str]) -> tuple[tuple[str, int, int, int], ...]:
    """What apply compares before writing, so a checkpoint changed since planning is never half-repaired."""
    found = []
    for name in names:
        try:
            st = os.stat(folder / name)
        except OSError:
            continue
        found.append((name, st.st_ino, st.st_size, st.st_mtime_ns))
    return tuple(found)


def read_situation(folder: Path, target: TargetVocab, runtimes: Sequence[RuntimeVersion]) -> Situation:
    if not folder.is_dir():
        raise SourceError(f"{folder}: fix works on a checkpoint folder", code="DSP-E062",
                          hint="give the folder that holds config.json and the safetensors files")
    source = LocalFolder(folder)
    loaded = load(source)
    report = inspect_loaded(source, loaded, target=target, runtimes=runtimes)
    vocab = find_vocab_tensors(loaded.tensors)
    config, config_text = _json(source, CONFIG_NAME)
    index, index_text = _json(source, INDEX_NAME)
    facts = (draft_facts(loaded.config, vocab, target.size, target_is_omni=target.omni)
             if loaded.config is not None else None)
    d2t_values = read_mapping(source, vocab.d2t)[0] if vocab.d2t is not None else None
    d2t_all_zero = d2t_values is not None and len(d2t_values) > 0 and not any(d2t_values)
    t2d = vocab.t2d
    flags: bytes | None = None
    if t2d is not None and t2d.dtype == "BOOL" and t2d.shape == (target.size,) and facts is not None:
        raw = read_mapping(source, t2d)[0]
        if raw is not None and sum(1 for x in raw if x) == facts.draft_vocab_size:
            flags = bytes(raw)
    names = [CONFIG_NAME, INDEX_NAME, *loaded.headers]
    return Situation(
        source=str(folder), facts=facts if config is not None else None, findings=report.findings, vocab=vocab,
        tensors=loaded.tensors, shard_metadata={n: h.metadata for n, h in loaded.headers.items()},
        config=config or {}, config_text=config_text or "", index=index, index_text=index_text,
        d2t_all_zero=d2t_all_zero, t2d_flags=flags, fingerprints=fingerprints(folder, names),
    )
