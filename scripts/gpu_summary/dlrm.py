"""DLRM: throughput by batch and toggles against PyTorch, graphs, tuned GEMMs, epilogues, side
streams, the data-gradient GEMMs' weights, time to train, the lookup benchmark."""
import json
import os
import re

from .common import (
    as_int, cell, dlrm_label, env_var, fmt, gate_of, is_cuda, is_throughput, median, num, params_of, run_stat, runs_of,
    setup_fraction, spec_of, toggles_on, work_of,
)


def dlrm_points(results, preset=None):
    return [r for r in results if spec_of(r).get("workload") == "dlrm" and is_throughput(r) and is_cuda(r)
            and "batch_size" in params_of(r) and (preset is None or spec_of(r).get("preset") == preset)]


def dlrm_section(results, peers):
    tp = dlrm_points(results)
    dle = {id(r) for r in dlrm_points(results, "dle")}
    if not tp:
        return "## DLRM throughput\n\nNo DLRM throughput results.\n", {}
    lines = ["## DLRM throughput (dle shapes, cuda)", "",
             "samples/s is the median over seeds of timed-window throughput; iteration ms are CUDA-event "
             "medians; host ms is CPU time per iteration call; floor = max(FLOPs/peak, bytes/peak); setup is "
             "the data's preparation and each seed's model set-up (CPU model, upload, GEMM tuning), and its share "
             "is of the point's wall time (the timed run and its gate included).", "",
             "| precision | batch | toggles in effect | samples/s | iteration p50 (ms) | host p50 (ms) | floor (ms) | x floor "
             "| setup (s) | setup share | gate |",
             "|---|---|---|---|---|---|---|---|---|---|---|"]
    best, graphs = {}, {}
    # The batches of the toggle matrix (an all-toggles point, nothing else
    # named): the best-toggles and graphs tables, and the peers, are at
    # those; a choice step's extra batch (2,048: interaction, epilogues) has
    # no peer to compare with.
    matrix = {(params_of(r).get("precision", "fp32"), as_int(params_of(r)["batch_size"]))
              for r in tp if id(r) in dle and dlrm_label(r) == "fused+cuda_graphs+sync_free"}
    for r in sorted(tp, key=lambda r: (params_of(r).get("precision", "fp32"), as_int(params_of(r)["batch_size"]),
                                        toggles_on(r))):
        prec = params_of(r).get("precision", "fp32")
        b = as_int(params_of(r)["batch_size"])
        tog = dlrm_label(r)
        sps = num((r.get("score") or {}).get("throughput_samples_per_s"))
        gate = gate_of(r)
        frac, setup = setup_fraction(r)
        lines.append(f"| {prec} | {b} | {tog} | {fmt(sps, '{:,.0f}')} | {fmt(run_stat(r, 'iteration_ms'), '{:.3f}')} | "
                     f"{fmt(run_stat(r, 'host_iteration_ms'), '{:.3f}')} | {fmt(num(work_of(r).get('floor_ms')), '{:.3f}')} | "
                     f"{fmt(num(work_of(r).get('times_floor')), '{:.2f}')} | {fmt(setup, '{:.1f}')} | "
                     f"{fmt(frac, '{:.0%}')} | {'passed' if gate.get('passed') else 'FAILED'}: "
                     f"{cell(str(gate.get('detail', '-'))[:160])} |")
        if sps and id(r) in dle and (prec, b) in matrix:
            key = (prec, b)
            if key not in best or sps > best[key][0]:
                best[key] = (sps, tog)
            graphs.setdefault(key, {})[tog] = sps
    lines += ["", "### perflab (best toggles, dle) against PyTorch on the same GPU", "",
              "| precision | batch | perflab samples/s (toggles) | torch eager | torch compile reduce-overhead | x eager | x compiled |",
              "|---|---|---|---|---|---|---|"]
    ratios = {}
    for (prec, b), (sps, tog) in sorted(best.items()):
        dl = [p for p in peers if p.get("workload") == "dlrm" and p.get("batch") == b and p.get("precision") == prec
              and p.get("device", "cuda") != "cpu"]
        eager = median([p.get("samples_per_s") for p in dl if p.get("variant") == "eager"])
        comp = median([p.get("samples_per_s") for p in dl if str(p.get("variant", "")).startswith("compile")])
        xe = sps / eager if eager else None
        xc = sps / comp if comp else None
        ratios[(prec, b)] = (sps, xc, xe)
        lines.append(f"| {prec} | {b} | {sps:,.0f} ({tog}) | {fmt(eager, '{:,.0f}')} | {fmt(comp, '{:,.0f}')} | "
                     f"{fmt(xe, '{:.2f}')} | {fmt(xc, '{:.2f}')} |")
    lines += ["", "### CUDA graphs speedup (dle; fused+sync_free with graphs over without)", "",
              "| precision | batch | with graphs | without | speedup |", "|---|---|---|---|---|"]
    gspeed = {}
    for (prec, b), by in sorted(graphs.items()):
        on, off = by.get("fused+cuda_graphs+sync_free"), by.get("fused+sync_free")
        s = on / off if on and off else None
        gspeed[(prec, b)] = s
        lines.append(f"| {prec} | {b} | {fmt(on, '{:,.0f}')} | {fmt(off, '{:,.0f}')} | {fmt(s, '{:.2f}x')} |")
    # Tuned (the heuristic's candidates timed) and searched (every
    # algorithm id's too), each over the heuristic's first on the same point.
    suffixes = ("+tuned_gemms", "+searched_gemms")
    tuned_rows = [(k, by) for k, by in sorted(graphs.items()) if any(t.endswith(suffixes) for t in by)]
    if tuned_rows:
        lines += ["", "### cuBLASLt candidates timed at setup (gemm_algorithms=tuned, searched) over the heuristic's "
                  "first", "",
                  "| precision | batch | toggles | heuristic | tuned | searched | tuned x heuristic | searched x heuristic |",
                  "|---|---|---|---|---|---|---|---|"]
        for (prec, b), by in tuned_rows:
            bases = sorted({t[:-len(s)] for t in by for s in suffixes if t.endswith(s)})
            for t in bases:
                base, tuned, searched = by.get(t), by.get(t + suffixes[0]), by.get(t + suffixes[1])
                ratio = lambda v: fmt(v / base if v and base else None, '{:.2f}x')
                lines.append(f"| {prec} | {b} | {t} | {fmt(base, '{:,.0f}')} | {fmt(tuned, '{:,.0f}')} | "
                             f"{fmt(searched, '{:,.0f}')} | {ratio(tuned)} | {ratio(searched)} |")
    lines += tuned_gemm_lines(tp)
    lines += epilogues_lines(tp)
    lines += side_streams_lines(tp)
    lines += dgrad_weights_lines(tp)
    lines += wgrad_dy_lines(tp)
    lines += dependent_launch_lines(tp)
    lines += choice_lines(tp, "wgrad_streams", ("1", "2"),
                          "Weight gradients on one stream or taking turns on two (wgrad_streams=...)")
    lines += connections_lines(tp)
    lines += graph_memsets_lines(tp)
    return "\n".join(lines) + "\n", {"best": best, "ratios": ratios, "graphs": gspeed}


def tuned_gemm_lines(tp):
    """Each GEMM of each tuned point (gemm_algorithms=tuned: the facts'
    candidates, each timed alone at setup), the kept candidate's time, and
    each layer's data- and weight-gradient GEMMs over its forward: the same
    FLOPs, so a ratio well above 1 is the operands' layout or the output's
    bytes (a TF32 tensor-core GEMM on Hopper reads its operands K-major
    only; dgrad_weights=transposed gives the data gradient that layout)."""
    rows = []
    for r in tp:
        if params_of(r).get("gemm_algorithms") not in ("tuned", "searched"):
            continue
        times, order = {}, []
        for g in ((runs_of(r) or [{}])[0].get("facts") or {}).get("gemm_algorithms") or []:
            ms = g.get("candidate_median_ms") or []
            k = g.get("chosen", 0)
            if not isinstance(k, int) or not 0 <= k < len(ms) or num(ms[k]) is None:
                continue
            times[(g.get("layer"), g.get("gemm"))] = num(ms[k]) * 1000
            if g.get("layer") not in order:
                order.append(g.get("layer"))
        p = params_of(r)
        for layer in order:
            rows.append((p.get("precision", "fp32"), as_int(p["batch_size"]), dlrm_label(r), layer,
                         times.get((layer, "forward")), times.get((layer, "dgrad")), times.get((layer, "wgrad"))))
    if not rows:
        return []
    lines = ["", "### cuBLASLt GEMMs timed alone at setup (gemm_algorithms=tuned or searched): the kept candidates", "",
             "| precision | batch | toggles | layer | forward (us) | dgrad (us) | wgrad (us) | dgrad / forward "
             "| wgrad / forward |",
             "|---|---|---|---|---|---|---|---|---|"]
    for prec, b, tog, layer, f, d, w in sorted(rows, key=lambda x: (x[0], x[1], x[2])):
        ratio = lambda v: fmt(v / f if v and f else None, '{:.2f}')
        lines.append(f"| {prec} | {b} | {tog} | {layer} | {fmt(f, '{:,.1f}')} | {fmt(d, '{:,.1f}')} | "
                     f"{fmt(w, '{:,.1f}')} | {ratio(d)} | {ratio(w)} |")
    return lines


def epilogues_lines(tp):
    """cuBLASLt's epilogues against our own passes (the dlrm-epilogues step:
    epilogues=cublaslt,own_backward,own at two batches)."""
    return choice_lines(tp, "epilogues", ("cublaslt", "own_backward", "own"),
                        "MLP epilogues: cuBLASLt's against our own passes (epilogues=...)")


def side_streams_lines(tp):
    """One stream against side streams (the dlrm-side-streams step:
    side_streams=off,on at two batches)."""
    return choice_lines(tp, "side_streams", ("off", "on"),
                        "Side streams: the weight gradients and the update's sort beside the step (side_streams=...)")


def dgrad_weights_lines(tp):
    """The data-gradient GEMMs reading the weights as stored against their
    transposed copies (the dlrm-dgrad-weights step: dgrad_weights=stored,
    transposed at two batches, TF32)."""
    return choice_lines(tp, "dgrad_weights", ("stored", "transposed"),
                        "Data-gradient GEMMs: W as stored (NN) against a transposed copy (TN) (dgrad_weights=...)")


def wgrad_dy_lines(tp):
    """The wide layers' weight gradients from dz as stored against dz
    transposed just before them (the dlrm-wgrad-dy step: wgrad_dy=stored,
    transposed at the largest batch, TF32)."""
    return choice_lines(tp, "wgrad_dy", ("stored", "transposed"),
                        "Weight-gradient GEMMs of the wide layers: dz as stored against dz transposed (wgrad_dy=...)")


def dependent_launch_lines(tp):
    """The step's own kernels launched after the kernel before them ends
    against with programmatic dependent launch (the dlrm-dependent-launch
    step: dependent_launch=off,on at the smallest batch, graphed)."""
    lines = choice_lines(tp, "dependent_launch", ("off", "on"),
                         "Programmatic dependent launch of the step's own kernels (dependent_launch=...)")
    if lines:
        lines.append("\nWith it on, a kernel's profiled time can include waiting at its start for the kernel before "
                     "it (its blocks resident early): compare the steps' times, not the kernels'.")
    # A point that asked for it on a GPU or build without it ran off: said.
    for r in tp:
        fact = ((runs_of(r) or [{}])[0].get("facts") or {}).get("dependent_launch") or {}
        if params_of(r).get("dependent_launch") == "on" and fact.get("in_effect") is False:
            p = params_of(r)
            lines.append(f"\n{p.get('precision', 'fp32')} {p.get('batch_size')}: on was not in effect "
                         f"({fact.get('reason', 'no reason recorded')}): its row measures off twice.")
    return lines


def graph_memsets_lines(tp):
    """A captured graph's memset nodes as captured against turned into
    kernel nodes (the dlrm-graph-memsets steps: PERFLAB_GRAPH_MEMSETS set
    for the whole run, as the result's environment records)."""
    return choice_lines(tp, "PERFLAB_GRAPH_MEMSETS", ("nodes", "kernels"),
                        "Memset nodes in the step's graph: as captured against as kernel nodes (PERFLAB_GRAPH_MEMSETS)",
                        get=env_var)


def connections_lines(tp):
    """The CUDA runtime's hardware work queues, 8 against 32 (the
    dlrm-connections-8 and -32 steps: CUDA_DEVICE_MAX_CONNECTIONS set for the
    whole run, as the result's environment records)."""
    return choice_lines(tp, "CUDA_DEVICE_MAX_CONNECTIONS", ("8", "32"),
                        "Hardware work queues: CUDA_DEVICE_MAX_CONNECTIONS=8 (the default) against 32",
                        get=env_var)


def choice_lines(tp, name, values, title, get=None):
    """A table of samples/s per precision and batch for each of a DLRM
    parameter's `values` (points that set it; `get` reads the value from a
    result instead), and each over the first."""
    by = {}
    for r in tp:
        v = get(r, name) if get else params_of(r).get(name)
        sps = num((r.get("score") or {}).get("throughput_samples_per_s"))
        if v in values and sps:
            by.setdefault((params_of(r).get("precision", "fp32"), as_int(params_of(r)["batch_size"])), {})[v] = sps
    if not by:
        return []
    first = values[0]
    lines = ["", f"### {title}", "",
             "| precision | batch | " + " | ".join(values) + " | " +
             " | ".join(f"{v} x {first}" for v in values[1:]) + " |",
             "|---|---|" + "---|" * (2 * len(values) - 1)]
    for (prec, b), e in sorted(by.items()):
        base = e.get(first)
        cells = [fmt(e.get(v), '{:,.0f}') for v in values]
        ratios = [fmt(e[v] / base if base and e.get(v) else None, '{:.2f}x') for v in values[1:]]
        lines.append(f"| {prec} | {b} | " + " | ".join(cells + ratios) + " |")
    return lines


def ttt_section(results):
    ttt = [r for r in results if r.get("kind") == "time_to_train"]
    if not ttt:
        return ""
    lines = ["## Time to train", "", "| workload | backend | preset | precision | toggles | runs | time to train (s) | method |",
             "|---|---|---|---|---|---|---|---|"]
    for r in ttt:
        s = r.get("score") or {}
        runs = runs_of(r)
        lines.append(f"| {spec_of(r).get('workload')} | {spec_of(r).get('backend')} | {spec_of(r).get('preset')} | "
                     f"{params_of(r).get('precision', '-')} | {toggles_on(r)} | "
                     f"{sum(1 for x in runs if x.get('status') == 'success')}/{len(runs)} | "
                     f"{fmt(num(s.get('time_to_train_s')), '{:.2f}')} | {cell(s.get('method') or s.get('reason') or '-')} |")
    return "\n".join(lines) + "\n"


def bench_medians(work, name, pattern):
    """Google Benchmark's medians (or plain runs) in `work`/`name` whose
    name matches `pattern`, in us, keyed by the match's groups; None when
    the file is missing or unreadable."""
    try:
        data = json.load(open(os.path.join(work, name)))
    except (OSError, json.JSONDecodeError):
        return None
    med = {}
    for b in data.get("benchmarks") or []:
        m = re.match(pattern, b.get("name", ""))
        if not m or b.get("aggregate_name") not in ("median", None) or not num(b.get("real_time")):
            continue
        unit = {"ns": 1e-3, "us": 1.0, "ms": 1e3, "s": 1e6}.get(b.get("time_unit", "ns"), 1e-3)
        med[m.groups()] = num(b.get("real_time")) * unit
    return med


def relu_bias_grad_bench_section(work):
    """bench_cuda_linear's ReluBiasGrad benchmarks (the dlrm-settled phase's
    dlrm-epilogue-bench step): relu_bias_grad with each of its kernels forced,
    per type, rows and columns; Google Benchmark's median of 3 repetitions,
    one launch's time. `auto` is the kernel relu_bias_grad picks by itself
    (one pass up to 2,048 rows: kernels/cuda/bias_act.cu's kOnePassMaxRows)."""
    title = "## dReLU + bias gradient, one pass or two (bench_cuda_linear)"
    found = bench_medians(work, "bench-relu-bias-grad.json", r"ReluBiasGrad/(\w+)/r(\d+)/c(\d+)/(one_pass|two_passes)")
    if found is None:
        return title + "\n\nNot measured.\n"
    med = {(t, int(r), int(c), k): us for (t, r, c, k), us in found.items()}
    lines = [title, "",
             "One launch of `relu_bias_grad` on a [rows, cols] dy with its ReLU output, each kernel forced. "
             "Median of 3 repetitions.", "",
             "| type | rows | cols | one pass (us) | two passes (us) | two / one | auto runs |",
             "|---|---|---|---|---|---|---|"]
    for key in sorted({k[:3] for k in med}):
        one, two = med.get(key + ("one_pass",)), med.get(key + ("two_passes",))
        lines.append(f"| {key[0]} | {key[1]} | {key[2]} | {fmt(one, '{:.2f}')} | {fmt(two, '{:.2f}')} | "
                     f"{fmt(two / one if one and two else None, '{:.2f}x')} | "
                     f"{'one pass' if key[1] <= 2048 else 'two passes'} |")
    return "\n".join(lines) + "\n"


def graph_bench_section(work):
    """bench_cuda_graph's GraphReplay benchmarks (the dlrm phase's
    dlrm-graph-bench step): the period of back-to-back replays of a small
    graph, per replay, by its side branches and what sits between two
    replays; each against the plain two-kernel graph. Google Benchmark's
    median of 3 repetitions."""
    title = "## What a graph replay costs between replays (bench_cuda_graph)"
    found = bench_medians(work, "bench-graph.json", r"BM_GraphReplay/branches:(\d+)/between:(\d+)")
    if found is None:
        return title + "\n\nNot measured.\n"
    med = {(int(b), int(m)): us for (b, m), us in found.items()}
    between = {0: "nothing", 1: "an event recorded, another stream's waited on",
               2: "the input pipeline (two slots, an 88 KiB pinned copy on a copy stream)"}
    base = med.get((0, 0))
    lines = [title, "",
             "Back-to-back replays of a graph of one-block kernels: the first and last on the stream, `branches` "
             "more forked between them onto side streams and joined; between two replays, as listed. Median "
             "of 3 repetitions, us a replay; over is the replay less the plain graph's (0 branches, nothing "
             "between).", "",
             "| branches | between replays | us a replay | over the plain graph (us) |", "|---|---|---|---|"]
    for (branches, m), us in sorted(med.items()):
        lines.append(f"| {branches} | {between.get(m, m)} | {fmt(us, '{:.2f}')} | "
                     f"{fmt(us - base if base is not None else None, '{:+.2f}')} |")
    return "\n".join(lines) + "\n"


def lookup_bench_section(work):
    """bench_cuda_dlrm's BM_LookupAndInteraction (the dlrm-settled phase's
    dlrm-lookup-bench step): the gather then the interaction, forward and
    backward, against the interaction reading the rows itself, per batch;
    then BM_InteractionForward and BM_InteractionBackward, each alone, per
    batch and row source. Google Benchmark's median of 3 repetitions."""
    try:
        data = json.load(open(os.path.join(work, "bench-lookup.json")))
    except (OSError, json.JSONDecodeError):
        return "## DLRM lookups inside the interaction (bench_cuda_dlrm)\n\nNot measured.\n"
    med, alone = {}, {}
    for b in data.get("benchmarks") or []:
        if b.get("aggregate_name") not in ("median", None):
            continue
        unit = {"ns": 1e-6, "us": 1e-3, "ms": 1.0, "s": 1e3}.get(b.get("time_unit", "ns"), 1e-6)
        ms = num(b.get("real_time")) * unit if num(b.get("real_time")) else None
        m = re.match(r"BM_LookupAndInteraction/batch:(\d+)/fused:(\d)", b.get("name", ""))
        if m:
            med[(int(m.group(1)), m.group(2) == "1")] = ms
            continue
        m = re.match(r"BM_Interaction(Forward|Backward)/batch:(\d+)/fused:(\d)", b.get("name", ""))
        if m:
            alone[(int(m.group(2)), m.group(3) == "1", m.group(1))] = ms
    lines = ["## DLRM lookups inside the interaction (bench_cuda_dlrm)", "",
             "Forward and backward of the interaction with the lookups: gathered first, or read from the tables "
             "by the interaction itself (`--fused` on one GPU). Median of 3 repetitions.", "",
             "| batch | gather + interaction (ms) | lookup inside (ms) | speedup |", "|---|---|---|---|"]
    for batch in sorted({k[0] for k in med}):
        g, f = med.get((batch, False)), med.get((batch, True))
        lines.append(f"| {batch} | {fmt(g, '{:.3f}')} | {fmt(f, '{:.3f}')} | "
                     f"{fmt(g / f if g and f else None, '{:.2f}x')} |")
    if alone:
        lines += ["", "The interaction's forward and backward each alone (fp32, CUDA cores), from the gathered "
                  "rows or with the lookup inside (the model's step). Median of 3 repetitions.", "",
                  "| batch | rows | forward (us) | backward (us) |", "|---|---|---|---|"]
        for batch, fused in sorted({k[:2] for k in alone}):
            fw, bw = alone.get((batch, fused, "Forward")), alone.get((batch, fused, "Backward"))
            lines.append(f"| {batch} | {'lookup inside' if fused else 'gathered'} | "
                         f"{fmt(fw * 1e3 if fw else None, '{:.1f}')} | {fmt(bw * 1e3 if bw else None, '{:.1f}')} |")
    return "\n".join(lines) + "\n"
