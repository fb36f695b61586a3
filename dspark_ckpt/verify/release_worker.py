"""Executes one vLLM release's own draft code on CPU and observes what it does with a draft's tensors: the worker of
tools/release_model.py (which generates runtimes/release_data from it) and of `verify --engine installed`
(verify/engine_vllm.py, which runs whole checkpoints through it). It runs inside the release (PYTHONPATH = its
extracted wheel + deps, or the installed vLLM), loaded by path: it imports nothing of dspark_ckpt.

    python tools/release_model_worker.py REQUEST.json OUT.json   # (that file loads this one)

For every architecture in the release's `_SPECULATIVE_DECODING_MODELS`: the class and its file:line; its real
`__init__` run at tiny sizes (a 1-rank gloo group, a real `VllmConfig` whose draft/target configs are recording
namespaces: what the class reads from them is recorded), once per sample of the config values (one value changed
at a time, then several at once), so that each parameter's shape, and each checkpoint tensor's expected shape, can be
fitted as an expression of the config keys and the target's; the config keys each build read; then the release's
real `load_weights`, fed whole checkpoint layouts (prefix, layer naming, stacked or split projections) as tensors
that each carry a marker value into parameters prefilled with NaN: which checkpoint name lands where (and on how
many rows), which names it skips, what it does with a name it has no parameter for, and what it does with a tensor
one row or one column off (raises, in which words, or cuts/pads it silently). Only the standard library, torch and
the release (and what it imports) are used. Nothing here decides what a fact means: tools/release_model.py fits the
samples and writes the release's data file. Load mode (load_case) runs whole checkpoints through the class's real
`__init__` + `load_weights` the same way: what verify's engine and the agreement tests compare with check.
"""

from __future__ import annotations

import contextlib
import copy
import functools
import importlib
import inspect
import itertools
import json
import os
import random
import re
import sys
import tempfile
import traceback
from collections.abc import Callable, Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

# Config values of the base sample and the alternates each takes (one at a time, then jointly). Vocabulary sizes
# are multiples of 64, vLLM's vocab padding, so that a parameter's rows equal the config's value.
BASE: dict[str, int] = {"hidden_size": 16, "num_attention_heads": 2, "num_key_value_heads": 1, "head_dim": 8,
                        "intermediate_size": 24, "vocab_size": 128, "draft_vocab_size": 64, "markov_rank": 4,
                        "num_hidden_layers": 1, "target_hidden_size": 16, "target.hidden_size": 16,
                        "target.vocab_size": 128}
ALTERNATES: dict[str, tuple[int, ...]] = {"hidden_size": (24, 40), "num_attention_heads": (4, 8),
                                          "num_key_value_heads": (2,), "head_dim": (4, 12),
                                          "intermediate_size": (40, 56), "vocab_size": (192, 256),
                                          "draft_vocab_size": (128, 192), "markov_rank": (6, 10),
                                          "num_hidden_layers": (2, 3), "target_hidden_size": (24, 40),
                                          "target.hidden_size": (24, 40),
                                          "target.vocab_size": (192, 256)}
JOINT_SAMPLES = 6
# The second base of the omission samples: every value differs from BASE, so a fallback is told apart from a key.
OTHER_BASE: dict[str, int] = {"hidden_size": 24, "num_attention_heads": 4, "num_key_value_heads": 2, "head_dim": 12,
                              "intermediate_size": 40, "vocab_size": 192, "draft_vocab_size": 128, "markov_rank": 6,
                              "num_hidden_layers": 1, "target_hidden_size": 24, "target.hidden_size": 40,
                              "target.vocab_size": 256}
# Keys a producer may leave out: each is also omitted alone, at two bases, to learn what the release uses instead.
OPTIONAL = ("target_hidden_size", "head_dim", "num_key_value_heads", "intermediate_size", "draft_vocab_size",
            "markov_rank")
# A recipe key, never written to the config: the architecture is built with the draft's config as the target's,
# as vLLM builds an MTP head (its speculative config's draft model config is the target model's).
TARGET_IS_DRAFT = "__target_is_draft__"
# A recipe key, never written to the config: attributes of the target's text config the class reads (key -> value),
# as a target of that family's config.json gives them (the probe's target has 4 layers): a Cohere2 EAGLE draft
# prepends its target's layer_types to its own and indexes them by absolute layer (cohere_eagle.py CohereEagleModel).
TARGET_TEXT = "__target_text__"
# A recipe key, never written to the config: the config keys the recipe sets that are sampled too, so that the
# shapes they decide are fitted as expressions of them (MLA ranks, expert counts) rather than read as constants.
VARY = "__vary__"
# A recipe key, never written to the config: sampled keys the class refuses to see apart (key -> the key whose
# value it takes: the target's vocabulary, which XPress and Laguna DFlash refuse to differ from the draft's), tied in
# every sample, and apart in one more, `untied:<key>=<source>`, which records the refusal in the release's words.
TIED = "__tied__"
# The head a draft may take from its target after loading: fed left out too, where every layout with it raises.
TARGET_HEADS = frozenset({"lm_head.weight"})
# A recipe key, never written to the config: keys that list one value per layer (key -> that value), written as a
# list as long as the sample's num_hidden_layers (Laguna's DFlash: `layer_types`, which vLLM's own LagunaConfig of
# 0.25-0.30 does not default and the class requires).
PER_LAYER = "__per_layer__"
# A recipe key, never written to the config: other namings a producer saves the class's checkpoint in (layout name ->
# [regex, replacement] pairs applied to the names of each layout `layouts` feeds; a layout each of whose names a
# pair renames is fed renamed too, as `<name>:<layout>`; `{layers}` in a replacement: how many layers that layout's
# names hold). FasterDecoding's Medusa: `{head}.{layer}.linear.weight`, `{head}.{layers}.weight`.
RENAMES = "__renames__"
# A recipe key, never written to the config: keys whose values are names (key -> the other names the class accepts),
# each probed as the key's alternate (structural_keys), so that what each named value builds is seen: SGLang DSpark's
# markov_head_type, whose "gated" and "rnn" heads add a gate_proj / joint_proj to the vanilla head's factors.
CHOICES = "__choices__"
# A recipe key, never written to the config: where true, each top-level key the base config holds that __init__
# requires (it refuses the config without it, in words that quote the key) is recorded as `required` in absent_keys
# (MiniMax's DSpark `block_size`, Gemma 4's assistant `backbone_hidden_size`: keys a recipe sets). Opt-in per recipe,
# so that a release's other records stay as generated until they are regenerated with it.
REQUIRES = "__requires__"
# Names producers ship that are no parameter of the model (fed to learn what the release does with them).
EXTRA_NAMES = ("mask_hidden", "confidence_head.proj.weight", "confidence_head.proj.bias",
               "markov_head.markov_w1.weight", "markov_head.markov_w2.weight")
# How producers name a tensor whose parameter the release names otherwise (the probe feeds the producers' name).
CHECKPOINT_NAMES = {"draft_id_to_target_id": "d2t", "model.draft_id_to_target_id": "model.d2t",
                    # XPress's mixer ships raw as `mix.L`, folded into mix_L after loading (its load_weights skips
                    # the parameter's own name; qwen3_xpress.py HYBRID_KEY_MAP, L232 and L317-356 @ vLLM 0.33.0)
                    "xpress_head.mix_L": "xpress_head.mix.L", "model.xpress_head.mix_L": "model.xpress_head.mix.L"}


class Recording:
    """A namespace that records which attributes a class reads, and answers None for what it does not hold."""

    def __init__(self, inner: Any, log: set[str]) -> None:
        object.__setattr__(self, "_inner", inner)
        object.__setattr__(self, "_log", log)

    def __deepcopy__(self, memo: Any) -> Recording:
        return self

    def __getattr__(self, key: str) -> Any:
        if key.startswith("__") or key in ("_inner", "_log"):
            raise AttributeError(key)
        self._log.add(key)
        return getattr(self._inner, key, None)

    def __setattr__(self, key: str, value: Any) -> None:
        setattr(self._inner, key, value)


def _record_reads(hf: Any, log: set[str]) -> Any:
    """The hf config with every attribute read recorded (its class swapped for a recording subclass)."""
    base = type(hf)

    def getattribute(self: Any, key: str) -> Any:
        if not key.startswith("_"):
            log.add(key)
        return base.__getattribute__(self, key)  # type: ignore[call-arg]

    hf.__class__ = type(f"Recorded{base.__name__}", (base,), {"__getattribute__": getattribute})
    return hf


def _where(obj: Any) -> str:
    try:
        file = inspect.getsourcefile(obj) or "?"
        line = inspect.getsourcelines(obj)[1]
    except (OSError, TypeError):
        return "?"
    marker = f"{os.sep}vllm{os.sep}"
    return f"vllm/{file.split(marker, 1)[1]}:{line}" if marker in file else f"{file}:{line}"


def _error(exc: BaseException) -> dict[str, Any]:
    frames = traceback.extract_tb(exc.__traceback__)
    where = next((f"{_where_file(f.filename)}:{f.lineno}" for f in reversed(frames) if "/vllm/" in f.filename), "?")
    message = re.sub(r" at 0x[0-9a-f]+>", ">", str(exc))  # an object's address differs from run to run
    return {"type": type(exc).__name__, "message": message[:2000], "where": where}


def _where_file(path: str) -> str:
    return "vllm/" + path.split("/vllm/", 1)[1] if "/vllm/" in path else path


# Compiled activation ops some releases look up when a layer is built (0.28-0.30: `torch.ops._C.silu_and_mul` in
# SiluAndMul.__init__). Without vLLM's CUDA/CPU extension they do not exist; the probe registers an inert schema (never
# run: nothing here calls forward) and records that it did.
INERT_OPS = ("silu_and_mul", "gelu_and_mul", "gelu_tanh_and_mul", "mul_and_silu", "gelu_fast", "gelu_new",
             "gelu_quick")
_LIBRARIES: list[Any] = []


def _inert_ops(torch: Any) -> list[str]:
    missing = [op for op in INERT_OPS if not hasattr(torch.ops._C, op)]
    if missing:
        library = torch.library.Library("_C", "FRAGMENT")
        for op in missing:
            library.define(f"{op}(Tensor(a!) out, Tensor input) -> ()")
        _LIBRARIES.append(library)  # kept alive: the schemas go when the library object does
    return [f"torch.ops._C.{op} (an inert schema, never run)" for op in missing]


def answer_false(torch: Any, probe: str, stubbed: list[str]) -> None:
    """A CPU-feature probe `torch._C._cpu.<probe>()` a release calls and this torch no longer has: answered False,
    and recorded as stubbed the first time the release asks (where it never asks, nothing is recorded)."""
    cpu = torch._C._cpu
    if hasattr(cpu, probe):
        return
    note = f"torch._C._cpu.{probe} (absent from this torch: answered False)"

    def answer() -> bool:
        if note not in stubbed:
            stubbed.append(note)
        return False

    setattr(cpu, probe, answer)


def _answer_avx512(torch: Any, stubbed: list[str]) -> None:
    """0.17.x asks torch._C._cpu._is_avx512_supported() when it loads its CPU kernels (platforms/cpu.py
    import_kernels, L490 @ 0.17.1), which torch 2.13 no longer has: answered False (the AVX2 branch, whose import
    failure the release only logs)."""
    answer_false(torch, "_is_avx512_supported", stubbed)


def _accept_cpu_moe_alignment(stubbed: list[str]) -> None:
    """0.28+: the CPU MoE experts refuse hidden or intermediate sizes that are not multiples of 32
    (CPUUnquantizedExperts._supports_grouped_gemm, experts/cpu_moe.py), and the oracle then raises "No Unquantized MoE
    backend supports the deployment configuration." at the probe's tiny sizes. That is the kernel's tiling at run
    time (the padding it implies is done in process_weights_after_loading, which the probe never calls), not the
    parameters the layer creates nor how load_weights maps them: answered True, recorded the first time it is asked."""
    try:
        from vllm.model_executor.layers.fused_moe.experts import cpu_moe  # type: ignore[import-not-found]
    except ImportError:
        return
    experts = getattr(cpu_moe, "CPUUnquantizedExperts", None)
    if experts is None or "_supports_grouped_gemm" not in vars(experts):
        return
    note = ("vllm.model_executor.layers.fused_moe.experts.cpu_moe.CPUUnquantizedExperts._supports_grouped_gemm "
            "(its 32-alignment of the kernel's tiles answered True at the probe's tiny sizes; no kernel runs)")

    def supports(cls: Any, moe_config: Any) -> tuple[bool, None]:
        if note not in stubbed:
            stubbed.append(note)
        return True, None

    experts._supports_grouped_gemm = classmethod(supports)


class _Placeholder(type(sys)):  # type: ignore[misc]
    """A module of the absent torchvision: every name it is asked for is an inert class (never used: the probe
    runs no image processor)."""

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        value = type(name, (), {"__module__": self.__name__})
        setattr(self, name, value)
        return value


class _AbsentTorchvision:
    """A meta-path finder answering `import torchvision[...]` with placeholder modules, recorded in `stubbed` the
    first time: some releases' MTP modules import a VL sibling whose image/video processors import torchvision at
    module level (PyPI's torchvision does not import beside this torch); only their preprocessing uses it."""

    NOTE = ("torchvision (absent: placeholder modules, imported only by the image/video processors of a VL sibling "
            "module; never called)")

    def __init__(self, stubbed: list[str]) -> None:
        self.stubbed = stubbed

    def find_spec(self, name: str, path: Any = None, target: Any = None) -> Any:
        if name != "torchvision" and not name.startswith("torchvision."):
            return None
        import importlib.machinery

        if self.NOTE not in self.stubbed:
            self.stubbed.append(self.NOTE)
        return importlib.machinery.ModuleSpec(name, self, is_package=True)  # type: ignore[arg-type]

    def create_module(self, spec: Any) -> Any:
        module = _Placeholder(spec.name)
        module.__path__ = []
        return module

    def exec_module(self, module: Any) -> None:
        return None


def _absent_torchvision(stubbed: list[str]) -> None:
    import importlib.util

    try:
        present = importlib.util.find_spec("torchvision") is not None
    except (ImportError, ValueError):
        present = False
    if not present:
        sys.meta_path.append(_AbsentTorchvision(stubbed))


def pass_triton_gate(platform: Any) -> list[str]:
    """0.34.0+: CpuPlatform.check_and_update_config raises "vLLM on x86 CPUs requires Triton (triton-cpu)." on any
    VllmConfig built on an x86 machine without Triton (platforms/cpu.py). That gate is about the model runner, which
    neither verify nor the release-model probe starts; the config is built with HAS_TRITON read as True inside that
    one call only. Returns what was stubbed (nothing where Triton is installed or the release has no such gate)."""
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


class Release:
    """The release imported once, on CPU, with its process group; builds registered classes on demand."""

    def __init__(self, folder: str) -> None:
        os.environ.setdefault("VLLM_TARGET_DEVICE", "cpu")
        import torch

        self.stubbed: list[str] = []
        _answer_avx512(torch, self.stubbed)
        from vllm import platforms  # type: ignore[import-not-found, unused-ignore]
        from vllm.platforms.cpu import CpuPlatform  # type: ignore[import-not-found, unused-ignore]

        platforms._current_platform = CpuPlatform()
        import torch
        import vllm  # type: ignore[import-not-found, unused-ignore]
        from vllm.config import VllmConfig, set_current_vllm_config  # type: ignore[import-not-found, unused-ignore]
        from vllm.distributed import parallel_state as ps  # type: ignore[import-not-found, unused-ignore]

        self.torch = torch
        self.stubbed += _inert_ops(torch) + pass_triton_gate(CpuPlatform)
        _accept_cpu_moe_alignment(self.stubbed)
        _absent_torchvision(self.stubbed)
        self.folder = folder  # the draft's model path: an empty folder (no mask_embedding.pt, no extra files)
        self.version = getattr(vllm, "__version__", "?")
        self.VllmConfig = VllmConfig
        self.set_current = set_current_vllm_config
        with set_current_vllm_config(VllmConfig()):
            ps.init_distributed_environment(world_size=1, rank=0, distributed_init_method=f"file://{folder}/pg",
                                            local_rank=0, backend="gloo")
            ps.initialize_model_parallel(1, 1)
        from vllm.model_executor.models import registry  # type: ignore[import-not-found, unused-ignore]

        self.registry = dict(registry._SPECULATIVE_DECODING_MODELS)
        try:  # what get_model loads a draft with (model_loader/default_loader.py)
            from vllm.model_executor.model_loader.default_loader import (  # type: ignore[import-not-found, unused-ignore]
                DefaultModelLoader,
            )
            self.default_loader: Any = DefaultModelLoader
        except Exception:  # noqa: BLE001 - a release without it: the model's load_weights alone, and that is recorded
            self.default_loader = None
            self.stubbed.append("model_loader/default_loader.py: not importable, load_weights run without the "
                                "loader's not-initialised check")
        # the config classes vLLM itself registers by model_type, before transformers' (transformers_utils/config.py
        # _CONFIG_REGISTRY, which get_config consults first)
        try:
            from vllm.transformers_utils import config as vllm_configs  # type: ignore[import-not-found, unused-ignore]
            self.config_registry: Any = getattr(vllm_configs, "_CONFIG_REGISTRY", {})
        except Exception:  # noqa: BLE001 - a release whose config module cannot import on CPU: transformers' only
            self.config_registry = {}

    def load_weights(self, model: Any, weights: Iterator[tuple[str, Any]]) -> None:
        """The release's own DefaultModelLoader.load_weights over these tensors, as `get_model` loads a draft: the
        model's load_weights, then the loader's check that every parameter it must fill was filled ("Following
        weights were not initialized from checkpoint", where load_weights returns the names it loaded; in
        track_weights_loading from 0.21, inline before, without its exemption of linear layers). Its `self` is a
        stand-in holding only what that method reads (the weights iterator, the timers, the load config)."""
        loader = self.default_loader
        if loader is None:
            model.load_weights(weights)
            return
        shim = SimpleNamespace(get_all_weights=lambda *args: weights,
                               counter_before_loading_weights=0.0, enable_weights_track=None,
                               load_config=SimpleNamespace(safetensors_load_strategy=None),
                               _init_ep_weight_filter=lambda *args: None,
                               _init_mm_encoder_only_weight_filter=lambda *args: None)
        track = getattr(loader, "track_weights_loading", None)
        if track is not None:
            shim.track_weights_loading = functools.partial(track, shim)
        loader.load_weights(shim, model, SimpleNamespace(quantization=None))

    def model_class(self, architecture: str) -> Any:
        module_name, class_name = self.registry[architecture]
        module = importlib.import_module(module_name if "." in module_name
                                         else f"vllm.model_executor.models.{module_name}")
        return getattr(module, class_name)

    def served(self, case: dict[str, Any]) -> tuple[Any, str, str]:
        """The draft config as the release's own SpeculativeConfig makes it from the config.json as shipped and the
        method served (`case["served"]`): its ModelConfig's config loading and hf_overrides, the method detection,
        EAGLEConfig's rename and the registry check (vllm/config/speculative.py `__post_init__`), run on a folder
        named as the case (`served_as`, else its id: the detection reads the path). Returns the draft hf_config, the architecture it resolved
        and the method it settled on; raises what the release raises."""
        from vllm.config import ModelConfig, ParallelConfig  # type: ignore[import-not-found, unused-ignore]
        from vllm.config.speculative import SpeculativeConfig  # type: ignore[import-not-found, unused-ignore]

        with tempfile.TemporaryDirectory(prefix="served-") as tmp:  # not the draft folder the classes read
            target, draft = Path(tmp) / "target", Path(tmp) / (case.get("served_as") or case["id"])
            for folder, config in ((target, _SERVED_TARGET | {"hidden_size": case["target_hidden"],
                                                               "vocab_size": case["target_vocab"]}),
                                   (draft, case["config"])):
                folder.mkdir()
                (folder / "config.json").write_text(json.dumps(config))
            target_config = ModelConfig(model=str(target), tokenizer=str(target), skip_tokenizer_init=True)
            spec = SpeculativeConfig(model=str(draft), target_model_config=target_config,
                                     target_parallel_config=ParallelConfig(), **case["served"])
        built = spec.draft_model_config
        return built.hf_config, str(getattr(built, "architecture", None) or built.architectures[0]), str(spec.method)

    def build(self, cls: Any, raw: dict[str, Any], values: dict[str, int],
              made: Any = None) -> tuple[Any, set[str], set[str]]:
        """cls's real __init__ for this config (`made`: the hf_config the release's own config loading made of it,
        Release.served); returns the model, the hf keys it read, the target's it read."""
        torch = self.torch
        raw = dict(raw)
        own_target = bool(raw.pop(TARGET_IS_DRAFT, False))
        target_text = dict(raw.pop(TARGET_TEXT, None) or {})
        # a bare config is one SpeculatorsConfig already converted (check's BuiltConfig.hf): not converted twice
        converted = values.get("bare") and raw.get("model_type") == "speculators"
        hf = made if made is not None else _hf_config(raw, registry=None if converted else self.config_registry)
        if values.get("bare"):  # every attribute transformers set, as a plain config, less the keys omitted
            omitted = {k.split(":", 1)[1] for k in values if k.startswith("omit:")}
            hf = _hf_config({k: v for k, v in hf.to_dict().items() if k not in omitted}, bare=True)
        hf_reads: set[str] = set()
        target_reads: set[str] = set()
        self.config_class = type(hf).__name__  # the class the model_type picked (before recording swaps it)
        _record_reads(hf, hf_reads)
        t_hidden, t_vocab = values.get("target.hidden_size", 16), values.get("target.vocab_size", 128)
        draft = SimpleNamespace(hf_config=hf, hf_text_config=hf, quantization=None, dtype=torch.float32,
                                get_vocab_size=lambda: hf.vocab_size, get_hidden_size=lambda: hf.hidden_size,
                                max_model_len=4096, model=self.folder, revision=None)
        target_hf: Any = SimpleNamespace(hidden_size=t_hidden, vocab_size=t_vocab, num_hidden_layers=4,
                                         model_type="llama", **target_text)
        if own_target:  # an MTP head: vLLM builds it from the target's own config (the draft config is the target's)
            target_hf, t_hidden, t_vocab = hf, hf.hidden_size, hf.vocab_size
        target = SimpleNamespace(get_vocab_size=lambda: t_vocab, get_total_num_hidden_layers=lambda: 4,
                                 get_num_layers=lambda *a, **k: 4, get_hidden_size=lambda: t_hidden,
                                 dtype=torch.float32, hf_config=target_hf, hf_text_config=target_hf,
                                 quantization=None, head_dtype=None, max_model_len=4096)
        spec = SimpleNamespace(draft_model_config=Recording(draft, target_reads),
                               parallel_drafting=bool(values.get("parallel_drafting")),
                               method=None, num_speculative_tokens=1, draft_tensor_parallel_size=1)
        self.last = (draft, target)  # what the target-sharing step (share_from_target) is given
        config = self.VllmConfig()
        object.__setattr__(config, "speculative_config", Recording(spec, target_reads))
        object.__setattr__(config, "model_config", Recording(target, target_reads))
        with self.set_current(config), torch.device("cpu"):
            model = cls.__new__(cls)
            try:
                cls.__init__(model, vllm_config=config, prefix="")
            except Exception as exc:
                if type(exc).__name__ != PER_LAYER_GUARD or not hasattr(hf, "allow_global_per_layer_attribute_access"):
                    raise
                # the guard is the probe's transformers', not the release's: read the global value, as it did then
                hf.allow_global_per_layer_attribute_access = True
                if PER_LAYER_NOTE not in self.stubbed:
                    self.stubbed.append(PER_LAYER_NOTE)
                model = cls.__new__(cls)
                cls.__init__(model, vllm_config=config, prefix="")
        return model, hf_reads, {f"target.{k}" for k in target_reads}


# The target a served case's SpeculativeConfig is given (Release.served): a tiny Llama, its hidden size and vocabulary
# the case's; max_model_len from max_position_embeddings
_SERVED_TARGET: dict[str, Any] = {"architectures": ["LlamaForCausalLM"], "model_type": "llama", "intermediate_size": 32,
                                  "num_attention_heads": 2, "num_key_value_heads": 2, "num_hidden_layers": 2,
                                  "max_position_embeddings": 128, "rms_norm_eps": 1e-06, "torch_dtype": "float16"}


# transformers 5.19+ (integrations/heterogeneity/configuration_utils.py; absent from 5.12.1) refuses a global read of
# a per-layer attribute (Gemma 4's head_dim); the Gemma 4 drafts of vLLM 0.21-0.27 read it, as the transformers of
# their day allowed. Where a class raises it, the build is retried with the read allowed, and that is recorded.
PER_LAYER_GUARD = "AmbiguousGlobalPerLayerAttributeError"
PER_LAYER_NOTE = ("transformers' per-layer attribute guard (AmbiguousGlobalPerLayerAttributeError, 5.19+; the "
                  "release's code predates it): allow_global_per_layer_attribute_access set where a class raised it")


def _hf_config(raw: dict[str, Any], *, bare: bool = False, registry: Any = None) -> Any:
    """The config object as the runtime builds it for the model_type: its own registered class (`registry`, vLLM's
    _CONFIG_REGISTRY), else transformers'; `bare`: a plain PretrainedConfig, as a speculators-format draft gets
    (SpeculatorsConfig adds no defaults)."""
    from transformers import AutoConfig, PretrainedConfig  # type: ignore[import-not-found, unused-ignore]

    fields = {k: v for k, v in raw.items() if k != "model_type"}
    if bare:
        return PretrainedConfig(**copy.deepcopy(fields))
    if registry and raw.get("model_type") in registry:
        own = registry[raw["model_type"]]
        if "from_pretrained" in vars(own):  # its own loading rewrites keys (MedusaConfig: each `num*heads` key
            with tempfile.TemporaryDirectory() as folder:  # is num_heads): as vLLM reads a config.json
                Path(folder, "config.json").write_text(json.dumps(raw, default=dict))
                return own.from_pretrained(folder)
        return own(**copy.deepcopy(fields))
    try:
        return AutoConfig.for_model(raw.get("model_type") or "llama", **copy.deepcopy(fields))
    except (ValueError, KeyError):
        return PretrainedConfig(**copy.deepcopy(fields))


def config_for(recipe: dict[str, Any], values: dict[str, int]) -> dict[str, Any]:
    """The draft's config.json for one sample: the recipe's fixed keys plus the sampled values."""
    raw = {k: v for k, v in recipe.items() if k not in ("omit", VARY, TIED, PER_LAYER, RENAMES, CHOICES, REQUIRES)}
    layers = values.get("num_hidden_layers", BASE["num_hidden_layers"])
    raw.update({key: [value] * layers for key, value in recipe.get(PER_LAYER, {}).items()})
    for key, value in values.items():
        if not key.startswith(("target.", "omit:", "bare")) and key not in recipe.get("omit", ()) \
                and f"omit:{key}" not in values:
            raw[key] = value
    return raw


def samples(seed: int, extra: dict[str, int] | None = None,
            tied: dict[str, str] | None = None) -> list[tuple[str, dict[str, int]]]:
    """The base, each alternate alone, then joint samples (num_attention_heads a multiple of kv heads). `extra`:
    keys a recipe sets that are sampled too (the recipe's value is their base; 2x and 3x it their alternates);
    `tied`: key -> the key whose value it takes in every sample (TIED), plus one `untied:<key>=<source>` sample."""
    out = _samples(seed, extra or {})
    base = dict(out[0][1])
    for key, source in (tied or {}).items():
        out = [(label, {**values, key: values[source]} if key in values and source in values else values)
               for label, values in out]
    # the base with the tied key at a value its source does not have: the class's refusal, in its words (a key the
    # recipe sets and samples, VARY, at its own alternates: Gemma 4's assistant global_head_dim against head_dim)
    alternates = {**{k: (2 * v, 3 * v) for k, v in (extra or {}).items()}, **ALTERNATES}
    untied = {(key, source): next((v for v in (base[key], *alternates.get(key, ())) if v != base[source]), base[key])
              for key, source in (tied or {}).items() if key in base and source in base}
    return out + [(f"untied:{key}={source}", {**base, key: value}) for (key, source), value in untied.items()]


def _samples(seed: int, extra: dict[str, int]) -> list[tuple[str, dict[str, int]]]:
    first, other = {**BASE, **extra}, {**OTHER_BASE, **extra}
    alternates = {**ALTERNATES, **{k: (2 * v, 3 * v) for k, v in extra.items()}}
    out = [("base", dict(first))]
    for key, alts in alternates.items():
        out += [(f"{key}={alt}", {**first, key: alt}) for alt in alts]
    for key in OPTIONAL:
        for base in (first, other):
            out.append((f"omit:{key}:{base['hidden_size']}", {**base, f"omit:{key}": 1}))
            out.append((f"bare-omit:{key}:{base['hidden_size']}", {**base, f"omit:{key}": 1, "bare": 1}))
    rng = random.Random(seed)
    while len(out) < 1 + sum(len(a) for a in alternates.values()) + 4 * len(OPTIONAL) + JOINT_SAMPLES + 2 * len(extra):
        values = {k: rng.choice((first[k], *alternates[k])) for k in first if k in alternates}
        if values["num_attention_heads"] % values["num_key_value_heads"] == 0 \
                and values["hidden_size"] % values["num_attention_heads"] == 0:
            out.append((f"joint{len(out)}", values))
    return out


def _parameters(model: Any) -> dict[str, Any]:
    return dict(model.named_parameters())


def _owner(model: Any, name: str) -> Any:
    return model.get_submodule(name.rsplit(".", 1)[0]) if "." in name else model


# The stacked parameters every release's load_weights builds from separate checkpoint tensors (its
# stacked_params_mapping; fused_qkv_a_proj: DeepSeek's MLA, deepseek_v2.py L1601-1602 @ 0.33.0).
STACKED = {"qkv_proj": ("q_proj", "k_proj", "v_proj"), "gate_up_proj": ("gate_proj", "up_proj"),
           "fused_qkv_a_proj": ("q_a_proj", "kv_a_proj_with_mqa")}


def _stacked_parts(model: Any) -> dict[str, tuple[str, ...]]:
    """STACKED, plus what the model's own WeightsMapper stacks (`orig_to_new_stacked`, where the release has it)."""
    parts = dict(STACKED)
    for module in model.modules():
        stacked = getattr(getattr(type(module), "hf_to_vllm_mapper", None), "orig_to_new_stacked", None)
        by_target: dict[str, list[str]] = {}
        for orig, (new, _shard) in (stacked or {}).items():  # in shard order, as the mapper lists them
            by_target.setdefault(new.strip("."), []).append(orig.strip("."))
        parts.update({new: tuple(origs) for new, origs in by_target.items()})
    return parts


def shards(model: Any, name: str, param: Any) -> list[tuple[str, int, int]] | None:
    """A stacked parameter's shards as (checkpoint name part, row offset, rows), from its module's output_sizes."""
    owner = _owner(model, name)
    sizes = getattr(owner, "output_sizes", None)
    leaf = name.rsplit(".", 2)
    if not sizes or len(leaf) < 3 or param.dim() != 2:
        return None
    parts = _stacked_parts(model).get(leaf[-2])
    if parts is None or len(parts) != len(sizes):
        return None
    offsets = [sum(sizes[:i]) for i in range(len(sizes))]
    return [(p, off, size) for p, off, size in zip(parts, offsets, sizes, strict=True)]


# A fused-MoE parameter (vLLM's FusedMoE / RoutedExperts: w13 = gate and up of every expert, w2 = down), which a
# checkpoint ships as one tensor per expert and projection: `<...>.experts.<e>.<gate|up|down>.weight`. The release's
# load_weights maps those names onto the fused parameter (its expert_params_mapping); the fused name itself reaches
# the expert-aware weight_loader without an expert id, which raises.
FUSED_EXPERTS = re.compile(r"^(?P<head>.*?\.experts)\.(?:[\w.]*\.)?(?P<kind>w13|w2)_(?P<leaf>weight|bias)$")
# How checkpoints name the three projections of an expert: gate, up, down (Llama/Qwen/DeepSeek; Mixtral's w1/w3/w2).
EXPERT_NAMES = (("gate_proj", "up_proj", "down_proj"), ("w1", "w3", "w2"))


def _expert_tensors(name: str, shape: tuple[int, ...],
                    names: tuple[str, str, str]) -> list[tuple[str, tuple[int, ...], int]] | None:
    """A fused expert parameter as per-expert checkpoint tensors: (name, shape, row offset), or None when `name`
    is no fused expert parameter (w13: [experts, 2 x rows, ...], gate rows then up rows; w2: [experts, ...])."""
    match = FUSED_EXPERTS.match(name)
    if match is None or len(shape) < 2:
        return None
    head, leaf, (gate, up, down) = match["head"], match["leaf"], names
    experts, rest = shape[0], shape[1:]
    if match["kind"] == "w2":
        return [(f"{head}.{e}.{down}.{leaf}", rest, e * rest[0]) for e in range(experts)]
    if rest[0] % 2:
        return None
    half = (rest[0] // 2, *rest[1:])
    return [(f"{head}.{e}.{part}.{leaf}", half, e * rest[0] + i * half[0])
            for e in range(experts) for i, part in enumerate((gate, up))]


def layouts(model: Any) -> dict[str, dict[str, tuple[str, tuple[int, ...], int]]]:
    """Checkpoint layouts to feed: name -> (parameter, tensor shape, row offset in the parameter). `mtp.`: the
    prefix an MTP layer has in its target's checkpoint (Qwen3-Next, Qwen3.5, EXAONE-MoE: `mtp.layers.0.`, which
    their load_weights maps onto `model.`); split layouts ship experts one tensor each, under each naming. The
    `mtp` layer style is the MTP layer as its target's checkpoint ships it: the block's names without `mtp_block.`,
    and the shared embedding inside the layer (DeepSeek-V3's `model.layers.61.embed_tokens`, which deepseek_mtp.py's
    _rewrite_spec_layer_name maps onto `model.embed_tokens`). `nextn<N>`: a NextN head (a `model.decoder` layer,
    SGLang's DeepSeek/GLM/... heads) as its target's checkpoint ships it, every name of the head under
    `model.layers.<N>.` and its lm_head as the layer's `shared_head.head`, their loaders' `nextn_layer_prefix`; N is
    0 or the config's num_hidden_layers (deepseek_weight_loader.py _initialize_nextn_conf @ SGLang 0.5.23: 0 for a
    one-layer config, else num_hidden_layers)."""
    params = _parameters(model)
    indices = {int(m.group(1)) for n in params if (m := re.search(r"\blayers\.(\d+)\.", n))}
    spec_layer = min(indices) if indices and min(indices) > 0 else None  # an MTP layer after its target's layers
    out: dict[str, dict[str, tuple[str, tuple[int, ...], int]]] = {}
    has_experts = any(FUSED_EXPERTS.match(name) for name in params)
    # SGLang fuses a MoE layer's shared expert into its routed ones (num_fused_shared_experts: the last expert),
    # and its loader renames a checkpoint's `mlp.shared_experts.*` onto it: that naming first, as checkpoints ship it
    shared = has_experts and any(getattr(m, "num_fused_shared_experts", 0) for m in model.modules())
    stackings = (["split-shared"] if shared else []) + ["split", "fused"] + (["split-w"] if has_experts else [])
    nextn = sorted({0, int(getattr(getattr(model, "config", None), "num_hidden_layers", 0) or 0)}) \
        if any(n.startswith("model.decoder.") for n in params) else []
    for prefix in ("model.", "", "mtp."):
        styles = ["layers", "midlayer", "mtp"] + ([f"nextn{n}" for n in nextn] if prefix == "model." else [])
        for layer_style in styles:
            for stacking in stackings:
                layout: dict[str, tuple[str, tuple[int, ...], int]] = {}
                for name, param in params.items():
                    ckpt = prefix + name[len("model."):] if prefix != "model." and name.startswith("model.") else name
                    ckpt = CHECKPOINT_NAMES.get(ckpt, ckpt)
                    if layer_style == "midlayer":
                        ckpt = re.sub(r"\blayers\.0\.", "midlayer.", ckpt)
                    elif layer_style == "mtp":  # an MTP layer as the target checkpoint ships it: the release's
                        ckpt = ckpt.replace(".mtp_block.", ".")  # _rewrite_spec_layer_name adds mtp_block back
                        if spec_layer is not None and ckpt == f"{prefix}embed_tokens.weight":
                            ckpt = f"{prefix}layers.{spec_layer}.embed_tokens.weight"
                    elif layer_style.startswith("nextn"):
                        at = f"model.layers.{layer_style[len('nextn'):]}."
                        if ckpt == "lm_head.weight":
                            ckpt = f"{at}shared_head.head.weight"
                        elif ckpt.startswith("model.") and not ckpt.startswith("model.layers."):
                            ckpt = at + ckpt[len("model."):].removeprefix("decoder.")
                    if stacking != "fused" and (experts := _expert_tensors(
                            ckpt, tuple(param.shape), EXPERT_NAMES[stacking == "split-w"])) is not None:
                        if stacking == "split-shared":  # the last expert under the shared expert's names
                            last = f".experts.{int(param.shape[0]) - 1}."
                            experts = [(c.replace(last, ".shared_experts.") if last in c else c, shape, offset)
                                       for c, shape, offset in experts]
                        layout.update({c: (name, shape, offset) for c, shape, offset in experts})
                        continue
                    parts = shards(model, name, param) if stacking != "fused" else None
                    if parts is None:
                        layout[ckpt] = (name, tuple(param.shape), 0)
                        continue
                    stem = ckpt.rsplit(".", 2)
                    for part, offset, rows in parts:
                        layout[f"{stem[0]}.{part}.{stem[2]}"] = (name, (rows, int(param.shape[1])), offset)
                key = f"{prefix or '-'}{layer_style}-{stacking}"
                if layout not in out.values():
                    out[key] = layout
    return out


def renamed_layouts(model: Any, recipe: dict[str, Any] | None) -> dict[str, dict[str, tuple[str, tuple[int, ...], int]]]:
    """`layouts`, plus each one under the namings the recipe's RENAMES gives (those every name of which it renames)."""
    out = layouts(model)
    for label, pairs in ((recipe or {}).get(RENAMES) or {}).items():
        for key, layout in list(out.items()):
            if ":" in key or not all(any(re.search(rx, name) for rx, _ in pairs) for name in layout):
                continue
            count = len({m.group(0) for name in layout if (m := re.search(r"\blayers\.\d+\.", name))})
            renamed = {_renamed(name, pairs, count): fact for name, fact in layout.items()}
            if renamed not in out.values():
                out[f"{label}:{key}"] = renamed
    return out


def _renamed(name: str, pairs: list[list[str]], layers: int) -> str:
    """A checkpoint name under a recipe's naming (RENAMES: regex/replacement pairs; `{layers}`: the layout's layers)."""
    for rx, replacement in pairs:
        name = re.sub(rx, replacement.replace("{layers}", str(layers)), name)
    return name


class Feeder:
    """Runs the model's real load_weights on marker tensors and reads back where each marker landed."""

    def __init__(self, torch: Any, model: Any,
                 load: Callable[[Any, Iterator[tuple[str, Any]]], Any] | None = None) -> None:
        self.torch, self.model = torch, model
        self.load = load or (lambda m, weights: m.load_weights(weights))  # the runtime's loader, where it has one
        self.params = _parameters(model)

    def reset(self) -> None:
        with self.torch.no_grad():
            for p in self.params.values():
                if p.dtype.is_floating_point:
                    p.fill_(float("nan"))
                else:
                    p.fill_(-(2 ** 31))

    def feed(self, tensors: dict[str, tuple[tuple[int, ...], str]], fills: bool = False) -> dict[str, Any]:
        """tensors: checkpoint name -> (shape, dtype name). Returns what landed, and the error if it raised; with
        `fills`, also the values (up to 4) in each parameter that no tensor fed (a loader's padding)."""
        torch = self.torch
        self.reset()
        markers = {name: i + 1 for i, name in enumerate(tensors)}

        def weights() -> Iterator[tuple[str, Any]]:
            for name, (shape, dtype) in tensors.items():
                kind = torch.int64 if dtype == "int64" else torch.float32
                yield name, torch.full(shape, markers[name], dtype=kind)

        error = None
        try:
            self.load(self.model, weights())
        except Exception as exc:  # noqa: BLE001 - the release's own failure is the observation
            error = _error(exc)
        by_marker = {v: k for k, v in markers.items()}
        landed: dict[str, list[Any]] = {}
        filled: dict[str, list[str]] = {}  # parameter -> the values it holds that no tensor fed (a loader's padding)
        unwritten, partly = [], []
        with torch.no_grad():
            for pname, p in self.params.items():
                data = p.detach().reshape(-1).to(torch.float64) if p.numel() else None
                if data is None:
                    continue
                written = ~torch.isnan(data) if p.dtype.is_floating_point else data != -(2 ** 31)
                if not bool(written.any()):
                    unwritten.append(pname)
                    continue
                if not bool(written.all()):
                    partly.append(pname)
                values = data[written]
                for value in torch.unique(values).tolist():
                    name = by_marker.get(int(value)) if float(value).is_integer() else None
                    if name is None:  # a loader that transforms values (d2t offsets, scales) or pads: not a marker
                        if fills and len(filled.setdefault(pname, [])) < 4:
                            filled[pname].append(str(value))
                        continue
                    count = int((values == value).sum())
                    landed.setdefault(name, []).append([pname, count])
        return {"landed": landed, "unwritten": unwritten, "partly": partly, "error": error,
                **({"fills": filled} if fills else {})}


def feeder_for(release: Any, model: Any) -> Feeder:
    """A Feeder through the runtime's own loader where the release has one (vLLM's DefaultModelLoader)."""
    return Feeder(release.torch, model, getattr(release, "load_weights", None))


def dtype_of(name: str) -> str:
    return "int64" if name.rsplit(".", 1)[-1] in ("d2t", "t2d") else "float32"


def probe_architecture(release: Release, architecture: str, recipe: dict[str, Any], seed: int) -> dict[str, Any]:
    out: dict[str, Any] = {"architecture": architecture, "class": "?", "where": "?"}
    try:
        cls = release.model_class(architecture)
    except Exception as exc:  # noqa: BLE001 - a module that cannot import on CPU: recorded, not modelled
        out["import_error"] = _error(exc)
        return out
    out["class"], out["where"] = f"{cls.__module__}.{cls.__name__}", _where(cls)
    built: list[dict[str, Any]] = []
    base_model = None
    extra = {k: recipe[k] for k in recipe.get(VARY, ()) if isinstance(recipe.get(k), int)}
    for label, values in samples(seed, extra, recipe.get(TIED)):
        raw = config_for(recipe, values)
        try:
            model, hf_reads, target_reads = release.build(cls, raw, values)
        except Exception as exc:  # noqa: BLE001 - the class refuses this config: recorded per sample
            built.append({"sample": label, "values": values, "error": _error(exc)})
            continue
        params = {n: list(p.shape) for n, p in _parameters(model).items()}
        expected = {ckpt: list(shape) for layout in renamed_layouts(model, recipe).values()
                    for ckpt, (_, shape, _) in layout.items()}
        built.append({"sample": label, "values": values, "parameters": params, "expected": expected,
                      "reads": sorted(hf_reads), "target_reads": sorted(target_reads)})
        if label == "base":
            base_model = model
            # the config class the base sample's model_type picks in this release (transformers' or the runtime's
            # own): check judges a draft of that model_type with its defaults, not a bare config's
            out["config"] = {"model_type": raw.get("model_type"), "class": getattr(release, "config_class", None)}
    out["samples"] = built
    if base_model is None:
        return out
    out["structural"] = structural_keys(release, cls, config_for(recipe, built[0]["values"]), built[0],
                                        frozenset(extra), recipe, built)
    out["absent_keys"] = absent_keys(release, cls, config_for(recipe, built[0]["values"]), built[0],
                                     bool(recipe.get(REQUIRES)))
    feeder = feeder_for(release, base_model)
    fed: dict[str, Any] = {}
    base_layouts = renamed_layouts(base_model, recipe)  # the names each layout feeds (the model's parameters do not change)
    for key, layout in base_layouts.items():
        tensors = {ckpt: (shape, dtype_of(ckpt)) for ckpt, (_, shape, _) in layout.items()}
        fed[key] = {"names": {c: [p, o] for c, (p, _, o) in layout.items()}, **feeder.feed(tensors)}
    if all(f["error"] is not None for f in fed.values()) and any(  # every layout raises, one on the head by name
            f"'{h.split('.')[0]}'" in f["error"]["message"] for f in fed.values() for h in TARGET_HEADS):
        # (the target's, aliased after loading: DFlash2 for Beam): each layout without it too
        for key, layout in list(base_layouts.items()):
            headless = {c: v for c, v in layout.items() if v[0] not in TARGET_HEADS}
            if headless != layout and headless not in base_layouts.values():
                base_layouts[f"{key}-headless"] = headless
                tensors = {ckpt: (shape, dtype_of(ckpt)) for ckpt, (_, shape, _) in headless.items()}
                fed[f"{key}-headless"] = {"names": {c: [p, o] for c, (p, _, o) in headless.items()},
                                          **feeder.feed(tensors)}
    out["layouts"] = fed
    best = min(fed, key=lambda k: (fed[k]["error"] is not None, len(fed[k]["unwritten"])))
    canonical = {c: (s, dtype_of(c)) for c, (_, s, _) in base_layouts[best].items()}
    out["canonical"] = best
    if best.startswith("model.nextn"):  # the NextN layer's index, per num_hidden_layers (one sample each)
        out["nextn_layer"] = nextn_layers(release, cls, recipe, best, extra)
    # each form of name at the model's first layer (an MTP head's follows its target's layers), and in a layer it
    # does not build: past its last, and before its first (an MTP head's loader skips its target's layers)
    indices = {int(m.group(1)) for n in _parameters(base_model) if (m := re.search(r"layers\.(\d+)\.", n))}
    first, past = min(indices, default=0), max(indices, default=-1) + 1
    prefixes = ("", "model.", "mtp.") if best.startswith("mtp.") else ("", "model.")  # mtp.: its checkpoint's
    forms = {**{f"{p}unexpected_tensor.weight": f"{p}unexpected_tensor.weight" for p in prefixes if p != "model."},
             **{f"{p}layers.{side}.unexpected_tensor.weight": f"{p}layers.{index}.unexpected_tensor.weight"
                for p in prefixes for side, index in (("0", first), ("past", past), ("before", 0))
                if side != "before" or first > 0}}
    # a layout under a recipe's naming (RENAMES: MiniMax's DSpark draft, whose loader keeps only the names under its
    # prefix and raises on an unknown one there, dspark_minimax.py L277-301 @ SGLang 0.5.23): each plain form under
    # that naming too, keyed by its renamed probe name (check picks the form by the longest prefix a name carries)
    label, renamed_from = best.partition(":")[::2]
    if renamed_from:
        pairs = recipe[RENAMES][label]
        forms.update({_renamed(probe, pairs, 1): _renamed(fed_name, pairs, 1) for probe, fed_name in list(forms.items())
                      if not probe.startswith(("model.", "mtp.")) and _renamed(probe, pairs, 1) != probe})
    out["unknown"] = {probe: {"fed": fed_name, **feeder.feed({**canonical, fed_name: ((3,), "float32")})}
                      for probe, fed_name in forms.items()}
    expert = next((c for c in canonical if re.search(r"\.experts\.0\.", c)), None)
    if expert is not None:  # one expert past the count a MoE layer loads (some loaders skip it, some raise)
        count = len({m.group(1) for c in canonical if (m := re.search(r"\.experts\.(\d+)\.", c))})
        fed_name = expert.replace(".experts.0.", f".experts.{count}.")
        out["unknown"]["experts.past"] = {"fed": fed_name, **feeder.feed({**canonical, fed_name: canonical[expert]})}
    bare = next((c for c, (p, _, _) in base_layouts[best].items()
                 if c in fed[best]["landed"] and not c.endswith((".weight", ".bias")) and "." in c), None)
    if bare is not None:  # a bare parameter shipped as `<name>.weight`, as some exporters write it
        nested = {k: v for k, v in canonical.items() if k != bare}
        out["nested"] = {"name": bare, "parameter": base_layouts[best][bare][0],
                         **feeder.feed({**nested, f"{bare}.weight": canonical[bare]})}
    built_params: dict[str, Any] = _parameters(base_model)
    d2t = built_params.get("draft_id_to_target_id")
    hidden = next((int(p.shape[-1]) for n, p in built_params.items() if n.endswith("norm.weight")), 16)
    extras: dict[str, tuple[int, ...]] = {
        name: (1, hidden) for name in EXTRA_NAMES
        if name not in canonical and name not in built_params and f"model.{name}" not in built_params}
    if d2t is not None:  # t2d: what EAGLE-3 producers ship beside d2t, one entry per target id
        extras["t2d"] = (int(d2t.shape[0]) * 2,)
    attention = next((c.split("self_attn.")[0] for c in canonical if ".self_attn." in c), None)
    if attention is not None:  # a rotary cache older exporters (ColossalAI, GPTQ, EAGLE-1) ship in every layer
        extras[f"{attention}self_attn.rotary_emb.inv_freq"] = (4,)
    out["extras"] = {name: feeder.feed({**canonical, name: (shape, dtype_of(name))})
                     for name, shape in extras.items()}
    out["off_by_one"] = {key: seen for ckpt, (shape, dtype) in canonical.items()
                         for key, seen in off_by_one(feeder, canonical, ckpt, shape, dtype).items()}
    observe_appearing(release, cls, recipe, built, out["structural"], best)
    # each parameter with none of its tensors shipped: whether the release refuses that (its loader's
    # not-initialised check, a class's own assertion), in which words; silence is DSP363's
    by_parameter: dict[str, set[str]] = {}
    for ckpt, (pname, _, _) in base_layouts[best].items():
        by_parameter.setdefault(pname, set()).add(ckpt)
    out["missing"] = {pname: {"fed": sorted(names), "error": feeder.feed(
        {c: v for c, v in canonical.items() if c not in names})["error"]} for pname, names in by_parameter.items()}
    return out


def nextn_layers(release: Release, cls: Any, recipe: dict[str, Any], best: str,
                 extra: dict[str, int]) -> dict[str, int | None]:
    """num_hidden_layers -> the index N of the `model.layers.<N>.` names a NextN head loads (the layout `best`
    at N = 0 and at N = num_hidden_layers, on a model built with that many layers; None: neither loads)."""
    stacking = best.split("-", 1)[1]
    found: dict[str, int | None] = {}
    for count in (BASE["num_hidden_layers"], *ALTERNATES["num_hidden_layers"]):
        values = {**BASE, **extra, "num_hidden_layers": count}
        model, _, _ = release.build(cls, config_for(recipe, values), values)
        feeder = feeder_for(release, model)
        loads = {}
        for key, layout in layouts(model).items():
            if key.startswith("model.nextn") and key.endswith(f"-{stacking}"):
                seen = feeder.feed({c: (shape, dtype_of(c)) for c, (_, shape, _) in layout.items()})
                if seen["error"] is None:
                    loads[int(key.split("-")[0][len("model.nextn"):])] = len(seen["unwritten"])
        found[str(count)] = min(loads, key=lambda n: (loads[n], n)) if loads else None
    return found


def recipe_for(architecture: str, request: dict[str, Any]) -> dict[str, Any]:
    """The base config of an architecture: the default, plus each rule whose marker is in the name."""
    chosen = dict(request["default_recipe"])
    for marker, extra in request.get("recipe_rules", {}).items():
        if marker in architecture:
            vary = dict.fromkeys([*chosen.get(VARY, ()), *extra.get(VARY, ())])  # the sampled keys add up
            chosen.update(extra)
            if vary:
                chosen[VARY] = list(vary)
    return {"architectures": [architecture], **chosen}


def _alternate(value: Any) -> Any:
    """Another value of the same kind (None: a kind the probe does not vary)."""
    found = _alternates(value)
    return found[0] if found else None


def _alternates(value: Any) -> list[Any]:
    """Other values of the same kind, in the order the probe tries them: where the class refuses one (a count that
    must divide hidden_size, a power of two), the next one is sampled, so that what the key does is still seen."""
    if isinstance(value, bool):
        return [not value]
    if isinstance(value, int):
        tried = (value * 2 + 1, value * 2, value + 1, value * 4, 1, 2) if value else (2, 1, 4)
        return list(dict.fromkeys(v for v in tried if v > 0 and v != value))
    if isinstance(value, float) and value > 0:
        return [value * 2, value * 3]
    if isinstance(value, list) and all(isinstance(v, int) and not isinstance(v, bool) for v in value):
        top = max(value, default=-1)
        return [[*value, top + 1], [*value, top + 1, top + 2]] if value else [[0, 1], [0, 1, 2]]
    return []


def _sized_value(value: Any) -> int | None:
    """The number a key's value sizes things by: a positive count (a whole float too), a list's length."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int) and value > 0:
        return value
    if isinstance(value, float) and value > 0 and value.is_integer():
        return int(value)
    if isinstance(value, list) and value:
        return len(value)
    return None


def key_variable(name: str, value: Any) -> str:
    """The variable a structural key's value is in a shape expression: the key, or `len(<key>)` for a list."""
    return f"len({name})" if isinstance(value, list) else name


def _with(raw: dict[str, Any], name: str, value: Any) -> dict[str, Any]:
    """The config with key `name` (`section.entry` for a nested one) set to `value`."""
    head, _, sub = name.partition(".")
    if not sub:
        return {**raw, head: value}
    section = raw.get(head) if isinstance(raw.get(head), dict) else {}
    return {**raw, head: {**section, sub: value}}


SUBKEYS: set[str] = set()


class KeyLog(dict):  # type: ignore[type-arg]
    """A nested config section that records which entries the model reads (SUBKEYS, module-wide: the config
    machinery copies the section, and the copy records too)."""

    def __getitem__(self, key: Any) -> Any:
        SUBKEYS.add(str(key))
        return super().__getitem__(key)

    def get(self, key: Any, default: Any = None) -> Any:
        SUBKEYS.add(str(key))
        return super().get(key, default)

    def __contains__(self, key: object) -> bool:
        SUBKEYS.add(str(key))
        return super().__contains__(key)


def nested_reads(release: Release, cls: Any, raw: dict[str, Any], key: str,
                 values: dict[str, Any] | None = None) -> list[str]:
    """The entries of section `key` the model reads when the config carries one (what it holds kept)."""
    SUBKEYS.clear()
    held: Any = raw.get(key) if isinstance(raw.get(key), dict) else {"_": None}  # not empty: `section or {}` keeps it
    with contextlib.suppress(Exception):
        release.build(cls, {**raw, key: KeyLog(held)}, values or BASE)
    return sorted(SUBKEYS - {"_"})


def _shapes_or_none(release: Release, cls: Any, raw: dict[str, Any],
                    values: dict[str, Any] | None = None) -> dict[str, list[int]] | None:
    try:
        model, _, _ = release.build(cls, raw, values or BASE)
    except Exception:  # noqa: BLE001 - the release refuses this config
        return None
    return {n: list(p.shape) for n, p in _parameters(model).items()}


def structural_keys(release: Release, cls: Any, raw: dict[str, Any], base: dict[str, Any],
                    sampled: frozenset[str] = frozenset(), recipe: dict[str, Any] | None = None,
                    built: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    """Each key the build read that the samples do not vary (`sampled`: the recipe's keys they vary too), changed
    alone (nested ones inside a dict the config holds too): the parameters whose names or shapes then change, which
    of them appear, disappear or are resized, the values the class refused (another one is sampled then), the values
    that build what the base builds, and, for a key that sizes what it resizes, the points its shapes are fitted on
    (`sized_points`: the key at three values against the samples' one-at-a-time alternates). A key whose change moves
    nothing is left out."""
    at = base.get("values", BASE)  # the base sample's values (a tied key takes its source's)
    probes: list[tuple[str, Any, list[Any]]] = []
    hf = _hf_config(raw, registry=getattr(release, "config_registry", None))
    for key in base["reads"]:
        if key in BASE or key in sampled or key in ("architectures", "model_type"):
            continue
        value = raw.get(key, getattr(hf, key, None))
        subs = nested_reads(release, cls, raw, key, at) if value is None or isinstance(value, dict) else []
        section = value if isinstance(value, dict) else {}
        for sub in subs:
            inner = section.get(sub)
            if inner is None:  # absent: a flag, a count, or a list of layer ids (one id against two)
                probes += [(f"{key}.{sub}", None, [True]), (f"{key}.{sub}", None, [2]),
                           (f"{key}.{sub}", [0], [[0, 1], [0, 1, 2]])]
            elif alts := _alternates(inner):
                probes.append((f"{key}.{sub}", inner, alts))
        if isinstance(value, dict):
            continue
        elif value is None:  # absent: a flag, a count, or a list of layer ids (one id against two)
            probes += [(key, None, [True]), (key, None, [2]), (key, [0], [[0, 1], [0, 1, 2]])]
        elif alts := _alternates(value):
            probes.append((key, value, alts))
    out: dict[str, Any] = {}
    probe = KeyProbe(release, cls, at, recipe, built, frozenset(base["reads"]) - set(BASE) - sampled)
    for name, value, alts in probes:
        if name in out and "changes" in out[name]:
            continue  # an earlier kind of value already moved parameters
        if (entry := probe.run(raw, name, value, alts, base["parameters"])) is not None:
            out[name] = entry
    for name, names in sorted(((recipe or {}).get(CHOICES) or {}).items()):
        if name in base["reads"] and (found := named_values(probe, raw, name, list(names), base["parameters"])):
            out[name] = found
    return out


def named_values(probe: KeyProbe, raw: dict[str, Any], name: str, names: list[Any],
                 against: dict[str, list[int]]) -> dict[str, Any] | None:
    """A key whose values are names (CHOICES), each probed alone: the first one the class builds is the entry's
    alternate, as for any structural key; `values` holds what each named value does (appears, disappears, resized;
    a name the class refuses: its words)."""
    entry: dict[str, Any] | None = None
    values: dict[str, Any] = {}
    for value in names:
        seen = probe.run(raw, name, raw.get(name), [value], against)
        if seen is None:
            continue
        if entry is None and "changes" in seen:
            entry = seen
        values[str(value)] = {k: seen[k] for k in ("appears", "disappears", "resized", "error") if seen.get(k)}
    if entry is None:
        return None
    return {**entry, "values": values}


def absent_keys(release: Release, cls: Any, raw: dict[str, Any], base: dict[str, Any],
                requires: bool = False) -> dict[str, Any]:
    """Each key the base config holds and the build read (a nested one inside its section), left out: where the
    class still builds (it reads the key optionally: a default, `in`, `.get`), the parameters that then appear,
    disappear or are resized. Where it refuses the absence in words that name another key the config holds (two keys
    it takes only together), that key is left out too (`with_absent`). With `requires` (the recipe's REQUIRES), a
    top-level key the class requires (it refuses the absence in words that quote the key: a plain attribute read, as
    the samples' `omit:` show for the sizes in BASE) is recorded as `required`, with its words: a key a recipe sets
    (MiniMax's DSpark `block_size`, Gemma 4's assistant `backbone_hidden_size`). A key whose absence moves nothing,
    or that the class requires otherwise, is left out; so is a top-level key the config class itself defaults (the
    class then reads the config's default, which check's built config holds too)."""
    at = base.get("values", BASE)
    registry = getattr(release, "config_registry", None)
    names: list[str] = []
    for key in base["reads"]:
        if key in BASE or key in ("architectures", "model_type") or key not in raw:
            continue
        if isinstance(raw[key], dict):
            names += [f"{key}.{sub}" for sub in nested_reads(release, cls, raw, key, at) if sub in raw[key]]
        elif not _defaulted(_without(raw, [key]), key, registry):
            names.append(key)
    out: dict[str, Any] = {}
    for name in names:
        if (entry := _absence(release, cls, raw, name, names, at, base["parameters"], requires)) is not None:
            out[name] = entry
    return out


def _absence(release: Release, cls: Any, raw: dict[str, Any], name: str, names: list[str], at: dict[str, Any],
             against: dict[str, list[int]], requires: bool = False) -> dict[str, Any] | None:
    """What leaving `name` out of the base config does (absent_keys)."""
    companions: list[str] = []
    alone: dict[str, Any] | None = None
    try:
        model, _, _ = release.build(cls, _without(raw, [name]), at)
    except Exception as exc:  # noqa: BLE001 - the release requires the key, or another one with it
        said = str(exc)
        companions = sorted(n for n in names if n != name
                            and re.search(rf"(?<!\w){re.escape(n.rpartition('.')[2])}(?!\w)", said))
        if not companions:  # required: its words name it (a plain read), as fallbacks' `required` for BASE's sizes
            return {"required": _error(exc)} if requires and "." not in name and f"'{name}'" in said else None
        try:
            model, _, _ = release.build(cls, _without(raw, [name, *companions]), at)
        except Exception:  # noqa: BLE001 - refused without both too: required
            return None
        alone = _templated(_error(exc), raw, companions)
    params = {n: list(p.shape) for n, p in _parameters(model).items()}
    moved = sorted(n for n in set(params) | set(against) if params.get(n) != against.get(n))
    if not moved:
        return None
    entry: dict[str, Any] = {"appears": sorted(n for n in moved if n not in against),
                             "disappears": sorted(n for n in moved if n not in params),
                             "resized": sorted(n for n in moved if n in params and n in against)}
    if companions:  # taken only together: the refusal of this key left out, and set to null, beside the others
        entry["with_absent"] = companions
        entry["refused_alone"] = alone
        entry["refused_null_alone"] = _build_error(release, cls, _with(raw, name, None), at, raw, companions)
        entry["null"] = _null(release, cls, raw, name, companions, at, params)
    return entry


def _build_error(release: Release, cls: Any, config: dict[str, Any], at: dict[str, Any], raw: dict[str, Any],
                 companions: list[str]) -> dict[str, Any] | None:
    """The class's refusal of this config (its words, the companions' values as placeholders); None: it builds."""
    try:
        release.build(cls, config, at)
    except Exception as exc:  # noqa: BLE001 - the release refuses the config: that is the observation
        return _templated(_error(exc), raw, companions)
    return None


def _null(release: Release, cls: Any, raw: dict[str, Any], name: str, companions: list[str], at: dict[str, Any],
          absent: dict[str, list[int]]) -> Any:
    """What the class does with the key set to null, its companions left out: "as_absent" where it builds what
    leaving them all out builds; its refusal in its words; "other" where it builds something else."""
    config = _with(_without(raw, companions), name, None)
    try:
        model, _, _ = release.build(cls, config, at)
    except Exception as exc:  # noqa: BLE001 - the release refuses a null: that is the observation
        return _templated(_error(exc), raw, companions)
    params = {n: list(p.shape) for n, p in _parameters(model).items()}
    return "as_absent" if params == absent else "other"


def _templated(error: dict[str, Any], raw: dict[str, Any], keys: list[str]) -> dict[str, Any]:
    """An error whose words quote `<leaf>=<value>` of these keys (their values in the config), with the value as a
    placeholder `{key}`: check renders it at the draft's values."""
    message = str(error.get("message", ""))
    for key in keys:
        head, _, sub = key.partition(".")
        value = raw.get(head, {}).get(sub) if sub and isinstance(raw.get(head), dict) else raw.get(key)
        leaf = key.rpartition(".")[2]
        message = re.sub(rf"(?<!\w){re.escape(leaf)}={re.escape(str(value))}(?!\w|\.\d)", f"{leaf}={{{key}}}", message)
    return {**error, "message": message}


def _defaulted(raw: dict[str, Any], key: str, registry: Any) -> bool:
    """Whether the config class gives `key` a value where config.json leaves it out (or refuses that config)."""
    try:
        return hasattr(_hf_config(raw, registry=registry), key)
    except Exception:  # noqa: BLE001 - the config class refuses the config without it: not the model's optional read
        return True


def _without(raw: dict[str, Any], names: list[str]) -> dict[str, Any]:
    """The config without these keys (`section.entry` for a nested one; the section itself stays, maybe empty)."""
    out = dict(raw)
    for name in names:
        head, _, sub = name.partition(".")
        if not sub:
            out.pop(head, None)
        elif isinstance(out.get(head), dict):
            out[head] = {k: v for k, v in out[head].items() if k != sub}
    return out


# `name=number` in a class's refusal: the quantity it checked the value against, in its words
NAMED_NUMBER = re.compile(r"(?<![\w\]])([A-Za-z_][A-Za-z0-9_]*)=(\d+)\b")


class KeyProbe:
    """One structural key changed alone (structural_keys): where the class refuses every alternate, and its words
    name a number it checked the value against (`target_num_layers=1`) that a key the class reads holds under the
    same words (`num_target_layers`, absent from the sampled keys), the alternates are tried again with that key at
    its own alternates (`with`), so that what the key does is still seen."""

    def __init__(self, release: Release, cls: Any, at: dict[str, Any], recipe: dict[str, Any] | None,
                 built: list[dict[str, Any]] | None, readable: frozenset[str]) -> None:
        self.release, self.cls, self.at, self.recipe, self.built = release, cls, at, recipe, built
        self.readable = readable  # the keys the base build read that no sample varies

    def run(self, raw: dict[str, Any], name: str, value: Any, alts: list[Any],
            against: dict[str, list[int]], companion: dict[str, Any] | None = None) -> dict[str, Any] | None:
        release, cls, at = self.release, self.cls, self.at
        head, _, sub = name.partition(".")
        present = head in raw and (not sub or (isinstance(raw[head], dict) and sub in raw[head]))
        guessed = value is None or (value == [0] and not present)  # a guessed kind proves nothing refused
        if companion is not None:  # the base itself, at the companion's value
            found = _shapes_or_none(release, cls, raw, at)
            if found is None:
                return None
            against = found
        if value == [0] and not present:  # absent at base: compare a one-id list with the two-id one
            one = _shapes_or_none(release, cls, _with(raw, name, [0]), at)
            if one is None:
                return None  # a list is not what the key holds: nothing to learn
            against = one
        refused: dict[str, str] = {}
        accepted: list[tuple[Any, dict[str, list[int]]]] = []
        first_error: dict[str, Any] | None = None
        for alt in alts:
            try:
                model, _, _ = release.build(cls, _with(raw, name, alt), at)
            except Exception as exc:  # noqa: BLE001 - the release refuses this value: that is the observation
                first_error = first_error or _error(exc)
                refused[json.dumps(alt)] = str(exc)[:300]
                continue
            accepted.append((alt, {n: list(p.shape) for n, p in _parameters(model).items()}))
            if len(accepted) == 2:
                break
        if not accepted:
            if companion is None and (entry := self.with_companion(raw, name, value, alts, against, refused)):
                return {**entry, **({"refused_values": refused} if not guessed else {})}
            if not guessed and first_error is not None:
                return {"base": value, "alternate": alts[0], "error": first_error}
            return None
        alt, params = accepted[0]
        moved = sorted(n for n in set(params) | set(against) if params.get(n) != against.get(n))
        if not moved:
            return None
        # a nested key absent at base is recorded as absent (null), as before the one-id list was compared
        shown = None if sub_absent(name, value, present) else value
        entry: dict[str, Any] = {"base": shown, "alternate": alt, "changes": moved,
                                 "appears": sorted(n for n in moved if n not in against),
                                 "disappears": sorted(n for n in moved if n not in params),
                                 "resized": sorted(n for n in moved if n in params and n in against)}
        if companion:
            entry["with"] = companion
        if refused and not guessed:
            entry["refused_values"] = refused
        if isinstance(alt, bool):  # a flag: the other values that build what the base builds
            same = [v for v in (False, 0, None) if v is not value and v != value
                    and _shapes_or_none(release, cls, _with(raw, name, v), at) == against]
            if same:
                entry["as_base"] = same
        if entry["resized"] and self.recipe is not None and self.built is not None and _sized_value(alt) is not None:
            entry["sized_points"] = sized_points(release, cls, self.recipe, self.built, name, value,
                                                 [alt, *(a for a, _ in accepted[1:])], entry["resized"],
                                                 companion or {})
        return entry

    def with_companion(self, raw: dict[str, Any], name: str, value: Any, alts: list[Any],
                       against: dict[str, list[int]], refused: dict[str, str]) -> dict[str, Any] | None:
        """The alternates again, with the read key the refusal names set to each of its own alternates."""
        for word, number in NAMED_NUMBER.findall(next(iter(refused.values()), "")):
            key = next((k for k in sorted(self.readable) if k != name.partition(".")[0]
                        and sorted(k.split("_")) == sorted(word.split("_"))), None)
            if key is None:
                continue
            for other in _alternates(int(number)):
                entry = self.run(_with(raw, key, other), name, value, alts, against, {key: other})
                if entry is not None:
                    return entry
        return None


def sub_absent(name: str, value: Any, present: bool) -> bool:
    """A nested key (`section.entry`) the base config does not hold, probed as a one-id list."""
    return "." in name and value == [0] and not present


def one_at_a_time(sample: str) -> bool:
    """A sample that sets one sampled key to another value (`key=value`): not an omission, a bare config, an untied
    pair or a joint sample."""
    return "=" in sample and not sample.startswith(("omit:", "bare", "untied:", "joint"))


def off_by_one(feeder: Feeder, canonical: dict[str, Any], ckpt: str, shape: tuple[int, ...],
               dtype: str) -> dict[str, Any]:
    """What load_weights does with `ckpt` one row or one column off (each axis, each way), the rest of the layout
    shipped as built: `<ckpt>@<axis><+|->` -> the shape fed, the one built, the error, where the marker landed,
    which of those parameters still hold an element nothing wrote (`partly`: a shorter tensor's rest left as
    initialised) and the values there no tensor fed (`fills`: what a loader that pads it writes there, 0.0 or
    -inf)."""
    off: dict[str, Any] = {}
    for axis, delta in itertools.product(range(len(shape)), (1, -1)):
        if shape[axis] + delta < 1:
            continue
        wrong = tuple(d + delta if i == axis else d for i, d in enumerate(shape))
        result = feeder.feed({**canonical, ckpt: (wrong, dtype)}, fills=True)
        landed = result["landed"].get(ckpt)
        into = {p for p, _ in landed or ()}
        off[f"{ckpt}@{axis}{'+' if delta > 0 else '-'}"] = {
            "fed": list(wrong), "shape": list(shape), "error": result["error"], "landed": landed,
            "partly": sorted(into & set(result["partly"])),
            "fills": sorted({v for p in into for v in result["fills"].get(p, ())})[:4]}
    return off


def sized_points(release: Release, cls: Any, recipe: dict[str, Any], built: list[dict[str, Any]], name: str,
                 value: Any, alts: list[Any], resized: list[str],
                 companion: dict[str, Any] | None = None) -> list[dict[str, Any]]:
    """The shapes of the parameters a sizing key resizes, at the key's base value, its alternate and one more,
    against the base sample and each one-at-a-time alternate that moves one of them (so that a product of the
    key with a sampled size, `len(target_layer_ids) * hidden_size`, is fitted); `companion`: keys set beside it
    (KeyProbe: what the class's refusal of every alternate asked for)."""

    def config(values: dict[str, Any], v: Any) -> dict[str, Any]:
        raw = _with(config_for(recipe, values), name, v)
        for key, other in (companion or {}).items():
            raw = _with(raw, key, other)
        return raw

    base_params = built[0]["parameters"]
    moving = [s["values"] for s in built[1:] if "parameters" in s and one_at_a_time(s["sample"])
              and any(s["parameters"].get(p) != base_params.get(p) for p in resized)]
    values_list = [v for v in (value, *alts) if _sized_value(v) is not None]
    if len(values_list) < 3 and values_list:  # one more value of the key, where the class takes it
        for extra in _alternates(values_list[-1]):
            if extra not in values_list and _sized_value(extra) is not None and \
                    _shapes_or_none(release, cls, config(built[0]["values"], extra), built[0]["values"]) is not None:
                values_list.append(extra)
                break
    variable = key_variable(name, value if value is not None else alts[0])
    points: list[dict[str, Any]] = []
    for core in (dict(built[0]["values"]), *moving):
        for v in values_list:
            try:
                model, _, _ = release.build(cls, config(core, v), core)
            except Exception:  # noqa: BLE001, S112 - refused at these sizes: no point
                continue
            params = {n: list(p.shape) for n, p in _parameters(model).items()}
            points.append({"values": {**core, variable: _sized_value(v)},
                           "parameters": {p: params[p] for p in resized if p in params}})
    return points


def observe_appearing(release: Release, cls: Any, recipe: dict[str, Any], built: list[dict[str, Any]],
                      structural: dict[str, Any], best: str) -> None:
    """Each structural key's value that makes parameters appear (a flag's or a count's alternate; each named value
    under `values`) gets `appearing`: what the class builds and loads for them at that value (appearing_at). A list's
    alternate is left out (what it adds is indexed by its items: landing.py `_per_item`)."""
    done: dict[str, dict[str, Any] | None] = {}
    for name, entry in structural.items():
        named = [(seen, value) for value, seen in (entry.get("values") or {}).items()]
        for seen, value in [(entry, entry.get("alternate")), *named]:
            if not seen.get("appears") or isinstance(value, (list, dict)):
                continue
            label = json.dumps([name, value])
            if label not in done:
                done[label] = appearing_at(release, cls, recipe, built, name, value, seen["appears"], best,
                                           entry.get("with") or {})
            if done[label] is not None:
                seen["appearing"] = done[label]


def appearing_at(release: Release, cls: Any, recipe: dict[str, Any], built: list[dict[str, Any]], name: str,
                 value: Any, appears: list[str], best: str, companion: dict[str, Any]) -> dict[str, Any] | None:
    """The parameters key `name` at `value` makes appear: their shapes, and those of the checkpoint tensors that fill
    them, over the base sample and each one-at-a-time sample that moves a parameter of the base (`points`, fitted as
    the base's samples are), and what load_weights does with each such tensor one row or one column off, in the
    layout the base loads best (`best`), the rest of that layout shipped as built (`off_by_one`, as the base's).
    Bounded: the builds of those samples, one feed of the layout, two feeds per axis of each appearing tensor (its
    first layer only). None where the class does not build the base at that value."""
    wanted = set(appears)

    def config(values: dict[str, Any]) -> dict[str, Any]:
        raw = _with(config_for(recipe, values), name, value)
        for key, other in companion.items():
            raw = _with(raw, key, other)
        return raw

    base_params = built[0]["parameters"]
    cores = [s for s in built if "parameters" in s and (s["sample"] == "base" or (
        one_at_a_time(s["sample"]) and s["parameters"] != base_params))]
    points: list[dict[str, Any]] = []
    base_model, reads = None, set()
    for sample in cores:
        try:
            model, read, _ = release.build(cls, config(sample["values"]), sample["values"])
        except Exception:  # noqa: BLE001, S112 - refused at these sizes: no point
            continue
        params = {n: list(p.shape) for n, p in _parameters(model).items() if n in wanted}
        expected = {ckpt: list(shape) for layout in renamed_layouts(model, recipe).values()
                    for form in (layout, split_biases(model, layout))
                    for ckpt, (pname, shape, _) in form.items() if pname in wanted}
        points.append({"sample": sample["sample"], "values": sample["values"], "parameters": params,
                       "expected": expected})
        if sample["sample"] == "base":
            base_model, reads = model, read
    if base_model is None:
        return None
    # the keys the class reads only at this value (an optional head's own switches: vLLM's confidence head reads
    # confidence_head_with_markov only when enable_confidence_head is on) that move what appears: the shapes above
    # hold at their base values only (`moved_by`: key -> its value there)
    at = built[0]["values"]
    fresh = sorted(reads - set(built[0].get("reads", ())) - {name.split(".")[0], *companion})
    others = structural_keys(release, cls, config(at), {"values": at, "parameters": {
        n: list(p.shape) for n, p in _parameters(base_model).items()}, "reads": fresh}) if fresh else {}
    moved_by = {k: e.get("base") for k, e in others.items() if wanted & set(e.get("changes", ()))}
    layouts_at = renamed_layouts(base_model, recipe)
    form = best if best in layouts_at else next(iter(layouts_at))
    feeder = feeder_for(release, base_model)
    fed: dict[str, Any] = {}
    off: dict[str, Any] = {}
    firsts: set[str] = set()
    for label, layout in ((form, layouts_at[form]), (f"{form}-split-bias", split_biases(base_model, layouts_at[form]))):
        if label != form and layout == layouts_at[form]:
            continue
        canonical = {c: (s, dtype_of(c)) for c, (_, s, _) in layout.items()}
        fed[label] = {"names": {c: [p, o] for c, (p, _, o) in layout.items()}, **feeder.feed(canonical)}
        for ckpt, (pname, shape, _) in layout.items():
            generic = re.sub(r"\blayers\.\d+\.", "layers.{i}.", ckpt)
            if pname not in wanted or generic in firsts:
                continue
            firsts.add(generic)
            off.update(off_by_one(feeder, canonical, ckpt, shape, dtype_of(ckpt)))
    return {"points": points, "layouts": fed, "off_by_one": off, "moved_by": moved_by}


def split_biases(model: Any, layout: dict[str, tuple[str, tuple[int, ...], int]]) -> dict[str, tuple[str, tuple[int, ...], int]]:
    """A layout with each stacked bias (`qkv_proj.bias`) shipped as its parts (`q_proj.bias`, ...), as the stacked
    weight beside it is (`shards`): how producers ship the biases `attention_bias` adds."""
    params = _parameters(model)
    out: dict[str, tuple[str, tuple[int, ...], int]] = {}
    for ckpt, (pname, shape, offset) in layout.items():
        weight = pname.removesuffix(".bias") + ".weight"
        parts = shards(model, weight, params[weight]) if pname.endswith(".bias") and weight in params else None
        if not parts or len(shape) != 1 or not ckpt.endswith(".bias"):
            out[ckpt] = (pname, shape, offset)
            continue
        stem = ckpt.rsplit(".", 2)[0]
        out.update({f"{stem}.{part}.bias": (pname, (rows,), start) for part, start, rows in parts})
    return out


def load_case(release: Release, case: dict[str, Any]) -> dict[str, Any]:
    """One checkpoint (its config as the release builds it, its tensors' names and shapes) through the class's
    real __init__ and load_weights: the error it raises, the tensors it cuts, the parameters left unwritten."""
    return observe_load(release, case)[0]


def observe_load(release: Release, case: dict[str, Any]) -> tuple[dict[str, Any], Any]:
    """load_case's observation, and the model it was made on (None where __init__ raised). A case `served` with a
    speculative config (its keyword arguments) is resolved by the release's own SpeculativeConfig from the shipped
    config.json first: the architecture and method it settled on are recorded, and a class outside the release's
    speculative-decoding registry (a base model served as an independent draft) is not built."""
    architecture, made, resolved = case.get("architecture"), None, {}
    if case.get("served"):
        try:
            made, architecture, method = release.served(case)
        except Exception as exc:  # noqa: BLE001 - the release refuses the config at start-up: the observation
            return {"id": case["id"], "phase": "config", "error": _error(exc)}, None
        resolved = {"architecture": architecture, "method": method}
        case = {**case, "share": case.get("share_steps", {}).get(method)}  # the method's own sharing step
        if architecture not in release.registry:
            return {"id": case["id"], "phase": "config", "error": None, "draft_class": False, **resolved}, None
    cls = release.model_class(architecture)
    values = {"target.hidden_size": case["target_hidden"], "target.vocab_size": case["target_vocab"],
              "bare": int(case.get("bare", False))}
    if case.get("parallel_drafting"):  # verify's engine: the speculative config's flag, as the draft's config says
        values["parallel_drafting"] = 1
    try:
        model, _, _ = release.build(cls, case["config"], values, made)
    except Exception as exc:  # noqa: BLE001 - the release refuses the config: that is the observation
        return {"id": case["id"], "phase": "init", "error": _error(exc), **resolved}, None
    fed = {name: (tuple(shape), dtype_of(name)) for name, shape in case["tensors"].items()}
    feeder = feeder_for(release, model)
    result = feeder.feed(fed)
    numel = {name: int(release.torch.Size(shape).numel()) for name, (shape, _) in fed.items()}
    cut = sorted(n for n, where in result["landed"].items() if sum(c for _, c in where) < numel[n])
    seen = {"id": case["id"], "phase": "load_weights", "error": result["error"], "cut": cut,
            "unwritten": result["unwritten"], "partly": result["partly"], **resolved}
    if case.get("share") and result["error"] is None:
        seen.update(share_from_target(release, model, case["share"], case["target_vocab"], case["target_hidden"]))
    return seen, model


# The functions of each method's target-sharing step (vllm/v1/worker/gpu/spec_decode/<method>/utils.py) that build
# or configure the draft before they share: answered as no-ops (the draft is already built and loaded).
SHARE_PASS = ("replace", "get_draft_load_config", "get_pp_safe_draft_load_config", "_get_dspark_parallel_config",
              "_resolve_dspark_attention_backend")


def share_from_target(release: Release, model: Any, method: str, target_vocab: int,
                      target_hidden: int) -> dict[str, Any]:
    """The release's own target-sharing step (`load_<method>_model`, after get_model) on the loaded draft, with a
    target whose embedding and lm_head are [T, H] and written: its `get_model` answers the loaded draft, what only
    configures the build is passed through. Returns the parameters still unwritten (NaN / the int marker) after it,
    or the error it raised ("phase": "share"); "share": None where the release has no such step for the method."""
    torch = release.torch
    try:
        utils = importlib.import_module(f"vllm.v1.worker.gpu.spec_decode.{method}.utils")
        load = getattr(utils, f"load_{method}_model")
    except (ImportError, AttributeError):
        return {"share": None}
    from vllm.compilation import backends  # type: ignore[import-not-found, unused-ignore]
    from vllm.model_executor import model_loader  # type: ignore[import-not-found, unused-ignore]
    from vllm.model_executor.models import utils as model_utils  # type: ignore[import-not-found, unused-ignore]

    draft, target = release.last
    inner = torch.nn.Module()
    inner.embed_tokens = torch.nn.Embedding(target_vocab, target_hidden)
    target_model = torch.nn.Module()
    target_model.model, target_model.lm_head = inner, torch.nn.Embedding(target_vocab, target_hidden)
    with torch.no_grad():
        inner.embed_tokens.weight.zero_()
        target_model.lm_head.weight.zero_()
    spec = SimpleNamespace(draft_model_config=draft, attention_backend=None, kv_cache_dtype=None, moe_backend=None,
                           draft_lm_head_quantization=None, apply_draft_overrides=lambda c: c,
                           draft_parallel_config=SimpleNamespace(tensor_parallel_size=1))
    config = SimpleNamespace(speculative_config=spec, model_config=target, load_config=None, cache_config=None,
                             parallel_config=None, attention_config=SimpleNamespace(backend=None))
    patches = [(utils, name, lambda obj=None, *a, **k: obj) for name in SHARE_PASS if hasattr(utils, name)]
    patches += [(mod, "get_model", lambda *a, **k: model) for mod in (utils, model_loader) if hasattr(mod, "get_model")]
    patches += [(model_utils, "get_draft_quant_config", lambda *a, **k: None),
                (backends, "set_model_tag", lambda *a, **k: contextlib.nullcontext())]
    patches = [(mod, name, value) for mod, name, value in patches if hasattr(mod, name)]
    saved = [(mod, name, getattr(mod, name)) for mod, name, _ in patches]
    try:
        for mod, name, value in patches:
            setattr(mod, name, value)
        with release.set_current(release.VllmConfig()):
            shared = load(target_model, config)
    except Exception as exc:  # noqa: BLE001 - the release's own refusal at the sharing step is the observation
        if isinstance(exc, AttributeError) and "SimpleNamespace" in str(exc):  # the stand-in lacks what it reads
            return {"share": method, "adapter_error": {"phase": "share", **_error(exc)}}
        return {"share": method, "error": {"phase": "share", **_error(exc)}}
    finally:
        for mod, name, value in saved:
            setattr(mod, name, value)
    unwritten = []
    with torch.no_grad():
        for pname, p in shared.named_parameters():
            data = p.detach().reshape(-1).to(torch.float64)
            if data.numel() and not bool((~torch.isnan(data) if p.dtype.is_floating_point
                                          else data != -(2 ** 31)).any()):
                unwritten.append(pname)
    return {"share": method, "shared_unwritten": sorted(unwritten)}


def header_shapes(folder: Path) -> dict[str, list[int]]:
    """Every tensor's shape, from the safetensors headers (no data read), in the order vLLM's loader yields them
    (model_loader/weight_utils.py safetensors_weights_iterator: files naturally sorted, each file's names as
    safetensors' `keys()` gives them, sorted), not the header's own order (dtype-grouped by the writer): which of
    two refused tensors the release names first depends on it."""
    out: dict[str, list[int]] = {}
    for file in sorted(folder.glob("*.safetensors"), key=lambda p: _natural(p.name)):
        with file.open("rb") as handle:
            size = int.from_bytes(handle.read(8), "little")
            header = json.loads(handle.read(size))
        out.update({n: list(header[n]["shape"]) for n in sorted(header) if n != "__metadata__"})
    return out


def _natural(name: str) -> list[Any]:
    """vLLM's _natural_sort_key: digit runs compared as numbers (model-2-of-10 before model-10-of-10)."""
    return [int(part) if part.isdigit() else part for part in re.split(r"(\d+)", name)]


def _hidden(config: dict[str, Any]) -> int:
    layer = config.get("transformer_layer_config")
    found = config.get("hidden_size") or (layer.get("hidden_size") if isinstance(layer, dict) else None)
    return int(found) if isinstance(found, int) and found > 0 else 16


def engine_case(release: Any, case: dict[str, Any]) -> tuple[dict[str, Any], Any]:
    """verify's engine: one checkpoint folder through the registered class of its architecture (the config and
    tensor shapes the request gives, else config.json and the headers): observe_load's observation, with the class,
    and the model it was made on (None where the architecture is not registered or __init__ raised). A case
    `served` (the deploy's speculative config, less its `model`) is resolved from config.json as shipped by the
    release's own SpeculativeConfig first (Release.served, as the agreement tests' served cases are): the class it
    settles on is the one built."""
    folder = Path(case["folder"])
    raw = json.loads((folder / "config.json").read_text())
    arch = case.get("architecture") or (raw.get("architectures") or [None])[0]
    served = case.get("served")
    if not isinstance(arch, str) or (arch not in release.registry and not served):
        return {"registered": False, "architecture": arch}, None
    config = dict(raw if served else case.get("config") or raw)
    full = {"id": case["id"], "architecture": arch, "config": config,
            "tensors": case.get("tensors") or header_shapes(folder),
            "target_hidden": case.get("target_hidden") or _hidden(config), "target_vocab": int(case["target_vocab"]),
            "bare": bool(case.get("bare")) and not served, "parallel_drafting": bool(case.get("parallel_drafting")),
            **({"served": served, "served_as": case.get("served_as")} if served else {})}
    seen, model = observe_load(release, full)
    arch = seen.get("architecture") or arch  # served: the class the release's SpeculativeConfig settled on
    if arch not in release.registry:
        return {"registered": False, "architecture": arch, "method": seen.get("method")}, None
    cls = release.model_class(arch)
    out: dict[str, Any] = {"registered": True, "architecture": arch, "module": cls.__module__,
                           "class": cls.__name__, "where": _where(cls), "error": None,
                           "unwritten": seen.get("unwritten", []), "partly": seen.get("partly", []),
                           "cut": seen.get("cut", []), "config": config,
                           **({"method": seen.get("method")} if served else {})}
    if seen["error"] is not None:
        out["error"] = {"phase": seen["phase"], **seen["error"]}
    return out, model


def probe_each(release: Any, request: dict[str, Any], doc: dict[str, Any], out: Path,
               probe: Callable[[str], dict[str, Any]]) -> None:
    """Each requested architecture (else every registered one) through `probe`, the worker's own failure recorded per
    architecture; the document is rewritten after each, so a killed worker leaves what it finished. The release's
    and SGLang's workers both run it."""
    for architecture in request.get("architectures") or sorted(release.registry):
        try:
            doc["architectures"][architecture] = probe(architecture)
        except Exception as exc:  # noqa: BLE001 - the worker's own failure, per architecture
            doc["architectures"][architecture] = {"architecture": architecture, "worker_error": _error(exc)}
        doc["stubbed"] = release.stubbed  # what probing this one stubbed too
        out.write_text(json.dumps(doc))
        print(f"worker: {architecture} done", file=sys.stderr, flush=True)


def main(argv: list[str]) -> int:
    request = json.loads(Path(argv[0]).read_text())
    doc: dict[str, Any] = {"ok": False}
    try:
        with tempfile.TemporaryDirectory() as pg:
            release = Release(pg)
            if request.get("mode") == "load":
                doc = {"ok": True, "version": release.version,
                       "results": [load_case(release, case) for case in request["cases"]]}
                Path(argv[1]).write_text(json.dumps(doc))
                return 0
            doc = {"ok": True, "version": release.version, "stubbed": release.stubbed, "registry": {
                name: list(entry) for name, entry in release.registry.items()}, "architectures": {}}
            probe_each(release, request, doc, Path(argv[1]), lambda architecture: probe_architecture(
                release, architecture, request["recipes"].get(architecture) or recipe_for(architecture, request),
                int(request.get("seed", 0))))
    except Exception as exc:  # noqa: BLE001 - the release cannot be imported or set up here: say why
        doc = {"ok": False, "reason": f"{type(exc).__name__}: {exc}", "traceback": traceback.format_exc()}
    Path(argv[1]).write_text(json.dumps(doc))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[-2:]))
