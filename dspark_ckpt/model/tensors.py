"""The one tensor record every stage shares: where a tensor's data lies, as the header says."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class TensorInfo:
    name: str
    dtype: str
    shape: tuple[int, ...]
    file: str
    begin: int  # absolute byte offset of the data in the file
    nbytes: int
