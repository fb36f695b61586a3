"""The Hub's model_info answer, every field distrusted: sizes and LFS sha256 digests per file."""

from __future__ import annotations

import json

from dspark_ckpt.sources.hub_listing import Listing, parse_listing

SHA = "a" * 40
DIGEST = "0123456789abcdef" * 4


def listing(*siblings: object) -> Listing:
    result = parse_listing(json.dumps({"sha": SHA, "siblings": list(siblings)}).encode())
    assert isinstance(result, Listing), result
    return result


def test_an_lfs_file_carries_its_listed_sha256_lowercased() -> None:
    got = listing({"rfilename": "model.safetensors", "lfs": {"size": 10, "sha256": DIGEST.upper()}},
                  {"rfilename": "config.json", "size": 2})
    assert got.sizes == {"model.safetensors": 10, "config.json": 2}
    assert got.sha256 == {"model.safetensors": DIGEST} and got.invalid == ()


def test_a_digest_that_is_not_64_hex_digits_is_dropped_and_said() -> None:
    for bad in ("../../etc/passwd", DIGEST[:-1], 12, DIGEST + "0", "g" * 64):
        got = listing({"rfilename": "model.safetensors", "lfs": {"size": 10, "sha256": bad}})
        assert got.sha256 == {} and got.sizes == {"model.safetensors": 10}
        assert got.invalid == ("'model.safetensors' has an LFS sha256 that is not 64 hex digits",)
