"""Kernels that ran slower in a CUDA graph than launched one by one: each profiled point with graphs
in effect against the profiled point that differs from it only in graphs (the toggle matrix's eager
run with the same fused and sync-free), kernel by kernel."""
import json

from .common import cell, env_var, fmt, num, params_of, point_label, run_stat, spec_of, toggle_in_effect
from .kernels import profiled_points, short_kernel_name

# A kernel is listed when the graph's time is at least this much over the
# eager one's, both ways: a ratio (noise in a few-microsecond kernel is a
# few percent) and an absolute amount (what a step's time can feel).
MIN_RATIO = 1.2
MIN_US = 1.0
ROWS = 8


def _pair_key(r):
    """What must match for two points to differ only in graphs."""
    s = spec_of(r)
    return (s.get("workload"), s.get("preset"), json.dumps(params_of(r), sort_keys=True),
            toggle_in_effect(r, "fused"), toggle_in_effect(r, "sync_free"), env_var(r, "CUDA_DEVICE_MAX_CONNECTIONS"))


def kernel_times(profile):
    """{kernel name: (us per iteration, launches per iteration or None)} of a
    profile's kernel rows (copies and memsets left out)."""
    out = {}
    for row in profile.get("rows") or []:
        if isinstance(row, dict) and (row.get("kind") or "kernel") == "kernel":
            us = num(row.get("us_per_iteration"))
            if us is not None and isinstance(row.get("name"), str) and row["name"]:
                launches = num(row.get("launches_per_iteration"))
                had_us, had_launches = out.get(row["name"], (0.0, 0.0))
                out[row["name"]] = (had_us + us, None if launches is None or had_launches is None
                                    else had_launches + launches)
    return out


def slower_in_graph(graph, eager, min_ratio=MIN_RATIO, min_us=MIN_US):
    """[(name, graph us, eager us)] of the kernels both profiles ran as often
    (launches per iteration, where both say) whose graph time is at least
    min_ratio times and min_us over the eager time, the largest difference
    first."""
    g, e = kernel_times(graph), kernel_times(eager)
    rows = []
    for n, (gu, gl) in g.items():
        if n not in e:
            continue
        eu, el = e[n]
        if gl is not None and el is not None and gl != el:
            continue  # run a different number of times: not the same work
        if eu > 0 and gu >= min_ratio * eu and gu - eu >= min_us:
            rows.append((n, gu, eu))
    return sorted(rows, key=lambda x: (-(x[1] - x[2]), x[0]))


def graph_pairs(results):
    """[(graph result, its profile, eager result, its profile)], one per
    graph point with an eager twin (the first twin by path)."""
    points = [(r, p) for r, _, _, p in profiled_points(results)]  # CUDA points only
    eager = {}
    for r, p in sorted(points, key=lambda x: x[0].get("_path", "")):
        if not toggle_in_effect(r, "cuda_graphs"):
            eager.setdefault(_pair_key(r), (r, p))
    pairs = []
    for r, p in points:
        if toggle_in_effect(r, "cuda_graphs") and _pair_key(r) in eager:
            pairs.append((r, p) + eager[_pair_key(r)])
    return pairs


def graphs_section(results):
    lines = ["## Kernels slower in the graph than launched one by one", ""]
    pairs = graph_pairs(results)
    if not pairs:
        return "\n".join(lines + ["No profiled point with graphs has a profiled eager twin (the same parameters, "
                                  "fused and sync-free): nothing compared.", ""]) + "\n"
    lines += [f"Each profiled point with CUDA graphs against the profiled point that differs only in graphs. "
              f"Listed: kernels run as often in both whose time per iteration in the graph is at least "
              f"{MIN_RATIO:g}x and {MIN_US:g} us over the eager time. Why a kernel is slower is not in this "
              "table: one candidate is other streams' kernels beside it, which a graph starts without the "
              "host gaps of eager launches (the side-streams step, profiled, compares one stream with "
              "several); the trace shows which of these kernels are on the step's chain.", ""]
    for g, gp, e, ep in pairs:
        rows = slower_in_graph(gp, ep)
        gi, ei = run_stat(g, "iteration_ms"), run_stat(e, "iteration_ms")
        lines.append(f"### {point_label(g)} against {point_label(e).split(' · ')[-1]}")
        lines.append("")
        lines.append(f"- iteration (unprofiled, median of runs' p50): graph {fmt(gi, '{:.4f}')} ms, eager "
                     f"{fmt(ei, '{:.4f}')} ms; `{g.get('_path', '?')}` against `{e.get('_path', '?')}`")
        if not rows:
            lines += ["- no kernel slower in the graph by the rule above", ""]
            continue
        total = sum(x[1] - x[2] for x in rows)
        lines.append(f"- {len(rows)} kernel(s), {total:,.1f} us per iteration more kernel time in the graph "
                     "(summed over the kernels: not step time, where kernels overlap)")
        lines += ["", "| kernel | graph (us/iteration) | eager (us/iteration) | graph / eager |", "|---|---|---|---|"]
        for name, gu, eu in rows[:ROWS]:
            lines.append(f"| `{cell(short_kernel_name(name, 90))}` | {gu:,.1f} | {eu:,.1f} | {gu / eu:.2f}x |")
        if len(rows) > ROWS:
            lines.append(f"| ({len(rows) - ROWS} more) | | | |")
        lines.append("")
    return "\n".join(lines) + "\n"
