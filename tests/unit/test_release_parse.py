"""runtimes/release.py reads plain X.Y.Z[.postN] versions itself and hands anything else to packaging's PEP 440
parser: both paths must answer as packaging.version.Version does (release numbers, post, pre, dev, local, ordering),
and text that is no version is refused with the package's own InvalidVersion."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given
from hypothesis import strategies as st
from packaging.version import Version

from dspark_ckpt.runtimes import release as rel
from dspark_ckpt.runtimes.release import POST_ANY, InvalidVersion, parse
from dspark_ckpt.runtimes.selectors import release
from dspark_ckpt.runtimes.versions import SGLANG_POSTS_READ, SGLANG_RELEASES, VLLM_RELEASES

CORPUS = (*VLLM_RELEASES, *SGLANG_RELEASES, *SGLANG_POSTS_READ, "0.29", "0.30", "1", "0.10.1.1", "00.029.000",
          "0.34.0rc1", "v0.31.1", "0.31.1+cpu", "0.5.4-post2", "0.5.4post2", "0.5.4.POST2", " 0.30.0 ",
          "0.33.0.dev20261201", "1!0.2", "0.5.4.post2.dev1")


@pytest.mark.parametrize("text", CORPUS)
def test_parts_are_what_pep440_says(text: str) -> None:
    v = Version(text)
    r = parse("vllm", text)
    assert (r.numbers, r.post, r.pre, r.dev, r.local) == (v.release, v.post, v.pre, v.dev, v.local)


def test_order_is_pep440_order() -> None:
    final = [t for t in CORPUS if not Version(t).local and Version(t).epoch == 0]

    def says(x: object, y: object) -> tuple[bool, bool, bool]:
        return x < y, x == y, x > y  # type: ignore[operator]

    wrong = [(a, b) for a, b in itertools.combinations(final, 2)
             if says(parse("vllm", a), parse("vllm", b)) != says(Version(a), Version(b))]
    assert len(final) > 40 and wrong == []


@given(st.lists(st.integers(0, 40), min_size=1, max_size=4), st.one_of(st.none(), st.integers(0, 9)),
       st.lists(st.integers(0, 40), min_size=1, max_size=4), st.one_of(st.none(), st.integers(0, 9)))
def test_order_holds_for_any_plain_pair(ra: list[int], pa: int | None, rb: list[int], pb: int | None) -> None:
    a = ".".join(map(str, ra)) + (f".post{pa}" if pa is not None else "")
    b = ".".join(map(str, rb)) + (f".post{pb}" if pb is not None else "")
    assert (parse("sglang", a) < parse("sglang", b)) == (Version(a) < Version(b))
    assert (parse("sglang", a) == parse("sglang", b)) == (Version(a) == Version(b))
    assert (hash(parse("sglang", a)) == hash(parse("sglang", b))) or parse("sglang", a) != parse("sglang", b)
    assert parse("sglang", parse("sglang", a).name) == parse("sglang", a)


@pytest.mark.parametrize("text", ["", "latest", "0.29.x", "0..1", "abc1.0", "0.29.0 extra"])
def test_text_that_is_no_version_is_refused_with_our_own_error(text: str) -> None:
    with pytest.raises(InvalidVersion):
        parse("vllm", text)
    assert rel.resolve("vllm", text, VLLM_RELEASES) is None
    assert rel.covers("vllm", "0.27.0", "0.34.0", text) is False


def test_names_and_keys_are_unchanged_for_the_forms_runs_see() -> None:
    assert parse("vllm", "0.29").name == "0.29.0"
    assert parse("sglang", "0.5.4.post2").name == "0.5.4.post2"
    assert parse("vllm", "0.34.0rc1").final.name == "0.34.0"
    assert parse("sglang", "0.5.4.post2").base.name == "0.5.4"
    assert parse("sglang", "0.5.4").upper > parse("sglang", "0.5.4.post9") > parse("sglang", "0.5.4")
    assert parse("vllm", "0.31.1+cpu").line == (0, 31) and parse("sglang", "0.5.4.post2").line == (0, 5, 4)
    assert rel.release_key("0.5.4", upper=True) == (0, 5, 4, POST_ANY)
    assert release("v0.31.1") == "0.31.1"


@pytest.mark.parametrize(("runtime", "asked", "listed", "answer", "how"), [
    ("sglang", "0.5.13", SGLANG_RELEASES, "0.5.13", "own"),
    ("sglang", "0.5.13.post1", SGLANG_RELEASES, "0.5.13", "line"),  # a post release: its base
    ("sglang", "0.5.4.post3", SGLANG_RELEASES, "0.5.4.post2", "line"),  # the post release listed before it
    ("sglang", "0.5.4.post1", SGLANG_RELEASES, "0.5.4", "line"),
    ("sglang", "0.4.4", ("0.4.4.post2", "0.4.5"), "0.4.4.post2", "line"),  # none before it on its line: the oldest
    ("sglang", "0.5.99", SGLANG_RELEASES, SGLANG_RELEASES[-1], "newer"),
    ("sglang", "0.4.1", SGLANG_RELEASES, SGLANG_RELEASES[0], "older"),
    ("sglang", "0.5.5", ("0.5.1", "0.5.12"), "0.5.1", "before"),  # a line nothing lists: the nearest before
    ("vllm", "0.27.3", VLLM_RELEASES, "0.27.1", "line"),  # vLLM's line is the minor
    ("vllm", "0.27.0.post1", VLLM_RELEASES, "0.27.0", "line"),
    ("vllm", "0.34.0rc1", VLLM_RELEASES, "0.34.0", "own"),  # rc parts dropped, as a run's selection drops them
    ("vllm", "0.40.0", VLLM_RELEASES, VLLM_RELEASES[-1], "newer"),
    ("vllm", "0.11.0", VLLM_RELEASES, VLLM_RELEASES[0], "older"),
])
def test_one_policy_resolves_every_kind_of_release(runtime: str, asked: str, listed: tuple[str, ...], answer: str,
                                                   how: str) -> None:
    found = rel.resolve(runtime, asked, listed)
    assert found is not None and (found.name, found.how) == (answer, how)
    assert found.modelled == (answer if how in ("own", "line", "newer") else None)


def test_covers_is_the_rows_granularity() -> None:
    assert rel.covers("vllm", "0.27.0", "0.29.0", "0.29.7") and not rel.covers("vllm", "0.27.0", "0.29.0", "0.30.0")
    assert rel.covers("sglang", "0.5.4.post2", "0.5.11", "0.5.11.post3")  # a last without post covers its posts
    assert not rel.covers("sglang", "0.5.4.post2", "0.5.11", "0.5.4.post1")
    assert rel.covers("sglang", "0.5.1", "0.5.4.post1", "0.5.4.post1")
    assert not rel.covers("sglang", "0.5.1", "0.5.4.post1", "0.5.4.post2")


def test_a_release_is_immutable_and_hashes_as_it_compares() -> None:
    r = parse("vllm", "0.30")
    with pytest.raises(AttributeError):
        r.post = 1  # type: ignore[misc]
    assert {r: 1}[parse("vllm", "0.30.0")] == 1 and r != parse("sglang", "0.30.0")
