"""The releases whose code dspark-ckpt has read, per runtime: data only (runtimes/release.py parses, orders and
resolves them). vLLM rows name minors (0.29.x all behave alike); SGLang rows name releases down to the post release,
because 0.5.4.post2 already carries 0.5.5's EAGLE-3 code while 0.5.4.post1 does not.
"""

from __future__ import annotations

# The releases whose released code dspark-ckpt has read, oldest first: the one list per runtime. Every other release
# list and every per-release table in runtimes/ derives from these or is keyed by them
# (tests/unit/test_release_list.py fails on a second hand-kept list). A new release is one entry here.
VLLM_RELEASES: tuple[str, ...] = (
    "0.12.0", "0.13.0", "0.14.0", "0.14.1",
    "0.15.0", "0.15.1", "0.16.0", "0.17.0", "0.17.1", "0.18.0", "0.18.1", "0.19.0", "0.19.1", "0.20.0", "0.20.1", "0.20.2", "0.21.0", "0.22.0", "0.22.1", "0.23.0", "0.24.0", "0.25.0", "0.25.1", "0.26.0",
    "0.27.0", "0.27.1", "0.28.0", "0.29.0", "0.30.0", "0.31.0", "0.32.0", "0.33.0", "0.34.0",
)
# SGLang: every base release read, plus the one post release whose behaviour differs from its base.
SGLANG_RELEASES: tuple[str, ...] = (
    "0.4.2", "0.4.3", "0.4.3.post1", "0.4.4", "0.4.4.post2", "0.4.5", "0.4.6", "0.4.6.post5", "0.4.7", "0.4.8",
    "0.4.9", "0.4.9.post5", "0.4.10", "0.5.1", "0.5.2", "0.5.3", "0.5.4", "0.5.4.post2", "0.5.5", "0.5.6", "0.5.7",
    "0.5.8", "0.5.9", "0.5.10", "0.5.11", "0.5.12", "0.5.13", "0.5.14", "0.5.15", "0.5.16", "0.5.17", "0.5.18",
    "0.5.19", "0.5.20", "0.5.21", "0.5.22", "0.5.23",
)
# SGLang post releases read too, whose files that matter here equal their base release (`sglang==X` takes them as
# known); not rows of their own.
SGLANG_POSTS_READ: tuple[str, ...] = (
    "0.4.2.post1", "0.4.2.post2", "0.4.2.post3", "0.4.2.post4", "0.4.3.post2", "0.4.3.post3", "0.4.3.post4",
    "0.4.4.post1", "0.4.4.post3", "0.4.4.post4", "0.4.5.post1", "0.4.5.post2", "0.4.5.post3", "0.4.6.post1",
    "0.4.6.post2", "0.4.6.post3", "0.4.6.post4", "0.4.7.post1", "0.4.8.post1", "0.4.9.post1", "0.4.9.post2",
    "0.4.9.post3", "0.4.9.post4", "0.4.9.post6", "0.4.10.post1", "0.4.10.post2", "0.5.1.post1", "0.5.1.post2",
    "0.5.1.post3", "0.5.3.post1", "0.5.3.post2", "0.5.3.post3", "0.5.4.post1", "0.5.4.post3", "0.5.5.post1",
    "0.5.5.post2", "0.5.5.post3", "0.5.6.post1", "0.5.6.post2", "0.5.8.post1", "0.5.10.post1", "0.5.12.post1",
    "0.5.13.post1", "0.5.15.post1",
)
