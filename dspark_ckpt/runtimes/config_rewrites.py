"""What a vLLM release's own config rewrites do to a draft config, as executed: `config_rewrites.json` and
`eagle_renames.json` beside each listed release's data (tools/release_config_rewrites.py runs the release's `SpeculativeConfig.hf_config_override`,
`EAGLEConfig.__init__` and `MedusaConfig.__init__` over stand-in configs, and reads `__post_init__`'s per-method
overrides with `ast`). Read lazily, one file per release asked.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from dspark_ckpt.runtimes.release_store import release_file

FILE = "config_rewrites.json"  # every vLLM build reads it
EAGLE_FILE = "eagle_renames.json"  # only a draft EAGLEConfig wraps


@dataclass(frozen=True, slots=True)
class Override:
    """hf_config_override's outcome for one model_type: the model_type and architectures it leaves (None: kept)."""

    model_type: str | None
    architectures: tuple[str, ...] | None
    where: str  # speculative.py @ vX Lfirst-last


@functools.cache
def _record(release: str, name: str = FILE) -> Mapping[str, Any]:
    try:
        data = release_file("vllm", release, name)
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _where(part: Mapping[str, Any], release: str) -> str:
    return f"{part.get('file')} @ v{release} L{part.get('line')}-{part.get('end')}"


def override(release: str, model_type: str | None) -> Override | None:
    """The draft ModelConfig's hf_overrides for this model_type (every method): the model_type and architectures it
    changes (a model_type it leaves alone is not recorded); None where it changes neither, or was not replayed (it
    raised over the stand-in: recorded as `raises`)."""
    part = _record(release).get("hf_config_override") or {}
    entry = (part.get("model_types") or {}).get(model_type or "")
    if not isinstance(entry, dict) or "raises" in entry or not entry:
        return None
    archs = entry.get("architectures")
    return Override(entry.get("model_type", model_type), tuple(archs) if isinstance(archs, list) else None,
                    _where(part, release))


def architecture_override(release: str, hf: Mapping[str, Any]) -> Override | None:
    """What hf_config_override does to a registered draft name of its own (`architectures`: the release's branch
    run over a stand-in with each key its test reads set to a non-empty and an empty list): the outcome recorded
    for the config's first architecture, as written or for a key its test reads at the truthiness the config's value
    has (0.34: a DFlash2DraftModel whose `no_rope_layers` is non-empty becomes DFlash2RicursiveDraftModel). None
    where the release changes nothing for it. The branch returns: no model_type override follows."""
    archs = hf.get("architectures")
    first = archs[0] if isinstance(archs, list) and archs and isinstance(archs[0], str) else None
    part = _record(release).get("hf_config_override") or {}
    entry = (part.get("architectures") or {}).get(first or "")
    if not isinstance(entry, dict):
        return None
    where = _where({**entry, "file": part.get("file")}, release)  # the branch's own lines
    for key, seen in sorted((entry.get("keys") or {}).items()):
        value = hf.get(key)
        outcome = next((out for probe, out in seen.items() if bool(json.loads(probe)) is bool(value)), None)
        if value is not None and outcome:
            return _arch_override(outcome, hf, f"{where} ({key} {json.dumps(value)[:40]})")
    written = entry.get("as_written")
    return _arch_override(written, hf, where) if written else None


def _arch_override(outcome: Mapping[str, Any], hf: Mapping[str, Any], where: str) -> Override:
    archs = outcome.get("architectures")
    model_type = hf.get("model_type")
    return Override(outcome.get("model_type", model_type if isinstance(model_type, str) else None),
                    tuple(archs) if isinstance(archs, list) else None, where)


def medusa_architectures(release: str) -> Override | None:
    """The architectures MedusaConfig.__init__ gives a config.json that names none (0.12-0.32; None where the
    release has no MedusaConfig)."""
    part = _record(release).get("medusa_config") or {}
    archs = part.get("architectures")
    if not isinstance(archs, list) or not archs:
        return None
    return Override("medusa", tuple(str(a) for a in archs), _where(part, release))


@dataclass(frozen=True, slots=True)
class MedusaKeys:
    """What MedusaConfig does to a Medusa config.json's keys (0.12-0.32, executed): `from_pretrained`'s renames
    (FasterDecoding's `medusa_num_heads` -> `num_heads`, ...), and the attribute its `num_lookahead_tokens` setter
    writes, which SpeculativeConfig.__post_init__ sets to num_speculative_tokens (None: the release has neither)."""

    renames: Mapping[str, str]
    renames_where: str
    lookahead: str | None
    lookahead_where: str


def medusa_keys(release: str) -> MedusaKeys | None:
    part = _record(release).get("medusa_config") or {}
    renames, lookahead = part.get("renames") or {}, part.get("lookahead")
    if not renames and not isinstance(lookahead, str):
        return None
    at = part.get("lookahead_set") or {}
    return MedusaKeys({str(k): str(v) for k, v in renames.items()},
                      f"{part.get('file')} @ v{release} L{part.get('renames_line')}-{part.get('renames_end')}",
                      lookahead if isinstance(lookahead, str) else None,
                      f"{at.get('file')} @ v{release} L{at.get('line')}, {part.get('file')} L{part.get('lookahead_line')}")


def renames(release: str) -> Mapping[str, Mapping[str, Any]]:
    """architecture -> method -> the name EAGLEConfig gives it (or {"raises": ...}), for the probed names."""
    part = _record(release, EAGLE_FILE).get("eagle_config") or {}
    names = part.get("names")
    return names if isinstance(names, dict) else {}


def eagle_where(release: str) -> str:
    return _where(_record(release, EAGLE_FILE).get("eagle_config") or {}, release)



@dataclass(frozen=True, slots=True)
class MethodOverride:
    """What SpeculativeConfig.__post_init__ gives one method's draft ModelConfig in place of hf_config_override
    (its `draft_hf_overrides` literal), and the draft attributes it then sets to the target's vocab_size."""

    hf_overrides: Mapping[str, Any]
    target_vocab: tuple[str, ...]
    where: str  # speculative.py @ vX Lline (the overrides)
    vocab_where: str | None  # speculative.py @ vX Lline (the first attribute set to the target's vocab_size)


def method_override(release: str, method: str | None) -> MethodOverride | None:
    """The record's `method_overrides` entry for `method` (0.25-0.32: medusa -> {"model_type": "medusa"}, vocab_size
    and truncated_vocab_size the target's); None where the release has no such branch."""
    part = _record(release).get("method_overrides") or {}
    entry = (part.get("methods") or {}).get(method or "")
    if not isinstance(entry, dict) or not isinstance(entry.get("hf_overrides"), dict):
        return None
    sets = entry.get("target_vocab") if isinstance(entry.get("target_vocab"), dict) else {}
    file = part.get("file")
    first = min(sets.values()) if sets else None
    return MethodOverride(dict(entry["hf_overrides"]), tuple(sorted(sets)), f"{file} @ v{release} L{entry.get('line')}",
                          f"{file} @ v{release} L{first}" if first is not None else None)
