"""The text section `verify` prints under the check report: device, timings, loads, mappings, probe, engine."""

from __future__ import annotations

from typing import Any

from rich.console import Console, RenderableType
from rich.text import Text

from dspark_ckpt.check.ranges import spans
from dspark_ckpt.output.interval import rate
from dspark_ckpt.output.plain import table
from dspark_ckpt.output.records import human_bytes
from dspark_ckpt.output.runs import fold
from dspark_ckpt.output.verify_records import RuntimeState, VerifyResult


def _runtimes(r: VerifyResult, console: Console) -> RenderableType:
    rows: list[list[str | Text]] = []
    # Consecutive SGLang releases that loaded the same way share a row, as in check's compatibility table.
    for run in fold(r.runtimes, lambda s: (s.runtime, s.version), _loaded):
        name, s = run.label, run.entry
        loads = Text("yes", style="green") if s.loads else Text(f"no ({s.error_code})", style="bold red")
        if s.loads and s.first_step_code:
            loads = Text(f"1st step ({s.first_step_code})", style="bold red")
        param = ("loaded" if s.d2t_loaded else "zeros") if s.d2t_param else "none"
        rows.append([name, loads, param, s.lm_head, s.embed_tokens])
    columns = [(col, {"no_wrap": True}) for col in ("runtime", "loads", "d2t param", "lm_head", "embed_tokens")]
    return table(console, "Loaded with torch", columns, rows)


def _loaded(s: RuntimeState) -> tuple[object, ...]:
    return (s.loads, s.error_code, s.first_step_code, s.d2t_param, s.d2t_loaded, s.lm_head, s.embed_tokens)


def _mappings(r: VerifyResult, console: Console) -> RenderableType:
    rows: list[list[str | Text]] = []
    for m in r.mappings:
        extra = f"{m.out_of_range} ids >= T (padded rows)" if m.out_of_range and not m.failures else "ok"
        rows.append([spans(m.runtimes), m.source, "; ".join(m.failures) or extra])
    columns: list[tuple[str, dict[str, Any]]] = [("runtimes", {"overflow": "fold"}), ("mapping", {"no_wrap": True}),
                                                 ("result", {"overflow": "fold"})]
    return table(console, "map_draft_to_target(arange(D)) on the device", columns, rows)


def _probe(r: VerifyResult, console: Console) -> RenderableType:
    p = r.probe
    if not p.ran:
        return Text(f"padded-row probe: not run ({p.reason})")
    title = (f"Padded-row probe on {p.runtime} ({p.illegal_rows} illegal rows, {p.lm_head_dtype}, seed {p.seed}; "
             "rates with their 95% Wilson interval)")
    # Short headers keep the table readable at 80 columns: "illegal" means a row in [T, D).
    columns = [(col, {"no_wrap": not wrap, "overflow": "fold"})
               for col, wrap in (("probes", False), ("logits", True), ("n", False), ("argmax illegal", True),
                                 ("top-k illegal", True), ("max margin (row)", True))]
    rows: list[list[str | Text]] = []
    for s in p.stats:
        margin = f"{s.max_margin:+.4g} ({s.max_margin_row})" if s.max_margin is not None else "-"
        rows.append([s.source, s.logits, str(s.probes), rate(s.argmax_illegal, s.probes),
                     f"{rate(s.topk_any_illegal, s.probes)} (k={s.top_k})", margin])
    shown = table(console, title, columns, rows)
    if p.stats and all(s.probes and s.tied == s.probes for s in p.stats):
        from rich.console import Group

        return Group(shown, Text("the probe could not discriminate: every probe's logits tie, so 0 illegal argmax "
                                 "says nothing about the padded rows (DSP608)", style="yellow"))
    return shown


def render_verify(r: VerifyResult, console: Console) -> None:
    if r.skipped:
        console.print(Text(f"verify skipped: {r.skipped}", style="yellow"))
        return
    times = "  ".join(f"{k} {_duration(v)}" for k, v in r.timings_ms.items())
    read = sum(t.nbytes for t in r.tensors_read)
    console.print(Text.assemble(("verify ", "bold"), f"on {r.device} (torch {r.torch_version}): read "
                                f"{len(r.tensors_read)} vocab tensor(s), {human_bytes(read)}; {times}"))
    console.print(_runtimes(r, console))
    if r.mappings:
        console.print(_mappings(r, console))
    console.print(_probe(r, console))
    if r.probe.ran:
        console.print(Text(f"{r.probe.probes:,} probes: {r.probe.probes_why or 'as asked'}", style="dim"))
    if p := r.probe.markov_pairing:
        console.print(Text(f"markov: {p}", style="dim"))


def _duration(ms: float) -> str:
    return f"{ms:.1f} ms" if ms < 1000 else f"{ms / 1000:.1f} s"


def render_engine(doc: dict[str, Any], console: Console) -> None:
    """Which loader answered (verify/engine_report.py's doc); for an installed runtime, its exception verbatim, what
    its load left unwritten or cut, and the state it left."""
    if doc.get("engine") != "installed":  # verify.engine.Engine.INSTALLED
        if doc.get("fallback"):
            console.print(Text(f"engine: modelled (--engine installed fell back: {doc['fallback']})",
                               style="yellow"))
        return
    for one in doc.get("runtimes") or [doc]:
        _render_installed(one, console)
    if doc.get("runtimes") and doc.get("fallback"):
        console.print(Text(f"  not asked: {doc['fallback']}", style="yellow"), overflow="fold")


_LABEL = {"vllm": "vLLM", "sglang": "SGLang"}


def _render_step(step: dict[str, Any] | None, console: Console) -> None:
    """The release's own first draft step after the load (verify/engine_vllm.py run_first_step), where it ran."""
    if not step:
        return
    if "not_run" in step:
        console.print(Text(f"  first draft step: not run ({step['not_run']})", style="dim"), overflow="fold")
        return
    failed = next((step[a] for a in ("capture", "outside", "inside", "last") if isinstance(step.get(a), dict)
                   and not (a == "inside" and step.get("outside") is not None)
                   and (a == "capture" or step[a].get("stage") != "embed")), None)  # (verify/engine.py's order)
    if failed is None:
        did = "target sharing, logits, argmax, embedding lookup" if step.get("family") != "dspark" else \
            "base logits cropped to the target head, the Markov step"
        console.print(Text(f"  first draft step: ran ({did})", style="green"))
    else:
        console.print(Text(f"  first draft step raised: {failed['raises']}: {failed['text']} "
                           f"({failed.get('where') or '?'})", style="red"), overflow="fold")


def _render_installed(doc: dict[str, Any], console: Console) -> None:
    runtime = str(doc.get("runtime") or "vllm")
    head = f"engine: installed {_LABEL.get(runtime, runtime)} {doc['version']} ({doc.get('model_class') or 'not registered'})"
    console.print(Text(head, style="bold"))
    console.print(Text(f"  answers for {runtime}=={doc['version']} only; every other row: the modelled loader",
                       style="dim"))
    if doc.get("exception"):
        console.print(Text(f"  raised in {doc.get('phase') or 'registry'}: {doc['exception']}", style="red"),
                      overflow="fold")
    else:
        console.print(Text("  __init__ and load_weights completed on every tensor", style="green"))
    seen = doc.get("landing") or {}
    if seen.get("unwritten") or seen.get("cut"):
        console.print(Text(f"  left unwritten: {', '.join(seen.get('unwritten') or []) or 'none'}; cut to fit: "
                           f"{', '.join(seen.get('cut') or []) or 'none'}", style="yellow"), overflow="fold")
    state = doc.get("state") or {}
    if state and "d2t_param" in state:
        d2t = state.get("d2t") or {}
        table = ("none" if not state.get("d2t_param") else
                 f"loaded ({d2t.get('out_of_range', 0)} ids >= T)" if state.get("d2t_loaded") else "all zeros")
        def own(flag: str) -> str:
            return "the draft's own" if state.get(flag) else "none of its own (load_*_model shares or leaves it)"

        console.print(f"  lm_head: {own('has_own_lm_head')}; embed_tokens: {own('has_own_embed_tokens')}; "
                      f"draft_id_to_target_id: {table}", markup=False)
    _render_step(doc.get("first_step"), console)
    if doc.get("disagreement"):
        console.print(Text(f"  check disagrees: {doc['disagreement']}", style="yellow"),
                      overflow="fold")
