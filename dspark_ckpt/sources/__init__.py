"""Checkpoint sources: I/O adapters behind one Protocol (local folder, single file, Hub repo)."""

from dspark_ckpt.sources.base import CheckpointSource, PathStatus

__all__ = ["CheckpointSource", "PathStatus"]
