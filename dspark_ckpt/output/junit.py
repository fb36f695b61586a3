"""Report -> JUnit XML: one test suite per checkpoint, one test case per check (rule family or runtime)."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

from dspark_ckpt.model import runtime_label
from dspark_ckpt.model.findings import Finding
from dspark_ckpt.model.report import CheckpointReport, Compatibility, Report
from dspark_ckpt.model.rule_catalog import RULES, Category
from dspark_ckpt.output.context import RenderContext, Sink
from dspark_ckpt.output.escape import cut, visible, visible_keep_lines

# What every check evaluates: each is a test case of every checkpoint, passing when it holds no finding.
CHECKED = (Category.HEADER, Category.LAYOUT, Category.CONFIG, Category.CONTRACT, Category.SHAPE, Category.MAPPING)
MESSAGE_LIMIT = 10_000  # characters of one message in a test report (the JSON report keeps them all)
_NOT_XML = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


def xml_safe(text: str) -> str:
    """XML 1.0 cannot carry NUL, most C0 controls or lone surrogates (a hostile tensor name may), and a CI page
    should not render ANSI or bidi controls: all shown as visible escapes; tab, LF and CR pass."""
    text = visible_keep_lines(text)
    return _NOT_XML.sub(lambda m: f"\\x{ord(m.group()):02x}" if ord(m.group()) < 256 else f"\\u{ord(m.group()):04x}",
                        text)


def family_of(code: str) -> str:
    """The rule's category as registered in rule_catalog: one test case per category and checkpoint."""
    rule = RULES.get(code)
    return rule.category.value if rule is not None else "other"


def _runtime_name(e: Compatibility) -> str:
    return f"runtime {runtime_label.selector(e.runtime, e.version)}"


def _line(f: Finding) -> str:
    """One line per finding: a newline inside a checkpoint's text is escaped, so it cannot fake another finding."""
    where = visible(cut(":".join(p for p in (f.file, f.tensor) if p), 500))
    return f"{f.severity.value} {f.code} {where + ': ' if where else ''}{visible(cut(f.message, MESSAGE_LIMIT))}"


def _outcome(e: Compatibility) -> tuple[object, ...]:
    return (e.runtime, e.loads, e.error_code, e.first_step_error_code, e.silent_codes)


def _group_name(group: list[Compatibility]) -> str:
    if len(group) == 1:
        return _runtime_name(group[0])
    low, high = group[0].version.split("-")[0], group[-1].version.split("-")[-1]
    return f"runtime {group[0].runtime} {low}-{high}"


def runtime_groups(c: CheckpointReport) -> dict[str, set[str | None]]:
    """Case name -> the codes it owns: consecutive releases of one runtime with the same outcome are one case, so
    one finding repeated per release is one entry, named by its release range."""
    groups: list[list[Compatibility]] = []
    for e in c.compatibility:
        if groups and _outcome(groups[-1][-1]) == _outcome(e):
            groups[-1].append(e)
        else:
            groups.append([e])
    return {_group_name(g): {g[0].error_code, g[0].first_step_error_code, *g[0].silent_codes} for g in groups}


def cases(c: CheckpointReport) -> dict[str, list[Finding]]:
    """Test case name -> its findings. A runtime-contract finding goes to every runtime case whose entries name its
    code; every other finding to its rule family, so each finding is reported at least once."""
    out: dict[str, list[Finding]] = {category.value: [] for category in CHECKED}
    runtime_codes = runtime_groups(c)
    out.update({name: [] for name in runtime_codes})
    for f in c.findings:
        owners = [name for name, codes in runtime_codes.items() if f.code in codes]
        for name in owners or [family_of(f.code)]:
            out.setdefault(name, []).append(f)
    return out


def _testcase(suite: ET.Element, c: CheckpointReport, name: str, found: list[Finding], ctx: RenderContext) -> bool:
    case = ET.SubElement(suite, "testcase", classname=xml_safe(c.source), name=name, time="0")
    failing = [f for f in found if ctx.is_gated(c, f)]
    if failing:
        first = failing[0]
        failure = ET.SubElement(case, "failure", type=first.code, message=xml_safe(cut(f"{first.code}: {first.message}", MESSAGE_LIMIT)))
        failure.text = xml_safe("\n".join(_line(f) + (f"\nhint: {visible(cut(f.hint, MESSAGE_LIMIT))}" if f.hint else "") for f in failing))
    rest = [f for f in found if f not in failing]
    if rest:
        ET.SubElement(case, "system-out").text = xml_safe("\n".join(_line(f) for f in rest))
    return bool(failing)


def junit_tree(report: Report, ctx: RenderContext) -> ET.Element:
    root = ET.Element("testsuites", name="dspark-ckpt")
    total = failures = 0
    for c in report.checkpoints:
        suite = ET.SubElement(root, "testsuite", name=xml_safe(c.source))
        props = ET.SubElement(suite, "properties")
        for key in ("family", "vocab_kind", "draft_vocab_size", "target_vocab_size", "revision"):
            value = getattr(c, key)
            if value is not None:
                ET.SubElement(props, "property", name=key, value=xml_safe(str(value)))
        found = cases(c)
        failed = sum(_testcase(suite, c, name, fs, ctx) for name, fs in found.items())
        suite.attrib.update(tests=str(len(found)), failures=str(failed), errors="0", skipped="0", time="0")
        total, failures = total + len(found), failures + failed
    root.attrib.update(tests=str(total), failures=str(failures), errors="0", time="0")
    return root


def render(report: Report, console: Sink, ctx: RenderContext) -> None:
    tree = junit_tree(report, ctx)
    ET.indent(tree)
    console.file.write('<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(tree, encoding="unicode") + "\n")
