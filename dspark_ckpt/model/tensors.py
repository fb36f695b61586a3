"""The one tensor record every stage shares: where a tensor's data lies, as the header says."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class TensorInfo:
    """One checkpoint tensor as its shard's header states it, with its absolute place in that file."""

    name: str
    dtype: str
    shape: tuple[int, ...]
    file: str
    begin: int  # absolute byte offset of the data in the file
    nbytes: int
