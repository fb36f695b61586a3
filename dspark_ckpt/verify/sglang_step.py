"""SGLang's own first draft step, cut out of a release's source tree with `ast` and run on CPU on a draft.

Shared by tools/probe_first_step.py (tiny heads it builds with the release's build_markov_head) and verify's SGLang
worker (sglang_worker.py, over the model the installed release built and loaded from the checkpoint). Imports
nothing of dspark_ckpt (the worker loads it by path) and torch only inside its functions.

What runs, per class (the same code the probe records in release_data/sglang-X/first_step.json):
- DSpark (0.5.16+): models/dspark.py gather_and_crop_vocab (the target head's logits cropped to its
  org_vocab_size W), then the Markov step: the head's own `sample_block` (greedy, 0.5.16-0.5.21) or
  speculative/dspark_components/dspark_draft.py draft_markov_block over kernels/ops/speculative/dspark/
  markov_sample.py MarkovSampleStep's torch path (0.5.22+);
- DFlash2 (0.5.19+): models/dflash.py CandidateSelector.build_lattice, eager (torch.compile left off);
- EAGLE-3 (0.5.12+): models/llama.py set_embed / set_embed_and_head (the target's embedding, and its head where
  load_lm_head_from_target), layers/logits_processor.py LogitsProcessor._copy_logits_to_buffer on
  `hidden @ lm_head.weight.T`, utils/common.py fast_topk, the draft worker's hot_token_id lookup
  (speculative/eagle_worker(_v2).py draft_forward), the next step's embedding of the ids.
"""

from __future__ import annotations

import ast
import dataclasses
import re
import sys
import traceback
import types
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

STDLIB = ("typing", "dataclasses", "numbers", "collections", "collections.abc", "logging", "math", "json", "enum",
          "functools", "abc", "copy", "re", "os")
ROWS, GAMMA = 2, 2  # the batch and block of the step (tools/probe_first_step.py's)
DSPARK_ANCHORS = ("capture", "inside", "outside")
EAGLE3_ANCHORS = ("capture", "last")


class Struct:
    """msgspec.Struct as dataclass: `class X(msgspec.Struct, frozen=True)` with annotated fields."""

    def __init_subclass__(cls, **kwargs: Any) -> None:
        dataclasses.dataclass(frozen=bool(kwargs.get("frozen")))(cls)


def cut(path: Path, wanted: Iterable[str], extra: dict[str, Any]) -> dict[str, Any]:
    """Exec the top-level definitions `wanted` (and the ones they reference) of one source file."""
    tree = ast.parse(path.read_text())
    defs: dict[str, ast.stmt] = {}
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            defs[node.name] = node
        elif isinstance(node, ast.Assign) and all(isinstance(t, ast.Name) for t in node.targets):
            for target in node.targets:
                if isinstance(target, ast.Name):
                    defs[target.id] = node
    keep: list[str] = []
    todo = list(wanted)
    while todo:
        name = todo.pop()
        if name in keep or name not in defs:
            continue
        keep.append(name)
        todo += [n.id for n in ast.walk(defs[name]) if isinstance(n, ast.Name)]
    imports = [n for n in tree.body if isinstance(n, (ast.Import, ast.ImportFrom))
               and all((getattr(n, "module", None) or a.name).split(".")[0] in {*STDLIB, "__future__", "torch"}
                       for a in n.names)]
    body = imports + sorted({id(defs[n]): defs[n] for n in keep}.values(), key=lambda d: d.lineno)
    module = types.ModuleType(f"probe_{abs(hash(str(path)))}")  # dataclasses look their module up
    sys.modules[module.__name__] = module
    namespace = module.__dict__
    namespace.update({"logger": types.SimpleNamespace(warning=lambda *a, **k: None, info=lambda *a, **k: None,
                                                      debug=lambda *a, **k: None), **extra})
    exec(compile(ast.Module(body=body, type_ignores=[]), str(path), "exec"), namespace)  # noqa: S102
    return namespace


def method(path: Path, cls_name: str, name: str) -> ast.FunctionDef:
    tree = ast.parse(path.read_text())
    cls = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == cls_name)
    return next(n for n in cls.body if isinstance(n, ast.FunctionDef) and n.name == name)


def stubs() -> dict[str, Any]:
    """What the cut functions name from outside torch: msgspec.Struct, triton's host helpers and tl.constexpr (the
    kernels are decorated, never launched on CPU), a one-rank all-gather."""
    import torch

    class Constexpr(int):
        @property
        def value(self) -> int:
            return int(self)

    triton = types.SimpleNamespace(jit=lambda f: f, cdiv=lambda a, b: -(-a // b),
                                   next_power_of_2=lambda n: 1 << max(int(n) - 1, 0).bit_length())
    return {"torch": torch, "nn": torch.nn, "F": torch.nn.functional, "msgspec": types.SimpleNamespace(Struct=Struct),
            "triton": triton, "tl": types.SimpleNamespace(constexpr=Constexpr),
            "tensor_model_parallel_all_gather": lambda t, dim=-1: t}


def _files(tree: Path) -> dict[str, Path]:
    srt = tree / "sglang" / "srt"
    ops = tree / "sglang" / "kernels" / "ops" / "speculative" / "dspark"
    return {"dspark": srt / "models" / "dspark.py",
            "draft": srt / "speculative" / "dspark_components" / "dspark_draft.py",
            "sample": ops / "markov_sample.py", "greedy": ops / "dspark_draft_model.py", "dispatch": ops / "dispatch.py"}


Crop = Callable[[Any, int], Any]
Step = Callable[[Any, Any, Any, Any], Any]


def markov_step(tree: Path) -> tuple[Callable[[Any], Any], Crop, Step, list[str]] | None:
    """(build_markov_head for a config, the crop to W, the draft step over a head, what ran); None without DSpark."""
    import torch

    files = _files(tree)
    if not files["dspark"].is_file():
        return None
    base = stubs()
    dspark = cut(files["dspark"], ["build_markov_head", "gather_and_crop_vocab"], base)
    ran = ["build_markov_head", "gather_and_crop_vocab"]

    def crop(logits: Any, w: int) -> Any:
        return dspark["gather_and_crop_vocab"](logits, types.SimpleNamespace(org_vocab_size=w))

    step: Step
    if files["sample"].is_file():  # 0.5.22+: the draft block over the fused step's reference path
        dispatch = cut(files["dispatch"], ["inputs_on_cuda"], base)
        sample = cut(files["sample"], ["MarkovSampleStep"], {**base, **dispatch})
        greedy = cut(files["greedy"], ["MarkovGreedyStep"], base)
        draft = cut(files["draft"], ["draft_markov_block", "DraftNoise"],
                    {**base, "MarkovSampleStep": sample["MarkovSampleStep"],
                     "MarkovGreedyStep": greedy["MarkovGreedyStep"],
                     "SpecTpSyncSite": types.SimpleNamespace(DSPARK_DRAFT="dspark_draft")})
        ran += ["draft_markov_block", "MarkovSampleStep"]

        def step(head: Any, logits: Any, anchor: Any, hidden: Any) -> Any:
            noise = draft["DraftNoise"](key=0, offset=torch.zeros(1, dtype=torch.int64))
            return draft["draft_markov_block"](
                markov_head=head, base_logits=logits, anchor_tokens=anchor, draft_hidden=hidden,
                step_temperatures=torch.zeros(anchor.shape[0], dtype=torch.float32), noise=noise,
                tp_sync=types.SimpleNamespace(sync=lambda site, tokens: tokens))
    else:  # 0.5.16-0.5.21: the head's own block sampler, greedy (dspark_draft.py greedy_step_sampler)
        ran.append("sample_block")

        def step(head: Any, logits: Any, anchor: Any, hidden: Any) -> Any:
            return head.sample_block(logits, first_prev_tokens=anchor, hidden_states=hidden,
                                     sampler=lambda scores, i: torch.argmax(scores, dim=-1))
    return dspark["build_markov_head"], crop, step, ran


def selector(tree: Path) -> Any:
    """models/dflash.py CandidateSelector, cut out with torch.compile around `_score_edges` left off (`is_npu`
    answered True: the eager function it wraps runs); None where the release has none (before 0.5.19)."""
    path = tree / "sglang" / "srt" / "models" / "dflash.py"
    if not path.is_file() or "class CandidateSelector" not in path.read_text(encoding="utf-8"):
        return None
    module = cut(path, ["CandidateSelector"], {**stubs(), "is_npu": lambda: True,
                                               "get_compiler_backend": lambda: "eager", "_flashinfer_top_k": None})
    module["logger"] = types.SimpleNamespace(warning=lambda *a, **k: None)  # flashinfer's absence, once per build
    return module["CandidateSelector"]


def hot_lookup(path: Path) -> ast.stmt:
    """draft_forward's `if self.hot_token_id is not None: topk_index = self.hot_token_id[topk_index]`."""
    found = method(path, next(n.name for n in ast.parse(path.read_text(encoding="utf-8")).body
                              if isinstance(n, ast.ClassDef) and any(
                                  isinstance(f, ast.FunctionDef) and f.name == "draft_forward" for f in n.body)),
                   "draft_forward")
    return next(s for s in ast.walk(found) if isinstance(s, ast.If) and "hot_token_id[topk_index]" in ast.unparse(s))


def eagle3_worker_file(tree: Path) -> Path | None:
    """The EAGLE draft worker whose draft_forward maps ids through hot_token_id (eagle_worker_v2.py, else
    eagle_worker.py); None where neither does."""
    srt = tree / "sglang" / "srt" / "speculative"
    return next((w for w in (srt / "eagle_worker_v2.py", srt / "eagle_worker.py")
                 if w.is_file() and "hot_token_id[topk_index]" in w.read_text(encoding="utf-8")), None)


# --- the step over a draft the installed release built and loaded (verify's SGLang worker) -------------------------

def frame(exc: BaseException) -> str | None:
    """The release's innermost frame of the traceback, as sglang/... file:line."""
    inside = [f for f in traceback.extract_tb(exc.__traceback__) if "/sglang/" in f.filename]
    if not inside:
        return None
    path = inside[-1].filename
    return f"sglang/{path.rsplit('/sglang/', 1)[1]}:{inside[-1].lineno}"


def outcome(run: Callable[[], Any], stage: Callable[[str | None], str] | None = None) -> dict[str, Any] | str:
    """`ok`, or the release's exception: type, text (its type's name where it says nothing), frame (and the
    EAGLE-3 stage it raised in)."""
    import torch

    torch.manual_seed(0)
    try:
        run()
    except Exception as exc:  # noqa: BLE001 - the release's own exception is the observation
        where = frame(exc)
        found = {"raises": type(exc).__name__, "text": (str(exc) or type(exc).__name__)[:400], "where": where}
        return {**found, "stage": stage(where)} if stage is not None else found
    return "ok"


def at_anchors(run: Callable[[int], Any], v: int, w: int) -> dict[str, Any]:
    """The step run with each anchor's previous token (DSPARK_ANCHORS), as `outcome` says it; null for an anchor
    with no token at these sizes."""
    out: dict[str, Any] = {}
    for anchor in DSPARK_ANCHORS:
        token = previous_token(anchor, v, w)
        out[anchor] = None if token is None else outcome(lambda token=token: run(token))
    return out


def previous_token(anchor: str, v: int, w: int) -> int | None:
    """The previous token an anchor feeds: 0 (`capture`), the last id with a markov_w1 row the target head can
    propose (`inside`: min(V, W) - 1), the first id without one (`outside`: V, only where V < W); None where the
    anchor cannot happen."""
    return {"capture": 0, "inside": min(v, w) - 1, "outside": v if v < w else None}[anchor]


def dspark_first_step(tree: Path, model: Any, w: int) -> dict[str, Any]:
    """The release's Markov step with the head it built and loaded (V rows of markov_w1) over base logits of the
    target head's width W, per previous token."""
    import torch

    found = markov_step(tree)
    if found is None:
        return {"not_run": "this SGLang has no models/dspark.py"}
    _, crop, step, ran = found
    head = model.markov_head
    v = int(head.markov_w1.weight.shape[0])
    hidden_size = int(model.config.hidden_size)

    def run(token: int) -> Any:
        logits = crop(torch.randn(ROWS * GAMMA, w + 8), w).view(ROWS, GAMMA, w)
        with torch.no_grad():
            return step(head, logits, torch.full((ROWS,), token, dtype=torch.long),
                        torch.randn(ROWS, GAMMA, hidden_size))
    return {"family": "dspark", "ran": ran, "v": v, "w": w, **at_anchors(run, v, w)}


def dflash2_first_step(tree: Path, model: Any, w: int) -> dict[str, Any]:
    """The release's CandidateSelector.build_lattice (eager) on the selector it built and loaded (codebooks of V
    rows), with candidate ids the target head's top-k gives (below W) and the verified anchor token."""
    import torch

    cls = selector(tree)
    if cls is None:
        return {"not_run": "this SGLang's models/dflash.py has no CandidateSelector"}
    loaded = model.candidate_selector
    v = int(loaded.predecessor_codebook.shape[0])
    hidden_size, k = int(loaded.hidden_projection.weight.shape[1]), int(loaded.top_k)

    def run(token: int) -> Any:
        with torch.no_grad():  # the selector's top_k candidates per slot (dflash_config.selector_top_k)
            return cls.build_lattice(loaded, candidate_ids=torch.full((ROWS, GAMMA, k), token, dtype=torch.long),
                                     unary_logits=torch.randn(ROWS, GAMMA, k),
                                     hidden_states=torch.randn(ROWS, GAMMA, hidden_size),
                                     anchor_token_ids=torch.full((ROWS,), token, dtype=torch.long))
    return {"family": "dflash2", "ran": ["CandidateSelector.build_lattice"], "v": v, "w": w,
            **at_anchors(run, v, w)}


def eagle3_stage(where: str | None) -> str:
    """Where an EAGLE-3 step raised (tools/probe_first_step_eagle3.py's stages): the crop, the hot_token_id lookup,
    the next step's embedding (no release frame: F.embedding), else the head."""
    where = where or ""
    return ("crop" if "logits_processor" in where else "lookup" if "speculative/" in where
            else "embed" if not where else "head")


def _rising(torch: Any, rows: int, hidden: int) -> Any:
    """A weight whose logits grow with the row against a hidden state of ones: the last row kept is the argmax."""
    return torch.nn.Parameter(torch.arange(rows, dtype=torch.float32)[:, None].expand(rows, hidden).clone() / rows,
                              requires_grad=False)


def eagle3_first_step(tree: Path, release_import: Callable[[str], Any], make: Callable[[], Any],
                      r: int) -> dict[str, Any]:
    """The release's EAGLE-3 first draft step on the loaded draft against a target whose embedding and head have R
    rows: set_embed(_and_head) as the worker's init_lm_head calls it, the logits cropped by the draft's own
    LogitsProcessor, fast_topk, the hot_token_id lookup, the target embedding of the ids. Each anchor on a model
    `make` builds and loads afresh (set_embed replaces parameters; built before the step runs: not the step's)."""
    import torch

    logits = tree / "sglang" / "srt" / "layers" / "logits_processor.py"
    worker = eagle3_worker_file(tree)
    if worker is None or "_copy_logits_to_buffer" not in logits.read_text(encoding="utf-8"):
        return {"not_run": "this SGLang's EAGLE-3 has no LogitsProcessor._copy_logits_to_buffer (before 0.5.12): "
                           "its first step is not run here"}
    fast_topk = release_import("sglang.srt.utils.common").fast_topk
    lookup = compile(ast.Module(body=[hot_lookup(worker)], type_ignores=[]), str(worker), "exec")
    drafts = {anchor: make() for anchor in EAGLE3_ANCHORS}
    hidden_size = int(drafts["capture"].config.hidden_size)
    out: dict[str, Any] = {"family": "eagle3", "ran": [
        "LlamaForCausalLM.set_embed(_and_head)", "LogitsProcessor._copy_logits_to_buffer", "fast_topk",
        f"{worker.name} draft_forward (hot_token_id)"], "r": r}
    for anchor in EAGLE3_ANCHORS:
        def run(anchor: str = anchor) -> None:
            draft = drafts[anchor]
            # the draft's own head as the probe loads it: its last row wins against a hidden state of ones (the
            # largest id it can propose: `last`); the target's (init_lm_head) the same
            own = draft.lm_head.weight
            draft.lm_head.weight = _rising(torch, int(own.shape[0]), int(own.shape[1]))
            embed, head = _rising(torch, r, hidden_size), _rising(torch, r, hidden_size)
            if getattr(draft, "load_lm_head_from_target", False):
                draft.set_embed_and_head(embed, head)
            else:
                draft.set_embed(embed)
            hidden = (torch.zeros if anchor == "capture" else torch.ones)(ROWS, hidden_size)
            with torch.no_grad():
                cropped = draft.logits_processor._copy_logits_to_buffer(
                    hidden @ draft.lm_head.weight.T, types.SimpleNamespace(next_token_logits_buffer=None))
                _, topk_index = fast_topk(torch.softmax(cropped, dim=-1), 1, dim=-1)  # capture_for_decode
                scope = {"self": types.SimpleNamespace(hot_token_id=draft.hot_token_id), "topk_index": topk_index}
                exec(lookup, {}, scope)  # noqa: S102
                torch.nn.functional.embedding(scope["topk_index"].flatten(), draft.model.embed_tokens.weight)
        out[anchor] = outcome(run, eagle3_stage)
    return out


def _natural(name: str) -> list[Any]:
    return [int(p) if p.isdigit() else p for p in re.split(r"(\d+)", name)]


def checkpoint_weights(folder: Path) -> Iterable[tuple[str, Any]]:
    """The checkpoint's own tensors, files naturally sorted, names sorted (the step reads the vocabulary tensors'
    data: the Markov head, the selector codebooks, d2t)."""
    from safetensors import safe_open

    for file in sorted((p.name for p in folder.glob("*.safetensors")), key=_natural):
        with safe_open(str(folder / file), framework="pt", device="cpu") as handle:
            for name in sorted(handle.keys()):
                yield name, handle.get_tensor(name)
