"""Pure: build a safetensors header for tensors laid out back to back (the inverse of safetensors_header)."""

from __future__ import annotations

import json
import struct
from collections.abc import Sequence
from dataclasses import dataclass

from dspark_ckpt.formats.safetensors_header import DTYPE_BITS


@dataclass(frozen=True, slots=True)
class TensorSpec:
    """A tensor to write: name, dtype and shape (its data comes separately)."""

    name: str
    dtype: str
    shape: tuple[int, ...]

    @property
    def nbytes(self) -> int:
        numel = 1
        for dim in self.shape:
            numel *= dim
        return numel * DTYPE_BITS[self.dtype] // 8


def encode_header(tensors: Sequence[TensorSpec], metadata: dict[str, str] | None = None) -> bytes:
    """8-byte length + JSON header padded with spaces to a multiple of 8, as the reference writer does."""
    doc: dict[str, object] = {}
    if metadata:
        doc["__metadata__"] = dict(metadata)
    offset = 0
    for t in tensors:
        doc[t.name] = {"dtype": t.dtype, "shape": list(t.shape), "data_offsets": [offset, offset + t.nbytes]}
        offset += t.nbytes
    body = json.dumps(doc, separators=(",", ":")).encode()
    body += b" " * (-len(body) % 8)
    return struct.pack("<Q", len(body)) + body
