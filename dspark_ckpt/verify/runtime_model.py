"""The vocab-side parameter set a runtime's `__init__` creates for a draft, and the weight loaders that fill it."""

from __future__ import annotations

from dataclasses import dataclass

import torch

from dspark_ckpt.model.codes import FindingCode
from dspark_ckpt.model.draft_config import DraftConfig
from dspark_ckpt.model.families import traits
from dspark_ckpt.model.target import TargetVocab
from dspark_ckpt.runtimes.contracts import Contract

VOCAB_PADDING = 64  # vLLM's DEFAULT_VOCAB_PADDING_SIZE: VocabParallelEmbedding rounds its rows up to this
_DTYPES = {"bfloat16": torch.bfloat16, "float16": torch.float16, "half": torch.float16}


@dataclass(frozen=True, slots=True)
class Dims:
    """The sizes the runtime reads from the draft config and the target."""

    draft_vocab: int  # D
    vocab: int  # V
    target_vocab: int  # T
    hidden: int  # H
    markov_rank: int | None
    confidence_width: int | None  # None: no confidence head is built
    dtype: torch.dtype
    quantized: bool  # config.json declares a quantization_config: extra tensors beside `.weight` are its params
    target_omni: bool = False  # a Qwen3-Omni target: vLLM 0.29+ validates the draft's architecture against it


def model_dtype(cfg: DraftConfig) -> torch.dtype:
    """vLLM's dtype "auto": the config's torch_dtype, with float32 (or none) served as bfloat16 on CUDA."""
    return _DTYPES.get(cfg.torch_dtype, torch.bfloat16) if cfg.torch_dtype else torch.bfloat16


def dims_for(cfg: DraftConfig, target: TargetVocab) -> Dims:
    """The sizes from the one parsed config (the same DraftConfig check evaluates): never a second reading."""
    family = cfg.family
    assert family is not None and cfg.draft_vocab_size is not None and cfg.vocab_size is not None
    assert cfg.hidden_size is not None
    built = traits(family)
    rank = cfg.markov_rank if built.markov_head else None
    width = None
    if built.confidence_head and cfg.enable_confidence_head:
        width = cfg.hidden_size + (rank or 0) if cfg.confidence_head_with_markov else cfg.hidden_size
    return Dims(cfg.draft_vocab_size, cfg.vocab_size, target.size, cfg.hidden_size, rank, width, model_dtype(cfg),
                cfg.quantized, target.omni)


@dataclass(frozen=True, slots=True)
class ParamSpec:
    """One vocab parameter a runtime's class builds: its name, shape, dtype and weight loader."""

    name: str  # the runtime's parameter name after its renaming (`model.` prefix, d2t -> draft_id_to_target_id)
    shape: tuple[int, ...]
    dtype: torch.dtype
    loader: str  # vocab (VocabParallelEmbedding/ParallelLMHead) | default (default_weight_loader) | replicated
    org_rows: int | None  # the row count VocabParallelEmbedding asserts
    code: FindingCode  # the finding code of a failed load into this parameter


def pad_vocab(rows: int) -> int:
    return -(-rows // VOCAB_PADDING) * VOCAB_PADDING


def _vocab(name: str, rows: int, width: int, dtype: torch.dtype, code: FindingCode) -> ParamSpec:
    return ParamSpec(name, (pad_vocab(rows), width), dtype, "vocab", rows, code)


def param_specs(contract: Contract, dims: Dims) -> dict[str, ParamSpec]:
    """What `__init__` creates, vocab side only (the backbone layers are not modelled)."""
    d, v, t, h = dims.draft_vocab, dims.vocab, dims.target_vocab, dims.hidden
    head_rows = d if contract.lm_head_rows == "D" else v
    specs = [_vocab("lm_head.weight", head_rows, h, dims.dtype, "DSP320"),
             _vocab("model.embed_tokens.weight", v, h, dims.dtype, "DSP321")]
    if contract.d2t_param.holds(d, t):
        specs.append(ParamSpec("draft_id_to_target_id", (d,), torch.long, "default", None, "DSP324"))
    if dims.markov_rank is not None:
        r = dims.markov_rank
        w2_rows = d if contract.markov_w2_rows == "D" else v
        # markov_w2 is a ParallelLMHead (a bare row assert, as lm_head's); markov_w1 an nn.Embedding loaded by
        # default_weight_loader in every release (qwen3_dspark.py L56 @ 0.27.0 .. L71 @ 0.33.0), an exact-shape assert.
        w1 = (ParamSpec("model.markov_head.markov_w1.weight", (v, r), dims.dtype, "default", None, "DSP322")
              if contract.markov_w1_exact else _vocab("model.markov_head.markov_w1.weight", v, r, dims.dtype, "DSP322"))
        specs += [w1,
                  _vocab("model.markov_head.markov_w2.weight", w2_rows, r, dims.dtype, "DSP323")]
    if dims.confidence_width is not None:  # ReplicatedLinear(..., params_dtype=torch.float32, bias=True)
        specs += [ParamSpec("model.confidence_head.proj.weight", (1, dims.confidence_width), torch.float32,
                            "replicated", None, "DSP328"),
                  ParamSpec("model.confidence_head.proj.bias", (1,), torch.float32, "replicated", None, "DSP328")]
    return {s.name: s for s in specs}


def _vocab_load(spec: ParamSpec, loaded: torch.Tensor, device: torch.device) -> torch.Tensor:
    """VocabParallelEmbedding.weight_loader at TP=1: a bare row-count assert, copy, zero the padding rows."""
    if loaded.dim() == 0 or loaded.shape[0] != spec.org_rows:
        raise AssertionError()
    if tuple(loaded.shape) == spec.shape and loaded.dtype == spec.dtype and loaded.device == device:
        return loaded  # bit-identical to copy_ into a fresh parameter, without a second multi-GB buffer
    param = torch.empty(spec.shape, dtype=spec.dtype, device=device)
    param[: loaded.shape[0]].copy_(loaded)  # a hidden-size mismatch raises torch's own RuntimeError here
    param[loaded.shape[0]:].fill_(0)
    return param


def _default_load(spec: ParamSpec, loaded: torch.Tensor, device: torch.device) -> torch.Tensor:
    """default_weight_loader: scalar fill, else an exact size assert and copy_."""
    param = torch.empty(spec.shape, dtype=spec.dtype, device=device)  # every path below overwrites it
    if param.numel() == 1 and loaded.numel() == 1:
        return param.fill_(loaded.item())
    if param.size() != loaded.size():
        raise AssertionError(f"Attempted to load weight ({loaded.size()}) into parameter ({param.size()})")
    return param.copy_(loaded)


def _replicated_load(spec: ParamSpec, loaded: torch.Tensor, device: torch.device) -> torch.Tensor:
    """ReplicatedLinear.weight_loader: 0-d weights become [1], then an exact size assert."""
    if loaded.dim() == 0:
        loaded = loaded.reshape(1)
    param = torch.empty(spec.shape, dtype=spec.dtype, device=device)
    if param.size() != loaded.size():
        raise AssertionError(f"Tried to load weights of size {loaded.size()} to a parameter of size {param.size()}")
    return param.copy_(loaded)


def _sglang_vocab_load(spec: ParamSpec, loaded: torch.Tensor, device: torch.device) -> torch.Tensor:
    """SGLang's VocabParallelEmbedding.weight_loader: vLLM's, but the row assert carries an f-string message."""
    if loaded.dim() == 0 or loaded.shape[0] != spec.org_rows:
        got = loaded.shape[0] if loaded.dim() else None
        raise AssertionError(f"self.org_vocab_size={spec.org_rows} self.use_presharded_weights=False "
                             f"loaded_weight.shape[output_dim]={got}")
    return _vocab_load(spec, loaded, device)


_LOADERS = {"vocab": _vocab_load, "default": _default_load, "replicated": _replicated_load,
            "sglang_vocab": _sglang_vocab_load}


class ParamStore:
    """Loads weights into parameters; identical (parameter, weight) loads across runtime versions are done once."""

    def __init__(self, device: torch.device) -> None:
        self.device = device
        self._done: dict[tuple[ParamSpec, str], torch.Tensor] = {}

    def load(self, spec: ParamSpec, source_name: str, loaded: torch.Tensor) -> torch.Tensor:
        key = (spec, source_name)
        if key not in self._done:
            self._done[key] = _LOADERS[spec.loader](spec, loaded, self.device)
        return self._done[key]
