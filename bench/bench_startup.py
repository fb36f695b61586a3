"""Start-up cost of the CLI as ratios measured in one run: `check` of a small local draft against a bare-Python read
of the same headers, and `--version`/`--help` against `python -c "import typer, rich"`.

Every side is a real subprocess of this interpreter, run --repeat times, interleaved (round-robin, so a noisy
neighbour slows every side alike); the figures are medians of the child's own CPU time (user + system, from
wait4) and of its wall time. Goals: check <= 4x bare read, --version and --help <= 2x `import typer, rich`.

    python bench/bench_startup.py                       # the shipped example, 21 runs per side
    python bench/bench_startup.py --repeat 41 --json /tmp/bench-startup.json
    python bench/bench_startup.py --checkpoint DIR --target DIR

Exit status 1 when a goal is missed. Not part of the test suite (a timed unit test would be flaky on a shared
machine); the import probe at the end lists which heavy packages a `check` run imported, as a cross-check.
Context lines (no goal): `import typer, rich.console, rich.table` against the bare read is the floor of any typer
CLI that prints a rich table; `check --help` against `--help` is what importing the check command costs.
Children run with bytecode writing allowed (as an installed package has its .pyc files).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "examples" / "inkling-small-dspark"
EXAMPLE_TARGET = ROOT / "examples" / "inkling-small-target"

# The naive side: what any script needs to know the same facts, with nothing but the standard library. It reads
# both config.json files and every safetensors header (through the index when there is one).
BARE_READ = r"""
import json, os, struct, sys
draft, target = sys.argv[1], sys.argv[2]
json.load(open(os.path.join(draft, "config.json"), "rb"))
json.load(open(os.path.join(target, "config.json"), "rb"))
index = os.path.join(draft, "model.safetensors.index.json")
shards = (sorted(set(json.load(open(index, "rb"))["weight_map"].values())) if os.path.exists(index)
          else sorted(n for n in os.listdir(draft) if n.endswith(".safetensors")))
for name in shards:
    with open(os.path.join(draft, name), "rb") as f:
        (n,) = struct.unpack("<Q", f.read(8))
        json.loads(f.read(n))
"""

# Run the CLI in-process once and list what it imported (a probe, not a timed side).
IMPORT_PROBE = r"""
import json, runpy, sys
out, argv = sys.argv[1], sys.argv[2:]
sys.argv = ["dspark-ckpt", *argv]
try:
    runpy.run_module("dspark_ckpt", run_name="__main__", alter_sys=True)
except SystemExit:
    pass
heavy = ("pydantic", "torch", "huggingface_hub", "numpy", "safetensors", "dspark_ckpt.repair", "importlib.metadata")
mods = sorted(sys.modules)
with open(out, "w") as f:
    json.dump({"dspark_ckpt_modules": [m for m in mods if m.split(".")[0] == "dspark_ckpt"],
               "heavy": sorted({h for h in heavy for m in mods if m == h or m.startswith(h + ".")}),
               "total_modules": len(mods)}, f)
"""


@dataclass(frozen=True, slots=True)
class Side:
    name: str
    argv: tuple[str, ...]
    ok_codes: tuple[int, ...] = (0,)


@dataclass(frozen=True, slots=True)
class Sample:
    cpu_s: float
    wall_s: float
    returncode: int


def run_once(argv: Sequence[str], env: dict[str, str]) -> Sample:
    """One child to completion; wait4 gives this child's own rusage (RUSAGE_CHILDREN would mix every child)."""
    with tempfile.TemporaryFile() as out:  # a file, not a pipe: nothing blocks while we sit in wait4
        start = time.perf_counter()
        proc = subprocess.Popen(list(argv), stdout=out, stderr=subprocess.STDOUT, env=env, cwd=ROOT)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - start
        proc.returncode = os.waitstatus_to_exitcode(status)  # so Popen does not wait again
    return Sample(usage.ru_utime + usage.ru_stime, wall, proc.returncode)


def sides(checkpoint: Path, target: Path) -> list[Side]:
    py = sys.executable
    return [
        Side("bare-read", (py, "-c", BARE_READ, str(checkpoint), str(target))),
        Side("check", (py, "-m", "dspark_ckpt", "check", str(checkpoint), "--target", str(target), "--isolated"),
             ok_codes=(0, 1)),
        Side("import-typer-rich", (py, "-c", "import typer, rich")),
        # Not a goal: what any typer CLI that prints a rich table pays before its own first module.
        Side("floor-typer-table", (py, "-c", "import typer, rich.console, rich.table")),
        Side("version", (py, "-m", "dspark_ckpt", "--version")),
        Side("help", (py, "-m", "dspark_ckpt", "--help")),
        Side("check-help", (py, "-m", "dspark_ckpt", "check", "--help")),
    ]


# (numerator, denominator, goal): the ratios the issue asks for.
GOALS = (("check", "bare-read", 4.0), ("version", "import-typer-rich", 2.0), ("help", "import-typer-rich", 2.0))
CONTEXT = (("floor-typer-table", "bare-read"), ("check", "floor-typer-table"), ("check-help", "help"))


def measure(all_sides: list[Side], repeat: int, warmup: int, env: dict[str, str]) -> dict[str, list[Sample]]:
    samples: dict[str, list[Sample]] = {s.name: [] for s in all_sides}
    for round_ in range(warmup + repeat):  # warm-up rounds fill the page cache and __pycache__; not recorded
        for side in all_sides:
            sample = run_once(side.argv, env)
            if sample.returncode not in side.ok_codes:
                raise SystemExit(f"{side.name} exited {sample.returncode}: {' '.join(side.argv)}")
            if round_ >= warmup:
                samples[side.name].append(sample)
    return samples


def probe_imports(checkpoint: Path, target: Path, env: dict[str, str]) -> dict[str, Any]:
    with tempfile.NamedTemporaryFile(suffix=".json") as out:
        subprocess.run([sys.executable, "-c", IMPORT_PROBE, out.name, "check", str(checkpoint), "--target",
                        str(target), "--isolated"], env=env, cwd=ROOT, stdout=subprocess.DEVNULL, check=False)
        found: dict[str, Any] = json.loads(Path(out.name).read_text() or "{}")
    found["dspark_ckpt_module_count"] = len(found.get("dspark_ckpt_modules", []))
    return found


def version_of(distribution: str) -> str | None:
    try:
        return metadata.version(distribution)
    except metadata.PackageNotFoundError:
        return None


def report(samples: dict[str, list[Sample]], all_sides: list[Side]) -> dict[str, Any]:
    medians = {name: {"cpu_ms": 1000 * statistics.median(s.cpu_s for s in runs),
                      "wall_ms": 1000 * statistics.median(s.wall_s for s in runs),
                      "cpu_ms_min": 1000 * min(s.cpu_s for s in runs), "runs": len(runs)}
               for name, runs in samples.items()}
    ratios = []
    for num, den, goal in GOALS:
        cpu = medians[num]["cpu_ms"] / medians[den]["cpu_ms"]
        wall = medians[num]["wall_ms"] / medians[den]["wall_ms"]
        ratios.append({"side": num, "against": den, "goal": goal, "cpu_ratio": round(cpu, 2),
                       "wall_ratio": round(wall, 2), "met": cpu <= goal and wall <= goal})
    context = [{"side": num, "against": den,
                "cpu_ratio": round(medians[num]["cpu_ms"] / medians[den]["cpu_ms"], 2),
                "wall_ratio": round(medians[num]["wall_ms"] / medians[den]["wall_ms"], 2)} for num, den in CONTEXT]
    return {"sides": {s.name: {"argv": list(s.argv), **medians[s.name]} for s in all_sides}, "ratios": ratios,
            "context": context}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--checkpoint", type=Path, default=EXAMPLE, help="a small local draft folder")
    parser.add_argument("--target", type=Path, default=EXAMPLE_TARGET, help="its target model folder")
    parser.add_argument("--repeat", type=int, default=21, help="recorded runs per side (median)")
    parser.add_argument("--warmup", type=int, default=2, help="unrecorded rounds first")
    parser.add_argument("--json", type=Path, help="write the full record here")
    args = parser.parse_args()

    env = {**os.environ, "NO_COLOR": "1"}
    env.pop("DSPARK_CKPT_CHECK_CODES", None)  # the test suite's registry check is not part of a user's run
    # An installed package has its bytecode (pip compiles it): without this, every run of a tree whose
    # __pycache__ may not be written compiles each module again, which is no start-up a user sees.
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    all_sides = sides(args.checkpoint.resolve(), args.target.resolve())
    samples = measure(all_sides, args.repeat, args.warmup, env)
    record = report(samples, all_sides)
    record["imports_of_check"] = probe_imports(args.checkpoint.resolve(), args.target.resolve(), env)
    record["environment"] = {
        "python": platform.python_version(), "executable": sys.executable, "platform": platform.platform(),
        "cpus": os.cpu_count(), "loadavg_1m": os.getloadavg()[0],
        **{name: version_of(name) for name in ("dspark-ckpt", "typer", "click", "rich", "pydantic")},
    }

    print(f"{'side':<18} {'cpu ms':>8} {'wall ms':>8}   (median of {args.repeat})")
    for name, side in record["sides"].items():
        print(f"{name:<18} {side['cpu_ms']:>8.1f} {side['wall_ms']:>8.1f}")
    print()
    for r in record["ratios"]:
        print(f"{r['side']} / {r['against']}: cpu {r['cpu_ratio']:.2f}x, wall {r['wall_ratio']:.2f}x "
              f"(goal <= {r['goal']:g}x) {'met' if r['met'] else 'MISSED'}")
    for r in record["context"]:
        print(f"  ({r['side']} / {r['against']}: cpu {r['cpu_ratio']:.2f}x, wall {r['wall_ratio']:.2f}x)")
    probe = record["imports_of_check"]
    env_ = record["environment"]
    print(f"\ncheck imported {probe['dspark_ckpt_module_count']} dspark_ckpt modules; heavy: "
          f"{', '.join(probe['heavy']) or 'none'}; typer {env_['typer']}, rich {env_['rich']}, "
          f"load average {env_['loadavg_1m']:.2f}")
    if args.json:
        args.json.write_text(json.dumps(record, indent=2) + "\n")
    return 0 if all(r["met"] for r in record["ratios"]) else 1


if __name__ == "__main__":
    raise SystemExit(main())
