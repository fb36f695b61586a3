"""Maintainer probe: run SGLang's own config parsers and load code, taken from the released wheels, on CPU, and
compare each result with dspark-ckpt's SGLang rows (runtimes/sglang_eval.py).

    python tools/probe_sglang.py /path/to/wheels          # a folder holding sglang-X/sglang/srt/... per release

No sglang install and no GPU: the functions named below are cut out of each release's source with `ast` and
executed against the few stubs they need (msgspec.Struct, a config object, a VocabParallelEmbedding instance).
What it runs, per release that has it:
  - speculative/dflash_utils.py parse_dflash_draft_config, speculative/dspark_components/dspark_config.py
    parse_dspark_draft_config and resolve_runtime_config (0.5.16+), on a set of configs;
  - models/dspark.py build_markov_head and the markov weights through model_loader/weight_utils.py
    default_weight_loader, then VanillaMarkov.apply_step_logits against a narrower/wider base (0.5.16-0.5.21);
  - models/llama_eagle3.py LlamaForCausalLMEagle3.load_weights with layers/vocab_parallel_embedding.py
    VocabParallelEmbedding.weight_loader (every release);
  - speculative/dspark_components/dspark_worker_v2.py: the expression the worker passes resolve_runtime_config as
    target_vocab_size (0.5.16-0.5.17 model_config.vocab_size, 0.5.18+ `padded_vocab_size or vocab_size`), for a
    target whose text config pads (Inkling-style), then resolve_runtime_config with it (0.5.16+);
  - models/dflash.py DFlashDraftModel.load_weights' Domino statements (the name check in the loop and the
    required-weights check after it), with parse_dflash_draft_config's projector_type, and
    speculative/domino_utils.py validate_domino_runtime (V == T) where the release has it (0.5.11+).
It prints one line per (release, case): `ok` when the release's own result matches dspark-ckpt's, else both.
Exit status 1 when any case differs.
"""

from __future__ import annotations

import ast
import sys
import types
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import torch
from torch import nn

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from dspark_ckpt.model.families import Family
from dspark_ckpt.runtimes import messages as m
from dspark_ckpt.runtimes.records import DraftFacts
from dspark_ckpt.runtimes.sglang_config import sglang_config
from dspark_ckpt.runtimes.sglang_eval import evaluate_sglang
from dspark_ckpt.runtimes.table import contract_for
from dspark_ckpt.verify.sglang_step import Struct as _Struct  # shared with verify's SGLang worker
from dspark_ckpt.verify.sglang_step import cut as _cut
from dspark_ckpt.verify.sglang_step import method as _method


def _outcome(call: Callable[[], Any]) -> str:
    try:
        call()
    except Exception as exc:  # noqa: BLE001 - the release's own exception is the observation
        return f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
    return "ok"


# --- configs the parsers are run on (the draft's config.json as SGLang reads it) ---
DSPARK_CONFIGS: dict[str, dict[str, Any]] = {
    "ready": {"markov_rank": 4, "markov_head_type": "vanilla", "mask_token_id": 0},
    "no-head-type": {"markov_rank": 4, "mask_token_id": 0},
    "prefixed": {"markov_rank": 4, "dspark_block_size": 7, "mask_token_id": 0},
    "rank-nested": {"dspark_config": {"markov_rank": 4, "markov_head_type": "vanilla"}, "mask_token_id": 0},
    "no-rank": {"markov_head_type": "vanilla", "mask_token_id": 0},
    "bad-type": {"markov_rank": 4, "markov_head_type": "lstm", "mask_token_id": 0},
    "no-mask": {"markov_rank": 4, "markov_head_type": "vanilla"},
    "mask-at-t": {"markov_rank": 4, "markov_head_type": "vanilla", "mask_token_id": 96},
    "mask-nested": {"markov_rank": 4, "markov_head_type": "vanilla", "mask_token_id": 500,
                    "dflash_config": {"mask_token_id": 5}},
    "type-nested": {"markov_rank": 4, "dflash_config": {"markov_head_type": "vanilla"}, "mask_token_id": 0},
}
T = 96


def _release_key(name: str) -> tuple[int, ...]:
    version = name.removeprefix("sglang-")
    base, _, post = version.partition(".post")
    return (*(int(p) for p in base.split(".")), int(post or -1))


def _dspark_case(srt: Path, version: str, name: str, raw: dict[str, Any]) -> tuple[str, str]:
    utils = _cut(srt / "speculative" / "dflash_utils.py", ["parse_dflash_draft_config"], {})
    msgspec = types.SimpleNamespace(Struct=_Struct)
    cfg_mod = _cut(srt / "speculative" / "dspark_components" / "dspark_config.py",
                   ["parse_dspark_draft_config", "resolve_runtime_config"],
                   {"msgspec": msgspec, "parse_dflash_draft_config": utils["parse_dflash_draft_config"]})
    heads = _cut(srt / "models" / "dspark.py", ["build_markov_head"], {"torch": torch, "nn": nn, "msgspec": msgspec,
                                                                       "F": torch.nn.functional})
    config = {"architectures": ["Qwen3DSparkModel"], "vocab_size": T, "hidden_size": 16, **raw}

    def release() -> None:
        parsed = cfg_mod["parse_dspark_draft_config"](draft_hf_config=config)
        if not parsed.require_markov():  # spec_aux_hidden_state.py, the first markov_rank check
            raise ValueError(m.E_DSPARK_RANK_AUX.format(rank=parsed.markov_rank))
        heads["build_markov_head"](types.SimpleNamespace(**config))  # the draft's __init__: top-level keys only
        cfg_mod["resolve_runtime_config"](draft_hf_config=config, speculative_num_draft_tokens=8,
                                          target_vocab_size=T)

    theirs = _outcome(release)
    ours = _ours(Family.QWEN3_DSPARK, version, config, {"markov_head.markov_w1.weight": (T, 4),
                                                        "markov_head.markov_w2.weight": (T, 4)}, config_only=True)
    return theirs, ours


P = 128  # the target text config's padded_vocab_size (Inkling: vocab_size 200058, padded 201024)


def _worker_bound(srt: Path) -> int:
    """The target_vocab_size dspark_worker_v2.py passes resolve_runtime_config, evaluated with the release's own
    statements for a target with vocab_size T and padded_vocab_size P."""
    tree = ast.parse((srt / "speculative" / "dspark_components" / "dspark_worker_v2.py").read_text())
    call = next(n for n in ast.walk(tree) if isinstance(n, ast.Call) and getattr(n.func, "id", None)
                == "resolve_runtime_config")
    expr = next(k.value for k in call.keywords if k.arg == "target_vocab_size")
    setup = [n for n in ast.walk(tree) if isinstance(n, ast.Assign) and len(n.targets) == 1
             and getattr(n.targets[0], "id", None) in ("target_model_config", "target_embed_rows")]
    text = types.SimpleNamespace(vocab_size=T, padded_vocab_size=P)
    config = types.SimpleNamespace(vocab_size=T, hf_text_config=text)
    scope: dict[str, Any] = {"self": types.SimpleNamespace(target_worker=types.SimpleNamespace(
        model_runner=types.SimpleNamespace(model_config=config)))}
    for statement in sorted(setup, key=lambda n: n.lineno):
        exec(compile(ast.Module(body=[statement], type_ignores=[]), "dspark_worker_v2.py", "exec"), scope)  # noqa: S102
    return int(eval(compile(ast.Expression(body=expr), "dspark_worker_v2.py", "eval"), scope))


def _padded_mask_case(srt: Path, version: str, mask: int) -> tuple[str, str]:
    """A mask id in [T, P) (or at P) against a padding target: the worker's bound, then resolve_runtime_config."""
    cfg_mod = _cut(srt / "speculative" / "dspark_components" / "dspark_config.py", ["resolve_runtime_config"],
                   {"msgspec": types.SimpleNamespace(Struct=_Struct), "parse_dflash_draft_config":
                    _cut(srt / "speculative" / "dflash_utils.py", ["parse_dflash_draft_config"], {})
                    ["parse_dflash_draft_config"]})
    config = {"architectures": ["Qwen3DSparkModel"], "vocab_size": T, "hidden_size": 16, "markov_rank": 4,
              "markov_head_type": "vanilla", "mask_token_id": mask}
    theirs = _outcome(lambda: cfg_mod["resolve_runtime_config"](
        draft_hf_config=config, speculative_num_draft_tokens=8, target_vocab_size=_worker_bound(srt)))
    ours = _ours(Family.QWEN3_DSPARK, version, config, {"markov_head.markov_w1.weight": (T, 4),
                                                        "markov_head.markov_w2.weight": (T, 4)},
                 config_only=True, target_head_rows=P)
    return theirs, ours


DOMINO_FIELDS = {"shift_label": True, "pure_draft_prefix_len": 1, "gru_hidden_dim": 8, "emb_dim": 8}
DOMINO_WEIGHTS = {"embed_proj.0.weight": (8, 24), "embed_proj.2.weight": (T, 8), "prefix_gru.weight_hh_l0": (24, 8),
                  "prefix_gru.weight_ih_l0": (24, 16)}
# (config additions, tensor shapes, draft vocab V): the Domino cases
DOMINO_CASES: dict[str, tuple[dict[str, Any], dict[str, tuple[int, ...]], int]] = {
    "domino names, no type": ({}, DOMINO_WEIGHTS, T),
    "domino names, type linear": ({"dflash_config": {"projector_type": "linear"}}, DOMINO_WEIGHTS, T),
    "domino ready": ({"dflash_config": {"projector_type": "domino", **DOMINO_FIELDS}}, DOMINO_WEIGHTS, T),
    "domino top-level type": ({"projector_type": "domino", "dflash_config": DOMINO_FIELDS}, DOMINO_WEIGHTS, T),
    "domino V != T": ({"dflash_config": {"projector_type": "domino", **DOMINO_FIELDS}}, DOMINO_WEIGHTS, T + 8),
    "domino no emb_dim": ({"dflash_config": {"projector_type": "domino", **DOMINO_FIELDS, "emb_dim": None}},
                          DOMINO_WEIGHTS, T),
    "domino shift_label 1": ({"dflash_config": {"projector_type": "domino", **DOMINO_FIELDS, "shift_label": 1}},
                             DOMINO_WEIGHTS, T),
    "domino weights missing": ({"dflash_config": {"projector_type": "domino", **DOMINO_FIELDS}},
                               {"model.embed_proj.2.weight": (T, 8)}, T),
}


def _domino_case(srt: Path, version: str, extra: dict[str, Any], shapes: dict[str, tuple[int, ...]],
                 v: int) -> tuple[str, str]:
    """parse_dflash_draft_config, then load_weights' Domino statements over the names in sorted order, then
    validate_domino_runtime's vocab comparison (stopping at the next check, which needs CUDA tensors)."""
    utils = _cut(srt / "speculative" / "dflash_utils.py", ["parse_dflash_draft_config"], {})
    tree = ast.parse((srt / "models" / "dflash.py").read_text())
    cls = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "DFlashDraftModel")
    method = next(n for n in cls.body if isinstance(n, ast.FunctionDef) and n.name == "load_weights")
    loop = next(n for n in method.body if isinstance(n, ast.For))
    name_check = [n for n in loop.body if isinstance(n, ast.If) and "prefix_gru." in ast.unparse(n.test)]
    required = [n for n in method.body if isinstance(n, ast.If) and "projector_type" in ast.unparse(n.test)]
    domino_utils = srt / "speculative" / "domino_utils.py"
    validate = _cut(domino_utils, ["validate_domino_runtime"], {"torch": torch, "nn": nn}) \
        if domino_utils.exists() else None
    config = {"architectures": ["DFlashDraftModel"], "vocab_size": v, "hidden_size": 16, **extra}

    def release() -> None:
        parsed = utils["parse_dflash_draft_config"](draft_hf_config=config)
        projector = getattr(parsed, "projector_type", None)
        scope: dict[str, Any] = {"self": types.SimpleNamespace(projector_type=projector)}
        for name in sorted(shapes):
            scope.update(name=name, unprefixed_name=name.removeprefix("model."))
            exec(compile(ast.Module(body=name_check, type_ignores=[]), "dflash.py", "exec"), scope)  # noqa: S102
        scope["loaded_params"] = {n.removeprefix("model.") for n in shapes}
        exec(compile(ast.Module(body=required, type_ignores=[]), "dflash.py", "exec"), scope)  # noqa: S102
        if validate is not None and projector == "domino":
            try:
                validate["validate_domino_runtime"](
                    device=types.SimpleNamespace(type="cuda"), tp_size=1, tp_rank=0, target_vocab_size=T,
                    draft_vocab_size=v, hidden_size=16, target_embedding=None, lm_head=None, prefix_gru=None,
                    embed_proj=None)
            except ValueError as exc:
                if "embedding and lm_head weight" not in str(exc):  # the check after the vocab comparison
                    raise

    theirs = _outcome(release)
    ours = _ours(Family.DFLASH, version, config, shapes)
    return theirs, ours


def _ours(family: Family, version: str, raw: dict[str, Any], shapes: dict[str, tuple[int, ...]],
          config_only: bool = False, **facts: Any) -> str:
    contract = contract_for("sglang", version, family)
    assert contract is not None
    v = raw.get("vocab_size", T)
    d = raw.get("draft_vocab_size") or v
    base = {"family": family, "draft_vocab_size": d, "vocab_size": v, "target_vocab_size": T, "has_lm_head": True,
            "has_embed": True, "has_d2t": False, "has_t2d": False,
            "markov_w1_rows": shapes.get("markov_head.markov_w1.weight", (None,))[0],
            "markov_w2_rows": shapes.get("markov_head.markov_w2.weight", (None,))[0],
            "sglang": sglang_config(raw, shapes), **facts}
    verdict = evaluate_sglang(contract, version, DraftFacts(**base))  # type: ignore[arg-type]
    issue = verdict.error or verdict.first_step
    if issue is None or (config_only and issue.code not in ("DSP343", "DSP344")):
        return "ok"
    prefix = {"DSP343": "ValueError", "DSP344": "ValueError", "DSP352": "ValueError", "DSP353": "ValueError",
              "DSP355": "ValueError", "DSP322": "AssertionError",
              "DSP323": "AssertionError", "DSP320": "AssertionError", "DSP321": "AssertionError",
              "DSP340": "RuntimeError", "DSP302": "AttributeError", "DSP346": "KeyError"}.get(issue.code, "Error")
    return f"{prefix}: {issue.text}" if issue.text != "AssertionError" else "AssertionError"


def _markov_case(srt: Path, version: str, rows: int, base_width: int) -> tuple[str, str]:
    """build_markov_head, the markov weights through default_weight_loader, then the first step's add."""
    loader = _cut(srt / "model_loader" / "weight_utils.py", ["default_weight_loader"], {"torch": torch})
    heads = _cut(srt / "models" / "dspark.py", ["build_markov_head"],
                 {"torch": torch, "nn": nn, "msgspec": types.SimpleNamespace(Struct=_Struct)})
    config = types.SimpleNamespace(markov_rank=4, markov_head_type="vanilla", vocab_size=T, hidden_size=16)

    def release() -> None:
        head = heads["build_markov_head"](config)
        params = dict(head.named_parameters())
        for name in ("markov_w1.weight", "markov_w2.weight"):
            loader["default_weight_loader"](params[name], torch.zeros((rows, 4)))
        base = torch.zeros((1, base_width))
        head.apply_step_logits(base, token_ids=torch.zeros(1, dtype=torch.long), hidden_states=None)

    theirs = _outcome(release)
    raw = {"architectures": ["Qwen3DSparkModel"], "vocab_size": T, "markov_rank": 4, "markov_head_type": "vanilla",
           "mask_token_id": 0}
    shapes = {"markov_head.markov_w1.weight": (rows, 4), "markov_head.markov_w2.weight": (rows, 4)}
    ours = _ours(Family.QWEN3_DSPARK, version, raw, shapes, target_head_rows=base_width)
    return theirs, ours


class _Shard:
    org_vocab_start_index = 0

    def __init__(self, rows: int) -> None:
        self.org_vocab_end_index = rows


def _eagle3_class(srt: Path, namespace: dict[str, Any]) -> type:
    """LlamaForCausalLMEagle3 with its own load_weights and get_hot_token_id (where it has one) over
    LlamaForCausalLM.load_weights, which 0.4.4.post2-0.4.8.post1 call through super() (`model.` + name)."""
    own = [_method(srt / "models" / "llama_eagle3.py", "LlamaForCausalLMEagle3", "load_weights")]
    if "def get_hot_token_id" in (srt / "models" / "llama_eagle3.py").read_text():
        own.append(_method(srt / "models" / "llama_eagle3.py", "LlamaForCausalLMEagle3", "get_hot_token_id"))
    base_ns: dict[str, Any] = {**namespace, "logger": types.SimpleNamespace(warning=lambda *a, **k: None)}
    for path, helper in (("layers/utils.py", "get_layer_id"), ("model_loader/weight_utils.py",
                                                                "maybe_remap_kv_scale_name")):
        if (srt / path).exists() and f"def {helper}" in (srt / path).read_text():
            base_ns.update(_cut(srt / path, [helper], {"torch": torch}))
    base_ns.setdefault("get_layer_id", lambda name: None)
    exec(compile(ast.Module(body=[_method(srt / "models" / "llama.py", "LlamaForCausalLM", "load_weights")],  # noqa: S102
                            type_ignores=[]), "llama.py", "exec"), base_ns)
    namespace["LlamaForCausalLM"] = type("LlamaForCausalLM", (), {"load_weights": base_ns["load_weights"]})
    cls = ast.ClassDef(name="LlamaForCausalLMEagle3", bases=[ast.Name("LlamaForCausalLM", ast.Load())], keywords=[],
                       body=own, decorator_list=[], type_params=[])
    exec(compile(ast.fix_missing_locations(ast.Module(body=[cls], type_ignores=[])), "llama_eagle3.py", "exec"),  # noqa: S102
         namespace)
    made: type = namespace["LlamaForCausalLMEagle3"]
    return made


def _eagle3_case(srt: Path, version: str, d: int, head_rows: int, d2t: bool = True,
                 layer: dict[str, tuple[int, ...]] | None = None) -> tuple[str, str]:
    """LlamaForCausalLMEagle3.load_weights: d2t -> hot_token_id, and lm_head through the row-asserting loader; then
    the worker's read of hot_token_id (0.4.4.post2-0.4.8.post1: get_hot_token_id() for every EAGLE-3 draft)."""
    weights = _cut(srt / "model_loader" / "weight_utils.py", ["default_weight_loader"], {"torch": torch})
    namespace: dict[str, Any] = {"torch": torch, "Iterable": Iterable, "Tuple": tuple,
                                 "default_weight_loader": weights["default_weight_loader"]}
    vocab = _cut(srt / "layers" / "vocab_parallel_embedding.py", [], {})
    vtree = ast.parse((srt / "layers" / "vocab_parallel_embedding.py").read_text())
    vcls = next(n for n in vtree.body if isinstance(n, ast.ClassDef) and n.name == "VocabParallelEmbedding")
    vmethod = next(n for n in vcls.body if isinstance(n, ast.FunctionDef) and n.name == "weight_loader")
    loader_ns: dict[str, Any] = {"torch": torch, "Parameter": nn.Parameter, "BasevLLMParameter": nn.Parameter,
                                 "UninitializedParameter": nn.parameter.UninitializedParameter, **vocab}
    exec(compile(ast.Module(body=[vmethod], type_ignores=[]), "vocab_parallel_embedding.py", "exec"),  # noqa: S102
         loader_ns)
    head = types.SimpleNamespace(org_vocab_size=d, use_presharded_weights=False, tp_size=1,
                                 shard_indices=_Shard(d))
    weight = nn.Parameter(torch.zeros((d, 16)), requires_grad=False)
    weight.output_dim = 0  # type: ignore[attr-defined]
    weight.weight_loader = lambda p, w: loader_ns["weight_loader"](head, p, w)  # type: ignore[attr-defined]
    via_super = "super().load_weights" in (srt / "models" / "llama_eagle3.py").read_text()
    if via_super:  # an instance with no hot_token_id: no __init__ of these releases sets it
        model: Any = object.__new__(_eagle3_class(srt, namespace))
        model.config = types.SimpleNamespace(tie_word_embeddings=False)
        model.model = types.SimpleNamespace()
        model.named_parameters = lambda: [("lm_head.weight", weight)]
    else:
        method = _method(srt / "models" / "llama_eagle3.py", "LlamaForCausalLMEagle3", "load_weights")
        exec(compile(ast.Module(body=[method], type_ignores=[]), "llama_eagle3.py", "exec"), namespace)  # noqa: S102
        model = types.SimpleNamespace(hot_token_id=None, named_parameters=lambda: [("lm_head.weight", weight)])
    shipped = [*([("d2t", torch.zeros(d, dtype=torch.long))] if d2t else []),
               *[(name, torch.zeros(shape)) for name, shape in sorted((layer or {}).items())],
               ("lm_head.weight", torch.zeros((head_rows, 16))), ("t2d", torch.zeros(T, dtype=torch.bool))]

    def release() -> None:
        if via_super:
            model.load_weights(shipped)
            hot = model.get_hot_token_id()  # EAGLEWorker.__init__, every EAGLE-3 draft
        else:
            namespace["load_weights"](model, shipped)
            hot = model.hot_token_id  # read only when set (eagle_worker.py from 0.4.9)
        assert (hot is None) if not d2t else hot.tolist() == list(range(d))

    theirs = _outcome(release)
    raw = {"architectures": ["LlamaForCausalLMEagle3"], "model_type": "llama", "vocab_size": T,
           "draft_vocab_size": d, "num_hidden_layers": 1}
    ours = _ours(Family.EAGLE3_LLAMA, version, raw, dict(layer or {}), lm_head_rows=head_rows, has_d2t=d2t,
                 d2t_length=d if d2t else None)
    return theirs, ours


def _null_head_case(srt: Path) -> tuple[str, str]:
    """ParallelLMHead(None, H) in 0.5.1 (draft_vocab_size null, untied): VocabParallelEmbedding.__init__'s
    `num_added_embeddings = num_embeddings - self.org_vocab_size` with both None."""
    tree = ast.parse((srt / "layers" / "vocab_parallel_embedding.py").read_text())
    statement = next(n for n in ast.walk(tree) if isinstance(n, ast.Assign) and any(
        isinstance(t, ast.Name) and t.id == "num_added_embeddings" for t in n.targets))
    scope = {"num_embeddings": None, "self": types.SimpleNamespace(org_vocab_size=None)}
    theirs = _outcome(lambda: exec(compile(ast.Module(body=[statement], type_ignores=[]), "v.py", "exec"),  # noqa: S102
                                   scope))
    return theirs, f"TypeError: {m.E_EAGLE3_NULL_DRAFT_VOCAB}"


def main(root: Path) -> int:
    differ = 0
    for folder in sorted(root.glob("sglang-*"), key=lambda p: _release_key(p.name)):
        version, srt = folder.name.removeprefix("sglang-"), folder / "sglang" / "srt"
        cases: list[tuple[str, tuple[str, str]]] = []
        if not (srt / "models" / "llama_eagle3.py").exists():  # 0.4.2-0.4.4.post1 register no EAGLE-3
            continue
        cases += [(f"eagle3 lm_head rows {rows}", _eagle3_case(srt, version, 64, rows)) for rows in (64, 63)]
        cases.append(("eagle3 no d2t", _eagle3_case(srt, version, 64, 64, d2t=False)))
        cases.append(("eagle3 layers.0 q_proj/gate_proj", _eagle3_case(
            srt, version, 64, 64, layer={"layers.0.mlp.gate_proj.weight": (8, 16),
                                         "layers.0.self_attn.q_proj.weight": (16, 16)})))
        if version == "0.5.1":
            cases.append(("eagle3 draft_vocab_size null", _null_head_case(srt)))
        if (srt / "models" / "dspark.py").exists():
            cases += [(f"dspark config {name}", _dspark_case(srt, version, name, raw))
                      for name, raw in DSPARK_CONFIGS.items()]
            cases += [(f"dspark mask {mask}, T {T} padded {P}", _padded_mask_case(srt, version, mask))
                      for mask in (T + 4, P)]
            if _release_key(folder.name) < (0, 5, 22, -1):  # 0.5.22+ samples in a kernel outside srt/
                cases += [(f"dspark markov rows {rows}, base {width}", _markov_case(srt, version, rows, width))
                          for rows, width in ((T, T), (T - 1, T), (T, 128), (T, 64))]
        if (srt / "models" / "dflash.py").exists() and (srt / "speculative" / "dflash_utils.py").exists():
            cases += [(name, _domino_case(srt, version, extra, shapes, v))
                      for name, (extra, shapes, v) in DOMINO_CASES.items()]
        for name, (theirs, ours) in cases:
            same = theirs == ours
            differ += not same
            print(f"{version:12} {name:32} {'ok' if same else 'DIFFERS'}  {theirs}" +
                  ("" if same else f"  | dspark-ckpt: {ours}"))
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main(Path(sys.argv[1] if len(sys.argv) > 1 else "/work/wheels")))
