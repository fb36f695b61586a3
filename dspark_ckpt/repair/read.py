"""The Situation planning needs, from check's own analysis of the folder plus the files' fingerprints."""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

from dspark_ckpt.check.analysis import Analysis, analyze
from dspark_ckpt.errors import SourceError
from dspark_ckpt.model.target import TargetVocab
from dspark_ckpt.repair.plan import Situation
from dspark_ckpt.runtimes.selectors import RuntimeVersion
from dspark_ckpt.sources.base import CONFIG_NAME, INDEX_NAME
from dspark_ckpt.sources.local import LocalFolder


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


def t2d_flags(analysis: Analysis) -> bytes | None:
    """A t2d usable to rebuild d2t: BOOL, length T, exactly D ids marked."""
    t2d, facts, values = analysis.vocab.t2d, analysis.facts, analysis.mappings.t2d
    if t2d is None or facts is None or values is None or t2d.shape != (facts.target_vocab_size,):
        return None
    return bytes(values) if sum(1 for x in values if x) == facts.draft_vocab_size else None


def situation_from(analysis: Analysis, folder: Path) -> Situation:
    loaded = analysis.loaded
    config, index = loaded.config_doc, loaded.index_doc
    names = [CONFIG_NAME, INDEX_NAME, *loaded.headers]
    return Situation(
        source=str(folder), facts=analysis.facts if config is not None else None, findings=analysis.findings,
        vocab=analysis.vocab, tensors=loaded.tensors,
        shard_metadata={n: h.metadata for n, h in loaded.headers.items()},
        config=config.raw if config else {}, config_text=config.text if config else "",
        index=index.raw if index else None, index_text=index.text if index else None,
        d2t_all_zero=analysis.mappings.d2t_all_zero, t2d_flags=t2d_flags(analysis),
        fingerprints=fingerprints(folder, names),
        nested_settings=analysis.config.nested_settings if analysis.config is not None else (),
    )


def read_situation(folder: Path, target: TargetVocab, runtimes: Sequence[RuntimeVersion]) -> Situation:
    if not folder.is_dir():
        raise SourceError(f"{folder}: fix works on a checkpoint folder", code="DSP-E062",
                          hint="give the folder that holds config.json and the safetensors files")
    return situation_from(analyze(LocalFolder(folder), target=target, runtimes=runtimes), folder)
