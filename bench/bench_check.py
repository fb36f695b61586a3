"""Benchmark `dspark-ckpt check` against a naive full load (issue 2): speed, size independence, peak RSS."""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from common import (
    PYTHON,
    ChildRun,
    DraftLayout,
    environment,
    evict,
    layout_for,
    log,
    resident_bytes,
    run_child,
    shard_files,
    summary,
    timed,
    vm_hwm_bytes,
    write_checkpoint,
    write_json,
)

GIB, MIB = 2**30, 2**20

# Runs the real CLI (as `python -m dspark_ckpt`) in this process, then reports which torch modules got
# imported along the way and the process's own peak RSS (VmHWM).
GUARD = r"""
import json, runpy, sys
report, sys.argv = sys.argv[1], ["dspark-ckpt", *sys.argv[2:]]
code = 0
try:
    runpy.run_module("dspark_ckpt", run_name="__main__", alter_sys=True)
except SystemExit as exc:
    code = exc.code
leaked = sorted(m for m in sys.modules if m == "torch" or m.startswith("torch."))
with open("/proc/self/status") as f:
    hwm = int(next(x for x in f if x.startswith("VmHWM:")).split()[1]) * 1024
with open(report, "w") as f:
    json.dump({"exit": code, "torch_modules": leaked, "modules": len(sys.modules), "vm_hwm_bytes": hwm}, f)
"""


# ---- the naive side: runs in a child so that its peak RSS is its own ------------------------------------

SAFETENSORS_DTYPE = {"float16": "F16", "float32": "F32", "int64": "I64", "bool": "BOOL", "int32": "I32",
                     "uint8": "U8", "float64": "F64", "int16": "I16", "int8": "I8"}


def naive_inspect(folder: Path, target_vocab: int) -> dict[str, Any]:
    """load_file every shard the index names, then compute the same checks from the loaded arrays."""
    from safetensors.numpy import load_file

    from dspark_ckpt.check.analysis import draft_facts, verdicts
    from dspark_ckpt.check.verdict_findings import method_findings, verdict_findings
    from dspark_ckpt.formats.mapping import check_d2t, check_t2d, d2t_targets
    from dspark_ckpt.formats.vocab_tensors import find_vocab_tensors, shape_findings
    from dspark_ckpt.model.draft_config import parse_draft_config
    from dspark_ckpt.model.target import TargetVocab
    from dspark_ckpt.model.tensors import TensorInfo
    from dspark_ckpt.runtimes.selectors import parse_selectors

    start = time.perf_counter()
    index = json.loads((folder / "model.safetensors.index.json").read_text())
    arrays, shard_of = {}, {}
    for shard in sorted(set(index["weight_map"].values())):
        loaded = load_file(folder / shard)
        arrays.update(loaded)
        shard_of.update(dict.fromkeys(loaded, shard))
    loaded_s = time.perf_counter() - start
    tensors = {n: TensorInfo(n, SAFETENSORS_DTYPE[a.dtype.name], tuple(a.shape), shard_of[n], 0, a.nbytes)
               for n, a in arrays.items()}
    index_ok = (all(index["weight_map"].get(n) == s for n, s in shard_of.items())
                and len(index["weight_map"]) == len(arrays)
                and index["metadata"]["total_size"] == sum(a.nbytes for a in arrays.values()))
    cfg, findings = parse_draft_config(json.loads((folder / "config.json").read_text()))
    vocab = find_vocab_tensors(tensors)
    findings += shape_findings(vocab, cfg, target_vocab) + method_findings(str(folder), cfg)
    d2t = arrays[vocab.d2t.name].tolist() if vocab.d2t else None
    if d2t is not None:
        pruned = cfg.draft_vocab_size is not None and cfg.draft_vocab_size < target_vocab
        findings += check_d2t(d2t, target_vocab_size=target_vocab, pruned=pruned, file="", tensor="d2t")
    if vocab.t2d is not None:
        targets = d2t_targets(d2t) if d2t is not None else None
        findings += check_t2d(arrays[vocab.t2d.name].tolist(), targets, draft_vocab_size=cfg.draft_vocab_size,
                              file="", tensor="t2d")
    facts = draft_facts(cfg, vocab, TargetVocab(target_vocab, "naive"))
    vs = verdicts(facts, parse_selectors(None)) if facts else []
    findings += verdict_findings(vs, {f.code for f in findings})
    return {"load_s": loaded_s, "total_s": time.perf_counter() - start, "index_ok": index_ok,
            "codes": sorted({f.code for f in findings}), "tensors": len(arrays),
            "bytes": sum(a.nbytes for a in arrays.values()), "loads": sum(v.loads for v in vs),
            "torch_modules": torch_modules(sys.modules), "vm_hwm_bytes": vm_hwm_bytes()}


def torch_modules(names: Any) -> list[str]:
    return sorted(m for m in names if m == "torch" or m.startswith("torch."))


def naive_child(folder: Path, target_vocab: int) -> tuple[ChildRun, dict[str, Any]]:
    run = run_child([PYTHON, __file__, "--naive-child", str(folder), "--target-vocab", str(target_vocab)])
    if run.returncode:
        raise RuntimeError(f"naive child failed ({run.returncode}): {run.stderr[-2000:]}")
    return run, json.loads(run.stdout)


# ---- the check side -------------------------------------------------------------------------------------

def check_in_process(folder: Path, target_vocab: int) -> Any:
    from dspark_ckpt.check.analysis import inspect_checkpoint
    from dspark_ckpt.runtimes.selectors import parse_selectors
    from dspark_ckpt.sources.resolve import open_source
    from dspark_ckpt.sources.target import explicit_target

    return inspect_checkpoint(open_source(str(folder)), target=explicit_target(target_vocab),
                              runtimes=parse_selectors(None))


def cli_args(folder: Path, target_vocab: int) -> list[str]:
    return ["check", str(folder), "--target-vocab-size", str(target_vocab), "--format", "json"]


def check_cli(folders: dict[str, Path], target_vocab: int, repeat: int) -> dict[str, dict[str, Any]]:
    """Plain `python -m dspark_ckpt check` runs, the folders taking turns so that drift hits them alike."""
    runs: dict[str, list[ChildRun]] = {name: [] for name in folders}
    for _ in range(repeat):
        for name, folder in folders.items():
            run = run_child([PYTHON, "-m", "dspark_ckpt", *cli_args(folder, target_vocab)])
            if run.returncode not in (0, 1):
                raise RuntimeError(f"check CLI failed ({run.returncode}): {run.stderr[-2000:]}")
            runs[name].append(run)
    return {name: cli_summary(rs) for name, rs in runs.items()}


def cli_summary(runs: list[ChildRun]) -> dict[str, Any]:
    doc = json.loads(runs[-1].stdout)["checkpoints"][0]
    return {**summary([r.wall_s for r in runs]), "exit": runs[-1].returncode,
            "codes": sorted({f["code"] for f in doc["findings"]}), "vocab_kind": doc["vocab_kind"],
            "tensors_reported": len(doc.get("tensors", []))}


def guarded_cli(folder: Path, target_vocab: int, workdir: Path) -> dict[str, Any]:
    """Two independent looks for torch (sys.modules after a CLI run, `-X importtime` of another); peak RSS."""
    report = workdir / "guard.json"
    guarded = run_child([PYTHON, "-c", GUARD, str(report), *cli_args(folder, target_vocab)])
    seen = json.loads(report.read_text())
    traced = run_child([PYTHON, "-X", "importtime", "-m", "dspark_ckpt", *cli_args(folder, target_vocab)])
    imported = [line.rsplit("|", 1)[-1].strip() for line in traced.stderr.splitlines()
                if line.startswith("import time:")]
    return {"guard_exit": guarded.returncode, "cli_exit": seen["exit"], "vm_hwm_bytes": seen["vm_hwm_bytes"],
            "torch_in_sys_modules": seen["torch_modules"], "modules_loaded": seen["modules"],
            "torch_in_importtime": torch_modules(set(imported)), "importtime_modules": len(imported),
            "ok": not seen["torch_modules"] and not torch_modules(imported)}


def build(root: Path, args: argparse.Namespace) -> dict[str, dict[str, Any]]:
    plan = {"small": (int(args.small_mib * MIB), False), "real": (int(args.real_gib * GIB), False),
            "sparse": (int(args.sparse_gib * GIB), True)}
    built = {}
    for name, (budget, sparse) in plan.items():
        layout = layout_for(budget, args.layers)
        start = time.perf_counter()
        on_disk = write_checkpoint(root / name, layout, args.shards, sparse=sparse)
        built[name] = {"path": root / name, "sparse": sparse, "hidden": layout.hidden,
                       "bytes": layout.total_bytes(), "bytes_on_disk": on_disk,
                       "tensors": len(layout.tensors()), "write_s": time.perf_counter() - start}
        log(f"built {name}: {layout.total_bytes() / GIB:.3f} GiB, H={layout.hidden}, "
            f"{on_disk / MIB:.1f} MiB on disk, {built[name]['write_s']:.1f} s")
    return built


def naive_runs(real: Path, t: int, repeat: int) -> dict[str, Any]:
    warm = []
    for _ in range(repeat):
        before = resident_bytes(shard_files(real))
        run, result = naive_child(real, t)
        warm.append({"resident_before": before, "child_wall_s": run.wall_s,
                     "wait4_maxrss_bytes": run.max_rss_bytes, **result})
        log(f"warm: naive {result['total_s']:.2f} s, child VmHWM {result['vm_hwm_bytes'] / GIB:.2f} GiB")
    return {**summary([w["total_s"] for w in warm]), "child_wall": summary([w["child_wall_s"] for w in warm]),
            "load": summary([w["load_s"] for w in warm]),
            "vm_hwm_bytes": max(w["vm_hwm_bytes"] for w in warm), "runs_detail": warm}


def bench_a(real: Path, t: int, args: argparse.Namespace) -> dict[str, Any]:
    """Cold (after eviction) and warm: check in-process, check CLI, naive load + inspection."""
    cold: dict[str, Any] = {}
    cold["check_in_process"] = {"evict": evict(real), "s": timed(lambda: check_in_process(real, t), 1)[0]}
    cold["check_cli"] = {"evict": evict(real), **check_cli({"real": real}, t, 1)["real"]}
    cold_evict = evict(real)
    run, result = naive_child(real, t)
    cold["naive"] = {"evict": cold_evict, "child_wall_s": run.wall_s, "wait4_maxrss_bytes": run.max_rss_bytes,
                     **result}
    log(f"cold: naive {result['total_s']:.2f} s (resident before: {cold_evict['resident_bytes_after']})")
    warm = {"naive": naive_runs(real, t, args.naive_repeat),
            "check_in_process": summary(timed(lambda: check_in_process(real, t), args.repeat)),
            "check_cli": check_cli({"real": real}, t, args.cli_repeat)["real"]}
    return {"cold": cold, "warm": warm}


def bench_b(small: Path, sparse: Path, t: int, args: argparse.Namespace) -> dict[str, Any]:
    """Interleaved runs so that drift on the shared machine hits both sizes alike."""
    times: dict[str, list[float]] = {"small": [], "sparse": []}
    for _ in range(args.repeat):
        for name, folder in (("small", small), ("sparse", sparse)):
            times[name] += timed(lambda f=folder: check_in_process(f, t), 1)
    cli = check_cli({"small": small, "sparse": sparse}, t, args.cli_repeat)
    return {"in_process": {k: summary(v) for k, v in times.items()}, "cli": cli}


def ratios(res: dict[str, Any]) -> dict[str, float]:
    a, b, guard = res["a"], res["b"], res["cli_guard"]
    warm, cold, inproc = a["warm"], a["cold"], a["warm"]["check_in_process"]
    return {
        "a_warm_naive_over_check_in_process": warm["naive"]["median_s"] / inproc["median_s"],
        "a_warm_naive_min_over_check_in_process_min": warm["naive"]["min_s"] / inproc["min_s"],
        "a_warm_naive_wall_over_cli_wall": (warm["naive"]["child_wall"]["median_s"]
                                            / warm["check_cli"]["median_s"]),
        "a_cold_naive_over_check_in_process": cold["naive"]["total_s"] / cold["check_in_process"]["s"],
        "a_cold_naive_wall_over_cli_wall": cold["naive"]["child_wall_s"] / cold["check_cli"]["median_s"],
        "b_sparse_over_small_in_process": (b["in_process"]["sparse"]["median_s"]
                                           / b["in_process"]["small"]["median_s"]),
        "b_sparse_over_small_cli": b["cli"]["sparse"]["median_s"] / b["cli"]["small"]["median_s"],
        "c_naive_rss_over_check_cli_rss": warm["naive"]["vm_hwm_bytes"] / guard["real"]["vm_hwm_bytes"],
    }


def ms(s: float) -> str:
    return f"{s * 1e3:9.2f} ms" if s < 10 else f"{s:9.2f} s "


def table_head(res: dict[str, Any]) -> list[str]:
    c, evicted = res["checkpoints"], res["a"]["cold"]["naive"]["evict"]
    lines = [f"dspark-ckpt check benchmark: Qwen3 DSpark pruned draft (T={res['target_vocab']}, D=32000), "
             f"{res['shards']} shards, {c['real']['tensors']} tensors, F16"]
    for name, k in c.items():
        lines.append(f"  {name:7s} {k['bytes'] / GIB:8.3f} GiB  H={k['hidden']:<6d} "
                     f"{k['bytes_on_disk'] / MIB:9.1f} MiB on disk  "
                     f"({'sparse' if k['sparse'] else 'random data'}, written in {k['write_s']:.1f} s)")
    resident = evicted["resident_bytes_after"]
    lines.append(f"  cold = sync + drop_caches ({evicted['drop_caches']}) + fadvise(DONTNEED); shard bytes "
                 f"cached before the cold naive run: {'unknown' if resident is None else resident}")
    return lines


def table_a(res: dict[str, Any]) -> list[str]:
    a, r, real = res["a"], res["ratios"], res["checkpoints"]["real"]
    warm, cold = a["warm"], a["cold"]
    rows = [("check, in-process", warm["check_in_process"]["median_s"], cold["check_in_process"]["s"]),
            ("check, CLI subprocess (wall)", warm["check_cli"]["median_s"], cold["check_cli"]["median_s"]),
            ("naive load_file + inspect", warm["naive"]["median_s"], cold["naive"]["total_s"]),
            ("naive, child wall", warm["naive"]["child_wall"]["median_s"], cold["naive"]["child_wall_s"])]
    return [f"(a) {real['bytes'] / GIB:.2f} GiB real checkpoint    warm median         cold",
            *(f"  {n:32s} {ms(w)}  {ms(k)}" for n, w, k in rows),
            f"  ratio naive / check in-process   {r['a_warm_naive_over_check_in_process']:10.0f}x  "
            f"{r['a_cold_naive_over_check_in_process']:10.0f}x   (goal >= 100x; min/min "
            f"{r['a_warm_naive_min_over_check_in_process_min']:.0f}x)",
            f"  ratio naive wall / CLI wall      {r['a_warm_naive_wall_over_cli_wall']:10.1f}x  "
            f"{r['a_cold_naive_wall_over_cli_wall']:10.1f}x   (both include interpreter start)",
            f"  naive warm runs {warm['naive']['min_s']:.2f}-{warm['naive']['max_s']:.2f} s; findings: "
            f"check {warm['check_cli']['codes']}, naive {warm['naive']['runs_detail'][0]['codes']}"]


def same_findings(res: dict[str, Any]) -> bool:
    """The naive side only counts if it found what check found: otherwise the comparison is of different work."""
    warm = res["a"]["warm"]
    return all(run["codes"] == warm["check_cli"]["codes"] for run in warm["naive"]["runs_detail"])


def table_bc(res: dict[str, Any]) -> list[str]:
    b, c, g, r = res["b"], res["checkpoints"], res["cli_guard"], res["ratios"]
    lines = ["(b) size independence (medians)       small        sparse      ratio"]
    for kind in ("in_process", "cli"):
        s, p = b[kind]["small"]["median_s"], b[kind]["sparse"]["median_s"]
        lines.append(f"  check {kind:28s} {ms(s)} {ms(p)} {p / s:8.3f}   (goal <= 1.2)")
    lines += ["", "(c) peak RSS (VmHWM from the child's own /proc/self/status)"]
    rows = [(f"check CLI, {c['small']['bytes'] / MIB:.0f} MiB", g["small"]["vm_hwm_bytes"]),
            (f"check CLI, {c['real']['bytes'] / GIB:.2f} GiB", g["real"]["vm_hwm_bytes"]),
            (f"check CLI, {c['sparse']['bytes'] / GIB:.1f} GiB sparse", g["sparse"]["vm_hwm_bytes"]),
            (f"naive, {c['real']['bytes'] / GIB:.2f} GiB", res["a"]["warm"]["naive"]["vm_hwm_bytes"])]
    lines += [f"  {name:32s} {rss / MIB:10.1f} MiB" for name, rss in rows]
    lines.append(f"  ratio naive / check              {r['c_naive_rss_over_check_cli_rss']:10.1f}x")
    return lines


def table(res: dict[str, Any]) -> str:
    g = res["cli_guard"]
    verdict = "never imported" if all(x["ok"] for x in g.values()) else "IMPORTED"
    looks = "; ".join(f"{k}: sys.modules {v['torch_in_sys_modules']}, "
                      f"-X importtime {v['torch_in_importtime']}" for k, v in g.items())
    goals = ", ".join(f"{k} {'PASS' if v else 'FAIL'}" for k, v in res["goals"].items())
    return "\n".join([*table_head(res), "", *table_a(res), "", *table_bc(res), "",
                      f"torch during check: {verdict} ({looks})",
                      f"goals: {goals}  (a and b judged on the in-process medians)"])


def run(args: argparse.Namespace) -> dict[str, Any]:
    need = int((args.real_gib + 1) * GIB + args.small_mib * MIB)  # the sparse one takes ~1 MiB
    if shutil.disk_usage(args.dir).free < need:
        sys.exit(f"bench_check: {args.dir} has less than the {need / GIB:.1f} GiB free that the data needs")
    root = Path(tempfile.mkdtemp(prefix="dspark-bench-", dir=args.dir))
    log(f"data in {root}")
    try:
        t = DraftLayout(8, 1).target_vocab
        res: dict[str, Any] = {"environment": environment(), "target_vocab": t, "shards": args.shards,
                               "layers": args.layers, "data_dir": str(root), "argv": sys.argv}
        built = build(root, args)
        res["checkpoints"] = {k: {x: v for x, v in b.items() if x != "path"} for k, b in built.items()}
        res["cli_guard"] = {k: guarded_cli(b["path"], t, root) for k, b in built.items()}
        check_in_process(built["small"]["path"], t)  # imports done before any timed run
        res["a"] = bench_a(built["real"]["path"], t, args)
        res["b"] = bench_b(built["small"]["path"], built["sparse"]["path"], t, args)
        res["ratios"] = ratios(res)
        res["torch_in_bench_parent"] = torch_modules(sys.modules)
        res["environment"]["loadavg_end"] = os.getloadavg()
        res["goals"] = {"a_ge_100x": res["ratios"]["a_warm_naive_over_check_in_process"] >= 100,
                        "b_le_1_2": res["ratios"]["b_sparse_over_small_in_process"] <= 1.2,
                        "no_torch": all(g["ok"] for g in res["cli_guard"].values()),
                        "same_findings": same_findings(res)}
        return res
    finally:
        if args.keep:
            log(f"kept {root}")
        else:
            shutil.rmtree(root, ignore_errors=True)


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--real-gib", type=float, default=4.0, help="size of the real-data checkpoint (default 4)")
    p.add_argument("--sparse-gib", type=float, default=64.0, help="size of the sparse one (default 64)")
    p.add_argument("--small-mib", type=float, default=64.0, help="size of the small comparison (default 64)")
    p.add_argument("--shards", type=int, default=8)
    p.add_argument("--layers", type=int, default=5, help="decoder layers of the draft (default 5)")
    p.add_argument("--repeat", type=int, default=21, help="in-process check runs per checkpoint")
    p.add_argument("--cli-repeat", type=int, default=7, help="CLI subprocess runs per checkpoint")
    p.add_argument("--naive-repeat", type=int, default=3, help="warm naive runs")
    p.add_argument("--dir", default="/tmp", help="where the temporary data folder goes (default /tmp)")
    p.add_argument("--keep", action="store_true", help="keep the checkpoints afterwards")
    p.add_argument("--json", type=Path, help="write the full result here")
    p.add_argument("--naive-child", type=Path, help=argparse.SUPPRESS)
    p.add_argument("--target-vocab", type=int, help=argparse.SUPPRESS)
    return p.parse_args(argv)


def main() -> None:
    args = parse_args()
    if args.naive_child is not None:
        print(json.dumps(naive_inspect(args.naive_child, args.target_vocab)))
        return
    res = run(args)
    print(table(res))
    if args.json:
        write_json(args.json, res)
        log(f"wrote {args.json}")
    sys.exit(0 if all(res["goals"].values()) else 1)


if __name__ == "__main__":
    main()
