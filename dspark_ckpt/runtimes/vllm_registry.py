"""Every architecture name vLLM's registry.py maps to a model class, per listed release, read lazily.

Generated from each release's wheel: the keys of every `_*_MODELS` dict display of
vllm/model_executor/models/registry.py, read with `ast` by `python tools/release_lines.py X.Y.Z` into
`release_data/vllm-X.Y.Z/spec.json` (runtimes/spec_facts.py reads it on first use). An architecture missing there
fails in ModelRegistry._raise_for_unsupported ("Model architectures [...] are not supported for now.").
"""

from __future__ import annotations

from dspark_ckpt.runtimes.spec_facts import registry_names
from dspark_ckpt.runtimes.versions import VLLM_RELEASES

RELEASES = VLLM_RELEASES  # the one list; each entry's spec.json holds its registry


def registered(architecture: str, release: str) -> bool | None:
    """Whether `release` (one of RELEASES) maps the name; None for a release not read here."""
    if release not in RELEASES:
        return None
    return architecture in registry_names(release)
