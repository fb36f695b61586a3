"""Hub figures: requests and bytes per remote check vs a naive full download; --jobs 8 vs --jobs 1 on 50 repos.

Runs against tests/fakehub/server.py on 127.0.0.1 (no internet). Usage: python bench/bench_hub.py [--repos 50]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT / "tests" / "fakehub"), str(ROOT / "tests"), str(ROOT)]

from server import FakeHub


def publish_draft(hub: FakeHub, repo_id: str, folder: Path) -> None:
    hub.add_repo(repo_id, {p.name: p.read_bytes() for p in sorted(folder.iterdir())})


def run_cli(hub: FakeHub, hf_home: Path, *args: str) -> tuple[float, float]:
    """Wall seconds of the CLI run, and the CPU seconds the CLI process itself used (user + system)."""
    import resource
    import subprocess

    env = hub.subprocess_env(hf_home)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "dspark_ckpt", *args], env=env, capture_output=True, text=True)
    elapsed = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode not in (0, 1):
        raise SystemExit(f"check failed ({done.returncode}): {done.stderr}")
    return elapsed, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def per_check_traffic(hub: FakeHub, work: Path) -> dict[str, object]:
    """One sharded draft with ~12 MB shards: what a remote check fetches, against downloading the files."""
    from conftest import make_checkpoint

    folder = make_checkpoint(work / "big", vocab=24000, draft_vocab=24000, target_vocab=24000, hidden=128, shards=4)
    publish_draft(hub, "bench/sharded", folder)
    hub.requests.clear()
    run_cli(hub, work / "hf-traffic", "check", "hf://bench/sharded", "--target-vocab-size", "24000", "--format", "json")
    shards = sorted(p.name for p in folder.glob("*.safetensors"))
    rows = []
    for name in shards:
        gets = hub.matching("GET", f"/{name}$")
        header = 8 + int.from_bytes((folder / name).read_bytes()[:8], "little")
        rows.append({"shard": name, "size": (folder / name).stat().st_size, "header": header,
                     "requests": len(gets), "bytes": sum(r.bytes for r in gets),
                     "budget": header + 100 * 1024})
    json_requests = [r for r in hub.requests if not r.path.endswith(".safetensors")]
    naive_bytes = sum(p.stat().st_size for p in folder.iterdir())
    fetched = sum(r.bytes for r in hub.requests)
    return {"shards": rows, "json_and_api_requests": len(json_requests), "total_requests": len(hub.requests),
            "total_bytes": fetched, "naive_download_bytes": naive_bytes, "bytes_ratio": naive_bytes / fetched}


def concurrency(hub: FakeHub, work: Path, repos: int, latency_s: float) -> dict[str, object]:
    from conftest import make_checkpoint

    folder = make_checkpoint(work / "small", vocab=96, draft_vocab=64, target_vocab=96, d2t=True)
    names = [f"bench/draft-{i:03d}" for i in range(repos)]
    for name in names:
        publish_draft(hub, name, folder)
    hub.set_knobs(latency_s=latency_s)
    out: dict[str, object] = {"repos": repos, "latency_s": latency_s}
    for jobs in (1, 8):  # a fresh HF_HOME each: nothing cached, the same requests both times
        hub.requests.clear()
        repos_args = (f"hf://{n}" for n in names)
        elapsed, cpu = run_cli(hub, work / f"hf-jobs{jobs}", "check", *repos_args, "--target-vocab-size", "96",
                             "--runtime", "vllm", "--jobs", str(jobs), "--format", "json")
        out[f"jobs{jobs}_s"] = round(elapsed, 3)
        out[f"jobs{jobs}_client_cpu_s"] = round(cpu, 3)
        out[f"jobs{jobs}_requests"] = len(hub.requests)
    out["speedup"] = round(out["jobs1_s"] / out["jobs8_s"], 2)  # type: ignore[operator]
    # The fake server shares this machine's cores: with the client's own CPU known, the rest of jobs 8's wall
    # time is what the server and the cores' contention cost, which a remote Hub would not put on this machine.
    out["cores"] = os.cpu_count()
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repos", type=int, default=50)
    parser.add_argument("--latency", type=float, default=0.020)
    args = parser.parse_args()
    os.environ.pop("HF_TOKEN", None)
    with tempfile.TemporaryDirectory() as tmp, FakeHub() as hub:
        work = Path(tmp)
        traffic = per_check_traffic(hub, work)
        speed = concurrency(hub, work, args.repos, args.latency)
    print(json.dumps({"per_check": traffic, "concurrency": speed}, indent=2))
    ok_traffic = all(r["requests"] == 1 and r["bytes"] <= r["budget"] for r in traffic["shards"])  # type: ignore[index]
    print(f"per shard: {'<= 1 ranged request and <= header + 100 KiB' if ok_traffic else 'OVER BUDGET'}; "
          f"{traffic['total_bytes']} bytes fetched vs {traffic['naive_download_bytes']} for a download "
          f"({traffic['bytes_ratio']:.0f}x less)")
    print(f"{args.repos} repos at {args.latency * 1000:.0f} ms latency: --jobs 1 {speed['jobs1_s']} s, "
          f"--jobs 8 {speed['jobs8_s']} s: {speed['speedup']}x; the CLI's own CPU: "
          f"{speed['jobs1_client_cpu_s']} s / {speed['jobs8_client_cpu_s']} s on {speed['cores']} cores "
          f"shared with the fake server")


if __name__ == "__main__":
    main()
