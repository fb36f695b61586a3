"""What a runtime release's own code did with a test's cases, recorded for the hermetic suite (tests/data/observed).

An agreement test builds its cases (checkpoints of a release's classes and the mutations users hit) from committed
data and holds check's verdict to what the release did with each. The release itself runs only in the upstream tier
(`-m upstream`, its wheel and import-time dependencies): there the test runs it, holds check to the fresh answers and
fails where they differ from the recording; with DSPARK_CKPT_RECORD=1 it writes the recording instead (the diff is
the review, as for the release data). The hermetic suite holds check to the recording. Each case is recorded under a
digest of what the release was given, so a case that changed (the committed data did) fails until it is recorded
again: a recording never answers for a case it did not see.

    DSPARK_CKPT_RECORD=1 python -m pytest -m upstream -n 0 TEST --releases vllm-0.33.0     # (re)record
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Self

DATA = Path(__file__).parent / "data" / "observed"
RECORD_ENV = "DSPARK_CKPT_RECORD"


def digest(value: Any) -> str:
    """A short digest of a JSON value (keys sorted: the same case, however built, has the same digest)."""
    return hashlib.sha256(json.dumps(value, sort_keys=True).encode()).hexdigest()[:16]


def folder_digest(folder: Path) -> str:
    """What a loader reads of a checkpoint folder the release was given: config.json and each safetensors header
    (the tests' tensors are zeros or seeded; a header names every tensor, dtype, shape and offset)."""
    parts: dict[str, str] = {}
    for path in sorted(folder.iterdir()):
        raw = path.read_bytes()
        if path.suffix == ".safetensors":
            raw = raw[:8 + int.from_bytes(raw[:8], "little")]
        parts[path.name] = hashlib.sha256(raw).hexdigest()
    return digest(parts)


def path_of(test: str, runtime: str, release: str) -> Path:
    return DATA / test / f"{runtime}-{release}.json"


def _load(path: Path, runtime: str, release: str) -> dict[str, Any]:
    assert path.is_file(), (f"{path.relative_to(DATA.parents[1])} is not recorded: {RECORD_ENV}=1 python -m "
                            f"pytest -m upstream -n 0 --releases {runtime}-{release} (tests/recorded.py)")
    doc: dict[str, Any] = json.loads(path.read_text())
    return doc


def replay(test: str, runtime: str, release: str, cases: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    """The recorded answer for each case (id -> the case's digest source); fails naming the cases the recording
    does not hold as given."""
    held = _load(path_of(test, runtime, release), runtime, release)["cases"]
    stale = sorted(i for i, case in cases.items() if held.get(i, {}).get("case") != digest(case))
    assert not stale, (f"{len(stale)} case(s) of {test} on {runtime} {release} changed since they were recorded "
                       f"(record again, tests/recorded.py): {stale[:10]}")
    return {i: held[i]["observed"] for i in cases}


def _written(doc: dict[str, Any]) -> str:
    """One case (or worker call) a line, keys sorted: a re-recording's diff names the cases that changed."""
    key = "cases" if "cases" in doc else "calls"
    head = json.dumps({k: v for k, v in doc.items() if k != key}, sort_keys=True)[:-1]
    rows = ",\n".join(f"{json.dumps(i)}: {json.dumps(v, sort_keys=True)}" for i, v in sorted(doc[key].items()))
    return f"{head}, {json.dumps(key)}: {{\n{rows}\n}}}}\n"


def checked(test: str, runtime: str, release: str, cases: Mapping[str, Any],
            fresh: Mapping[str, dict[str, Any]]) -> None:
    """The upstream tier: the release's fresh answers against the recording (DSPARK_CKPT_RECORD=1: written)."""
    doc = {"runtime": runtime, "release": release, "cases": {
        i: {"case": digest(case), "observed": fresh[i]} for i, case in cases.items()}}
    path = path_of(test, runtime, release)
    if os.environ.get(RECORD_ENV) == "1":
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(_written(doc))
        return
    held = _load(path, runtime, release)
    differ = sorted(i for i in set(doc["cases"]) | set(held["cases"]) if doc["cases"].get(i) != held["cases"].get(i))
    assert not differ, (f"{runtime} {release} answers {len(differ)} case(s) of {test} otherwise than recorded "
                        f"(a change upstream, or in the cases: review, then {RECORD_ENV}=1): {differ[:10]}")


def _error(error: Mapping[str, Any]) -> dict[str, Any]:
    """An error as recorded: each set of names its message prints sorted (a set's order varies with the hash seed
    from run to run; check compares the words the same way, landing.sorted_sets)."""
    from dspark_ckpt.runtimes.landing import sorted_sets

    return {**error, "message": sorted_sets(error["message"])} if isinstance(error.get("message"), str) else dict(error)


def answer(result: Mapping[str, Any]) -> dict[str, Any]:
    """A result as recorded: without the case's id (its key) and the release file:line an error was raised at (the
    comparisons read the words; a line number moves with nearly every release), its message's sets sorted."""
    kept = {k: v for k, v in result.items() if k != "id"}
    if isinstance(kept.get("error"), dict):
        kept["error"] = _error({k: v for k, v in kept["error"].items() if k != "where"})
    return kept


def observations(test: str, runtime: str, release: str, cases: list[dict[str, Any]], source: str,
                 run: Any) -> dict[str, dict[str, Any]]:
    """Each case's answer (id -> the release's result, without its id): `source` "recorded" replays the recording;
    "release" calls `run()` (id -> result, from the release's own code) and holds the recording to it."""
    keyed = {case["id"]: case for case in cases}
    assert len(keyed) == len(cases), "case ids repeat"
    if source == "recorded":
        return replay(test, runtime, release, keyed)
    assert source == "release", source
    found = run()
    fresh = {i: answer(found[i]) for i in keyed}
    checked(test, runtime, release, keyed, fresh)
    return fresh


# The two ways an agreement test gets the release's answers: the recording (hermetic) or the release (upstream).
def sources(runtime: str) -> list[Any]:
    import pytest

    return ["recorded", pytest.param("release", marks=pytest.mark.upstream(runtime=runtime))]


def _engine_case(case: Mapping[str, Any]) -> dict[str, Any]:
    """A case of verify's engine as the release is given it: its folder by what the loader reads of it."""
    return {**case, "folder": folder_digest(Path(case["folder"]))}


def _portable(doc: Mapping[str, Any], runtime: str) -> dict[str, Any]:
    """The worker's document without where this machine keeps the release (its file from the package folder on)
    and with each error's sets of names sorted (_error)."""
    found = dict(doc)
    for key in ("vllm_file", "file"):
        if isinstance(found.get(key), str) and f"/{runtime}/" in found[key]:
            found[key] = f"{runtime}/" + found[key].split(f"/{runtime}/", 1)[1]
    if "results" in found:
        found["results"] = [{k: _error(v) if k.endswith("error") and isinstance(v, dict) else v
                             for k, v in r.items()} for r in found["results"]]
    return found


class EngineAnswers:
    """`verify --engine installed` answered by `runtime` `release`, the CLI in this process, which finds the release
    installed by its metadata (a site folder on sys.path). "recorded": each worker document is the recorded one for
    those cases; "release": the worker runs in `env` (the release's tree on PYTHONPATH, as conftest.prepared_vllm_env
    prepares it, set in this process's environment too so the CLI stays here) and its documents are held to the
    recording (DSPARK_CKPT_RECORD=1: written). One recording per test: tests/data/observed/engine/NAME.json."""

    def __init__(self, name: str, runtime: str, release: str, source: str, site: Path,
                 env: Mapping[str, str] | None = None) -> None:
        self.name, self.runtime, self.release, self.source = name, runtime, release, source
        self.site, self.env = site, dict(env or {})
        self.calls: dict[str, dict[str, Any]] = {}
        self.path = DATA / "engine" / f"{name}.json"
        self._stack: Any = None

    def _document(self, cases: Any, **kwargs: Any) -> dict[str, Any]:
        key = digest([_engine_case(c) for c in cases])
        if self.source == "recorded":
            held = _load(self.path, self.runtime, self.release)["calls"]
            assert key in held, (f"verify's engine was given cases the recording of {self.name} does not hold (record "
                                 "again, tests/recorded.py)")
            found: dict[str, Any] = held[key]
            return found
        self.calls[key] = _portable(self._real(cases, **kwargs), self.runtime)
        return self.calls[key]

    def __enter__(self) -> Self:
        import contextlib
        import sys
        from unittest import mock

        from dspark_ckpt.verify import engine

        self._stack = contextlib.ExitStack()
        self._real = engine.worker_document
        meta = self.site / f"{self.runtime}-{self.release}.dist-info" / "METADATA"
        meta.parent.mkdir(parents=True, exist_ok=True)
        meta.write_text(f"Metadata-Version: 2.1\nName: {self.runtime}\nVersion: {self.release}\n")
        if self.source == "release":  # the worker's environment; the CLI stays in this process (same PYTHONPATH)
            self._stack.enter_context(mock.patch.dict(os.environ, self.env))
        self._stack.enter_context(mock.patch.object(sys, "path", [str(self.site), *sys.path]))
        self._stack.enter_context(mock.patch.object(engine, "worker_document", self._document))
        return self

    def __exit__(self, *exc: object) -> None:
        self._stack.close()
        if self.source != "release" or exc[0] is not None:
            return
        doc = {"runtime": self.runtime, "release": self.release, "calls": self.calls}
        if os.environ.get(RECORD_ENV) == "1":
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self.path.write_text(_written(doc))
            return
        held = _load(self.path, self.runtime, self.release)
        assert held == doc, (f"{self.runtime} {self.release} answers verify's engine in {self.name} otherwise than "
                             f"recorded (a change upstream, or in the cases: review, then {RECORD_ENV}=1)")


def only_known_misses(disagree: list[str], known: frozenset[str], total: int) -> None:
    """Every case that disagrees (its id before the first colon of its line) is a known miss, and every known miss
    still disagrees (one that now agrees is taken off the list)."""
    wrong = {line.split(":", 1)[0] for line in disagree}
    assert wrong == known, (f"{len(disagree)} of {total} cases disagree ({len(known)} known):\n"
                            + "\n".join(line for line in disagree if line.split(":", 1)[0] not in known)
                            + f"\nknown misses that now agree: {sorted(known - wrong)}")
