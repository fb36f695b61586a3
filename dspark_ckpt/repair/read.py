"""The Situation planning needs, from check's own analysis of the folder plus the files' fingerprints."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from dspark_ckpt.check.analysis import Analysis, analyze
from dspark_ckpt.errors import SourceError
from dspark_ckpt.formats.mapping import absolute_to_offsets, t2d_ids
from dspark_ckpt.model.codes import FindingCode
from dspark_ckpt.model.target import TargetVocab
from dspark_ckpt.repair.situation import Situation
from dspark_ckpt.repair.stamps import SourceStamp
from dspark_ckpt.runtimes.selectors import RuntimeVersion
from dspark_ckpt.sources.base import CONFIG_NAME, INDEX_NAME
from dspark_ckpt.sources.local import LocalFolder

# check's findings that the shipped d2t itself maps wrongly (outside [0, T), out of order): with an all-zero d2t
# (Situation.d2t_all_zero), what lets rebuild-d2t replace a pruned draft's shipped d2t (strategies.RebuildD2t).
_BROKEN_D2T: frozenset[FindingCode] = frozenset({"DSP402", "DSP403"})


def fingerprints(folder: Path, names: Sequence[str]) -> tuple[tuple[str, int, int, int], ...]:
    """(name, inode, size, mtime_ns) of each of `names` that exists: what proves a staged result is the one put in
    place (recheck.py). The source's own files are bound more strictly (binding.py)."""
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


def d2t_offsets(analysis: Analysis) -> tuple[tuple[int, ...] | None, str]:
    """What offset-d2t writes: the offsets of a d2t holding absolute target ids, where a t2d (if any) marks the
    same ids; else None and why not."""
    d2t, t2d, facts = analysis.mappings.d2t, analysis.mappings.t2d, analysis.facts
    if d2t is None or facts is None:
        return None, "it ships no d2t" if analysis.vocab.d2t is None else "its d2t could not be read"
    offsets = absolute_to_offsets(d2t, facts.target_vocab_size)
    if offsets is None:
        return None, ("its d2t does not hold absolute target ids (a strictly increasing subset of [0, T) that is "
                      "not already a valid map of offsets)")
    if t2d is not None and t2d_ids(t2d) != list(d2t):
        return None, "its d2t read as absolute ids disagrees with its t2d: which of the two is right is unknown"
    return tuple(offsets), ""


def situation_from(analysis: Analysis, folder: Path | None = None, stamps: tuple[SourceStamp, ...] = ()) -> Situation:
    """`folder`: the checkpoint; `stamps`: what binds a plan to the files it was made from (read_situation), none
    when only planning (a hint's check, a Hub repo)."""
    loaded = analysis.loaded
    config, index = loaded.config_doc, loaded.index_doc
    offsets, offsets_why = d2t_offsets(analysis)
    return Situation(
        source=str(folder), facts=analysis.facts if config is not None else None, findings=analysis.findings,
        vocab=analysis.vocab, tensors=loaded.tensors,
        shard_metadata={n: h.metadata for n, h in loaded.headers.items()},
        config=config.raw if config else {}, config_text=config.text if config else "",
        index=index.raw if index else None, index_text=index.text if index else None,
        d2t_all_zero=analysis.mappings.d2t_all_zero, t2d_flags=t2d_flags(analysis),
        fingerprints=stamps,
        nested_settings=analysis.config.nested_settings if analysis.config is not None else (),
        d2t_broken=any(f.code in _BROKEN_D2T and f.tensor == (analysis.vocab.d2t.name if analysis.vocab.d2t
                                                              else None) for f in analysis.findings),
        d2t_offsets=offsets, d2t_offsets_why=offsets_why, target=analysis.target, method=analysis.method,
    )


def read_situation(folder: Path, target: TargetVocab, runtimes: Sequence[RuntimeVersion],
                   speculative: Mapping[str, Any] | None = None) -> Situation:
    """`speculative`: the deploy's speculative config for this checkpoint, as check's analysis is handed it."""
    # fix's own I/O (hashing the sources it will rewrite), imported here: check's hints plan from the analysis alone
    from dspark_ckpt.repair.binding import stamp_sources

    if not folder.is_dir():
        raise SourceError(f"{folder}: fix works on a checkpoint folder", code="DSP-E062",
                          hint="give the folder that holds config.json and the safetensors files")
    source = LocalFolder(folder)
    analysis = analyze(source, target=target, runtimes=runtimes, speculative=speculative)
    return situation_from(analysis, folder, stamp_sources(folder, source, analysis.loaded.headers, (CONFIG_NAME, INDEX_NAME)))
