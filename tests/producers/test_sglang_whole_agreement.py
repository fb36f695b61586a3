"""Whole checkpoints held against SGLang's own code (issue 42, "Whole checkpoints"; issue 40, Why 3): check's verdict on
DFlash, DFlash2 and DSpark drafts in their producers' layouts (z-lab dflash 0.1.0, SpecForge 0.2.0), as shipped and
with the mutations whose verdicts were missed, against SGLang 0.5.16, 0.5.21 and 0.5.23's real `__init__` and
`load_weights` over every tensor, executed on CPU (tools/sglang_release_model.py's worker, load mode).

The worker runs SGLang's CUDA weight-loading branch (`"loaders": "gpu"`: `_is_cpu` False in layers/linear.py,
parameter.py and the fused MoE layer, on CPU tensors; verify/sglang_worker.py gpu_loaders, as the generator's records):
under the CPU engine the QKV loader pads a tensor narrower than its shard, which no user's GPU run does (there
torch's `narrow` raises). Compared per case: loads or not, the error's words where the
landing decides it, the parameters left unwritten (each must be named: DSP363's landing or the contract's DSP345)
and the tensors cut to fit. The classes of miss: fc's width (`fc-wide`), k/v and q head counts off the shipped
projections (`two-kv-heads`, `four-heads`, `narrow-q`), a missing fc, q_norm or conv kernel, a layer count above
the shipped layers, a missing Markov head, a structural switch set on with its parameters unshipped
(`bias-on`); and z-lab's DFlash2 codebooks under their bare names, as `fix --strategy unnest-weights` writes them
(`bare-codebooks`). The answers are recorded in tests/data/observed/sglang-whole (tests/recorded.py).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from conftest import write_safetensors
from producers import materialise
from recorded import observations, sources
from test_landing_agreement import _read

from dspark_ckpt.check.analysis import analyze
from dspark_ckpt.model.target import TargetVocab
from dspark_ckpt.runtimes import landing
from dspark_ckpt.runtimes.parameter_pass import VOCAB_SHAPE_CODES
from dspark_ckpt.runtimes.release_model import architecture_model, generated_releases
from dspark_ckpt.runtimes.selectors import RuntimeVersion
from dspark_ckpt.sources.local import local_source

ROOT = Path(__file__).resolve().parents[2]
RELEASES = ("0.5.23", "0.5.21", "0.5.16")
T = 96
LAYOUTS = ("dflash-0.1.0-dflash", "dflash-0.1.0-dflash2", "specforge-0.2.0-dspark-declared-d")
Edit = Callable[[dict[str, Any]], None]
Retensor = Callable[[dict[str, np.ndarray]], None]


def _hoist(cfg: dict[str, Any]) -> None:
    """SpecForge nests the DSpark settings SGLang reads at the top level (DSP344 otherwise): as fix hoists them."""
    for key in ("markov_rank", "markov_head_type", "mask_token_id"):
        if key in cfg.get("dflash_config", {}):
            cfg[key] = cfg["dflash_config"][key]


def _set(**values: Any) -> Edit:
    return lambda cfg: cfg.update(values)


def _head(kind: str) -> Edit:
    """markov_head_type set to `kind`, at the top level and in dflash_config where the producer nests it too."""
    def edit(cfg: dict[str, Any]) -> None:
        cfg["markov_head_type"] = kind
        if "markov_head_type" in cfg.get("dflash_config", {}):
            cfg["dflash_config"]["markov_head_type"] = kind
    return edit


def _resize(suffix: str, axis: int, delta: int | None = None, factor: int = 1) -> Retensor:
    """Every tensor ending in `suffix` resized along `axis`: by `delta`, or times `factor`."""
    def edit(tensors: dict[str, np.ndarray]) -> None:
        for name in [n for n in tensors if n.endswith(suffix)]:
            shape = list(tensors[name].shape)
            shape[axis] = shape[axis] + delta if delta is not None else shape[axis] * factor
            tensors[name] = np.zeros(shape, tensors[name].dtype)
    return edit


def _grown(key: str, delta: int) -> Edit:
    """The config counting `delta` more of `key` than the tensors were made for."""
    def edit(cfg: dict[str, Any]) -> None:
        if isinstance(cfg.get(key), int) and cfg[key] + delta >= 1:
            cfg[key] += delta
    return edit


def _extra_layer(tensors: dict[str, np.ndarray]) -> None:
    """Layer 0's tensors shipped again as layer 1 while the config counts one layer."""
    for name in [n for n in tensors if "layers.0." in n]:
        tensors[name.replace("layers.0.", "layers.1.", 1)] = np.zeros(tensors[name].shape, np.float32)


def _resize_named(name: str) -> Retensor:
    """The tensor named exactly `name` (no prefix) one row longer."""
    def edit(tensors: dict[str, np.ndarray]) -> None:
        if name in tensors:
            tensors[name] = np.zeros((tensors[name].shape[0] + 1, *tensors[name].shape[1:]), tensors[name].dtype)
    return edit


def _markov_extra(module: str, shape: Callable[[int, int], tuple[int, int]],
                  off: tuple[int, int] = (0, 0)) -> Retensor:
    """A gated or RNN Markov head's own projection (weight and bias), sized from the shipped factors: w1 [V, r],
    the hidden size from the final norm; `off`: the weight's rows and columns that much off (the bias as built)."""
    def edit(tensors: dict[str, np.ndarray]) -> None:
        w1 = next((a for n, a in tensors.items() if n.endswith("markov_w1.weight")), None)
        norm = tensors.get("norm.weight")
        if w1 is None or norm is None:
            return
        rows, cols = shape(norm.shape[0], w1.shape[1])
        tensors[f"markov_head.{module}.weight"] = np.zeros((rows + off[0], cols + off[1]), np.float32)
        tensors[f"markov_head.{module}.bias"] = np.zeros((rows,), np.float32)
    return edit


def _biases(short: str = "", delta: int = -1) -> Retensor:
    """The q/k/v/o biases `attention_bias` adds, each as long as its weight's rows (the tensor ending in `short`
    `delta` longer)."""
    def edit(tensors: dict[str, np.ndarray]) -> None:
        for name in [n for n in tensors if n.endswith(("q_proj.weight", "k_proj.weight", "v_proj.weight",
                                                          "o_proj.weight"))]:
            bias = name.removesuffix(".weight") + ".bias"
            rows = tensors[name].shape[0] + (delta if short and bias.endswith(short) else 0)
            tensors[bias] = np.zeros((rows,), np.float32)
    return edit


def _sinks(delta: int = 0) -> Retensor:
    """The per-head attention sink bias `dflash_config.attention_sink_bias` adds to each layer, `delta` longer."""
    def edit(tensors: dict[str, np.ndarray]) -> None:
        for name in [n for n in tensors if n.endswith("self_attn.q_norm.weight")]:
            heads = tensors[name.replace("q_norm.weight", "q_proj.weight")].shape[0] // tensors[name].shape[0]
            tensors[name.replace("q_norm.weight", "attention_sink_bias")] = np.zeros((heads + delta,), np.float32)
    return edit


def _sink_on(cfg: dict[str, Any]) -> None:
    cfg.setdefault("dflash_config", {})["attention_sink_bias"] = True


def _shipping(suffix: str) -> tuple[str, ...]:
    """The recorded layouts that ship a tensor ending in `suffix` (a mutation of it applies to those only)."""
    found = []
    for path in sorted((Path(__file__).parent / "layouts").glob("*.json")):
        shards = json.loads(path.read_text())["shards"]
        if any(n.endswith(suffix) for shard in shards.values() for n in shard["tensors"]):
            found.append(path.stem)
    return tuple(found)


# name -> (config edit, tensors dropped by suffix, tensor edit, the layouts it applies to: None for all)
MUTATIONS: dict[str, tuple[Edit | None, tuple[str, ...], Retensor | None, tuple[str, ...] | None]] = {
    "as-shipped": (None, (), None, None),
    "fc-wide": (None, (), _resize("fc.weight", 1, delta=16), None),
    "no-fc": (None, ("fc.weight",), None, None),
    "no-q-norm": (None, ("self_attn.q_norm.weight",), None, None),
    "two-kv-heads": (_set(num_key_value_heads=2), (), None, None),
    "kv-wide": (None, (), lambda t: [_resize(s, 0, factor=2)(t) for s in ("k_proj.weight", "v_proj.weight")], None),
    "four-heads": (_set(num_attention_heads=4), (), None, None),
    "narrow-q": (None, (), _resize("q_proj.weight", 0, delta=-2), None),
    "two-layers": (_set(num_hidden_layers=2, layer_types=["full_attention"] * 2), (), None, None),
    "bias-on": (_set(attention_bias=True), (), None, None),
    "no-conv": (None, ("attention_conv.base_kernel",), None, ("dflash-0.1.0-dflash2",)),
    # z-lab's `<name>.weight` codebooks renamed to the bare parameters, as `fix --strategy unnest-weights` writes
    "bare-codebooks": (None, (), lambda t: [t.update({n.removesuffix(".weight"): t.pop(n)}) for n in list(t)
                                            if n.startswith("candidate_selector.") and n.endswith("_codebook.weight")],
                       ("dflash-0.1.0-dflash2",)),
    "no-markov": (None, ("markov_w1.weight", "markov_w2.weight"), None, ("specforge-0.2.0-dspark-declared-d",)),
    "no-markov-w2": (None, ("markov_w2.weight",), None, ("specforge-0.2.0-dspark-declared-d",)),
    # a vocabulary head of the wrong shape (sglang_eval.py's rows, the worker's sharing)
    "lm-head-short": (None, (), _resize("lm_head.weight", 0, delta=-1), _shipping("lm_head.weight")),
    "embed-short": (None, (), _resize("embed_tokens.weight", 0, delta=-1), _shipping("embed_tokens.weight")),
    "markov-w1-short": (None, (), _resize("markov_w1.weight", 0, delta=-1), _shipping("markov_w1.weight")),
    "markov-w2-narrow": (None, (), _resize("markov_w2.weight", 1, delta=-1), _shipping("markov_w2.weight")),
    # load order: `markov_head.*` sorts before `norm.weight`, but DSpark loads the Markov bucket after the backbone
    # (runtimes/load_phases.py), so the release raises on the norm
    # the other Markov heads (structural key markov_head_type, a name: the record's `values`), their own projection
    # shipped or not
    "gated-head": (_head("gated"), (), _markov_extra("gate_proj", lambda h, r: (r, h + r)),
                   _shipping("markov_w1.weight")),
    "gated-no-gate": (_head("gated"), (), None, _shipping("markov_w1.weight")),
    "rnn-head": (_head("rnn"), (), _markov_extra("joint_proj", lambda h, r: (3 * r, 2 * r + h)),
                 _shipping("markov_w1.weight")),
    # a parameter a structural key's value makes appear, shipped a row or column off (issue 40 item 4: judged by
    # the record's `appearing` shapes at the draft's values), and shipped right
    "gated-gate-short": (_head("gated"), (), _markov_extra("gate_proj", lambda h, r: (r, h + r), (-1, 0)),
                         _shipping("markov_w1.weight")),
    "rnn-joint-narrow": (_head("rnn"), (), _markov_extra("joint_proj", lambda h, r: (3 * r, 2 * r + h), (0, -1)),
                         _shipping("markov_w1.weight")),
    "bias-shipped": (_set(attention_bias=True), (), _biases(), None),
    "bias-short": (_set(attention_bias=True), (), _biases("q_proj.bias"), None),
    "o-bias-long": (_set(attention_bias=True), (), _biases("o_proj.bias", delta=1), None),
    "sink-unshipped": (_sink_on, (), None, None),
    "sink-shipped": (_sink_on, (), _sinks(), None),
    "sink-short": (_sink_on, (), _sinks(-1), None),
    "markov-short-norm-wide": (None, (), lambda t: [_resize("markov_w1.weight", 0, delta=-1)(t),
                                                    _resize_named("norm.weight")(t)], _shipping("markov_w1.weight")),
    # the decoder layer's MLP against the config, and a layer the config does not count shipped
    "mlp-gate-short": (None, (), _resize("mlp.gate_proj.weight", 0, delta=-1), _shipping("mlp.gate_proj.weight")),
    "mlp-down-narrow": (None, (), _resize("mlp.down_proj.weight", 1, delta=-1), _shipping("mlp.down_proj.weight")),
    "intermediate-over": (_grown("intermediate_size", 16), (), None, None),
    "extra-layer": (None, (), _extra_layer, None),
}


def _write(folder: Path, layout: str, mutation: str) -> Path | None:
    edit, dropped, retensor, only = MUTATIONS[mutation]
    if only is not None and layout not in only:
        return None

    def config(cfg: dict[str, Any]) -> None:
        if "dspark" in layout:
            _hoist(cfg)
        if edit is not None:
            edit(cfg)

    names = json.loads((Path(__file__).parent / "layouts" / f"{layout}.json").read_text())["shards"]
    drop = tuple(n for shard in names.values() for n in shard["tensors"] if dropped and n.endswith(dropped))
    folder = materialise(folder, layout, config=config, drop=drop)
    if retensor is not None:
        for file in sorted(folder.glob("*.safetensors")):
            found, dtypes = _read(file)
            stored = {id(array): dtypes[n] for n, array in found.items()}  # a renamed array keeps its dtype
            retensor(found)
            write_safetensors(file, found, dtypes={n: "BF16" for n, a in found.items()
                                                   if stored.get(id(a), dtypes.get(n)) == "BF16"})
    return folder


# the codes the landing decides: its own, and a described draft's vocabulary heads (parameter_pass.VOCAB_SHAPE_CODES)
LANDED = landing.CODES | frozenset(VOCAB_SHAPE_CODES.values())


def _observe(release: str, cases: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Each case through the release's own __init__ and load_weights, its loaders' CUDA branch."""
    sys.path.insert(0, str(ROOT / "tools"))
    import sglang_release_model as sf

    paths, registry = sf.release_paths(release)
    with tempfile.TemporaryDirectory() as tmp:
        request, out = Path(tmp) / "request.json", Path(tmp) / "out.json"
        request.write_text(json.dumps({"architectures": [], "registry": registry, "stub": list(sf.STUB),
                                       "stub_everyone": sf.STUB_EVERYONE, "recipes": {},
                                       "recipe_rules": sf.RECIPES, "default_recipe": sf.DEFAULT_RECIPE,
                                       "mode": "load", "loaders": "gpu", "cases": cases}))
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(str(p) for p in paths), "SGLANG_USE_CPU_ENGINE": "1"}
        subprocess.run([sys.executable, str(sf.WORKER), str(request), str(out)], env=env, timeout=1500,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
        doc = json.loads(out.read_text())
    assert doc["ok"] and doc.get("gpu_loaders"), doc.get("reason")
    return {r["id"]: r for r in doc["results"]}


def _compare(predicted: dict[str, tuple[Any, Any, Any]], observed: dict[str, dict[str, Any]]) -> list[str]:
    """Per case, where check and the release differ: loads or not, the error's words where the landing decides it;
    in a draft that loads, a parameter the release left unwritten that no finding of check's names (the landing's
    DSP363 by parameter, the contract's DSP345 in its words), and one check calls unfilled that the release wrote."""
    out = []
    for case_id, (verdict, found, _) in predicted.items():
        seen = observed[case_id]
        if (seen["error"] is None) != verdict.loads:
            said = verdict.error.text if verdict.error else "loads"
            out.append(f"{case_id}: SGLang {'loads' if seen['error'] is None else seen['error']['message'][:120]}; "
                       f"check {said[:120]}")
            continue
        if seen["error"] is not None:
            words = seen["error"]["message"]
            if verdict.error is not None and verdict.error.code in LANDED and words not in verdict.error.text:
                out.append(f"{case_id}: SGLang says {words!r}; check {verdict.error.text!r}")
            continue
        named = {p.parameter for p in found if p.kind == "unfilled"}
        said = " ".join(issue.text for issue in verdict.silent)
        unnamed = sorted(p for p in seen["unwritten"] + seen["partly"] if p not in named and p not in said)
        false = sorted(p for p in named if p not in seen["unwritten"] + seen["partly"])
        if unnamed or false:
            out.append(f"{case_id}: unwritten and not named {unnamed}; named but written {false}")
    return out


@pytest.mark.parametrize("source", sources("sglang"))
@pytest.mark.parametrize("release", RELEASES)
def test_check_agrees_with_sglang_on_whole_checkpoints(tmp_path: Path, release: str, source: str) -> None:
    assert release in generated_releases("sglang")
    cases, predicted, tally = [], {}, {}
    for layout in LAYOUTS:
        for mutation in MUTATIONS:
            folder = _write(tmp_path / f"{layout}--{mutation}", layout, mutation)
            if folder is None:
                continue
            analysis = analyze(local_source(folder), target=TargetVocab(T, "test"),
                               runtimes=[RuntimeVersion("sglang", release)])
            built = analysis.builds[0]
            model = architecture_model("sglang", release, built.architecture or "")
            if built.error is not None or built.hf is None or model is None or model.not_built is not None:
                continue  # a class this release does not register (DFlash2 and DSpark before 0.5.21)
            shapes = {n: list(t.shape) for n, t in analysis.loaded.tensors.items()}
            found = landing.land(model, built.hf, {n: tuple(s) for n, s in shapes.items()}, target_hidden=None,
                                 target_vocab=T, config_class=built.config_class, family=built.family)
            cases.append({"id": folder.name, "architecture": built.architecture, "config": dict(built.hf),
                          "tensors": shapes, "target_hidden": 16, "target_vocab": T, "bare": False})
            predicted[folder.name] = (analysis.verdicts[0], found, model)
            tally.setdefault(mutation, []).append(folder.name)
    assert len(cases) >= 10, f"only {len(cases)} cases"  # 10 DFlash cases on 0.5.16, which lacks DFlash2 and DSpark
    observed = observations("sglang-whole", "sglang", release, cases, source, lambda: _observe(release, cases))
    disagree = _compare(predicted, observed)
    # the cases reach both kinds of answer: a raise, and a load with parameters left unwritten
    assert any(observed[c]["error"] for c in predicted) and any(observed[c]["unwritten"] for c in predicted)
    # z-lab's `.weight` codebooks are skipped (left as initialised); under the bare names, as fix renames them, filled
    if "dflash-0.1.0-dflash2--as-shipped" in observed:
        codebooks = {"candidate_selector.predecessor_codebook", "candidate_selector.successor_codebook"}
        assert codebooks <= set(observed["dflash-0.1.0-dflash2--as-shipped"]["unwritten"])
        assert not codebooks & set(observed["dflash-0.1.0-dflash2--bare-codebooks"]["unwritten"])
    wrong = {line.split(":", 1)[0] for line in disagree}
    print(f"sglang {release}: {len(predicted) - len(wrong)}/{len(predicted)} agree; per class: " + ", ".join(
        f"{m} {sum(c not in wrong for c in ids)}/{len(ids)}" for m, ids in tally.items()))
    assert not disagree, f"{len(disagree)} of {len(predicted)} cases disagree:\n" + "\n".join(disagree)


def _lilicorr_case(release: str, case_id: str, topk: int) -> dict[str, Any]:
    """A correct LiLiCorr draft at the record's base sizes (tools/sglang_release_model.py's recipe), with
    `lilicorr_candidate_topk` set to `topk` and the candidate-rank embedding sized for it, as the class builds it
    (executed: [1, 1, 1, topk, H])."""
    sys.path.insert(0, str(ROOT / "tools"))
    import release_model_worker as worker
    import sglang_release_model as sf
    from test_every_architecture_agreement import _tensors

    model = architecture_model("sglang", release, "LiLiCorrDraftModel")
    assert model is not None and model.not_built is None
    request = {"default_recipe": sf.DEFAULT_RECIPE, "recipe_rules": sf.RECIPES}
    config = worker.config_for(worker.recipe_for("LiLiCorrDraftModel", request), dict(worker.BASE))
    config.pop(worker.TARGET_IS_DRAFT, None)
    tensors = _tensors(model, landing.variables(model, config, target_hidden=worker.BASE["target.hidden_size"],
                                                target_vocab=worker.BASE["target.vocab_size"]))
    assert tensors is not None
    config["dflash_config"] = {**config["dflash_config"], "lilicorr_candidate_topk": topk}
    rank = tensors["lilicorr.rank_embedding"]
    tensors["lilicorr.rank_embedding"] = (*rank[:3], topk, *rank[4:])
    return {"id": case_id, "architecture": "LiLiCorrDraftModel", "config": config,
            "tensors": {n: list(s) for n, s in tensors.items()}, "target_hidden": worker.BASE["target.hidden_size"],
            "target_vocab": worker.BASE["target.vocab_size"], "bare": False}


@pytest.mark.parametrize("source", sources("sglang"))
@pytest.mark.parametrize("release", ("0.5.23", "0.5.21"))
def test_a_key_whose_alternate_sample_was_refused_leaves_its_constants_unjudged(tmp_path: Path, release: str,
                                                                               source: str) -> None:
    """Issue 40, Why 3: LiLiCorr's `lilicorr_candidate_topk` (sampled 2; its alternate 5 refused: a power of two is
    required) at 4, a correct draft: no false DSP361 against the sampled constant."""
    cases = [_lilicorr_case(release, f"lilicorr--topk-{k}", k) for k in (2, 4)]
    observed = observations("sglang-whole-refused", "sglang", release, cases, source,
                            lambda: _observe(release, cases))
    for case in cases:
        folder = tmp_path / case["id"]
        folder.mkdir()
        (folder / "config.json").write_text(json.dumps(case["config"]))
        write_safetensors(folder / "model.safetensors",
                          {n: np.zeros(s, np.float32) for n, s in case["tensors"].items()})
        (verdict,) = analyze(local_source(folder), target=TargetVocab(case["target_vocab"], "test"),
                             runtimes=[RuntimeVersion("sglang", release)]).verdicts
        seen = observed[case["id"]]
        assert seen["error"] is None and not seen["partly"], seen  # the release loads it
        assert verdict.loads and "DSP361" not in {i.code for i in verdict.silent}, verdict
