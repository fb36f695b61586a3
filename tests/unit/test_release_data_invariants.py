"""Every generated release model loads and holds together (runtimes/release_data, read through the package's own
loader): the hermetic side of the regeneration the upstream tier runs (tests/producers/test_release_data.py,
test_sglang_release_data.py: each release's wheel executed again and compared byte for byte)."""

from __future__ import annotations

import re

import pytest
from conftest import built_models

from dspark_ckpt.runtimes.release_model import architecture_model, generated_releases, normal, release_record
from dspark_ckpt.runtimes.versions import SGLANG_RELEASES, VLLM_RELEASES

GENERATED = [(runtime, release) for runtime in ("vllm", "sglang") for release in generated_releases(runtime)]
TOOL = {"vllm": "tools/release_model.py", "sglang": "tools/sglang_release_model.py"}


def test_every_listed_release_is_generated() -> None:
    assert set(VLLM_RELEASES) <= set(generated_releases("vllm"))
    assert set(SGLANG_RELEASES) <= set(generated_releases("sglang"))


@pytest.mark.parametrize(("runtime", "release"), GENERATED, ids=[f"{r}-{v}" for r, v in GENERATED])
def test_each_release_loads_and_holds_together(runtime: str, release: str) -> None:
    """The record names its release and the command that wrote it; every class its registry lists has a model,
    built (its class, where its file defines it, each tensor landing on a parameter it builds, its layout made of
    names it has rules for) or not, with what the release raised."""
    record = release_record(runtime, release)
    assert record is not None
    assert (record["runtime"], record["release"]) == (runtime, release)
    assert record["generated_by"] == f"python {TOOL[runtime]} {release}"
    assert record["registry"], release
    for name in record["registry"]:
        model = architecture_model(runtime, release, name)
        assert model is not None, name
        if model.not_built is not None:
            assert isinstance(model.not_built.get("type") or model.not_built.get("message"), str), name
            continue
        assert model.cls and model.where.startswith(f"{runtime}/"), (name, model.where)
        unknown = {rule.parameter for rule in model.tensors.values()} - {None, *model.parameters}
        assert not unknown, (name, unknown)
        assert all(n in model.tensors for n in model.layout), name



REFUSALS = ("refused_alone", "refused_null_alone", "null")  # release_worker._absence: a key taken with others


@pytest.mark.parametrize(("runtime", "release"), GENERATED, ids=[f"{r}-{v}" for r, v in GENERATED])
def test_what_a_key_s_absence_builds_is_told_of_the_base_s_parameters(runtime: str, release: str) -> None:
    """`absent_keys` (what the class builds where the config leaves a key out): what disappears or is resized is a
    parameter the base builds, what appears is not; each records a change, and the keys it is left out with are
    others."""
    for model in built_models(runtime, release):
        name = model.name
        for key, seen in model.absent_keys.items():
            assert set(seen) <= {"appears", "disappears", "resized", "with_absent", *REFUSALS}, (name, key)
            # a refusal beside the keys it is taken with is recorded only for such a key, each in the release's
            # words with the file and this release's line; a null alone builds what the absence builds or is refused
            assert "with_absent" in seen or not set(seen) & set(REFUSALS), (name, key)
            for field in ("refused_alone", "refused_null_alone"):
                if field in seen:
                    said = seen[field]
                    assert said["raises"] and said["message"] and re.fullmatch(r".+\.py:\d+", said["where"]), said
            assert seen.get("null", "as_absent") in ("as_absent", "other") or "raises" in seen["null"], (name, key)
            assert any(seen.get(f) for f in ("appears", "disappears", "resized")), (name, key)
            for parameter in (*seen.get("disappears", ()), *seen.get("resized", ())):
                assert normal(parameter) in model.parameters, (name, key, parameter)
            assert not any(normal(p) in model.parameters for p in seen.get("appears", ())), (name, key)
            assert key not in seen.get("with_absent", ()), (name, key)
