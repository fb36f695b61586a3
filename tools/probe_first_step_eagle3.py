"""SGLang EAGLE-3's first draft step, cut out of one release's wheel with `ast` and run on CPU (tools/probe_first_step.py
writes what it records as `eagle3` in release_data/sglang-X/first_step.json).

What runs is the release's code: models/llama_eagle3.py LlamaForCausalLMEagle3.__init__'s head statements (tied ->
`lm_head = model.embed_tokens`; `draft_vocab_size` null -> `load_lm_head_from_target`; `config_.vocab_size =
config_.draft_vocab_size` for the draft's LogitsProcessor) and its load_weights (d2t -> `hot_token_id = d2t +
arange(len(d2t))`); models/llama.py set_embed_and_head / set_embed (what speculative/eagle_worker(_v2).py init_lm_head
calls: the target's embedding, and its head where load_lm_head_from_target); layers/logits_processor.py
LogitsProcessor._copy_logits_to_buffer (the crop to config_.vocab_size) on `hidden @ lm_head.weight.T`
(`_compute_lm_head`); utils/common.py fast_topk; the worker's `if self.hot_token_id is not None: topk_index =
self.hot_token_id[topk_index]` (draft_forward); then the next draft step's embedding lookup of those ids
(VocabParallelEmbedding at one rank: F.embedding). Sizes: C, the crop the config declares (draft_vocab_size, or V
where it is null); R, the target's head/embedding rows; L, the d2t's length. Two hidden states: zeros (what a
CUDA-graph capture feeds: `capture`) and one whose logits grow with the column, so the last column the crop keeps is
the argmax (`last`: the largest id the draft head can propose).
"""

from __future__ import annotations

import ast
import copy
import itertools
import re
import types
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import torch
from torch import nn

from dspark_ckpt.runtimes.first_step import EAGLE3_KINDS, size_ranking
from dspark_ckpt.verify.sglang_step import cut as _cut  # shared with verify's SGLang worker
from dspark_ckpt.verify.sglang_step import eagle3_worker_file, hot_lookup
from dspark_ckpt.verify.sglang_step import method as _method

HIDDEN, ROWS = 8, 2
ANCHORS = ("capture", "last")
SCALES = ((24, 40, 56), (64, 72, 88))  # a size per rank, at two scales whose numbers (each minus one too) differ


def orders(names: str) -> list[dict[str, int]]:
    """Every weak order of the sizes named (rank per name, the ranks used 0..k-1)."""
    found = []
    for ranks in itertools.product(range(len(names)), repeat=len(names)):
        if set(ranks) == set(range(max(ranks) + 1)):
            found.append(dict(zip(names, ranks, strict=True)))
    return found


def _statements(path: Path, cls: str, name: str, first: str, last: str) -> list[ast.stmt]:
    """The statements of a method from the one whose source starts with `first` to the one with `last`."""
    method = _method(path, cls, name)
    source = path.read_text(encoding="utf-8").splitlines()
    lines = [source[s.lineno - 1].strip() for s in method.body]
    start = next(i for i, line in enumerate(lines) if line.startswith(first))
    end = next(i for i, line in enumerate(lines) if line.startswith(last))
    return method.body[start:end + 1]


class _Holder(nn.Module):
    """An embedding/head module: `del .weight` and `.weight = ...` work as on VocabParallelEmbedding."""

    def __init__(self, rows: int) -> None:
        super().__init__()
        self.weight = nn.Parameter(torch.zeros(rows, HIDDEN), requires_grad=False)


def _rising(rows: int) -> nn.Parameter:
    """A weight whose logits grow with the row against a hidden state of ones: the last row kept is the argmax."""
    return nn.Parameter(torch.arange(rows, dtype=torch.float32)[:, None].expand(rows, HIDDEN).clone() / rows,
                        requires_grad=False)


def release_eagle3(tree: Path) -> Callable[..., None] | None:
    """run(tied, d, v, r, l, anchor): the release's first EAGLE-3 draft step for those sizes; None where the release
    has no LlamaForCausalLMEagle3 with hot_token_id (raises what the release raises)."""
    srt = tree / "sglang" / "srt"
    eagle3, llama = srt / "models" / "llama_eagle3.py", srt / "models" / "llama.py"
    worker = eagle3_worker_file(tree)
    logits = srt / "layers" / "logits_processor.py"
    common = srt / "utils" / "common.py"
    if not eagle3.is_file() or worker is None or "_copy_logits_to_buffer" not in logits.read_text(encoding="utf-8"):
        return None
    init = _statements(eagle3, "LlamaForCausalLMEagle3", "__init__", "self.load_lm_head_from_target = False",
                       "self.logits_processor = LogitsProcessor(config_)")
    ns: dict[str, Any] = {"torch": torch, "nn": nn, "copy": copy, "Iterable": Iterable, "Tuple": tuple,
                          "Optional": Any, "add_prefix": lambda name, prefix: name, "_is_xpu": False,
                          "current_platform": types.SimpleNamespace(empty_cache=lambda: None, synchronize=lambda: None),
                          "ParallelLMHead": lambda rows, hidden, **kw: _Holder(rows),
                          "default_weight_loader": lambda p, w: p.data.copy_(w)}
    ns.update(_cut(common, ["fast_topk"], {"torch": torch}))
    # set_embed(_and_head) empties the CUDA cache after swapping (0.5.12-0.5.15 through torch.cuda itself)
    cuda = types.SimpleNamespace(empty_cache=lambda: None, synchronize=lambda: None)
    on_cpu = types.SimpleNamespace(**{n: getattr(torch, n) for n in dir(torch) if not n.startswith("__")})
    on_cpu.cuda = cuda
    for path, cls, name in ((eagle3, "LlamaForCausalLMEagle3", "load_weights"),
                            (llama, "LlamaForCausalLM", "set_embed_and_head"), (llama, "LlamaForCausalLM", "set_embed"),
                            (logits, "LogitsProcessor", "_copy_logits_to_buffer")):
        scope = {**ns, "torch": on_cpu} if path == llama else ns
        exec(compile(ast.Module(body=[_method(path, cls, name)], type_ignores=[]), str(path), "exec"), scope)  # noqa: S102
        ns[name] = scope[name]
    ns["LogitsProcessor"] = lambda cfg: types.SimpleNamespace(
        vocab_size=cfg.vocab_size, copy=lambda x, m: ns["_copy_logits_to_buffer"](
            types.SimpleNamespace(vocab_size=cfg.vocab_size), x, m))
    build = ast.FunctionDef(name="build_head", args=ast.arguments(
        posonlyargs=[], args=[ast.arg(a) for a in ("self", "config", "quant_config", "prefix")], kwonlyargs=[],
        kw_defaults=[], defaults=[]), body=init, decorator_list=[], returns=None, type_params=[])
    exec(compile(ast.fix_missing_locations(ast.Module(body=[build], type_ignores=[])), str(eagle3), "exec"), ns)  # noqa: S102
    lookup = compile(ast.Module(body=[hot_lookup(worker)], type_ignores=[]), str(worker), "exec")

    def run(tied: bool, d: int | None, v: int, r: int, length: int | None, anchor: str) -> None:
        config = types.SimpleNamespace(tie_word_embeddings=tied, draft_vocab_size=d, vocab_size=v,
                                       hidden_size=HIDDEN, target_hidden_size=HIDDEN)
        model: Any = types.SimpleNamespace(config=config, model=types.SimpleNamespace(embed_tokens=_Holder(v)))
        ns["build_head"](model, config, None, "")
        model.hot_token_id = None
        model.named_parameters = lambda: [("lm_head.weight", model.lm_head.weight)]
        model.lm_head.weight = _rising(model.lm_head.weight.shape[0])  # the draft's own head, loaded
        if length is not None:
            ns["load_weights"](model, [("d2t", torch.zeros(length, dtype=torch.long))])
        embed, head = _rising(r), _rising(r)  # the target's (speculative/eagle_worker_v2.py init_lm_head)
        if model.load_lm_head_from_target:
            ns["set_embed_and_head"](model, embed, head)
        else:
            ns["set_embed"](model, embed)
        hidden = torch.zeros(ROWS, HIDDEN) if anchor == "capture" else torch.ones(ROWS, HIDDEN)
        out = model.logits_processor.copy(hidden @ model.lm_head.weight.T,
                                          types.SimpleNamespace(next_token_logits_buffer=None))
        _, topk_index = ns["fast_topk"](torch.softmax(out, dim=-1), 1, dim=-1)  # capture_for_decode
        scope = {"self": types.SimpleNamespace(hot_token_id=model.hot_token_id), "topk_index": topk_index}
        exec(lookup, ns, scope)  # noqa: S102
        torch.nn.functional.embedding(scope["topk_index"].flatten(), model.model.embed_tokens.weight)
    return run


def _template(text: str, c: int, r: int, length: int | None) -> str:
    sizes = {"c": c, "r": r, "c-1": c - 1, "r-1": r - 1, **({"l": length} if length is not None else {})}
    for name, value in sorted(sizes.items(), key=lambda kv: -len(kv[0])):
        text = re.sub(rf"(?<![\d{{]){value}(?![\d}}])", f"{{{name}}}", text)
    return text


def _stage(exc: BaseException, tree: Path, frame: Callable[[BaseException, Path], str | None]) -> str:
    where = frame(exc, tree) or ""
    return ("crop" if "logits_processor" in where else "lookup" if "speculative/" in where
            else "embed" if not where else "head")


def observe_eagle3(tree: Path, frame: Callable[[BaseException, Path], str | None]) -> dict[str, Any] | None:
    """kind -> the order of C, R (and L where a d2t ships) -> anchor -> outcome, each at two scales (which must
    agree once the sizes are written {c}, {r}, {l})."""
    run = release_eagle3(tree)
    if run is None:
        return None
    table: dict[str, Any] = {}
    for kind in EAGLE3_KINDS:
        tied, null = kind.startswith("tied"), kind.endswith("null")
        for ranks in orders("CR") + orders("CRL"):
            for anchor in ANCHORS:
                seen = []
                for scale in SCALES:
                    c, r = scale[ranks["C"]], scale[ranks["R"]]
                    length = scale[ranks["L"]] if "L" in ranks else None
                    try:
                        run(tied, None if null else c, c, r, length, anchor)
                        seen.append("ok")
                    except Exception as exc:  # noqa: BLE001 - the release's own exception is the observation
                        seen.append({"raises": type(exc).__name__, "stage": _stage(exc, tree, frame),
                                     "text": _template(str(exc) or type(exc).__name__, c, r, length),
                                     "where": frame(exc, tree)})
                if seen[0] != seen[1]:
                    raise SystemExit(f"probe_first_step: eagle3 {kind} {size_ranking(ranks)} {anchor}: the two scales "
                                     f"disagree: {seen}")
                table.setdefault(kind, {}).setdefault(size_ranking(ranks), {})[anchor] = seen[0]
    return {"ran": ["LlamaForCausalLMEagle3.__init__ (head)", "LlamaForCausalLMEagle3.load_weights",
                    "LlamaForCausalLM.set_embed_and_head", "LlamaForCausalLM.set_embed",
                    "LogitsProcessor._copy_logits_to_buffer", "fast_topk", "draft_forward (hot_token_id)"],
            "steps": table}
