"""The generator's recipe renames (verify/release_worker.py RENAMES): the Medusa recipe feeds each layout the probe
builds under FasterDecoding's names too (medusa/model/medusa_model.py: per head an nn.Sequential of ResBlocks, then
its lm_head; vLLM renames them from 0.25.0, medusa.py _remap_old_checkpoint_key). On a stand-in with Medusa's module
tree (blocks.{h}.layers.{l}, lm_heads.{h}), built with torch."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")

from dspark_ckpt.verify import release_worker

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tools"))
from release_model import RECIPES


class Block(torch.nn.Module):
    def __init__(self, layers: int) -> None:
        super().__init__()
        self.layers = torch.nn.ModuleList([torch.nn.Linear(4, 4, bias=True) for _ in range(layers)])


class MedusaLike(torch.nn.Module):
    def __init__(self, heads: int, layers: int) -> None:
        super().__init__()
        self.blocks = torch.nn.ModuleList([Block(layers) for _ in range(heads)])
        self.lm_heads = torch.nn.ModuleList([torch.nn.Linear(4, 8, bias=False) for _ in range(heads)])


@pytest.mark.parametrize(("heads", "layers"), [(1, 1), (2, 3)])
def test_the_medusa_recipe_feeds_faster_decoding_s_names(heads: int, layers: int) -> None:
    found = release_worker.renamed_layouts(MedusaLike(heads, layers), RECIPES["Medusa"])
    renamed = {k: v for k, v in found.items() if k.startswith("fasterdecoding:")}
    assert renamed, sorted(found)
    names = {n: p for layout in renamed.values() for n, (p, _, _) in layout.items()}
    for h in range(heads):
        assert names[f"{h}.{layers}.weight"] == f"lm_heads.{h}.weight"  # the head's last module: its lm_head
        for i in range(layers):
            assert names[f"{h}.{i}.linear.weight"] == f"blocks.{h}.layers.{i}.weight"
            assert names[f"{h}.{i}.linear.bias"] == f"blocks.{h}.layers.{i}.bias"
    assert not any(n.startswith(("blocks.", "lm_heads.")) for n in names)


def test_a_recipe_without_renames_feeds_the_layouts_alone() -> None:
    model = MedusaLike(1, 1)
    assert release_worker.renamed_layouts(model, {}) == release_worker.layouts(model)
    assert release_worker.RENAMES not in release_worker.config_for(RECIPES["Medusa"], {"hidden_size": 16})
