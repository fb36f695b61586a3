"""The installed vLLM's own loader, run on a draft's vocab tensors without an engine (a worker subprocess).

The model class comes from vLLM's registry; it is built with `__new__` and its real `__init__` (config and the
target vocab injected, as vLLM's unit tests for this contract do), under a 1-rank gloo process group and a default
config context. Only the decoder layers are replaced, by a stand-in that owns no parameter and swallows their
weights; everything `load_weights` touches for the vocab (lm_head, embed_tokens, d2t, the Markov and confidence
heads, their weight loaders and the name checks) is vLLM's code. `python engine_vllm.py REQUEST OUT` reads a
JSON request and writes one JSON result per case. Only the standard library, torch, safetensors and vLLM (and
what vLLM imports) are used: the file runs as a script, never through dspark_ckpt's package imports.
"""

from __future__ import annotations

import contextlib
import importlib
import json
import os
import sys
import tempfile
import traceback
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

# The decoder-layer classes each draft module builds its stack from: the heavy part the stand-in replaces.
DECODER_LAYERS: dict[str, tuple[str, ...]] = {
    "qwen3_dflash": ("DFlashQwen3DecoderLayer",),
    "qwen3_dspark": (),
    "gemma4_dspark": ("Gemma4DSparkDecoderLayer",),
    "llama_eagle3": ("LlamaDecoderLayer",),
    "qwen3_eagle3": ("Qwen3Eagle3DecoderLayer",),
}
# Post-load steps that precompute attention buffers from the layers (nothing about the vocab).
POST_LOAD = ("_build_fused_kv_buffers", "_build_context_kv_buffers")


def _stand_in(torch_nn: Any) -> type:
    """A decoder layer that owns no parameter and accepts its weights: the layers are not what verify checks."""

    class DecoderLayerStandIn(torch_nn.Module):  # type: ignore[misc]
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__()

        def load_weights(self, weights: Any) -> set[str]:
            return {name for name, _ in weights}

    return DecoderLayerStandIn


def _pin_platform(device: str) -> list[str]:
    """vLLM picks its platform on first use; on CPU say so before any model code is imported. Returns what was
    stubbed to build a config there."""
    if device != "cpu":
        return []
    os.environ.setdefault("VLLM_TARGET_DEVICE", "cpu")
    from vllm import platforms  # type: ignore[import-not-found, unused-ignore]
    from vllm.platforms.cpu import CpuPlatform  # type: ignore[import-not-found, unused-ignore]

    platforms._current_platform = CpuPlatform()  # 0.27-0.29 only detect CPU from a "+cpu" build tag
    return pass_triton_gate(CpuPlatform)


def pass_triton_gate(platform: Any) -> list[str]:
    """0.34.0+: CpuPlatform.check_and_update_config raises "vLLM on x86 CPUs requires Triton (triton-cpu)." on any
    VllmConfig built on an x86 machine without Triton (platforms/cpu.py). That gate is about the model runner, which
    neither verify nor the release-model probe starts; the config is built with HAS_TRITON read as True inside that
    one call only. Returns what was stubbed (nothing where Triton is installed or the release has no such gate)."""
    import inspect

    try:
        from vllm import triton_utils  # type: ignore[import-not-found, unused-ignore]
    except ImportError:  # a vLLM without the module has no such gate either
        return []
    original = inspect.getattr_static(platform, "check_and_update_config")
    function = getattr(original, "__func__", None)
    if triton_utils.HAS_TRITON or function is None or "requires Triton" not in inspect.getsource(function):
        return []

    def check_and_update_config(cls: Any, vllm_config: Any) -> Any:
        triton_utils.HAS_TRITON = True
        try:
            return function(cls, vllm_config)
        finally:
            triton_utils.HAS_TRITON = False

    platform.check_and_update_config = classmethod(check_and_update_config)
    return [("vllm.platforms.cpu.CpuPlatform.check_and_update_config: its x86 'requires Triton' gate passed "
             "(HAS_TRITON read as True inside that call only; no Triton code runs)")]


def _process_group(folder: str) -> None:
    from vllm.distributed import parallel_state as ps  # type: ignore[import-not-found, unused-ignore]

    ps.init_distributed_environment(world_size=1, rank=0, distributed_init_method=f"file://{folder}/pg",
                                    local_rank=0, backend="gloo")
    ps.initialize_model_parallel(1, 1)


def _hf_config(raw: dict[str, Any]) -> Any:
    """The draft's hf_config as vLLM gets it from transformers (defaults for keys the draft leaves out)."""
    from transformers import AutoConfig, PretrainedConfig  # type: ignore[import-not-found, unused-ignore]

    fields = {k: v for k, v in raw.items() if k != "model_type"}
    try:
        return AutoConfig.for_model(raw.get("model_type") or "qwen3", **fields)
    except (ValueError, KeyError):
        return PretrainedConfig(**fields)


def _vllm_config(hf: Any, target_vocab: int, dtype: Any, parallel_drafting: bool) -> Any:
    """The few fields a draft's `__init__` reads: the draft model config, and the target's vocab and depth."""
    draft = SimpleNamespace(hf_config=hf, hf_text_config=hf, quantization=None, dtype=dtype,
                            get_vocab_size=lambda: hf.vocab_size, get_hidden_size=lambda: hf.hidden_size)
    target = SimpleNamespace(get_vocab_size=lambda: target_vocab, get_total_num_hidden_layers=lambda: 1,
                             get_num_layers=lambda *args, **kwargs: 1,
                             get_hidden_size=lambda: hf.hidden_size, dtype=dtype, hf_config=hf, quantization=None,
                             head_dtype=None)
    spec = SimpleNamespace(draft_model_config=draft, parallel_drafting=parallel_drafting, method=None,
                           num_speculative_tokens=1, draft_tensor_parallel_size=1)
    from vllm.config import VllmConfig  # type: ignore[import-not-found, unused-ignore]

    base = VllmConfig()
    return SimpleNamespace(speculative_config=spec, model_config=target, load_config=base.load_config,
                           cache_config=base.cache_config, parallel_config=base.parallel_config,
                           compilation_config=base.compilation_config, quant_config=None)


@contextlib.contextmanager
def _patched(module: Any, names: dict[str, Any]) -> Iterator[None]:
    saved = {n: getattr(module, n) for n in names if hasattr(module, n)}
    for n, v in names.items():
        setattr(module, n, v)
    try:
        yield
    finally:
        for n in names:
            if n in saved:
                setattr(module, n, saved[n])
            else:
                delattr(module, n)


def _registered(architecture: str) -> tuple[str, str] | None:
    from vllm.model_executor.models import registry  # type: ignore[import-not-found, unused-ignore]

    entry = registry._SPECULATIVE_DECODING_MODELS.get(architecture)
    return (entry[0], entry[1]) if entry else None


def _module(name: str) -> Any:
    return importlib.import_module(name if "." in name else f"vllm.model_executor.models.{name}")


def _weights(folder: Path, device: str) -> Iterator[tuple[str, Any]]:
    """The checkpoint in vLLM's order (files naturally sorted, names sorted); decoder layers as shapes only."""
    import re

    import torch
    from safetensors import safe_open

    def natural(name: str) -> list[Any]:
        return [int(p) if p.isdigit() else p for p in re.split(r"(\d+)", name)]

    for file in sorted((p.name for p in folder.glob("*.safetensors")), key=natural):
        with safe_open(str(folder / file), framework="pt", device=device) as handle:
            for name in sorted(handle.keys()):
                if name.startswith(("layers.", "midlayer.")):
                    shape = handle.get_slice(name).get_shape()
                    yield name, torch.empty(shape, device="meta")
                else:
                    yield name, handle.get_tensor(name)


def _stub_layers(torch_nn: Any) -> dict[str, Any]:
    sink = _stand_in(torch_nn)
    names: dict[str, Any] = {}
    for modname, layers in DECODER_LAYERS.items():
        try:
            target = _module(modname)
        except ImportError:
            continue
        names.update({f"{modname}:{n}": (target, n, sink) for n in layers if hasattr(target, n)})
        names.update({f"{modname}:{v.__name__}.decoder_layer_cls": (v, "decoder_layer_cls", sink)
                      for v in vars(target).values() if isinstance(v, type) and "decoder_layer_cls" in vars(v)})
    return names


def _state(model: Any, shipped: set[str], hf: Any, target_vocab: int) -> dict[str, Any]:
    d2t = getattr(model, "draft_id_to_target_id", None)
    summary = None
    if d2t is not None:
        import torch

        ids = torch.arange(d2t.numel(), device=d2t.device) + d2t.detach().to(torch.long)
        summary = {"length": int(d2t.numel()), "all_zero": bool((d2t == 0).all()),
                   "max_target_id": int(ids.max()) if ids.numel() else None,
                   "out_of_range": int((ids >= target_vocab).sum())}
    head = getattr(model, "lm_head", None)
    return {
        "d2t_param": d2t is not None, "d2t_loaded": d2t is not None and any("d2t" in n for n in shipped),
        "d2t": summary, "has_own_lm_head": bool(getattr(model, "has_own_lm_head", False)),
        "has_own_embed_tokens": bool(getattr(model, "has_own_embed_tokens", False)),
        "lm_head_rows": getattr(head, "org_vocab_size", None), "draft_vocab_size": getattr(hf, "draft_vocab_size",
                                                                                          None),
    }


def _error(exc: BaseException, phase: str) -> dict[str, Any]:
    return {"phase": phase, "type": type(exc).__name__, "message": str(exc),
            "where": "".join(traceback.format_tb(exc.__traceback__)[-1:]).strip()}


def run_case(case: dict[str, Any], device: str) -> dict[str, Any]:
    """Build the registered class for the draft's architecture and run its __init__ and load_weights."""
    import torch
    from torch import nn
    from vllm.config import set_current_vllm_config  # type: ignore[import-not-found, unused-ignore]

    folder = Path(case["folder"])
    raw = json.loads((folder / "config.json").read_text())
    arch = (raw.get("architectures") or [None])[0]
    entry = _registered(arch) if isinstance(arch, str) else None
    if entry is None:
        return {"registered": False, "architecture": arch}
    module = _module(entry[0])
    cls = getattr(module, entry[1])
    hf = _hf_config(raw)
    vcfg = _vllm_config(hf, int(case["target_vocab"]), torch.float32, bool(case.get("parallel_drafting")))
    stubs = _stub_layers(nn)
    out: dict[str, Any] = {"registered": True, "architecture": arch, "module": module.__name__,
                           "class": cls.__name__, "error": None}
    with contextlib.ExitStack() as stack:
        for target, name, sink in stubs.values():
            stack.enter_context(_patched(target, {name: sink}))
        for klass in _post_load_owners():
            stack.enter_context(_patched(klass, {h: _noop for h in POST_LOAD if h in vars(klass)}))
        stack.enter_context(set_current_vllm_config(_default_config()))
        stack.enter_context(torch.device(device))
        try:
            model = cls.__new__(cls)
            cls.__init__(model, vllm_config=vcfg, prefix="")
        except Exception as exc:  # noqa: BLE001 - the runtime's own failure is the result
            if isinstance(exc, AttributeError) and "SimpleNamespace" in str(exc):
                return {**out, "adapter_error": _error(exc, "init")}  # our stand-in config lacks what it reads
            out["error"] = _error(exc, "init")
            return out
        shipped: set[str] = set()

        def feed() -> Iterator[tuple[str, Any]]:
            for name, tensor in _weights(folder, device):
                shipped.add(name)
                yield name, tensor

        try:
            model.load_weights(feed())
        except Exception as exc:  # noqa: BLE001 - vLLM raises ValueError, AssertionError, RuntimeError, ...
            out["error"] = _error(exc, "load_weights")
        out["state"] = _state(model, shipped, hf, int(case["target_vocab"]))
    return out


_DEFAULT: list[Any] = []


def _default_config() -> Any:
    if not _DEFAULT:
        from vllm.config import VllmConfig  # type: ignore[import-not-found, unused-ignore]

        _DEFAULT.append(VllmConfig())
    return _DEFAULT[0]


def _noop(self: Any, *args: Any, **kwargs: Any) -> None:
    return None


def _post_load_owners() -> list[type]:
    """Classes of the draft modules that define a post-load hook (patched to do nothing)."""
    found = []
    for modname in DECODER_LAYERS:
        try:
            mod = _module(modname)
        except ImportError:
            continue
        found += [v for v in vars(mod).values() if isinstance(v, type) and v.__module__ == mod.__name__
                  and any(h in vars(v) for h in POST_LOAD)]
    return found


def main(argv: list[str]) -> int:
    request = json.loads(Path(argv[0]).read_text())
    device = request.get("device", "cpu")
    results: list[dict[str, Any]] = []
    stubbed: list[str] = []
    try:
        stubbed = _pin_platform(device)
        import vllm  # type: ignore[import-not-found, unused-ignore]

        with tempfile.TemporaryDirectory() as pg:
            with set_context():
                _process_group(pg)
            version = getattr(vllm, "__version__", None)
            for case in request["cases"]:
                try:
                    results.append({"id": case["id"], **run_case(case, device)})
                except Exception as exc:  # noqa: BLE001 - an adapter failure, reported per case
                    results.append({"id": case["id"], "adapter_error": _error(exc, "adapter")})
        doc = {"ok": True, "vllm_version": version, "vllm_file": getattr(vllm, "__file__", None),
               "stubbed": stubbed, "results": results}
    except Exception as exc:  # noqa: BLE001 - vLLM cannot be imported or set up here: say why
        doc = {"ok": False, "reason": f"{type(exc).__name__}: {exc}", "results": results}
    Path(argv[1]).write_text(json.dumps(doc))
    return 0


@contextlib.contextmanager
def set_context() -> Iterator[None]:
    from vllm.config import set_current_vllm_config  # type: ignore[import-not-found, unused-ignore]

    with set_current_vllm_config(_default_config()):
        yield


if __name__ == "__main__":
    sys.exit(main(sys.argv[-2:]))  # REQUEST OUT (run as a script, or through runpy by engine.run_worker)
