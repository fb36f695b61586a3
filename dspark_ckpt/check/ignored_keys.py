"""Pure: config keys the draft sets that change what one evaluated vLLM release builds, but that another does not
read -> DSP366, naming the release's own key with the same effect where it has one.

Each release's generated model (runtimes/release_data, `structural`) records the keys whose change alters the
parameters its class builds (`eagle_config.norm_before_fc`: `model.input_norm.weight`), nested keys included, and
`reads` the top-level keys its `__init__` reads at all. A key one release builds from and another provably does
not read (a top-level key outside its `reads`; a nested key where it reads the same name at the top level) is a
setting the second release drops: the draft runs there without the structure it was trained with (no
`input_norm` before `fc`, say), with no error. Only the releases the run evaluates are compared, from the models the
verdicts already read; the aux-layer count keys are DSP356's.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from dspark_ckpt.check.aux_findings import vllm_releases
from dspark_ckpt.model.findings import Finding, finding
from dspark_ckpt.runtimes.records import BuiltConfig
from dspark_ckpt.runtimes.release_model import (
    ArchitectureModel,
    built_model,
    config_value,
)

# What the aux-state findings (DSP356/DSP357, runtimes/eagle3_aux.py) already say of a draft.
AUX_KEYS = frozenset({"num_aux_layers", "num_aux_hidden_states", "eagle_aux_hidden_state_layer_ids",
                      "eagle_config.eagle_aux_hidden_state_layer_ids"})


def _models(builds: Sequence[BuiltConfig]) -> dict[str, tuple[BuiltConfig, ArchitectureModel]]:
    found = {}
    for built in builds:
        if built.runtime != "vllm" or built.error is not None or built.hf is None or built.architecture is None:
            continue
        if (model := built_model("vllm", built.version, built.architecture)) is not None:
            found[built.version] = (built, model)
    return found


def _changes(probe: Mapping[str, Any]) -> tuple[str, ...]:
    """The parameters a structural key's other value moves (release_data `structural`)."""
    return tuple(probe.get("changes", ()))


def _ignores(model: ArchitectureModel, key: str, changes: tuple[str, ...]) -> bool:
    """Whether the release's model provably does not read `key`: a top-level key its __init__ never reads as an
    attribute (`reads` records every one); a nested key only where the release builds the same parameters from the
    top-level key of the same name instead (the nested reads themselves are not recorded, so absence alone proves
    nothing: DFlash 0.20 merges dflash_config into eagle_config and reads it from there)."""
    if key in model.structural:
        return False
    if "." not in key:
        return key not in model.reads
    top = model.structural.get(key.rsplit(".", 1)[1])
    return top is not None and _changes(top) == changes


def ignored_key_findings(builds: Sequence[BuiltConfig]) -> list[Finding]:
    models = _models(builds)
    effects: dict[str, tuple[Any, tuple[str, ...]]] = {}  # key -> (its base value, the parameters it changes)
    for _, model in models.values():
        for key, probe in model.structural.items():
            effects.setdefault(key, (probe.get("base"), _changes(probe)))
    statements: dict[tuple[str, tuple[str, ...]], list[str]] = {}
    for version, (built, model) in models.items():
        for key, (base, changes) in effects.items():
            value = config_value(built.hf or {}, key)
            if key in AUX_KEYS or value is None or value == base or (base is None and not value) \
                    or not _ignores(model, key, changes):
                continue
            instead = tuple(k for k, p in model.structural.items() if _changes(p) == changes)
            statements.setdefault((key, instead), []).append(version)
    parts, hints = [], []
    for (key, instead), versions in statements.items():
        base, changes = effects[key]
        readers = [v for v, (_, m) in models.items() if key in m.structural]
        shown = json.dumps(config_value(models[versions[0]][0].hf or {}, key))
        text = (f"{vllm_releases(versions)} do not read {key} ({shown}) "
                f"and build no {', '.join(changes)} from it, as {vllm_releases(readers)} do")
        if instead:
            text += f"; they read {' or '.join(instead)} instead"
        parts.append(text)
        where = f" where {vllm_releases(versions)} read it ({' or '.join(instead)})" if instead else ""
        hints.append(f"{'Also write ' + key + where + ', or s' if where else 'S'}erve the draft on "
                     f"{vllm_releases(readers)}, which read {key}")
    if not parts:
        return []
    return [finding("DSP366", "; ".join(parts) + ": those releases build the draft without what it was trained "
                    "with; unless a tensor then fails to load, nothing says so.", file="config.json",
                    hint="; ".join(hints) + ".")]
