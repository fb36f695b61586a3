"""Executes one SGLang release's own draft code on CPU: the worker of tools/sglang_release_model.py (the release's
data files) and of `verify --engine installed` (whole checkpoints through the installed SGLang's own class). Runs
inside the release (PYTHONPATH = its extracted wheel + deps, or the installed SGLang), loaded by path: it imports
nothing of dspark_ckpt.

    python tools/sglang_release_model_worker.py REQUEST.json OUT.json   # (that file loads this one)

The observation itself is verify/release_worker.py's (the same samples, layouts, marker tensors, off-by-one
feeds and structural probes, imported and called): this module only gives it an SGLang release to run them on.
SGLang is imported with SGLANG_USE_CPU_ENGINE=1 (its own CPU code paths); the GPU-only packages it imports at module
level (STUB, sent as request["stub"]: its kernels package, flashinfer, a benchmark's datasets, ...) are answered by
inert modules, served only to imports made from SGLang's own files (STUB_EVERYONE, request["stub_everyone"],
torchvision's CUDA-only build, to every importer, with the version transformers' checks read), and every one that
was imported is recorded. The process group is SGLang's own single-process set-up (sglang/test/layer_ut_utils.py
init_single_process_dist where the release ships it; else its steps: init_distributed_environment with gloo, world
size 1, the topology published where the release publishes one, initialize_model_parallel). A class is built as
model_loader/loader.py _initialize_model builds it: `cls(config=hf_config, quant_config=None)`.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import json
import os
import sys
import tempfile
import traceback
import types
from pathlib import Path
from typing import Any

PACKAGE = "sglang"
# Imported at module level by SGLang's files but not loadable on CPU (or pulling a CUDA torch): served as inert
# modules to SGLang's own imports (the worker records each one that was imported).
# cuda: cuda-python's driver bindings, which the CuTe DSL kernels import beside cutlass (0.5.15
# jit_kernel/cutedsl_fp8_paged_mqa_logits.py:59, reached from jit_kernel/dsa/__init__.py:12 on every non-ROCm
# platform; 0.5.8 jit_kernel/cutedsl_gdn.py:6).
STUB = ("sgl_kernel", "datasets", "vllm", "flashinfer", "deep_gemm", "deep_ep", "flash_mla",
        "tilelang", "quack", "flash_attn", "torch_memory_saver", "torchaudio", "decord", "cutlass", "modelscope",
        "cuda")
# Served to every importer, transformers included, with the __version__ its availability checks read: torchvision
# (PyPI's build needs a CUDA torch), which the transformers that SGLang <= 0.5.21 pins requires for
# AutoImageProcessor, and which SGLang's multimodal configs register processors with at import time. The version
# is the one paired with the interpreter's torch 2.13.
STUB_EVERYONE = {"torchvision": "0.28.0"}
observe: Any = None  # verify/release_worker.py, once observation() has loaded it


# --- file:line in SGLang's terms (the vLLM worker's helpers name vllm/ files) -----------------------------------

def _where_file(path: str) -> str:
    marker = f"/{PACKAGE}/"
    return PACKAGE + "/" + path.rsplit(marker, 1)[1] if marker in path else path


def _where(obj: Any) -> str:
    import inspect

    try:
        file = inspect.getsourcefile(obj) or "?"
        line = inspect.getsourcelines(obj)[1]
    except (OSError, TypeError):
        return "?"
    return f"{_where_file(file)}:{line}"


def _error(exc: BaseException) -> dict[str, Any]:
    frames = traceback.extract_tb(exc.__traceback__)
    where = getattr(exc, "release_where", None) or next(
        (f"{_where_file(f.filename)}:{f.lineno}" for f in reversed(frames) if f"/{PACKAGE}/" in f.filename), "?")
    return {"type": type(exc).__name__, "message": str(exc)[:2000], "where": where}


def observation() -> Any:
    """verify/release_worker.py (loaded by path, beside this file, under the name tools/release_model_worker.py
    gives it), its file:line helpers pointed at sglang/ files and its stacked shards with SGLang's MLA. Done in the
    worker only: importing this module changes nothing."""
    global observe
    # as it always imported it: the data quote the reprs of its objects
    found: Any = _sibling("release_model_worker", "release_worker.py")
    if not getattr(found, "sglang_helpers", False):
        stacked = found.shards

        def _shards(model: Any, name: str, param: Any) -> list[tuple[str, int, int]] | None:
            """The vLLM worker's stacked shards, plus SGLang's MLA `fused_qkv_a_proj_with_mqa` (a ReplicatedLinear,
            so no output_sizes): load_weights concatenates q_a_proj (q_lora_rank rows) and kv_a_proj_with_mqa (the
            rest) (models/deepseek_v2.py, models/kimi_k25_eagle3.py load_weights)."""
            parts = name.rsplit(".", 2)
            if len(parts) == 3 and parts[1] == "fused_qkv_a_proj_with_mqa" and param.dim() == 2:
                attention = model.get_submodule(parts[0]) if parts[0] else model
                q_rows = getattr(attention, "q_lora_rank", None)
                if isinstance(q_rows, int) and 0 < q_rows < param.shape[0]:
                    return [("q_a_proj", 0, q_rows), ("kv_a_proj_with_mqa", q_rows, int(param.shape[0]) - q_rows)]
            result: list[tuple[str, int, int]] | None = stacked(model, name, param)
            return result

        found._where = _where  # the observation's file:line helpers, pointed at sglang/ files
        found._error = _error
        found.shards = _shards
        found.sglang_helpers = True
    observe = found
    return found


# --- inert modules for what SGLang imports but cannot load on CPU -----------------------------------------------

class Inert(types.ModuleType):
    """A module whose every attribute is another inert module: callable (a decorator returns what it wraps), a base
    class (object), falsy, empty when iterated. Nothing the observation runs calls into it for a result."""

    def __init__(self, name: str) -> None:
        super().__init__(name)
        self.__path__: list[str] = []

    def __getattr__(self, key: str) -> Any:
        if key.startswith("__") and key.endswith("__"):
            raise AttributeError(key)
        value = Inert(f"{self.__name__}.{key}")
        setattr(self, key, value)
        return value

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if len(args) == 1 and callable(args[0]) and not kwargs:
            return args[0]
        made = Inert(f"{self.__name__}()")
        caller = sys._getframe(1)
        made.__dict__["made_at"] = f"{_where_file(caller.f_code.co_filename)}:{caller.f_lineno}"
        return made

    def __mro_entries__(self, bases: tuple[Any, ...]) -> tuple[type, ...]:
        return (object,)

    def __getitem__(self, key: Any) -> Any:
        return self

    def __iter__(self) -> Any:
        return iter(())

    def __bool__(self) -> bool:
        return False


def _from_release(frame: Any) -> bool:
    """Whether the first frame at or above `frame` outside the import machinery (this file's __import__ included)
    is a file of the release."""
    while frame is not None and (frame.f_code.co_filename.startswith("<frozen")
                                 or "importlib" in frame.f_code.co_filename
                                 or frame.f_code.co_filename == __file__):
        frame = frame.f_back
    return frame is not None and f"/{PACKAGE}/" in frame.f_code.co_filename


class InertFinder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Serves an inert module for `names`, to an import made from a file of the release only: transformers' own
    availability checks (importlib.util.find_spec) still find nothing, so it takes its no-torchvision paths."""

    def __init__(self, names: list[str], everyone: dict[str, str]) -> None:
        self.names = set(names)
        self.everyone = everyone  # served to every importer, with this __version__ (transformers asks for one)
        self.served: list[str] = []
        self.live: list[str] = []  # every module created since the last release import statement ended

    def find_spec(self, name: str, path: Any, target: Any = None) -> importlib.machinery.ModuleSpec | None:
        root = name.split(".")[0]
        if root not in self.everyone and (root not in self.names or not _from_release(sys._getframe(2))):
            return None
        return importlib.machinery.ModuleSpec(name, self, is_package=True)

    def keep_to_release(self) -> None:
        """Python caches every module in sys.modules, where any later importer finds it before any finder is asked:
        an inert module served to a release file would then be every importer's, and read as installed
        (importlib.util.find_spec answers from sys.modules first: transformers 5.6.0-5.8.1's
        utils/import_utils.py is_flash_attn_2_available then indexes packages_distributions() by its name, a
        KeyError, L951 @ 5.6.0, L965 @ 5.8.1, once SGLang 0.5.11-0.5.14's srt/utils/hf_transformers_patches.py
        _patch_flash_attn_availability has tried `import flash_attn`; tvm_ffi's cython/function.pxi L38 takes an
        inert cuda-python for its driver bindings). So each import statement of a release file drops, once it is
        done, the modules served to the release's files only from sys.modules: the file keeps what it bound, the
        next release import is served again, and anyone else is asked for on sys.path, where they are absent."""
        import builtins

        own = builtins.__import__
        release_only = self.names - set(self.everyone)

        def _import(name: str, globals: Any = None, locals: Any = None, fromlist: Any = (),
                    level: int = 0) -> Any:
            try:
                return own(name, globals, locals, fromlist, level)
            finally:
                importer = str((globals or {}).get("__name__", ""))
                if self.live and (importer == PACKAGE or importer.startswith(PACKAGE + ".")):
                    for served in self.live:
                        if served.split(".")[0] in release_only:
                            sys.modules.pop(served, None)
                    self.live.clear()

        builtins.__import__ = _import

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> types.ModuleType:
        if "." not in spec.name and spec.name not in self.served:
            self.served.append(spec.name)
        self.live.append(spec.name)
        module = Inert(spec.name)
        if spec.name in self.everyone:
            module.__dict__["__version__"] = self.everyone[spec.name]
        return module

    def exec_module(self, module: types.ModuleType) -> None:
        return None


# --- the release ------------------------------------------------------------------------------------------------

def _answer_amx(torch: Any, answered: list[str]) -> None:
    """SGLang 0.5.1 asks torch._C._cpu._is_amx_tile_supported() unguarded (srt/utils.py cpu_has_amx_support, L220),
    which this torch no longer has (it is torch.cpu's now): answered False, as 0.5.2-0.5.12 answer themselves when
    the call fails (their `except: is_amx_tile_supported = False`), and recorded the first time a release asks. The
    AMX path also needs sgl_kernel's CPU ops, which the inert sgl_kernel lacks, so the answer decides nothing."""
    observe.answer_false(torch, "_is_amx_tile_supported", answered)


def _set_up_process_group(folder: str) -> str:
    """SGLang's own single-process set-up, as the release ships it, then its DP-attention state where nothing
    set it (the releases before 0.5.19 assert it in every MLA/MoE layer: `dp attention not initialized!`, which
    their scheduler sets with dp_attention.initialize_dp_attention); returns which ones ran."""
    said = _set_up_groups(folder)
    try:
        from sglang.srt.layers import dp_attention  # type: ignore[import-not-found, unused-ignore]
        from sglang.srt.server_args import ServerArgs  # type: ignore[import-not-found, unused-ignore]
    except ImportError:
        return said
    dp_size = getattr(dp_attention, "get_attention_dp_size", None)  # (0.5.19+ keep the state elsewhere)
    if dp_size is None or _dp_attention_set(dp_size):
        return said
    import torch

    said += "; layers/dp_attention.py initialize_dp_attention(ServerArgs(model_path='dummy'))"
    try:
        dp_attention.initialize_dp_attention(ServerArgs(model_path="dummy"), types.SimpleNamespace(
            hidden_size=16, dtype=torch.float32, hf_config=types.SimpleNamespace()))
    except Exception as exc:  # noqa: BLE001 - its last step, the gathered buffers' device, may find none
        if _dp_attention_set(dp_size):  # the rank and size the layers read are set
            said += f" (stopped after the DP rank and size, at {type(exc).__name__}: " \
                    f"{(str(exc).splitlines() or [''])[0]})"
        else:  # it raised before them (0.5.3 and older read the model's config): left unset
            said += f" (raised {type(exc).__name__} before setting the DP rank and size, which stay unset)"
    return said


def _dp_attention_set(dp_size: Any) -> bool:
    """Whether the release's DP-attention rank and size are set (its getter asserts they are)."""
    try:
        dp_size()
    except AssertionError:
        return False
    return True


def _set_up_groups(folder: str) -> str:
    """SGLang's own single-process set-up, as the release ships it; returns which one ran."""
    from sglang.srt.distributed import parallel_state as ps  # type: ignore[import-not-found, unused-ignore]

    try:
        from sglang.test.layer_ut_utils import init_single_process_dist  # type: ignore[import-not-found, unused-ignore]
    except ImportError:
        init_single_process_dist = None
    if init_single_process_dist is not None:
        os.environ.setdefault("MASTER_PORT", str(29500 + os.getpid() % 1000))
        init_single_process_dist(backend="gloo")
        said = "sglang/test/layer_ut_utils.py init_single_process_dist(backend='gloo')"
    else:
        ps.init_distributed_environment(world_size=1, rank=0, local_rank=0, backend="gloo",
                                        distributed_init_method=f"file://{folder}/pg")
        said = "sglang/srt/distributed/parallel_state.py init_distributed_environment (gloo, world size 1)"
        try:  # the releases whose groups read a published topology: layer_ut_utils' own steps
            from sglang.srt.runtime_context import SpawnRanks, get_parallel, publish, reset_context  # type: ignore[import-not-found, unused-ignore]
        except ImportError:
            ps.initialize_model_parallel(tensor_model_parallel_size=1)
            said += " + initialize_model_parallel(tensor_model_parallel_size=1)"
        else:
            from sglang.srt.server_args import ServerArgs  # type: ignore[import-not-found, unused-ignore]

            reset_context()
            publish(ServerArgs(model_path="dummy", tp_size=1, ep_size=1, pp_size=1), role="test",
                    ranks=SpawnRanks(world_rank=0))
            get_parallel().override_permanently(world_group=ps._WORLD)
            ps.initialize_model_parallel(backend="gloo")
            return said + " + runtime_context.publish(ServerArgs(model_path='dummy'), role='test') + " \
                "initialize_model_parallel(backend='gloo')"
    try:  # the server args the layers read, where nothing above published them
        from sglang.srt.server_args import ServerArgs, set_global_server_args_for_scheduler  # type: ignore[import-not-found, unused-ignore]
    except ImportError:
        return said
    try:
        from sglang.srt.runtime_context import publish_role  # type: ignore[import-not-found, unused-ignore]
    except ImportError:
        publish_role = None
    if publish_role is None or publish_role() is None:
        set_global_server_args_for_scheduler(ServerArgs(model_path="dummy"))
        said += "; server_args.set_global_server_args_for_scheduler(ServerArgs(model_path='dummy'))"
    return said


class Release:
    """The release imported once, on CPU, with its process group; builds registered classes on demand (the
    interface tools/release_model_worker.py's probe_architecture calls)."""

    def __init__(self, folder: str, registry: dict[str, list[str]], stub: list[str],
                 stub_everyone: dict[str, str]) -> None:
        os.environ["SGLANG_USE_CPU_ENGINE"] = "1"
        observation()
        self.finder = InertFinder(stub, stub_everyone)
        sys.meta_path.insert(0, self.finder)
        self.finder.keep_to_release()
        import torch

        self.answered: list[str] = []
        _answer_amx(torch, self.answered)
        import sglang  # type: ignore[import-not-found, unused-ignore]

        self.torch = torch
        self.version = getattr(sglang, "__version__", "?")
        self.folder = folder
        self.set_up = _set_up_process_group(folder)
        self.registry = registry  # architecture -> [module under sglang/srt/models, class name]
        self.cuda_loaders = False  # run the loaders' CUDA branch (gpu_loaders), once a class has imported them
        self.gpu_loaders: list[str] = []  # the modules set so far

    def take_cuda_branch(self) -> None:
        """With cuda_loaders, every loader module imported by now takes its CUDA branch (gpu_loaders)."""
        if self.cuda_loaders:
            self.gpu_loaders.extend(n for n in gpu_loaders() if n not in self.gpu_loaders)

    @property
    def stubbed(self) -> list[str]:
        return [f"{name} (an inert module, imported by the release's files; never run)" if name not in
                self.finder.everyone else f"{name} (an inert module, version {self.finder.everyone[name]} to "
                "transformers' availability checks, imported by every importer; never run)"
                for name in sorted(self.finder.served)] + self.answered

    def model_class(self, architecture: str) -> Any:
        module_name, _ = self.registry[architecture]
        module = importlib.import_module(f"sglang.srt.models.{module_name}")
        self.take_cuda_branch()
        entries = module.EntryClass if isinstance(module.EntryClass, (list, tuple)) else [module.EntryClass]
        # models/registry.py import_model_classes: the table is keyed by each entry's __name__
        return next(cls for cls in entries if cls.__name__ == architecture)

    def build(self, cls: Any, raw: dict[str, Any], values: dict[str, int],
              made: Any = None) -> tuple[Any, set[str], set[str]]:
        """cls's real __init__ for this config (`made`: an hf_config the release's own config loading already made,
        as release_worker.Release.build takes it); returns the model, the hf keys it read, and (SGLang's classes take
        no target config) no target reads."""
        hf = made if made is not None else observe._hf_config(raw)
        if values.get("bare"):
            omitted = {k.split(":", 1)[1] for k in values if k.startswith("omit:")}
            hf = observe._hf_config({k: v for k, v in hf.to_dict().items() if k not in omitted}, bare=True)
        reads: set[str] = set()
        self.config_class = type(hf).__name__  # the class the model_type picked (before recording swaps it)
        observe._record_reads(hf, reads)
        with self.torch.device("cpu"):
            model = cls(config=hf, quant_config=None)
        self.take_cuda_branch()  # a loader module __init__ imported
        _refuse_inert_layers(model)
        return model, reads, set()


class InertLayer(RuntimeError):
    """A layer of the built model is an instance of a stubbed package's class: what it holds is not observed."""

    def __init__(self, message: str, where: str) -> None:
        super().__init__(message)
        self.release_where = where


def _refuse_inert_layers(model: Any) -> None:
    """A model whose layer is an inert module's instance lacks that layer's parameters: SGLang 0.5.1-0.5.7 take
    RMSNorm from vLLM on a CPU without AMX (srt/layers/layernorm.py L290 @ 0.5.1, L486 @ 0.5.7: `from
    vllm.model_executor.layers.layernorm import GemmaRMSNorm, RMSNorm`), which the GPU build never does. Such a
    class is not modelled rather than modelled without its norms."""
    for prefix, module in model.named_modules():
        for attr, value in vars(module).items():
            if isinstance(value, Inert) and value.__name__.endswith("()"):
                name = f"{prefix}.{attr}" if prefix else attr
                raise InertLayer(f"{name} is an instance of {value.__name__[:-2]}, a stubbed package's class on CPU "
                                 "(its parameters are not the release's)", value.__dict__.get("made_at", "?"))


def head_from_target(release: Release, architecture: str, recipe: dict[str, Any]) -> dict[str, Any] | None:
    """What the built class says its lm_head comes from, per way config.json states draft_vocab_size (declared, as
    the samples do, or null): its `load_lm_head_from_target`, which speculative/eagle_worker_v2.py reads to put the
    target's head in place of the draft's. None when the class has no such attribute (or does not build)."""
    cls = release.model_class(architecture)
    base = observe.config_for(recipe, observe.BASE)
    out: dict[str, Any] = {}
    for label, raw in (("declared", base), ("null", {**base, "draft_vocab_size": None})):
        try:
            model, _, _ = release.build(cls, raw, observe.BASE)
        except Exception as exc:  # noqa: BLE001 - the class refuses this statement of the key: recorded
            out[label] = {"error": _error(exc)}
            continue
        value = getattr(model, "load_lm_head_from_target", None)
        if not isinstance(value, bool):
            return None
        out[label] = value
    return out


def engine_case(release: Release, case: dict[str, Any]) -> dict[str, Any]:
    """verify's engine on one checkpoint folder: the class SGLang's registry names, its __init__ and load_weights on
    every tensor (release_worker.engine_case), and what it says of its lm_head (load_lm_head_from_target, which the
    speculative worker reads to put the target's head in place of the draft's)."""
    try:
        out, model = observe.engine_case(release, case)
    except Exception as exc:  # noqa: BLE001 - an adapter failure, reported per case
        return {"id": case["id"], "adapter_error": {"phase": "adapter", **_error(exc)}}
    config = out.pop("config", None)
    if model is not None:
        head = getattr(model, "load_lm_head_from_target", None)
        out["state"] = {"load_lm_head_from_target": head if isinstance(head, bool) else None,
                        "hot_token_id": getattr(model, "hot_token_id", None) is not None}
        if out.get("error") is None:
            del model  # the step's own model: built afresh and loaded with the checkpoint's data
            try:
                out["first_step"] = first_step(release, case, out, config or {})
            except Exception as exc:  # noqa: BLE001 - the step's set-up failed: said, never a pass
                out["first_step"] = {"not_run": f"the first step could not be set up ({type(exc).__name__}: "
                                                f"{exc})"[:400]}
    return {"id": case["id"], **out}


def _sibling(name: str, filename: str) -> Any:
    """The module `filename` beside this file, loaded by path under `name` once (this worker imports nothing of
    dspark_ckpt): the one already in sys.modules when it is that file."""
    path = Path(__file__).with_name(filename)
    loaded = sys.modules.get(name)
    if loaded is None or getattr(loaded, "__file__", None) != str(path):
        spec = importlib.util.spec_from_file_location(name, path)
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
    return sys.modules[name]


def step_module() -> Any:
    """verify/sglang_step.py, beside this file."""
    return _sibling("dspark_sglang_step", "sglang_step.py")


def first_step(release: Release, case: dict[str, Any], out: dict[str, Any], config: dict[str, Any]) -> dict[str, Any]:
    """The release's own first draft step on a fresh model of the class loaded with the checkpoint's tensors
    (sglang_step.py), against a target whose head and embedding have T rows; or why it is not run."""
    step = step_module()
    values = {"target.hidden_size": int(case.get("target_hidden") or observe._hidden(config)),
              "target.vocab_size": int(case["target_vocab"]), "bare": int(bool(case.get("bare")))}

    def make() -> Any:
        model, _, _ = release.build(release.model_class(out["architecture"]), config, values)
        with release.torch.no_grad():
            model.load_weights(step.checkpoint_weights(Path(case["folder"])))
        return model

    model = make()
    tree = Path(str(sys.modules[PACKAGE].__file__)).parent.parent  # the installed package's folder's parent
    t = int(case["target_vocab"])
    if getattr(model, "markov_head", None) is not None and hasattr(model.markov_head, "markov_w1"):
        found: dict[str, Any] = step.dspark_first_step(tree, model, t)
    elif getattr(model, "candidate_selector", None) is not None:
        found = step.dflash2_first_step(tree, model, t)
    elif type(model).__name__ == "LlamaForCausalLMEagle3":
        found = step.eagle3_first_step(tree, importlib.import_module, make, t)
    else:
        return {"not_run": f"{out.get('class')} is not a class whose first draft step the engine runs (a DSpark "
                           "Markov head, a DFlash2 candidate selector, LlamaForCausalLMEagle3)"}
    return found


def load_case(release: Release, case: dict[str, Any]) -> dict[str, Any]:
    """release_worker.load_case; a case with `read_config` first goes through the release's own get_config and its
    class lookup (every EntryClass: the request's registry); a case that lists `reads` (the attributes the draft worker takes from the built
    model: EAGLE3's `hot_token_id`, DFLASH's `candidate_selector`) also gets whether the built model has each."""
    if case.get("read_config"):
        if (refused := _read_config(case)) is not None:
            return refused
        if case["architecture"] not in release.registry:  # models/registry.py resolve_model_cls: no EntryClass
            return {"id": case["id"], "phase": "lookup", "error": {
                "type": "ValueError", "message": f"Model architectures ['{case['architecture']}'] are not "
                                                 "supported for now."}}
    out: dict[str, Any]
    out, model = observe.observe_load(release, case)
    if case.get("reads") and model is not None:
        out["has"] = {name: hasattr(model, name) for name in case["reads"]}
    if case.get("share") and model is not None and out.get("error") is None:
        out["shared"] = _share(release, model, case)
    return out


def _read_config(case: dict[str, Any]) -> dict[str, Any] | None:
    """ModelConfig's first step, executed: the release's own `get_config` (utils/hf_transformers_utils.py, which
    configs/model_config.py calls on the draft's folder) over the case's config.json; its error, or None."""
    from sglang.srt.utils.hf_transformers_utils import get_config  # type: ignore[import-not-found, unused-ignore]

    with tempfile.TemporaryDirectory() as folder:
        Path(folder, "config.json").write_text(json.dumps(case["config"]))
        try:
            get_config(folder, trust_remote_code=False)
        except Exception as exc:  # noqa: BLE001 - the release refuses the config: that is the observation
            error = _error(exc)
            error["message"] = str(error.get("message", "")).replace(folder, "<draft folder>")
            return {"id": case["id"], "phase": "config", "error": error}
    return None


def _share(release: Release, model: Any, case: dict[str, Any]) -> Any:
    """What the EAGLE draft worker puts in place of the draft's own embedding and head after load, executed on the
    built model: `init_lm_head` (speculative/eagle_worker_v2.py L336-378 @ 0.5.23, L307-345 @ 0.5.16): under EAGLE3
    `set_embed(embed)`, or `set_embed_and_head` where the model's `load_lm_head_from_target` is set; under EAGLE
    `set_embed_and_head(embed, head)`. Returns the parameters whose tensor is then the target's, or the error."""
    torch = release.torch
    size = (int(case["target_vocab"]), int(case["target_hidden"]))
    embed, head = torch.nn.Parameter(torch.zeros(size)), torch.nn.Parameter(torch.zeros(size))
    try:
        if case["share"] == "eagle3" and not getattr(model, "load_lm_head_from_target", False):
            model.set_embed(embed)
        else:
            model.set_embed_and_head(embed, head)
    except Exception as exc:  # noqa: BLE001 - the class lacks the setter: the worker fails at start-up
        return {"error": _error(exc)}
    return sorted(n for n, p in model.named_parameters(remove_duplicate=False) if p is embed or p is head)


# The modules whose weight loaders take another branch under the CPU engine (`if _is_cpu:`): linear.py's and
# parameter.py's pad a checkpoint tensor narrower than the shard (narrow_padded_param_and_loaded_weight) where the
# CUDA branch narrows it (and raises, or from 0.5.3 pads the merged and row shards with zeros); the fused MoE
# layer's expert loaders likewise (fused_moe_triton/layer.py use_padded_loading: `_is_cpu or ...`, L719 @ 0.5.23);
# weight_utils.py's sharded_weight_loader asks `is_cpu()` at load time (an attention sink's bias). The generator's
# observations, verify's engine and a load-mode request with "loaders": "gpu" run the CUDA branch (CPU tensors):
# what a deploy on a GPU does with the draft.
GPU_BRANCH_MODULES = ("sglang.srt.layers.linear", "sglang.srt.layers.parameter",
                      "sglang.srt.layers.moe.fused_moe_triton.layer")
GPU_BRANCH_CALLS = ("sglang.srt.model_loader.weight_utils",)


def _not_cpu() -> bool:
    return False


def gpu_loaders() -> list[str]:
    """Sets `_is_cpu` False in those of the loaders' modules imported by now, and their `is_cpu` asked at load
    time; returns the modules it set it in. Nothing is imported here: importing a module ahead of the release's own
    order changes what it imports (0.4.2-0.4.8: linear.py first is a circular import), so the worker calls this
    after each class's module and `__init__` (Release.take_cuda_branch), before any weight is loaded."""
    done = []
    for name in GPU_BRANCH_MODULES:
        module = sys.modules.get(name)
        if module is not None and getattr(module, "_is_cpu", None) is True:
            module._is_cpu = False  # type: ignore[attr-defined]
            done.append(name)
    for name in GPU_BRANCH_CALLS:
        module = sys.modules.get(name)
        if module is not None and callable(getattr(module, "is_cpu", None)) and module.is_cpu():
            module.is_cpu = _not_cpu  # type: ignore[attr-defined]
            done.append(f"{name}.is_cpu")
    return done


def main(argv: list[str]) -> int:
    request = json.loads(Path(argv[0]).read_text())
    doc: dict[str, Any] = {"ok": False}
    try:
        with tempfile.TemporaryDirectory() as pg:
            release = Release(pg, request["registry"], request["stub"], request.get("stub_everyone", {}))
            if request.get("mode") == "engine":  # verify --engine installed: whole checkpoint folders
                doc = {"ok": True, "version": release.version, "file": getattr(sys.modules.get(PACKAGE), "__file__",
                                                                                   None),
                       "stubbed": release.stubbed, "set_up": release.set_up, "gpu_loaders": release.gpu_loaders}
                release.cuda_loaders = True
                doc["results"] = [engine_case(release, case) for case in request["cases"]]
                Path(argv[1]).write_text(json.dumps(doc))
                return 0
            if request.get("mode") == "load":  # whole checkpoints through the release's own load (agreement tests)
                release.cuda_loaders = request.get("loaders") == "gpu"
                doc = {"ok": True, "version": release.version,
                       "results": [load_case(release, case) for case in request["cases"]],
                       **({"gpu_loaders": release.gpu_loaders} if release.gpu_loaders else {})}
                Path(argv[1]).write_text(json.dumps(doc))
                return 0
            import transformers  # type: ignore[import-not-found, unused-ignore]

            doc = {"ok": True, "version": release.version, "transformers": transformers.__version__,
                   "set_up": release.set_up, "stubbed": release.stubbed, "cuda_loaders": True,
                   "gpu_loaders": release.gpu_loaders, "registry": release.registry, "architectures": {}}
            release.cuda_loaders = True  # what a deploy on a GPU does with a tensor of the wrong shape

            def probe(architecture: str) -> dict[str, Any]:
                recipe = observe.recipe_for(architecture, request)
                probed: dict[str, Any] = observe.probe_architecture(release, architecture, recipe,
                                                                    int(request.get("seed", 0)))
                if "samples" in probed and (head := head_from_target(release, architecture, recipe)):
                    probed["head_from_target"] = head
                return probed

            observe.probe_each(release, request, doc, Path(argv[1]), probe)
    except Exception as exc:  # noqa: BLE001 - the release cannot be imported or set up here: say why
        doc = {"ok": False, "reason": f"{type(exc).__name__}: {exc}", "traceback": traceback.format_exc()}
    Path(argv[1]).write_text(json.dumps(doc))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[-2:]))
