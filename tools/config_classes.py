"""Maintainer command: write dspark_ckpt/runtimes/release_data/config_classes.json from the generated release records.

Each generated record (runtimes/release_data/<runtime>-<release>/<Architecture>.json, tools/release_model.py and
tools/sglang_release_model.py) holds `config`: the model_type its samples were built with and the config class that
model_type picked in that release (transformers' AutoConfig, or the runtime's own registered class). This command
gathers them, per runtime, into one small index that check reads at start-up instead of every record (~630 files for
vLLM): model_type -> class. A model_type whose class differs between two releases of a runtime is an error (none
does today; the index would then have to be per release). Run it after regenerating any release's records;
tests/unit/test_config_classes.py fails until the index is what the records say.

    python tools/config_classes.py           # write the index
    python tools/config_classes.py --check   # exit 1 when the committed index differs from the records
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from dspark_ckpt.runtimes.config_classes import INDEX
from dspark_ckpt.runtimes.release_model import generated_releases, release_record
from dspark_ckpt.runtimes.release_store import behaviour

RUNTIMES = ("vllm", "sglang")


def sampled_classes() -> dict[str, dict[str, str]]:
    """runtime -> model_type -> config class, as every generated record of the runtime says (sorted)."""
    found: dict[str, dict[str, str]] = {}
    for runtime in RUNTIMES:
        seen: dict[str, tuple[str, str]] = {}  # model_type -> (class, the first record naming it)
        for release in generated_releases(runtime):
            record = release_record(runtime, release)
            for architecture, holder in (record or {}).get("architectures", {}).items():
                doc = behaviour(runtime, holder, architecture) if isinstance(holder, str) else None
                config = doc.get("config") if doc is not None else None
                if not isinstance(config, dict) or not config.get("class"):
                    continue
                model_type, cls = str(config["model_type"]), str(config["class"])
                where = f"{runtime}-{holder}/{architecture}.json"
                if seen.setdefault(model_type, (cls, where))[0] != cls:
                    raise ValueError(f"{runtime}: model_type {model_type!r} picks {seen[model_type][0]} in "
                                     f"{seen[model_type][1]} but {cls} in {where}")
        found[runtime] = {model_type: cls for model_type, (cls, _) in sorted(seen.items())}
    return found


def text(classes: dict[str, dict[str, str]]) -> str:
    return json.dumps({"generated_by": "tools/config_classes.py", **classes}, indent=1, sort_keys=False) + "\n"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="compare with the committed index instead of writing")
    args = parser.parse_args(argv)
    wanted = text(sampled_classes())
    if args.check:
        same = INDEX.is_file() and INDEX.read_text(encoding="utf-8") == wanted
        print("up to date" if same else f"{INDEX} differs from the records: rerun without --check")
        return 0 if same else 1
    INDEX.write_text(wanted, encoding="utf-8")
    print(f"wrote {INDEX}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
