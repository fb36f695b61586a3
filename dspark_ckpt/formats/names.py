"""The file names and bounds every reader shares, and how a named file was found: constants, no I/O."""

from __future__ import annotations

from enum import StrEnum

CONFIG_NAME = "config.json"
INDEX_NAME = "model.safetensors.index.json"
MAX_JSON_BYTES = 64 * 2**20  # config.json and the index are kilobytes; a larger one is not read into memory


class PathStatus(StrEnum):
    OK = "ok"
    MISSING = "missing"
    ESCAPES = "escapes"  # absolute, `..`, or a symlink that leaves the checkpoint
    NOT_A_FILE = "not-a-file"
    UNREADABLE = "unreadable"
