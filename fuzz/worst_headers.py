"""Measure the time and peak memory of parse_header on hostile ~99 MB headers, each in a fresh subprocess."""

from __future__ import annotations

import argparse
import json
import resource
import struct
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

# Each shape fills the header with a different kind of JSON value; the repetition unit sets the values per byte.
SHAPES: dict[str, tuple[bytes, bytes, bytes]] = {
    "one-string": (b'{"__metadata__":{"pad":"', b"x", b'"}}'),
    "open-brackets": (b"", b"[", b""),
    "empty-lists": (b'{"__metadata__":{"a":[', b"[],", b"[]]}}"),
    "nested-lists-4": (b'{"__metadata__":{"a":[', b"[[[[]]]],", b"[]]}}"),
    "shape-ints": (b'{"w":{"dtype":"F32","data_offsets":[0,4],"shape":[', b"1234567,", b"1]}}"),
    "tiny-ints": (b'{"w":{"dtype":"F32","data_offsets":[0,4],"shape":[', b"1,", b"1]}}"),
}


def body(shape: str, size: int) -> bytes:
    if shape == "honest-entries":
        parts, total, i = [], 2, 0
        while total < size - 80:
            part = b'"t%d":{"dtype":"U8","shape":[1],"data_offsets":[%d,%d]},' % (i, i, i + 1)
            parts.append(part)
            total += len(part)
            i += 1
        return b"{" + b"".join(parts)[:-1] + b"}"
    head, unit, tail = SHAPES[shape]
    return head + unit * ((size - len(head) - len(tail)) // len(unit)) + tail


def measure(shape: str, size: int) -> dict[str, object]:
    sys.path.insert(0, str(ROOT))
    from dspark_ckpt.formats.safetensors_header import parse_header

    raw = body(shape, size)
    prefix = struct.pack("<Q", len(raw)) + raw
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    start = time.perf_counter()
    result = parse_header(prefix, len(prefix))
    seconds = time.perf_counter() - start
    grown = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before
    return {"shape": shape, "header_bytes": len(raw), "seconds": round(seconds, 2),
            "peak_rss_growth_mb": round(grown / 1024), "rss_per_header_byte": round(grown * 1024 / len(raw), 1),
            "codes": sorted({p.code for p in result.problems})}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--size", type=int, default=99_000_000)
    parser.add_argument("--one", help=argparse.SUPPRESS)  # the child process measures one shape
    args = parser.parse_args()
    if args.one:
        print(json.dumps(measure(args.one, args.size)))
        return
    for shape in [*SHAPES, "honest-entries"]:
        out = subprocess.run([sys.executable, __file__, "--one", shape, "--size", str(args.size)],
                             capture_output=True, text=True, check=True)
        print(out.stdout.strip(), flush=True)


if __name__ == "__main__":
    main()
