"""vLLM draft classes the generated release model builds by recipe (issue 40 item 5; docs/upstream-notes.md 43):
what their records say, from the committed data (tools/release_model.py RECIPES, executed on each release)."""

from __future__ import annotations

import pytest

from dspark_ckpt.runtimes.generated_verdict import not_modelled
from dspark_ckpt.runtimes.release_model import architecture_model, release_record
from dspark_ckpt.runtimes.versions import VLLM_RELEASES


def test_ricursive_dflash2_nope_layers_hold_no_parameter() -> None:
    """no_rope_layers swaps a layer's rotary embedding for an identity (ricursive_dflash2.py _NoRope @ 0.34.0): the
    class reads the key, its other values move no tensor, and it builds exactly DFlash2's parameters."""
    ricursive = architecture_model("vllm", "0.34.0", "DFlash2RicursiveDraftModel")
    dflash2 = architecture_model("vllm", "0.34.0", "DFlash2DraftModel")
    assert ricursive is not None and dflash2 is not None and ricursive.not_built is None
    assert "no_rope_layers" in ricursive.reads and "no_rope_layers" not in dflash2.reads
    assert "no_rope_layers" not in ricursive.structural
    assert dict(ricursive.parameters) == dict(dflash2.parameters)
    assert set(ricursive.tensors) == set(dflash2.tensors)


def _registering(architecture: str) -> list[str]:
    return [r for r in VLLM_RELEASES if architecture in ((release_record("vllm", r) or {}).get("registry") or {})]


def test_cohere2_eagle_is_built_wherever_registered() -> None:
    releases = _registering("EagleCohereForCausalLM")
    assert releases[0] == "0.21.0" and releases[-1] == VLLM_RELEASES[-1], releases
    for release in releases:
        model = architecture_model("vllm", release, "EagleCohereForCausalLM")
        assert model is not None and model.not_built is None, release
        assert "layer_types" in model.reads, release  # indexed at the layer's absolute index (commandr.py)


@pytest.mark.parametrize("release", ["0.30.0", "0.32.0", "0.34.0"])
def test_deepseek_v41_dspark_stops_at_cuda_on_cpu(release: str) -> None:
    """The config keys it reads given (the hc_* and dspark_* keys), its own code stops at the attention's
    torch.cuda.Event: no CPU path (deepseek_v41/__init__.py imports the nvidia module but on ROCm)."""
    assert release in _registering("DSparkV41DraftModel")
    model = architecture_model("vllm", release, "DSparkV41DraftModel")
    assert model is not None and model.not_built is not None
    assert model.not_built["type"] == "RuntimeError", model.not_built
    assert "Event" in model.not_built["message"]
    assert model.not_built["where"].startswith("vllm/models/deepseek_v41/attention.py")


@pytest.mark.parametrize("release", ["0.30.0", "0.34.0"])
def test_deepseek_v41_dspark_is_registered_not_modelled_with_the_release_reason(release: str) -> None:
    """The words DSP232 and the release's DSP368 row carry for it (check/registration.py, check/no_verdict.py)."""
    why = not_modelled("vllm", release, "DSparkV41DraftModel")
    assert why is not None and why.startswith(f"registered, not modelled: vllm {release}'s own code stops building "
                                              "DSparkV41DraftModel on CPU (RuntimeError: Tried to instantiate dummy "
                                              "base class Event, vllm/models/deepseek_v41/attention.py:"), why
