"""What a plan records of each file it was made from (binding.py binds it; actions.FixPlan carries it)."""

from __future__ import annotations

from dataclasses import dataclass

Identity = tuple[int, int, int, int]  # (device, inode, size, mtime_ns)


@dataclass(frozen=True, slots=True)
class SourceStamp:
    """What one file was when planning read it: `identity` for a shard (fix copies byte ranges out of it), None for
    a JSON file (bound by content: fix rewrites it from its text); `digest` is the sha256 of the shard's header
    (8 + N bytes) or of the whole JSON file; "" with no identity: the file was absent and must stay so."""

    name: str
    identity: Identity | None
    digest: str

    @property
    def absent(self) -> bool:
        return self.identity is None and not self.digest
