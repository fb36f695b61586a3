"""Pure: a key config.json states as null that the release's transformers types without None in a `@strict`
config class: AutoConfig refuses the config before the runtime reads anything else (SGLang's get_config, from
configs/model_config.py), in huggingface_hub's words. The typed keys per transformers and model type are generated
(strict_config_fields.json, tools/strict_config_fields.py); the transformers a release pins is its record's."""

from __future__ import annotations

import functools
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from dspark_ckpt.model.codes import FindingCode
from dspark_ckpt.runtimes.records import Issue
from dspark_ckpt.runtimes.release_model import modelled_release
from dspark_ckpt.runtimes.release_store import release_file

CODE: FindingCode = "DSP372"
FILE = Path(__file__).resolve().parent / "strict_config_fields.json"


@functools.cache
def _table() -> Mapping[str, Any]:
    try:
        doc = json.loads(FILE.read_text())
    except (OSError, ValueError):
        return {}
    found = doc.get("transformers") if isinstance(doc, dict) else None
    return found if isinstance(found, dict) else {}


def pinned_transformers(runtime: str, version: str) -> str | None:
    """The transformers the release's generated model ran with (its record's), for the release that models it."""
    release = modelled_release(runtime, version)
    record = release_file(runtime, release, "release.json") if release is not None else None
    pinned = record.get("transformers") if isinstance(record, dict) else None
    return pinned if isinstance(pinned, str) else None


def refused_null(runtime: str, version: str, raw: Mapping[str, Any]) -> Issue | None:
    """The first null key (in config.json's order) the model type's strict config class types without None."""
    model_type = raw.get("model_type")
    pinned = pinned_transformers(runtime, version)
    cls = (_table().get(pinned) or {}).get(model_type) if isinstance(model_type, str) and pinned else None
    if not isinstance(cls, dict):
        return None
    typed = cls.get("not_null") or {}
    for key, value in raw.items():
        if value is None and key in typed:
            want = " | ".join(typed[key])
            return Issue(CODE, f"StrictDataclassFieldValidationError: Validation error for field '{key}': TypeError: "
                               f"Field '{key}' expected {want}, got NoneType (value: None) ({cls.get('class')}, "
                               f"{cls.get('where')} @ transformers {pinned}: config.json states {key} as null, "
                               "which this config class types without None; AutoConfig refuses it)", verbatim=False)
    return None
