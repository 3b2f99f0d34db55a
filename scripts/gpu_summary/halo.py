"""The halo convolution: its step split into compute and exposed transfer, by precision."""
from .common import fmt, is_cuda, num, run_stat, runs_of, spec_of, toggles_on


def halo_section(results):
    hc = [r for r in results if spec_of(r).get("workload") == "halo_conv" and is_cuda(r) and runs_of(r)]
    if not hc:
        return "## Halo convolution\n\nNo halo_conv results.\n", {}
    rows, fallbacks = {}, {}
    for r in hc:
        d, f = (r.get("plan") or {}).get("data") or {}, runs_of(r)[0].get("facts") or {}
        try:
            shape = f"{d['batch']}x{d['channels']}x{d['depth']}x{d['height']}x{d['width']}->{d['out_channels']} k{d['kernel']}"
            # Results from before precision=bf16 existed are fp32 (TF32 on cuda).
            shape += " " + ((r.get("plan") or {}).get("precision") or "tf32")
            key = (shape, d["partitions"], d["halo"], toggles_on(r))
        except KeyError:
            continue
        # The parts the harness timed alone (runs[].parts); results from
        # before it did have them as facts "<part>_ms".
        parts = {p.get("name"): p.get("ms") for p in runs_of(r)[0].get("parts") or []}
        part = lambda name: num(parts.get(name, f.get(name + "_ms")))
        # Convolution calls a step staged through plane copies (results from before the fact: "-").
        staged = (f"{f['staged_calls']} of {f['convolution_calls']}"
                  if "staged_calls" in f and "convolution_calls" in f else "-")
        rows[key] = (run_stat(r, "iteration_ms"), part("compute"), part("transfer"), f.get("overlap", "-"), staged)
        if f.get("data_gradient_fallback"):
            fallbacks[key] = f"{f.get('data_gradient', '')}; first: {f['data_gradient_fallback']}"
    lines = ["## Halo convolution (cuda; P slabs on P streams of one GPU)", "",
             "| shape | P | halo | toggles | overlap | staged calls | step (ms) | compute (ms) | transfer (ms) | "
             "exposed (ms) | overlap efficiency | vs 1 partition |", "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    eff, eff_text, cost = [], [], []
    for (shape, parts, halo, tog), (ms, comp, xfer, ov, staged) in sorted(rows.items(), key=lambda kv: str(kv[0])):
        naive = rows.get((shape, parts, "naive", tog))
        # As the sweep report: only where the transfer is at least 1% of the step.
        e = (naive[0] - ms) / xfer if halo == "overlap" and naive and naive[0] and ms and xfer and xfer >= 0.01 * ms else None
        one = [v[0] for k, v in rows.items() if k[0] == shape and k[1] == 1 and k[3] == tog and v[0]]
        c = ms / min(one) if one and ms else None
        # Negative: the overlap made the step slower (a ratio like -1904% says
        # nothing readable): by how much, as the report's table says it.
        e_text = None if e is None else f"{e:.0%}" if e >= 0 else f"none ({-e * xfer:.3f} ms slower)"
        if e is not None:
            eff.append(e)
            eff_text.append(e_text)
        if c is not None and parts > 1:
            cost.append(c)
        exposed = max(0.0, ms - comp) if ms and comp else None  # as the report: >= 0
        lines.append(f"| {shape} | {parts} | {halo} | {tog} | {ov} | {staged} | {fmt(ms, '{:.3f}')} | {fmt(comp, '{:.3f}')} | "
                     f"{fmt(xfer, '{:.3f}')} | {fmt(exposed, '{:.3f}')} | {e_text or '-'} | {fmt(c, '{:.2f}x')} |")
    if fallbacks:
        lines += ["", "Data gradients cuDNN had no backward-data algorithm for (run as forward convolutions with "
                  "flipped weights):", ""]
        for (shape, parts, halo, tog), text in sorted(fallbacks.items(), key=lambda kv: str(kv[0])):
            lines.append(f"- {shape}, P={parts}, {halo}, {tog}: {text[:600]}")
    return "\n".join(lines) + "\n", {"efficiency": eff, "efficiency_text": eff_text, "cost": cost}
