"""Long-running fuzzer for the whole check: atheris (coverage-guided) or a pure-Python random mutator as fallback."""

from __future__ import annotations

import argparse
import hashlib
import io
import json
import random
import re
import sys
import tempfile
import time
import traceback
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "tests" / "hostile"), str(ROOT / "tests" / "fuzz")]

try:
    import atheris
except ImportError:  # the fallback needs nothing beyond the project itself
    atheris = None

SEP = b"\x00\xff--8<--\xff\x00"  # splits one fuzz input into config.json, the index and model.safetensors
FILES = ("config.json", "model.safetensors.index.json", "model.safetensors")
INTERESTING_U64 = [0, 1, 7, 8, 2**31, 2**32, 2**63, 2**64 - 1, 100_000_000, 100_000_001]


def import_targets() -> dict[str, object]:
    """Import (and, under atheris, instrument) the code under test only after the fuzzer is set up."""
    import dspark_ckpt.check.analysis as inspect_mod
    from dspark_ckpt.formats.json_doc import decode_document
    from dspark_ckpt.formats.safetensors_header import parse_header
    from dspark_ckpt.output.render import render_json, render_text
    from dspark_ckpt.output.table import RENDERERS
    from dspark_ckpt.runtimes.selectors import parse_selectors

    return {"inspect": inspect_mod, "render_json": render_json, "render_text": render_text,
            "runtimes": parse_selectors(None), "parse_header": parse_header, "decode_document": decode_document,
            "renderers": RENDERERS}


def make_target(t: dict[str, object]) -> Callable[[bytes], None]:
    from memory_source import MemorySource
    from rich.console import Console

    from dspark_ckpt.model.report import Report

    inspect_mod = t["inspect"]

    from dspark_ckpt.output.context import RenderContext

    def one_input(data: bytes) -> None:
        t["parse_header"](data, len(data))  # type: ignore[operator]
        t["decode_document"](data)  # type: ignore[operator]
        parts = data.split(SEP, 2)
        files = {name: part for name, part in zip(FILES, parts) if part != b"-"}
        if len(parts) == 1:  # a bare input is a weights file beside an honest config
            files = {"config.json": BASE_CONFIG, "model.safetensors": data}
        target = inspect_mod.TargetVocab(96, "fuzz")  # type: ignore[attr-defined]
        report = inspect_mod.inspect_checkpoint(  # type: ignore[attr-defined]
            MemorySource(files), target=target, runtimes=t["runtimes"])
        out = io.StringIO()
        t["render_json"](Report((report,)), Console(file=out, width=100, no_color=True))  # type: ignore[operator]
        strict_json(out.getvalue())
        if hashlib.blake2b(data, digest_size=1).digest()[0] < 8:  # rich is slow: the other formats for ~3% of inputs
            for name, render in t["renderers"].items():  # type: ignore[attr-defined]
                out = io.StringIO()
                render(Report((report,)), Console(file=out, width=100, no_color=True), RenderContext())
                if name != "json" and RAW_CONTROL.search(out.getvalue()):
                    raise AssertionError(f"{name} output holds a raw control character")

    return one_input


BASE_CONFIG = b""
RAW_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069\ud800-\udfff]")


def strict_json(text: str) -> None:
    """The JSON report must parse for a strict reader: no NaN, no lone surrogate."""
    def refuse(name: str) -> None:
        raise AssertionError(f"JSON report holds {name}")

    json.dumps(json.loads(text, parse_constant=refuse), ensure_ascii=False).encode("utf-8")


def seeds() -> list[bytes]:
    """Every hostile corpus case that fits in memory, flattened into one input each, plus the honest baseline."""
    from corpus import BASELINE, CASES
    from corpus_round2 import CASES2

    out = []
    with tempfile.TemporaryDirectory() as tmp:
        for i, case in enumerate((BASELINE, *CASES, *CASES2)):
            # the CLI-argument cases, the huge ones and the permission ones are not files an input can hold
            if case.name == "header-99-mb" or case.args or case.unreadable or case.klass in (2, 9):
                continue
            (root := Path(tmp) / str(i)).mkdir()
            ckpt = case.build(root)
            out.append(SEP.join(_read(ckpt / name) for name in FILES))
            weights = _read(ckpt / FILES[2])
            if weights != b"-":
                out.append(weights)
    return out


MAX_SEED_FILE = 65536  # what libFuzzer's -max_len lets an input hold; larger files (sparse cases) are left out


def _read(path: Path) -> bytes:
    try:
        if not path.is_file() or path.is_symlink() or path.stat().st_size > MAX_SEED_FILE:
            return b"-"
        return path.read_bytes()
    except OSError:
        return b"-"


def mutate(data: bytes, pool: list[bytes], rng: random.Random) -> bytes:
    buf = bytearray(data)
    for _ in range(rng.choice((1, 1, 2, 4, 8))):
        op = rng.randrange(8)
        pos = rng.randrange(len(buf) + 1)
        if op == 0 and buf:
            buf[pos % len(buf)] ^= 1 << rng.randrange(8)
        elif op == 1 and buf:
            buf[pos % len(buf)] = rng.randrange(256)
        elif op == 2:
            buf[pos:pos] = bytes(rng.choice(b'{}[]",:0123456789-.eE \\u') for _ in range(rng.randrange(1, 6)))
        elif op == 3 and buf:
            del buf[pos:pos + rng.randrange(1, 16)]
        elif op == 4 and len(buf) >= 8:  # the length prefix, with a boundary value
            buf[0:8] = rng.choice(INTERESTING_U64).to_bytes(8, "little")
        elif op == 5:
            other = rng.choice(pool)
            start = rng.randrange(len(other) + 1)
            buf[pos:pos] = other[start:start + rng.randrange(1, 64)]
        elif op == 6 and buf:
            start = rng.randrange(len(buf))
            buf[pos:pos] = buf[start:start + rng.randrange(1, 32)] * rng.randrange(1, 4)
        elif op == 7:
            buf[pos:pos] = rng.choice([b"NaN", b"-1", b"1e400", b"9" * 30, b"true", b"null", b'"\\ud800"', SEP])
    return bytes(buf[:65536])


def run_random(one_input: Callable[[bytes], None], pool: list[bytes], seconds: float, seed: int,
               crash_dir: Path) -> int:
    rng = random.Random(seed)
    corpus = list(pool)
    execs = crashes = 0
    slowest = (0.0, b"")
    start = last = time.monotonic()
    while (now := time.monotonic()) - start < seconds:
        data = mutate(rng.choice(corpus), corpus, rng)
        began = time.perf_counter()
        try:
            one_input(data)
        except Exception:  # noqa: BLE001 - a fuzzer records every escape, then goes on
            crashes += 1
            _save_crash(crash_dir, data, traceback.format_exc())
        took = time.perf_counter() - began
        slowest = max(slowest, (took, data))
        execs += 1
        if rng.random() < 0.01 and len(corpus) < 5000:
            corpus.append(data)  # keep some mutants, so mutations stack
        if now - last >= 60:
            last = now
            print(f"[random] {execs} execs, {crashes} crashes, {execs / (now - start):.0f}/s", flush=True)
    print(f"[random] done: {execs} executions, {crashes} uncaught exceptions, "
          f"{time.monotonic() - start:.0f} s, slowest input {slowest[0] * 1000:.1f} ms ({len(slowest[1])} bytes)",
          flush=True)
    return 1 if crashes else 0


def _save_crash(crash_dir: Path, data: bytes, trace: str) -> None:
    crash_dir.mkdir(parents=True, exist_ok=True)
    name = hashlib.sha1(data).hexdigest()[:16]
    (crash_dir / f"crash-{name}").write_bytes(data)
    (crash_dir / f"crash-{name}.txt").write_text(trace)
    print(trace, file=sys.stderr, flush=True)


def run_atheris(one_input: Callable[[bytes], None], pool: list[bytes], seconds: int, corpus_dir: Path,
                extra: list[str]) -> None:
    corpus_dir.mkdir(parents=True, exist_ok=True)
    for data in pool:
        (corpus_dir / hashlib.sha1(data).hexdigest()).write_bytes(data)
    counter = {"n": 0}

    def counted(data: bytes) -> None:
        counter["n"] += 1
        if counter["n"] % 100_000 == 0:
            print(f"[atheris] {counter['n']} execs", flush=True)
        one_input(data)

    args = [sys.argv[0], f"-max_total_time={seconds}", "-timeout=10", "-rss_limit_mb=2048", "-max_len=65536",
            "-print_final_stats=1", *extra, str(corpus_dir)]
    atheris.Setup(args, counted)
    atheris.Fuzz()  # libFuzzer exits the process itself and prints "Done N runs"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--mode", choices=["atheris", "random"], default="atheris" if atheris else "random")
    parser.add_argument("--seconds", type=int, default=1500)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--work", type=Path, default=Path(tempfile.gettempdir()) / "dspark-fuzz")
    args, libfuzzer_args = parser.parse_known_args()  # anything else goes to libFuzzer, e.g. -runs=1000
    global BASE_CONFIG
    if args.mode == "atheris":
        if atheris is None:
            parser.error("atheris is not installed (pip install atheris); use --mode random")
        with atheris.instrument_imports(include=["dspark_ckpt"]):
            targets = import_targets()
    else:
        targets = import_targets()
    from corpus import CONFIG

    BASE_CONFIG = json.dumps(CONFIG).encode()
    pool = seeds()
    one_input = make_target(targets)
    for data in pool:
        one_input(data)  # every seed must already pass, or the run would only rediscover it
    print(f"[{args.mode}] {len(pool)} seeds from the hostile corpus pass", flush=True)
    if args.mode == "random":
        return run_random(one_input, pool, args.seconds, args.seed, args.work / "crashes")
    run_atheris(one_input, pool, args.seconds, args.work / "corpus", libfuzzer_args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
