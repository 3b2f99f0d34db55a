"""The lead: each profiled point's top kernels, and kernels per iteration measured against
declared."""
import os

from .common import TOP, cell, fmt, is_cuda, is_throughput, num, point_key, point_label, runs_of


# --- kernel names ---------------------------------------------------------------------------

def _strip_group(text, open_ch, close_ch, keep=""):
    """Replaces every outermost open..close group with `keep`."""
    out, depth = [], 0
    for c in text:
        if c == open_ch:
            if depth == 0:
                out.append(keep)
            depth += 1
        elif c == close_ch and depth:
            depth -= 1
        elif depth == 0:
            out.append(c)
    return "".join(out)


def short_kernel_name(name, width=60):
    """A demangled kernel name cut for a table: no return type, no
    parameter list, no namespaces; template arguments kept while it fits."""
    s = (name or "?").strip()
    s = s.replace("(anonymous namespace)::", "").replace("{anonymous}::", "")
    if s.startswith("void "):
        s = s[5:]
    # The parameter list: the last (...) group at template depth 0.
    depth, cut = 0, None
    for i, c in enumerate(s):
        if c == "<":
            depth += 1
        elif c == ">" and depth:
            depth -= 1
        elif c == "(" and depth == 0:
            cut = i
            break
    if cut and cut > 0:
        s = s[:cut]
    # Namespaces and classes: keep the last component (outside templates).
    depth, last = 0, 0
    for i, c in enumerate(s):
        if c == "<":
            depth += 1
        elif c == ">" and depth:
            depth -= 1
        elif depth == 0 and s.startswith("::", i):
            last = i + 2
    s = s[last:] or s
    if len(s) > width:
        s = _strip_group(s, "<", ">", "<…>")
    if len(s) > width:
        keep = width - 1
        s = s[: keep - keep // 3] + "…" + s[len(s) - keep // 3:]
    return s


# --- the lead: top kernels per point -----------------------------------------------------------

def profiled_points(results):
    out = []
    for r in results:
        if not is_cuda(r):
            continue
        for i, run in enumerate(runs_of(r)):
            p = run.get("profile")
            if isinstance(p, dict):
                out.append((r, i, run, p))
                break  # one run per point: the first profiled seed
    out.sort(key=lambda x: point_key(x[0]))
    return out


def kernels_measured_declared(p):
    k = num(p.get("kernels_per_iteration"))
    d = num(p.get("declared_kernels_per_iteration"))
    return f"{fmt(k, '{:g}')} measured, " + (f"{d:g} declared" if d is not None else "none declared")


def overhead_text(p):
    o, a, b = num(p.get("overhead")), num(p.get("profiled_iteration_ms")), num(p.get("unprofiled_iteration_ms"))
    if o is None and a is not None and b:
        o = a / b
    if o is None:
        return "profiler overhead not measured"
    return f"profiler overhead {o:.3f}× ({fmt(a, '{:.3f}')} ms profiled / {fmt(b, '{:.3f}')} ms unprofiled)"


def busy_text(p):
    """The share of the profiled window with any kernel, copy or memset
    running, and how many ran at once on average (the profile's busy_share
    and concurrency; absent in results from before them)."""
    b, c = num(p.get("busy_share")), num(p.get("concurrency"))
    if b is None:
        return "device busy not measured"
    text = f"device busy (kernels, copies, memsets) {b:.0%} of the window, {fmt(c, '{:.2f}')} at a time"
    stalls = num(p.get("stalls"))
    if stalls:
        text += f" (left out: {stalls:g} stall(s) longer than an iteration, {fmt(num(p.get('stall_us')), '{:,.1f}')} us)"
    return text


def kernels_section(results):
    points = profiled_points(results)
    lines = [f"## Top {TOP} kernels per workload and point (--profile)", ""]
    if not points:
        lines += ["No profiled runs (no result.json with runs[].profile): nothing measured per kernel.", ""]
        return "\n".join(lines) + "\n"
    lines += ["Share = the kernel's device time over the iteration's (can sum past 100% with concurrent "
              "streams); us and launches are per iteration of the profiled window; × floor = time over the "
              "roofline floor of the work its launching code declares. Headline times come from the unprofiled "
              "timed window.", ""]
    for r, i, run, p in points:
        lines.append(f"### {point_label(r)}")
        lines.append("")
        facts = [f"kernels per iteration: {kernels_measured_declared(p)}",
                 f"copies {fmt(num(p.get('copies_per_iteration')), '{:g}')}, "
                 f"memsets {fmt(num(p.get('memsets_per_iteration')), '{:g}')}",
                 overhead_text(p),
                 busy_text(p),
                 f"{fmt(num(p.get('iterations')), '{:g}')} profiled iterations, "
                 f"{fmt(num(p.get('iteration_us')), '{:,.1f}')} us of device time each"]
        if p.get("peaks"):
            facts.append(f"floors at: {p['peaks']}")
        if num(p.get("dropped")):
            facts.append(f"**CUPTI dropped {p['dropped']} records: the table undercounts**")
        if p.get("trace"):
            facts.append(f"trace: `{os.path.join(os.path.dirname(r['_path']), p['trace'])}` (in gpu-check.tar.gz)")
        lines.append("- " + "; ".join(facts))
        lines += ["", "| # | kernel | declared | share | us/iteration | launches/iteration | × floor |",
                  "|---|---|---|---|---|---|---|"]
        rows = [x for x in (p.get("rows") or []) if isinstance(x, dict)]
        for n, k in enumerate(rows[:TOP], 1):
            kind = k.get("kind") or "kernel"
            name = short_kernel_name(k.get("name")) if kind == "kernel" else str(k.get("name") or kind)
            if kind != "kernel" and kind not in name:
                name += f" ({kind})"
            share = num(k.get("share"))
            lines.append(f"| {n} | `{cell(name)}` | {cell(k.get('declared') or '-')} | "
                         f"{fmt(share * 100 if share is not None else None, '{:.1f}%')} | "
                         f"{fmt(num(k.get('us_per_iteration')), '{:,.1f}')} | "
                         f"{fmt(num(k.get('launches_per_iteration')), '{:g}')} | "
                         f"{fmt(num(k.get('x_floor')), '{:.1f}×')} |")
        if not rows:
            lines.append("| - | (no rows) | | | | | |")
        elif len(rows) > TOP:
            lines.append(f"| | ({len(rows) - TOP} more rows in {r['_path']}) | | | | | |")
        groups = [g for g in (p.get("groups") or []) if isinstance(g, dict)]
        if groups:
            lines.append("")
            lines.append("Declared groups (one declaration, several kernels): " + "; ".join(
                f"{cell(g.get('declared'))}: {g.get('rows')} kernels, "
                f"{fmt(num(g.get('launches_per_iteration')), '{:g}')} launches "
                f"({fmt(num(g.get('declared_launches')), '{:g}')} declared), "
                f"{fmt(num(g.get('us_per_iteration')), '{:,.1f}')} us, "
                f"{fmt(num(g.get('share')) * 100 if num(g.get('share')) is not None else None, '{:.1f}%')}, "
                f"{fmt(num(g.get('x_floor')), '{:.1f}×')} floor" for g in groups))
        unmatched = [u for u in (p.get("unmatched") or []) if u]
        if unmatched:
            lines.append("")
            lines.append("Declared but not run: " + "; ".join(cell(u) for u in unmatched))
        idle = idle_text(p)
        if idle:
            lines += ["", idle]
        waits = busy_waits_text(p)
        if waits:
            lines += ["", waits]
        lines.append("")
    return "\n".join(lines) + "\n"


def record_name(n):
    """A profile record's name for a sentence: copies and memsets as they are, kernels cut short."""
    n = str(n or "?")
    return n if n.startswith("mem") else short_kernel_name(n, 40)


def idle_text(p, top=3):
    """The profile's largest idle gaps (idle_gaps: where the device waited,
    by what ended a busy stretch and what started the next), or ""."""
    gaps = [g for g in (p.get("idle_gaps") or []) if isinstance(g, dict) and num(g.get("us_per_iteration"))]
    if not gaps:
        return ""

    return "Device idle, largest gaps per iteration: " + "; ".join(
        f"{fmt(num(g.get('us_per_iteration')), '{:.1f}')} us after `{cell(record_name(g.get('before')))}` "
        f"before `{cell(record_name(g.get('after')))}` ({fmt(num(g.get('gaps_per_iteration')), '{:g}')} an iteration)"
        for g in gaps[:top])


def busy_waits_text(p, top=3):
    """The profile's largest busy waits (busy_waits: where the step's
    last-arrival path waited while other records ran, by the record before,
    the one that waited and the one beside it most), or ""."""
    waits = [w for w in (p.get("busy_waits") or []) if isinstance(w, dict) and num(w.get("us_per_iteration"))]
    if not waits:
        return ""

    return ("Waits on the last-arrival path while the device was busy (on free SMs or an earlier dependency: "
            "the records do not say which), largest per iteration: " + "; ".join(
                f"{fmt(num(w.get('us_per_iteration')), '{:.1f}')} us before `{cell(record_name(w.get('after')))}` "
                f"after `{cell(record_name(w.get('before')))}`, beside `{cell(record_name(w.get('beside')))}` "
                f"({fmt(num(w.get('waits_per_iteration')), '{:g}')} an iteration)" for w in waits[:top]))


def launches_of(r):
    """(kernels, declared, copies, memsets, note) per iteration of a run:
    execution.launches_per_iteration (every CUDA throughput run), else the profile."""
    for run in runs_of(r):
        lp = ((run.get("execution") or {}).get("launches_per_iteration")) or {}
        if num(lp.get("kernels")) is not None:
            return (lp.get("kernels"), lp.get("declared_kernels"), lp.get("copies"), lp.get("memsets"),
                    lp.get("note") or "")
    for run in runs_of(r):
        p = run.get("profile")
        if isinstance(p, dict) and num(p.get("kernels_per_iteration")) is not None:
            return (p.get("kernels_per_iteration"), p.get("declared_kernels_per_iteration"),
                    p.get("copies_per_iteration"), p.get("memsets_per_iteration"), "from the profile")
    for run in runs_of(r):
        lp = ((run.get("execution") or {}).get("launches_per_iteration")) or {}
        if lp:
            return (None, lp.get("declared_kernels"), None, None, lp.get("note") or "")
    return None


def launches_section(results):
    rows = [r for r in results if is_cuda(r) and is_throughput(r)]
    lines = ["## Kernels per iteration in every CUDA throughput run", ""]
    if not rows:
        return "\n".join(lines + ["No CUDA throughput results.", ""]) + "\n"
    lines += ["Counted by CUPTI over the last warm-up iteration (profiled or not).", "",
              "| point | kernels | declared | copies | memsets | note |", "|---|---|---|---|---|---|"]
    for r in sorted(rows, key=point_key):
        lp = launches_of(r)
        if lp is None:
            lines.append(f"| {cell(point_label(r))} | - | - | - | - | not recorded |")
            continue
        k, d, c, m, note = lp
        lines.append(f"| {cell(point_label(r))} | {fmt(num(k), '{:g}')} | {fmt(num(d), '{:g}')} | "
                     f"{fmt(num(c), '{:g}')} | {fmt(num(m), '{:g}')} | {cell(note) or '-'} |")
    return "\n".join(lines) + "\n"
