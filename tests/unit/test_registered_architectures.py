"""The registration data is what the releases' own registries say: regenerated from each wheel and compared in the
upstream tier; in the hermetic suite, the committed file is as tools/registry_data.py writes it and agrees with the
other generated data of every release (spec.json's drafts, the release model's registry)."""

from __future__ import annotations

import importlib.util
import json
import re
import sys
from pathlib import Path
from types import ModuleType

import pytest

from dspark_ckpt.runtimes import registered, spec_facts
from dspark_ckpt.runtimes.release_model import release_record

ROOT = Path(__file__).resolve().parents[2]
EVERY = [(runtime, release) for runtime, releases in registered.RELEASES.items() for release in releases]


def _tool() -> ModuleType:
    spec = importlib.util.spec_from_file_location("registry_data", ROOT / "tools" / "registry_data.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("registry_data", module)
    spec.loader.exec_module(module)
    return module


def _committed(runtime: str, release: str) -> dict[str, tuple[str, str]]:
    return {name: (r.kind, r.where) for name in registered.names(runtime)
            if (r := registered.registration(runtime, release, name)) is not None}


@pytest.mark.upstream
@pytest.mark.parametrize(("runtime", "release"), EVERY)
def test_committed_data_is_the_release_registry(runtime: str, release: str) -> None:
    from released_sources import release_tree

    tool = _tool()
    read = tool.vllm_entries if runtime == "vllm" else tool.sglang_entries
    assert _committed(runtime, release) == read(release_tree(runtime, release))


def test_the_file_is_as_the_tool_writes_it() -> None:
    """One architecture a line, in the tool's order: a hand edit that the tool would not write fails here."""
    text = registered.DATA.read_text()
    doc = json.loads(text)
    assert _tool().render(doc) == text
    for runtime in registered.RELEASES:
        assert list(doc[runtime]["architectures"]) == sorted(doc[runtime]["architectures"]), runtime  # build() sorts


@pytest.mark.parametrize(("runtime", "release"), EVERY)
def test_each_entry_is_well_formed(runtime: str, release: str) -> None:
    """A draft or a model, registered at a file:line of the runtime's own package."""
    where = re.compile(rf"{runtime}/[\w/]+\.py:[1-9]\d*")
    for name, (kind, at) in _committed(runtime, release).items():
        assert kind in ("draft", "model") and where.fullmatch(at), (name, kind, at)


@pytest.mark.parametrize(("runtime", "release"), EVERY)
def test_the_drafts_are_those_the_other_generated_data_build(runtime: str, release: str) -> None:
    """Three generators read the same registry: tools/registry_data.py (this file), tools/release_spec.py (vLLM's
    spec.json) and the release model's worker (its registry): they name the same drafts."""
    drafts = {name for name, (kind, _) in _committed(runtime, release).items() if kind == "draft"}
    assert drafts, release
    assert drafts == set((release_record(runtime, release) or {}).get("registry", {})), release
    if runtime == "vllm":
        assert drafts == set(spec_facts.drafts(release)), release


def test_data_lists_the_covered_releases() -> None:
    doc = json.loads(registered.DATA.read_text())
    assert tuple(doc["vllm"]["releases"]) == registered.RELEASES["vllm"]
    assert tuple(doc["sglang"]["releases"]) == registered.RELEASES["sglang"]


@pytest.mark.parametrize(("runtime", "release", "name", "kind"), [
    # vLLM registry.py: drafts in _SPECULATIVE_DECODING_MODELS, one per backbone; Medusa through 0.32 only.
    ("vllm", "0.33.0", "Eagle3DeepseekV2ForCausalLM", "draft"), ("vllm", "0.33.0", "EagleLlama4ForCausalLM", "draft"),
    ("vllm", "0.33.0", "DFlash2BeamDraftModel", "draft"), ("vllm", "0.33.0", "K3DSparkModel", "draft"),
    ("vllm", "0.33.0", "DeepSeekMTPModel", "draft"), ("vllm", "0.32.0", "MedusaModel", "draft"),
    ("vllm", "0.33.0", "MedusaModel", None), ("vllm", "0.33.0", "Qwen2ForCausalLM", "model"),
    # MLPSpeculatorPreTrainedModel is commented out of 0.32's registry: not registered.
    ("vllm", "0.32.0", "MLPSpeculatorPreTrainedModel", None),
    # a name only in _PREVIOUSLY_SUPPORTED_MODELS is refused by the registry
    ("vllm", "0.33.0", "MotifForCausalLM", None),
    # SGLang EntryClass: the Kimi/DeepSeek-MLA EAGLE-3 draft from 0.5.12 (models/kimi_k25_eagle3.py).
    ("sglang", "0.5.23", "Eagle3DeepseekV2ForCausalLM", "draft"), ("sglang", "0.5.11", "Eagle3DeepseekV2ForCausalLM", None),
    ("sglang", "0.5.23", "LingDSparkModel", "draft"), ("sglang", "0.5.23", "DeepseekV3ForCausalLMNextN", "draft"),
    ("sglang", "0.5.23", "MuseGlimmerAssistantModel", "draft"), ("sglang", "0.5.23", "Qwen2ForCausalLM", "model"),
])
def test_registrations(runtime: str, release: str, name: str, kind: str | None) -> None:
    found = registered.registration(runtime, release, name)
    assert (found.kind if found else None) == kind


def test_a_lookup_reads_the_same_entry_as_the_whole_document() -> None:
    """registered.py reads one name's line (tools/registry_data.py writes one architecture per line); every name of
    the parsed document gives the same registrations that way, and a name that is no key gives none."""
    doc = json.loads(registered.DATA.read_text())
    for runtime in ("vllm", "sglang"):
        releases = tuple(doc[runtime]["releases"])
        for name, entry in doc[runtime]["architectures"].items():
            want = {r: (entry["kind"], where) for span, where in entry["where"].items()
                    for r in registered._expand(span, releases)}
            got = {r: (g.kind, g.where) for r in releases if (g := registered.registration(runtime, r, name))}
            assert got == want, (runtime, name)
        assert registered.registration(runtime, releases[-1], "NoSuchArchitectureForCausalLM") is None
        assert registered.registration(runtime, releases[-1], "releases") is None  # a key of the header line
