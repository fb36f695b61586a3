"""The text section `verify` prints under the check report: device, timings, runtime loads, mappings, probe."""

from __future__ import annotations

from rich.console import Console
from rich.table import Table
from rich.text import Text

from dspark_ckpt.model import runtime_label
from dspark_ckpt.output.render import human_bytes
from dspark_ckpt.verify.result import VerifyResult


def _runtimes(r: VerifyResult) -> Table:
    table = Table(title="Loaded with torch", title_justify="left")
    for col in ("runtime", "loads", "d2t param", "lm_head", "embed_tokens"):
        table.add_column(col, no_wrap=True)
    for s in r.runtimes:
        name = runtime_label.display(s.runtime, s.version)
        loads = Text("yes", style="green") if s.loads else Text(f"no ({s.error_code})", style="bold red")
        if s.loads and s.first_step_code:
            loads = Text(f"1st step ({s.first_step_code})", style="bold red")
        param = ("loaded" if s.d2t_loaded else "zeros") if s.d2t_param else "none"
        table.add_row(name, loads, param, s.lm_head, s.embed_tokens)
    return table


def _mappings(r: VerifyResult) -> Table:
    table = Table(title="map_draft_to_target(arange(D)) on the device", title_justify="left")
    table.add_column("runtimes", overflow="fold")
    table.add_column("mapping", no_wrap=True)
    table.add_column("result", overflow="fold")
    for m in r.mappings:
        extra = f"{m.out_of_range} ids >= T (padded rows)" if m.out_of_range and not m.failures else "ok"
        table.add_row(", ".join(m.runtimes), m.source, "; ".join(m.failures) or extra)
    return table


def _probe(r: VerifyResult) -> Table | Text:
    p = r.probe
    if not p.ran:
        return Text(f"padded-row probe: not run ({p.reason})")
    table = Table(title=f"Padded-row probe on {p.runtime} ({p.illegal_rows} illegal rows, {p.lm_head_dtype}, "
                        f"seed {p.seed})", title_justify="left")
    # Short headers keep the table readable at 80 columns: "illegal" means a row in [T, D).
    for col, wrap in (("probes", False), ("logits", True), ("n", False), ("argmax illegal", False),
                      ("top-k illegal", False), ("max margin (row)", True)):
        table.add_column(col, no_wrap=not wrap, overflow="fold")
    for s in p.stats:
        margin = f"{s.max_margin:+.4g} ({s.max_margin_row})" if s.max_margin is not None else "-"
        table.add_row(s.source, s.logits, str(s.probes), str(s.argmax_illegal),
                      f"{s.topk_any_illegal} (k={s.top_k})", margin)
    return table


def render_verify(r: VerifyResult, console: Console) -> None:
    if r.skipped:
        console.print(Text(f"verify skipped: {r.skipped}", style="yellow"))
        return
    times = "  ".join(f"{k} {_duration(v)}" for k, v in r.timings_ms.items())
    read = sum(t.nbytes for t in r.tensors_read)
    console.print(Text.assemble(("verify ", "bold"), f"on {r.device} (torch {r.torch_version}): read "
                                f"{len(r.tensors_read)} vocab tensor(s), {human_bytes(read)}; {times}"))
    console.print(_runtimes(r))
    if r.mappings:
        console.print(_mappings(r))
    console.print(_probe(r))
    if r.probe.ran:
        console.print(Text(f"{r.probe.probes:,} probes: {r.probe.probes_why or 'as asked'}", style="dim"))
    if p := r.probe.markov_pairing:
        console.print(Text(f"markov: {p}", style="dim"))


def _duration(ms: float) -> str:
    return f"{ms:.1f} ms" if ms < 1000 else f"{ms / 1000:.1f} s"
