"""Record layouts/*.json from checkpoints the producers' own released code writes (a tool, not a test).

Run once where PyPI is reachable (the layouts in layouts/ were made exactly so):

    python3.11 -m venv /tmp/prodvenv    # with torch 2.13 (CPU) importable in it
    /tmp/prodvenv/bin/pip install transformers==5.15.0 pydantic pydantic-settings loguru click psutil
    /tmp/prodvenv/bin/pip install --no-deps speculators==0.9.0 specforge==0.2.0 dflash==0.1.0
    /tmp/prodvenv/bin/python tests/producers/record_layouts.py /tmp/producers-out tests/producers/layouts

Each producer runs its public save path on tiny sizes (T = 96, H = 16, r = 4, D = 40 when pruned): speculators
0.9.0 `<Model>.from_training_args` then what `SingleGPUCheckpointer.save_checkpoint` does (bf16 state dict,
save_pretrained, patch_config_dtype), and `convert_model`; SpecForge 0.2.0 `export_to_hf` / `export_to_sglang` on a
training_state.pt; z-lab dflash 0.1.0 `save_pretrained`. Packages they import at module level but never use on
these paths (openai, datasets, torchvision, wandb, ...) are stubbed. Nothing of the producers is copied here.
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import importlib.util
import json
import shutil
import struct
import sys
import types
from pathlib import Path
from typing import Any

T, H, D = 96, 16, 40
_STUBBED = {"openai", "datasets", "torchvision", "torchaudio", "wandb", "tensorboard", "aiohttp", "httpx",
            "hs_connectors"}


class _Stub(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Any import under a stubbed package yields a module whose attributes are inert classes."""

    def find_spec(self, name: str, path: Any, target: Any = None) -> importlib.machinery.ModuleSpec | None:
        return importlib.machinery.ModuleSpec(name, self, is_package=True) if name.split(".")[0] in _STUBBED else None

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> types.ModuleType:
        module = types.ModuleType(spec.name)
        module.__path__ = []
        module.__getattr__ = lambda attr: type(attr, (), {"__init__": lambda self, *a, **k: None})  # type: ignore
        return module

    def exec_module(self, module: types.ModuleType) -> None:
        return None


def _install_stubs() -> None:
    for name in sorted(_STUBBED):
        if importlib.util.find_spec(name) is not None:
            _STUBBED.discard(name)  # installed for real: use it
    sys.meta_path.insert(0, _Stub())


def _verifier(root: Path) -> str:
    import torch
    from safetensors.torch import save_file
    from transformers import Qwen3Config

    root.mkdir(parents=True, exist_ok=True)
    cfg = Qwen3Config(vocab_size=T, hidden_size=H, intermediate_size=32, num_hidden_layers=8, num_attention_heads=2,
                      num_key_value_heads=1, head_dim=8, max_position_embeddings=128)
    cfg.architectures = ["Qwen3ForCausalLM"]
    cfg.save_pretrained(root)
    g = torch.Generator().manual_seed(0)
    save_file({"model.embed_tokens.weight": torch.randn(T, H, generator=g), "lm_head.weight": torch.randn(T, H, generator=g),
               "model.norm.weight": torch.ones(H)}, str(root / "model.safetensors"))
    return str(root)


def _mapping(d: int) -> tuple[Any, Any]:
    import torch

    ids = torch.sort(torch.randperm(T, generator=torch.Generator().manual_seed(1))[:d]).values
    t2d = torch.zeros(T, dtype=torch.bool)
    t2d[ids] = True
    return t2d, ids - torch.arange(d)


def speculators(out: Path, verifier: str) -> None:
    import torch
    from speculators.models.dflash import DFlashDraftModel
    from speculators.models.dflash2 import DFlash2DraftModel
    from speculators.models.dspark import DSparkDraftModel
    from speculators.models.eagle3 import Eagle3DraftModel
    from speculators.models.peagle import PEagleDraftModel
    from speculators.train.checkpointer import convert_float_dtype, patch_config_dtype
    from speculators.train.cli import create_transformer_layer_config

    common = {"verifier_name_or_path": verifier, "mask_token_id": T - 1, "block_size": 4}
    runs = [("dspark-qwen3", DSparkDraftModel, "qwen3", {"markov_rank": 4}, (D, T)),
            ("dflash-qwen3", DFlashDraftModel, "qwen3", {}, (D,)),
            ("dflash2-qwen3", DFlash2DraftModel, "qwen3", {"conv_group_size": 4, "selector_rank": 4,
                                                          "selector_top_k": 2}, (T,)),
            ("eagle3-qwen3", Eagle3DraftModel, "qwen3", {"norm_before_residual": True, "ttt_steps": 3}, (D,)),
            ("eagle3-llama", Eagle3DraftModel, "llama", {"norm_before_residual": True, "ttt_steps": 3}, (D,)),
            ("peagle-qwen3", PEagleDraftModel, "qwen3", {}, (D,))]
    for name, cls, arch, extra, sizes in runs:
        for d in sizes:
            t2d, d2t = _mapping(d) if d < T else (None, None)
            layer = create_transformer_layer_config(verifier, 1, arch, None, 0, [0])
            model = cls.from_training_args(layer, t2d=t2d, d2t=d2t, draft_vocab_size=d, **common, **extra)
            folder = out / f"{name}-d{d}"
            model.save_pretrained(folder, state_dict=convert_float_dtype(model.state_dict(), torch.bfloat16))
            patch_config_dtype(folder / "config.json", torch.bfloat16)


def dflash(out: Path) -> None:
    import torch
    from dflash.model import DFlash2DraftModel, DFlashDraftModel
    from transformers import Qwen3Config

    for cls, extra in ((DFlash2DraftModel, {"conv_group_size": 4, "conv_kernel_size": 2, "selector_rank": 4,
                                            "selector_top_k": 2}), (DFlashDraftModel, {})):
        cfg = Qwen3Config(vocab_size=T, hidden_size=H, intermediate_size=32, num_hidden_layers=1,
                          num_attention_heads=2, num_key_value_heads=1, head_dim=8, max_position_embeddings=128)
        cfg.num_target_layers = 8
        cfg.dflash_config = {"block_size": 4, "mask_token_id": T - 1, "target_layer_ids": [1, 3, 5], **extra}
        cfg.architectures = [cls.__name__]
        cls(cfg).to(torch.bfloat16).save_pretrained(out / cls.__name__)


_SPECFORGE_BASE = {
    "architectures": ["DSparkDraftModel"], "attention_bias": False, "attention_dropout": 0.0,
    "auto_map": {"AutoModel": "dspark.DSparkDraftModel"}, "block_size": 4, "dtype": "bfloat16", "head_dim": 8,
    "hidden_act": "silu", "hidden_size": H, "initializer_range": 0.02, "intermediate_size": 32,
    "layer_types": ["full_attention"], "max_position_embeddings": 128, "max_window_layers": 1, "model_type": "qwen3",
    "num_attention_heads": 2, "num_hidden_layers": 1, "num_key_value_heads": 1, "num_target_layers": 8,
    "rms_norm_eps": 1e-6, "rope_scaling": None, "rope_theta": 1000000, "sliding_window": None,
    "tie_word_embeddings": False, "use_cache": True, "use_sliding_window": False,
}
_DSPARK_KEYS = {"confidence_head_alpha": 1.0, "confidence_head_with_markov": True, "enable_confidence_head": True,
                "markov_head_type": "vanilla", "markov_rank": 4}


def specforge(out: Path) -> None:
    """configs/qwen3-8b-dspark.json and both configs/inkling-dspark.json versions, shrunk; plus an EAGLE-3."""
    import torch
    from specforge.export.to_hf import export_to_hf
    from specforge.export.to_sglang import export_to_sglang
    from specforge.modeling.auto import AutoDraftModel, AutoDraftModelConfig

    nested = {"attention_mode": "gqa", "projector_type": "dspark", "target_layer_ids": [1, 3, 5]}
    cases = {
        "qwen3-nested": {**_SPECFORGE_BASE, "vocab_size": T, "dflash_config": {**nested, "mask_token_id": T - 1,
                                                                             **_DSPARK_KEYS}},
        "qwen3-declared-d": {**_SPECFORGE_BASE, "vocab_size": T, "draft_vocab_size": 32,
                             "dflash_config": {**nested, "mask_token_id": T - 1, **_DSPARK_KEYS}},
        "inkling-dspark-config": {**_SPECFORGE_BASE, "vocab_size": 104, "dflash_config": {**nested, "mask_token_id": 100},
                                  "dspark_config": _DSPARK_KEYS},
        "inkling-padded": {**_SPECFORGE_BASE, "vocab_size": 104, "dflash_config": {**nested, "mask_token_id": 100,
                                                                                  **_DSPARK_KEYS}},
    }
    for name, cfg in cases.items():
        folder = out / name
        folder.mkdir(parents=True)
        (folder / "draft.json").write_text(json.dumps(cfg))
        model = AutoDraftModel.from_config(AutoDraftModelConfig.from_file(str(folder / "draft.json")),
                                           torch_dtype=torch.bfloat16)
        torch.save({"draft_state_dict": model.state_dict(), "strategy": "dspark"}, folder / "training_state.pt")
        export_to_hf(str(folder / "training_state.pt"), str(folder / "draft.json"), str(folder / "export"))
    eagle = {"architectures": ["LlamaForCausalLMEagle3"], "model_type": "llama", "hidden_size": H,
             "intermediate_size": 32, "num_attention_heads": 2, "num_key_value_heads": 1, "head_dim": 8,
             "num_hidden_layers": 1, "max_position_embeddings": 128, "rms_norm_eps": 1e-6, "vocab_size": T,
             "draft_vocab_size": D, "hidden_act": "silu", "tie_word_embeddings": False, "torch_dtype": "bfloat16"}
    folder = out / "eagle3"
    folder.mkdir(parents=True)
    (folder / "draft.json").write_text(json.dumps(eagle))
    model = AutoDraftModel.from_config(AutoDraftModelConfig.from_file(str(folder / "draft.json")),
                                       torch_dtype=torch.bfloat16)
    t2d, d2t = _mapping(D)
    torch.save({"t2d": t2d, "d2t": d2t}, folder / "vocab.pt")
    state = {k: v for k, v in model.state_dict().items() if "embed" not in k}  # the trainer's checkpoint filter
    torch.save({"draft_state_dict": state, "strategy": "eagle3"}, folder / "training_state.pt")
    export_to_sglang(str(folder / "training_state.pt"), str(folder / "draft.json"), str(folder / "export"),
                     vocab_mapping_path=str(folder / "vocab.pt"))


def convert(out: Path, verifier: str) -> None:
    from speculators.convert.entrypoints import convert_model

    convert_model(str(out / "specforge/eagle3/export"), verifier, "eagle3",
                  output_path=str(out / "convert/eagle3"), norm_before_residual=True)
    convert_model(str(out / "dflash/DFlashDraftModel"), verifier, "dflash", output_path=str(out / "convert/dflash"))


CASES = {
    "speculators-0.9.0-dspark-pruned": ("speculators/dspark-qwen3-d40", "DSparkDraftModel.from_training_args"),
    "speculators-0.9.0-dspark-equal": ("speculators/dspark-qwen3-d96", "DSparkDraftModel.from_training_args"),
    "speculators-0.9.0-dflash-pruned": ("speculators/dflash-qwen3-d40", "DFlashDraftModel.from_training_args"),
    "speculators-0.9.0-dflash2-equal": ("speculators/dflash2-qwen3-d96", "DFlash2DraftModel.from_training_args"),
    "speculators-0.9.0-eagle3-qwen3-pruned": ("speculators/eagle3-qwen3-d40", "Eagle3DraftModel (qwen3 layer)"),
    "speculators-0.9.0-eagle3-llama-pruned": ("speculators/eagle3-llama-d40", "Eagle3DraftModel (llama layer)"),
    "speculators-0.9.0-peagle-qwen3-pruned": ("speculators/peagle-qwen3-d40", "PEagleDraftModel (qwen3 layer)"),
    "speculators-0.9.0-convert-eagle3": ("convert/eagle3", "convert_model eagle3 of the SpecForge EAGLE-3 export"),
    "speculators-0.9.0-convert-dflash": ("convert/dflash", "convert_model dflash of the z-lab DFlashDraftModel"),
    "specforge-0.2.0-dspark-nested": ("specforge/qwen3-nested/export", "export_to_hf, keys in dflash_config"),
    "specforge-0.2.0-dspark-declared-d": ("specforge/qwen3-declared-d/export", "export_to_hf, draft_vocab_size 32"),
    "specforge-0.2.0-inkling-dspark-config": ("specforge/inkling-dspark-config/export",
                                              "export_to_hf, keys in dspark_config"),
    "specforge-0.2.0-inkling-padded": ("specforge/inkling-padded/export", "export_to_hf, vocab_size 104 > T"),
    "specforge-0.2.0-eagle3": ("specforge/eagle3/export", "export_to_sglang of a LlamaForCausalLMEagle3"),
    "dflash-0.1.0-dflash2": ("dflash/DFlash2DraftModel", "DFlash2DraftModel.save_pretrained"),
    "dflash-0.1.0-dflash": ("dflash/DFlashDraftModel", "DFlashDraftModel.save_pretrained"),
}


def _header(path: Path) -> dict[str, Any]:
    raw = path.read_bytes()
    size = struct.unpack("<Q", raw[:8])[0]
    entries = json.loads(raw[8:8 + size])
    meta = entries.pop("__metadata__", None)
    return {"metadata": meta, "tensors": {k: [v["dtype"], v["shape"]] for k, v in sorted(entries.items())}}


def record(out: Path, dest: Path) -> None:
    for name, (rel, how) in CASES.items():
        folder = out / rel
        cfg = json.loads((folder / "config.json").read_text())
        verifier = (cfg.get("speculators_config") or {}).get("verifier")
        if isinstance(verifier, dict):
            verifier["name_or_path"] = "Qwen/Qwen3-8B"  # the run used a local tiny verifier folder
        doc = {"producer": f"{name.split('-')[0]} {name.split('-')[1]}: {how}",
               "files": sorted(p.name for p in folder.iterdir()), "config": cfg,
               "shards": {p.name: _header(p) for p in sorted(folder.glob("*.safetensors"))}}
        (dest / f"{name}.json").write_text(json.dumps(doc, indent=1, sort_keys=True) + "\n")


def main(out: Path, dest: Path) -> None:
    _install_stubs()
    shutil.rmtree(out, ignore_errors=True)
    verifier = _verifier(out / "verifier")
    speculators(out / "speculators", verifier)
    dflash(out / "dflash")
    specforge(out / "specforge")
    convert(out, verifier)
    record(out, dest)


if __name__ == "__main__":
    main(Path(sys.argv[1]), Path(sys.argv[2]))
