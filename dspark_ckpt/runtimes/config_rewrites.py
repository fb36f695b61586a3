"""What a vLLM release's own config rewrites do to a draft config, as executed: `config_rewrites.json` and
`eagle_renames.json` beside each listed release's data (tools/release_config_rewrites.py runs the release's `SpeculativeConfig.hf_config_override`,
`EAGLEConfig.__init__` and `MedusaConfig.__init__` over stand-in configs). Read lazily, one file per release asked.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from dspark_ckpt.runtimes.release_store import folder

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
    path = folder("vllm", release) / name
    try:
        data = json.loads(path.read_text())
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


def medusa_architectures(release: str) -> Override | None:
    """The architectures MedusaConfig.__init__ gives a config.json that names none (0.12-0.32; None where the
    release has no MedusaConfig)."""
    part = _record(release).get("medusa_config") or {}
    archs = part.get("architectures")
    if not isinstance(archs, list) or not archs:
        return None
    return Override("medusa", tuple(str(a) for a in archs), _where(part, release))


def renames(release: str) -> Mapping[str, Mapping[str, Any]]:
    """architecture -> method -> the name EAGLEConfig gives it (or {"raises": ...}), for the probed names."""
    part = _record(release, EAGLE_FILE).get("eagle_config") or {}
    names = part.get("names")
    return names if isinstance(names, dict) else {}


def eagle_where(release: str) -> str:
    return _where(_record(release, EAGLE_FILE).get("eagle_config") or {}, release)


# Hand-read, as no generated record holds it (an inline branch of SpeculativeConfig.__post_init__, not a function the
# generator runs): with method "medusa" the draft ModelConfig gets `hf_overrides={"model_type": "medusa"}` in place
# of hf_config_override, so a FasterDecoding config.json that names no model_type is parsed as MedusaConfig ("Old-
# format Medusa checkpoints (e.g. FasterDecoding/medusa-*) lack a model_type key"), and then its vocab_size is set to
# the target's ("omit vocab_size in config.json, so MedusaConfig falls back to its default (32001)"). The releases
# read, with the two lines of vllm/config/speculative.py; a release not here is taken as before (no such branch
# known): 0.33.0 dropped method medusa.
MEDUSA_SERVED: dict[str, tuple[int, int]] = {"0.27.0": (834, 876), "0.28.0": (889, 931), "0.29.0": (1230, 1272),
                                             "0.30.0": (1261, 1303), "0.31.0": (1275, 1317), "0.32.0": (1281, 1323)}


def medusa_served(release: str) -> tuple[str, str] | None:
    """Where the release injects model_type medusa and aligns the vocabulary for method medusa (file @ vX Lline),
    None where that is not known of it."""
    lines = MEDUSA_SERVED.get(release)
    if lines is None:
        return None
    return tuple(f"vllm/config/speculative.py @ v{release} L{line}" for line in lines)  # type: ignore[return-value]
