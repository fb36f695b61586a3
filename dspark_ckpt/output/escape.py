"""Untrusted text (tensor names, config strings, file names, what a server said) made safe for each output.

A stranger's checkpoint may name a tensor `\\x1b]0;pwned\\x07` or `\\u202e`: every report shows such characters as
visible escapes (`\\x1b`, `\\u202e`) instead of sending them to a terminal, a CI log or a browser.
"""

from __future__ import annotations

import functools
import re

# C0 and C1 controls (ESC starts every ANSI sequence), DEL, the zero-width and bidirectional format characters,
# line and paragraph separators, the BOM, interlinear annotations, language tags, and lone surrogates (a file name
# that was not UTF-8 decodes to U+DC80-U+DCFF).
_FORMAT = ("\x7f-\x9f\xad\u061c\u180e\u200b-\u200f\u2028-\u202e\u2060-\u206f\ufeff\ufff9-\ufffb"
           "\ud800-\udfff\U000e0000-\U000e007f")
_UNSAFE_TEXT = f"[\x00-\x1f{_FORMAT}]"
_UNSAFE_KEEP_LINES = f"[\x00-\x08\x0b\x0c\x0e-\x1f{_FORMAT}]"
_SURROGATE = "[\ud800-\udfff]"
_COMMAND = "::"  # GitHub runs a workflow command from any log line that starts with it (after spaces)


_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def _visible(match: re.Match[str]) -> str:
    char = match.group()
    if char in _NAMED:
        return _NAMED[char]
    code = ord(char)
    if 0xDC80 <= code <= 0xDCFF:  # surrogateescape: the byte the file system gave
        return f"\\x{code - 0xDC00:02x}"
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}"


@functools.cache
def _pattern(chars: str) -> re.Pattern[str]:
    """Compiled on first use: the character classes cost ~1 ms to compile, and most reports are printable ASCII."""
    return re.compile(chars)


def _plain(text: str) -> bool:
    """Printable ASCII: none of the characters above (the only ASCII ones are C0 controls and DEL)."""
    return text.isascii() and text.isprintable()


def visible(text: str) -> str:
    """Every unsafe character as a visible escape; newlines and tabs too (an untrusted value is one line)."""
    return text if _plain(text) else _pattern(_UNSAFE_TEXT).sub(_visible, text)


def visible_keep_lines(text: str) -> str:
    """As `visible`, but tab, LF and CR pass (formats that escape those themselves: XML, workflow commands)."""
    return text if _plain(text) else _pattern(_UNSAFE_KEEP_LINES).sub(_visible, text)


TEXT_LIMIT = 2000  # characters of one value the text report shows; the JSON report has them all


def cut(text: str, limit: int) -> str:
    """The first `limit` characters, saying how many there were; cut before escaping, so a 10 MB value costs
    its first `limit` characters, not a pass over all of it."""
    if len(text) <= limit:
        return text
    return f"{text[:limit]}... (cut: {len(text):,} characters in all; --format json has them all)"


def terminal(text: str, limit: int = TEXT_LIMIT) -> str:
    """For the text report: cut after `limit` characters, visible escapes, and `::` broken so that no wrapped
    line starts a workflow command."""
    return visible(cut(text, limit)).replace(_COMMAND, ":\\x3a")


def json_string(text: str) -> str:
    """For JSON: the text as it is, except lone surrogates (no strict JSON reader accepts them) as escapes."""
    if text.isascii():  # O(1) for CPython's compact strings: no surrogate, nothing to scan
        return text
    surrogate = _pattern(_SURROGATE)
    return surrogate.sub(_visible, text) if surrogate.search(text) else text


def json_safe(value: object) -> object:
    """A JSON document with every string (keys included) passed through `json_string`."""
    if isinstance(value, str):
        return json_string(value)
    if isinstance(value, dict):
        return {json_string(k) if isinstance(k, str) else k: json_safe(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [json_safe(v) for v in value]
    return value
