"""The installed vLLM's own draft code run on a whole checkpoint without an engine (verify's worker subprocess).

The model class comes from vLLM's registry and is built with its real `__init__`, layers and all, exactly as the
release-model probe builds it (verify/release_worker.py: a 1-rank gloo group, a real `VllmConfig` whose draft
config is the one vLLM builds from config.json, the target's vocab and hidden size); then its real `load_weights`
runs twice. First over every tensor of the checkpoint as a marker tensor of its shape, into parameters prefilled with
NaN (release_worker.observe_load, the agreement tests' load mode): the exception it raises, the parameters no tensor
wrote (or wrote only in part), the tensors cut to fit. Then over the checkpoint's own data for the vocabulary tensors
(lm_head, embed_tokens, d2t, t2d, the Markov and confidence heads; zeros of their shape for the rest), for the state
it leaves: `has_own_lm_head`, `has_own_embed_tokens`, what `draft_id_to_target_id` holds. Where it loads, the
release's own first draft step runs on a fresh model loaded the same way (`first_step`, what
tools/probe_vllm_first_step.py records per release). `python engine_vllm.py REQUEST OUT` reads a JSON request and
writes one JSON result per case. Only the standard library, torch and vLLM (and
what vLLM imports) are used: the file runs as a script, and loads release_worker.py beside it by path.
"""

from __future__ import annotations

import importlib.util
import json
import sys
import tempfile
import traceback
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType, SimpleNamespace
from typing import Any

# The tensors whose data the second pass reads from the checkpoint (verify/runtime_load.py needs_data).
VOCAB_PARTS = ("lm_head", "embed_tokens", "d2t", "t2d", "markov_head.", "confidence_head.")
# The first draft step each registered class's module takes (0.30+, v1/worker/gpu/spec_decode/): EAGLE-3's and
# DFlash's compute_logits (the d2t scatter), Qwen3 DSpark's draft logits, Markov bias and map_draft_to_target.
STEP_FAMILIES = {"llama_eagle3": "eagle3-llama", "qwen3_eagle3": "eagle3-qwen3", "qwen3_dflash": "dflash",
                 "qwen3_dspark": "qwen3-dspark"}
# The previous hidden state: zeros (what a CUDA-graph capture feeds), and ones under a head whose last row wins.
ANCHORS = ("capture", "last")
EAGLE_UTILS = "vllm.v1.worker.gpu.spec_decode.eagle.utils"
DFLASH_UTILS = "vllm.v1.worker.gpu.spec_decode.dflash.utils"
# Before 0.30 DFlash's and DSpark's loaders share inline, each in its own function (0.26-0.29): run as the release's
# own function on the loaded draft, like load_eagle_model (_load_inline)
INLINE_LOADERS = {"dflash": (DFLASH_UTILS, "load_dflash_model"),
                  "qwen3-dspark": ("vllm.v1.worker.gpu.spec_decode.dspark.utils", "load_dspark_model")}


def release_worker() -> ModuleType:
    """verify/release_worker.py, beside this file (loaded by path: this script imports nothing of dspark_ckpt)."""
    name = "release_model_worker"  # the name tools/release_model_worker.py gives it
    found = sys.modules.get(name)
    if found is None or getattr(found, "__file__", None) != str(Path(__file__).with_name("release_worker.py")):
        spec = importlib.util.spec_from_file_location(name, Path(__file__).with_name("release_worker.py"))
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
    return sys.modules[name]


def _real_weights(folder: Path, shipped: set[str]) -> Iterator[tuple[str, Any]]:
    """The checkpoint in vLLM's order (files naturally sorted, names sorted): the vocabulary tensors' own data,
    zeros of their shape for the rest (the marker pass has already observed where those land)."""
    import re

    import torch
    from safetensors import safe_open

    def natural(name: str) -> list[Any]:
        return [int(p) if p.isdigit() else p for p in re.split(r"(\d+)", name)]

    for file in sorted((p.name for p in folder.glob("*.safetensors")), key=natural):
        with safe_open(str(folder / file), framework="pt", device="cpu") as handle:
            for name in sorted(handle.keys()):
                shipped.add(name)
                if any(part in name for part in VOCAB_PARTS):
                    yield name, handle.get_tensor(name)
                else:
                    piece = handle.get_slice(name)
                    kind = torch.int64 if name.rsplit(".", 1)[-1] in ("d2t", "t2d") else torch.float32
                    yield name, torch.zeros(piece.get_shape(), dtype=kind)


def _state(model: Any, shipped: set[str], config: dict[str, Any], target_vocab: int) -> dict[str, Any]:
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
        "lm_head_rows": getattr(head, "org_vocab_size", None), "draft_vocab_size": config.get("draft_vocab_size"),
    }


def _module_text(name: str) -> str:
    found = importlib.util.find_spec(name.rsplit(".", 1)[0]) and importlib.util.find_spec(name)
    origin = getattr(found, "origin", None)
    return Path(origin).read_text(encoding="utf-8") if origin and Path(origin).is_file() else ""


def sharing() -> str | None:
    """How this release's loaders share the target's embedding and head with a draft: `shared` (0.30+:
    v1/worker/gpu/spec_decode/eagle/utils.py maybe_share_target_embed and _should_share, which every loader calls),
    `inline` (before: load_eagle_model shares inline with _should_share; DFlash's and DSpark's loaders each with
    their own conditions), None where eagle/utils.py has neither."""
    try:
        text = _module_text(EAGLE_UTILS)
    except (ImportError, ValueError):
        text = ""
    if "def _should_share" in text and "def maybe_share_target_embed" in text:
        return "shared"
    if "def _should_share" in text and "def load_eagle_model" in text:
        return "inline"
    return None


def inline_loader(family: str) -> bool:
    """Whether this release has `family`'s own inline loader (dflash/utils.py load_dflash_model, dspark/utils.py
    load_dspark_model: 0.26-0.29)."""
    module, function = INLINE_LOADERS.get(family, ("", ""))
    try:
        return bool(module) and f"def {function}(" in _module_text(module)
    except (ImportError, ValueError):
        return False


def step_unsupported(family: str) -> str | None:
    """Why this release's first draft step is not run here for `family` (None where it is)."""
    how = sharing()
    if how == "shared" or (how == "inline" and (family.startswith("eagle3-") or inline_loader(family))):
        return None
    if how == "inline":
        return ("this vLLM's loader for this class shares the target's head and embedding in no function of "
                "v1/worker/gpu/spec_decode/*/utils.py the worker runs: not run here")
    return ("this vLLM shares the target's head and embedding inside the proposer's load_model, with the target "
            "running (no v1/worker/gpu/spec_decode/eagle/utils.py _should_share): not run here")


def dflash_flag() -> bool:
    """dflash/utils.py shares the target's head only where `not config.has_own_lm_head` (0.31+)."""
    try:
        return 'config, "has_own_lm_head"' in _module_text(DFLASH_UTILS)
    except (ImportError, ValueError):
        return False


def _where_step(exc: BaseException) -> str | None:
    inside = [f for f in traceback.extract_tb(exc.__traceback__) if "/vllm/" in f.filename]
    if not inside:
        return None
    path = inside[-1].filename
    return f"{path[path.rindex('/vllm/') + 1:]}:{inside[-1].lineno}"


def _rising(torch: Any, rows: int, hidden: int) -> Any:
    return (torch.arange(rows, dtype=torch.float32)[:, None].expand(rows, hidden) / rows).contiguous()


def first_step(release: Any, model: Any, family: str, t: int, anchor: str, flag: bool) -> str:
    """The release's sharing and first draft step on a loaded draft against a target of `t` rows: `ok`; raises
    where the release raises."""
    torch = release.torch
    from vllm.model_executor.layers.vocab_parallel_embedding import (  # type: ignore[import-not-found]
        ParallelLMHead,
        VocabParallelEmbedding,
    )

    utils = importlib.import_module(EAGLE_UTILS)
    hidden_size = model.config.hidden_size
    with release.set_current(release.VllmConfig()), torch.device("cpu"):
        target_head, target_embed = ParallelLMHead(t, hidden_size), VocabParallelEmbedding(t, hidden_size)
    for layer in (target_head, target_embed):  # rows padded to a multiple of 64 (vocab_parallel_embedding.py)
        layer.weight.data.copy_(_rising(torch, layer.weight.shape[0], hidden_size))
    # what model_loader/utils.py process_weights_after_loading does once a model has loaded (on CPU: the GEMM
    # dispatch, layer.cpu_linear), for the draft and for the target's head
    for module in [*model.modules(), target_head, target_embed]:
        method = getattr(module, "quant_method", None)
        if method is not None and hasattr(method, "process_weights_after_loading") and not hasattr(module,
                                                                                                   "cpu_linear"):
            method.process_weights_after_loading(module)
    draft_vocab = model.config.vocab_size
    d_out = getattr(model.config, "draft_vocab_size", None) or draft_vocab
    own = getattr(model, "lm_head", None)
    if own is not None and hasattr(own, "weight"):
        own.weight.data.copy_(_rising(torch, own.weight.shape[0], hidden_size))
    if sharing() == "inline" and family in INLINE_LOADERS:  # load_dflash_model / load_dspark_model (0.26-0.29)
        model = _load_inline(family, model, t, target_head, target_embed)
    elif sharing() == "inline":  # the release's own load_eagle_model, its get_model answered by the loaded draft
        _load_eagle_model(utils, model, target_head, target_embed)
    elif family != "qwen3-dspark" or draft_vocab <= t:  # dspark/utils.py: embeddings shared only where V <= T
        utils.maybe_share_target_embed(model, model.model, SimpleNamespace(embed_tokens=target_embed))
    # the head: each loader's condition, then _should_share (eagle/utils.py load_eagle_model, 0.30-0.33 inline,
    # 0.34 share_target_lm_head; dspark/utils.py: draft_output_vocab_size == target_vocab_size; dflash/utils.py:
    # not config.has_own_lm_head from 0.31)
    can = (d_out == t if family == "qwen3-dspark" else
           not getattr(model.config, "has_own_lm_head", False) if family == "dflash" and flag else True)
    if sharing() == "shared" and can and utils._should_share(model, "has_own_lm_head", own, target_head):
        if own is not None:
            del model.lm_head
        model.lm_head = target_head
    hidden = (torch.zeros if anchor == "capture" else torch.ones)(2, hidden_size)
    if family == "qwen3-dspark":
        logits = model.compute_draft_logits(hidden)
        prev = torch.full((2,), 0 if anchor == "capture" else t - 1, dtype=torch.long)
        logits = logits + model.markov_bias(model.markov_embed(prev))
        ids = model.map_draft_to_target(logits.argmax(dim=-1))
    else:
        ids = model.compute_logits(hidden).argmax(dim=-1)
    model.model.embed_tokens(ids)
    return "ok"


def _load_eagle_model(utils: Any, model: Any, target_head: Any, target_embed: Any) -> Any:
    """eagle/utils.py load_eagle_model (0.24-0.29) on an already loaded draft: its `get_model` answers the draft, the
    target is its embedding and head (`target.model.embed_tokens`, `target.lm_head`), the speculative config has
    no KV-cache dtype of its own (the only thing it reads before sharing)."""
    target = SimpleNamespace(model=SimpleNamespace(embed_tokens=target_embed), lm_head=target_head)
    config = SimpleNamespace(speculative_config=SimpleNamespace(draft_model_config=None, kv_cache_dtype=None))
    real = utils.get_model
    utils.get_model = lambda **_: model
    try:
        return utils.load_eagle_model(target, config)
    finally:
        utils.get_model = real


def _load_inline(family: str, model: Any, t: int, target_head: Any, target_embed: Any) -> Any:
    """dflash/utils.py load_dflash_model or dspark/utils.py load_dspark_model (0.26-0.29) on an already loaded draft,
    as _load_eagle_model runs load_eagle_model: its `get_model` answers the draft; what it computes only for the
    draft's build (the attention backend and non-causal flag, the draft quant config, the target's RoPE style,
    `replace()` of the config it hands get_model) is answered without a build; a 1-rank pipeline; the target is its
    embedding and head of `t` rows. The sharing conditions and _should_share are the release's own."""
    module_name, function = INLINE_LOADERS[family]
    utils = importlib.import_module(module_name)
    loader = importlib.import_module("vllm.model_executor.model_loader")
    stubs: list[tuple[Any, str, Any]] = [(loader, "get_model", lambda **_: model),
                                         (utils, "get_model", lambda **_: model),
                                         (utils, "replace", lambda config, **_: config),
                                         (utils, "get_pp_group", lambda: SimpleNamespace(world_size=1))]
    for name, attr, value in (("vllm.model_executor.models.qwen3_dflash", "dflash_has_any_non_causal", False),
                              ("vllm.model_executor.models.qwen3_dflash", "dflash_target_rope_is_neox_style", None),
                              ("vllm.model_executor.models.utils", "get_draft_quant_config", None)):
        stubs.append((importlib.import_module(name), attr, lambda *_, v=value: v))
    draft = SimpleNamespace(hf_config=model.config, get_vocab_size=lambda: model.config.vocab_size)
    config = SimpleNamespace(
        speculative_config=SimpleNamespace(draft_model_config=draft, attention_backend=None, kv_cache_dtype=None),
        attention_config=SimpleNamespace(backend=None), cache_config=None, quant_config=None,
        model_config=SimpleNamespace(get_vocab_size=lambda: t))
    target = SimpleNamespace(model=SimpleNamespace(embed_tokens=target_embed), lm_head=target_head)
    saved = [(owner, attr, owner.__dict__.get(attr, _ABSENT)) for owner, attr, _ in stubs]
    try:
        for owner, attr, value in stubs:
            setattr(owner, attr, value)
        return getattr(utils, function)(target, config)
    finally:
        for owner, attr, value in reversed(saved):
            if value is _ABSENT:
                owner.__dict__.pop(attr, None)
            else:
                setattr(owner, attr, value)


_ABSENT = object()


def step_outcomes(release: Any, model: Any, family: str, t: int, flag: bool) -> dict[str, Any]:
    """Each anchor's outcome: `ok`, or the release's exception (type, text, the release's frame)."""
    out: dict[str, Any] = {}
    for anchor in ANCHORS:
        try:
            out[anchor] = first_step(release, model, family, t, anchor, flag)
        except Exception as exc:  # noqa: BLE001 - the release's own exception is the observation
            out[anchor] = {"raises": type(exc).__name__, "text": (str(exc) or type(exc).__name__)[:400],
                           "where": _where_step(exc)}
    return out


def stepped_model(worker: ModuleType, release: Any, case: dict[str, Any], architecture: str) -> Any:
    """A fresh model of the class, loaded with the checkpoint's vocabulary tensors (zeros for the rest): the
    marker pass's model holds NaN (and a sentinel in integer parameters) wherever no tensor wrote."""
    raw = json.loads((Path(case["folder"]) / "config.json").read_text())
    config = dict(case.get("config") or raw)
    values = {"target.hidden_size": case.get("target_hidden") or worker._hidden(config),
              "target.vocab_size": int(case["target_vocab"]), "bare": int(bool(case.get("bare")))}
    if case.get("parallel_drafting"):
        values["parallel_drafting"] = 1
    model, _, _ = release.build(release.model_class(architecture), config, values)
    release.load_weights(model, _real_weights(Path(case["folder"]), set()))
    return model


def run_first_step(worker: ModuleType, release: Any, case: dict[str, Any], out: dict[str, Any]) -> dict[str, Any]:
    """The release's first draft step on the loaded draft, or why it is not run."""
    family = STEP_FAMILIES.get(str(out.get("module", "")).rsplit(".", 1)[-1])
    if family is None:
        return {"not_run": f"{out.get('class')} is not a class whose first draft step the engine runs "
                           f"({', '.join(sorted(STEP_FAMILIES))})"}
    why = step_unsupported(family)
    if why is not None:
        return {"not_run": why}
    model = stepped_model(worker, release, case, out["architecture"])
    return {"family": family, **step_outcomes(release, model, family, int(case["target_vocab"]), dflash_flag())}


def run_case(worker: ModuleType, release: Any, case: dict[str, Any]) -> dict[str, Any]:
    """Build the registered class for the draft's architecture; run its load_weights on every tensor."""
    found: tuple[dict[str, Any], Any] = worker.engine_case(release, case)
    out, model = found
    config = out.pop("config", {})
    error = out.get("error")
    if error is not None and error["phase"] == "init" and error["type"] == "AttributeError" \
            and "SimpleNamespace" in error["message"]:
        return {**out, "error": None, "adapter_error": error}  # our stand-in config lacks what it reads
    if model is None:
        return out
    shipped: set[str] = set()
    try:
        model.load_weights(_real_weights(Path(case["folder"]), shipped))
    except Exception as exc:  # noqa: BLE001 - raised already in the marker pass: the state is what it left
        out["data_error"] = worker._error(exc)
    out["state"] = _state(model, shipped, config, int(case["target_vocab"]))
    if error is None and "data_error" not in out:
        del model  # the step's own model: built afresh
        try:
            out["first_step"] = run_first_step(worker, release, case, out)
        except Exception as exc:  # noqa: BLE001 - the step's set-up failed: said, never a pass
            out["first_step"] = {"not_run": f"the first step could not be set up ({type(exc).__name__}: {exc})"[:400]}
    return out


def main(argv: list[str]) -> int:
    request = json.loads(Path(argv[0]).read_text())
    results: list[dict[str, Any]] = []
    try:
        worker = release_worker()
        with tempfile.TemporaryDirectory() as pg:
            release = worker.Release(pg)
            import vllm  # type: ignore[import-not-found, unused-ignore]

            for case in request["cases"]:
                try:
                    results.append({"id": case["id"], **run_case(worker, release, case)})
                except Exception as exc:  # noqa: BLE001 - an adapter failure, reported per case
                    results.append({"id": case["id"], "adapter_error": {"phase": "adapter", **worker._error(exc)}})
        doc = {"ok": True, "vllm_version": release.version, "vllm_file": getattr(vllm, "__file__", None),
               "stubbed": release.stubbed, "results": results}
    except Exception as exc:  # noqa: BLE001 - vLLM cannot be imported or set up here: say why
        doc = {"ok": False, "reason": f"{type(exc).__name__}: {exc}", "results": results}
    Path(argv[1]).write_text(json.dumps(doc))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[-2:]))  # REQUEST OUT (run as a script, or through runpy by engine.run_worker)
