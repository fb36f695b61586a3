"""Pure: text for a stream that cannot encode Unicode (PYTHONIOENCODING=ascii, LANG=C): box drawing, arrows,
ellipses and the Markdown icons in ASCII, anything else left escaped (`\\u2248`), never a UnicodeEncodeError."""

from __future__ import annotations

import functools
import re

_PROBE = "\u2501\u2502\u2026\u2705"  # a heavy and a light box line, an ellipsis, an icon: what the reports use
_LINES = {**dict.fromkeys("\u2500\u2501\u2504\u2505\u2508\u2509\u254c\u254d\u2550\u2574\u2576\u2578\u257a", "-"),
          **dict.fromkeys("\u2502\u2503\u2506\u2507\u250a\u250b\u254e\u254f\u2551\u2575\u2577\u2579\u257b", "|")}


def _table() -> dict[str, str]:
    """Each box-drawing character and the punctuation the reports use -> its ASCII look-alike."""
    return {**{chr(c): _LINES.get(chr(c), "+") for c in range(0x2500, 0x2580)},
            "\u2026": "...", "\u2192": "->", "\u2190": "<-", "\u2264": "<=", "\u2265": ">=", "\u2014": "--",
            "\u2013": "-", "\u00d7": "x", "\u00b7": ".", "\u2022": "*", "\u2018": "'", "\u2019": "'",
            "\u201c": '"', "\u201d": '"', "\u00a0": " "}


# The Markdown report's icons stand before a word that says the same (`\u274c no`, `\U0001f534 error`): dropped.
_ICONS = "[\u2705\u274c\u26a0\U0001f534\U0001f7e1\U0001f535]\ufe0f? ?"


@functools.cache
def _ascii_tools() -> tuple[re.Pattern[str], dict[int, str]]:
    """The icon pattern and the look-alike table, built on first use: only a stream that cannot encode Unicode
    needs them."""
    return re.compile(_ICONS), str.maketrans(_table())


def encodes_unicode(encoding: str | None) -> bool:
    """Whether a stream in this encoding can show the reports' box drawing and icons."""
    try:
        _PROBE.encode(encoding or "utf-8")
    except (UnicodeEncodeError, LookupError):
        return False
    return True


def to_ascii(text: str) -> str:
    """Box drawing and punctuation as their ASCII look-alikes, icons dropped, anything else backslash-escaped."""
    if text.isascii():
        return text
    icons, table = _ascii_tools()
    return icons.sub("", text).translate(table).encode("ascii", "backslashreplace").decode("ascii")


def encode_for(text: str, encoding: str | None) -> bytes:
    """The bytes a stream in `encoding` is sent: UTF-8 where it can show Unicode, else ASCII (above)."""
    if encodes_unicode(encoding):
        return text.encode("utf-8", "backslashreplace")
    return to_ascii(text).encode("ascii")
