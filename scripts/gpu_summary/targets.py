"""Every target the open issues state, with what was measured and met / not met / not measured."""
import statistics

from .common import (
    VERDICTS, as_int, cell, dlrm_label, gate_of, is_cuda, is_throughput, median, num, params_of, point_label,
    run_stat, runs_of, setup_fraction, spec_of, toggles_on, work_of,
)
from .dlrm import dlrm_points
from .kernels import launches_of


# --- the targets ------------------------------------------------------------------------------------

class Targets:
    def __init__(self):
        self.rows = []

    def add(self, issue, target, measured, ok):
        """ok: True / False / None (not measured)."""
        verdict = VERDICTS[2] if ok is None else (VERDICTS[0] if ok else VERDICTS[1])
        self.rows.append((issue, target, measured if measured not in (None, "") else "-", verdict))

    def render(self):
        lines = ["## Targets from the open issues", "",
                 "Each computed from this folder's results; \"not measured\" where the phase that measures it did "
                 "not run (or not far enough).", "",
                 "| issue | target | measured | verdict |", "|---|---|---|---|"]
        for issue, target, measured, verdict in self.rows:
            v = verdict if verdict != "not met" else "**not met**"
            lines.append(f"| {issue} | {cell(target)} | {cell(measured)} | {v} |")
        return "\n".join(lines) + "\n"


def all_within(values, pred):
    values = [v for v in values if v is not None]
    return None if not values else all(pred(v) for v in values)


def targets_section(results, peers, state, dlrm, rnnt, halo, tests, steps, serving=None):
    t = Targets()
    order = state["order"]

    # Issue 21: profiler, gpu-check.
    # The calls of `all` that ran a phase (one that found every phase done only re-wrote the summary).
    ran = {p["call"] for p in state["phases"] if p["outcome"] != "deferred"}
    all_calls = sorted(c for c, v in state["calls"].items() if v["phases"] == "all" and c in ran)
    if all_calls and state["all"]:
        done = all(p in state["done"] for p in order)
        text = "; ".join(f"call {c}: {state['calls'][c]['elapsed_s']} s" for c in all_calls)
        text += "; every phase done" if done else "; not done: " + ", ".join(p for p in order if p not in state["done"])
        ok = (len(all_calls) <= 2 and all(state["calls"][c]["elapsed_s"] <= 600 for c in all_calls)) if done else \
            (False if len(all_calls) >= 2 else None)
        t.add(21, "gpu-check all fits two device calls of at most 10 minutes (fresh machine, build included)", text, ok)
    else:
        t.add(21, "gpu-check all fits two device calls of at most 10 minutes (fresh machine, build included)",
              "no `all` record", None)
    for w in ("dlrm", "transducer"):
        rs = [r for r in results if spec_of(r).get("workload") == w and is_cuda(r) and is_throughput(r)]
        prof = [p for r in rs for p in [x.get("profile") for x in runs_of(r)] if isinstance(p, dict)]
        traces = [p for p in prof if p.get("trace")]
        t.add(21, f"per-kernel table and trace produced on the GPU for {w}",
              f"{len(prof)} profiled runs, {len(traces)} traces" if rs else "no results",
              None if not rs else bool(prof and traces))
    over = [num(p.get("overhead")) for r in results for p in [x.get("profile") for x in runs_of(r)]
            if isinstance(p, dict)]
    over = [o for o in over if o is not None]
    t.add(21, "the profiler's cost recorded (profiled / unprofiled median iteration, same GPU, same run)",
          f"{len(over)} points: {min(over):.3f}× to {max(over):.3f}× (median {statistics.median(over):.3f}×)" if over
          else "-", True if over else None)
    gpu = tests.get("GPU tests")
    if gpu:
        bad = gpu["failed"] + gpu["timeouts"] + gpu["skipped"]
        t.add(21, "every GPU test passes on the GPU, none skipped",
              f"{gpu['n']} tests; " + (", ".join(bad[:8]) + (" …" if len(bad) > 8 else "") if bad else "all passed"),
              not bad)
    else:
        t.add(21, "every GPU test passes on the GPU, none skipped", "-", None)
    san = [r for r in steps if r[2].startswith("sanitize-")]
    missing = [r for r in steps if r[2].startswith("sanitize:")]
    if missing and not san:
        t.add(21, "compute-sanitizer memcheck, racecheck and synccheck clean over the GPU tests", missing[-1][2], None)
    elif san:
        by_tool = {}
        for r in san:
            tool = r[2].split("-")[1] if r[2].count("-") >= 2 else "?"
            by_tool.setdefault(tool, []).append(r[3])
        text = "; ".join(f"{tool}: {sum(1 for x in v if x == 'ok')}/{len(v)} clean"
                         + (f", {sum(1 for x in v if x.startswith('FAILED'))} failed" if any(x.startswith('FAILED') for x in v) else "")
                         + (f", {sum(1 for x in v if x.startswith('TIMED OUT'))} timed out" if any(x.startswith('TIMED OUT') for x in v) else "")
                         + (f", {sum(1 for x in v if x.startswith('not run'))} not run" if any(x.startswith('not run') for x in v) else "")
                         for tool, v in sorted(by_tool.items()))
        failed = any(x.startswith("FAILED") for v in by_tool.values() for x in v)
        complete = all(x == "ok" for v in by_tool.values() for x in v) and len(by_tool) == 3
        t.add(21, "compute-sanitizer memcheck, racecheck and synccheck clean over the GPU tests", text,
              False if failed else (True if complete else None))
    else:
        t.add(21, "compute-sanitizer memcheck, racecheck and synccheck clean over the GPU tests", "-", None)
    cpu = tests.get("CPU suite")
    killed = tests.get("killed") or []
    if cpu or killed:
        timeouts = (cpu or {}).get("timeouts", []) + [n for n, res in killed if res.startswith("TIMED OUT")]
        notrun = [n for n, res in killed if res.startswith("not run")]
        slow = (cpu or {}).get("slowest") or []
        text = f"{(cpu or {}).get('n', 0)} tests timed"
        if slow:
            text += f"; slowest {slow[0]['name']} {slow[0]['seconds']:.0f} s"
        if timeouts:
            text += "; timed out: " + ", ".join(timeouts)
        if notrun:
            text += "; not run: " + ", ".join(notrun)
        if tests.get("main_cut"):
            text += "; the suite's ctest run was cut off"
        ok = False if timeouts else (None if notrun or tests.get("main_cut") else True)
        t.add(21, "the CPU suite finishes under per-test limits on the GPU machine (the test that hung named)", text, ok)
    else:
        t.add(21, "the CPU suite finishes under per-test limits on the GPU machine (the test that hung named)", "-", None)

    # Issue 22: DLRM (its targets are at the dle shapes).
    pts = dlrm_points(results, "dle")

    def pick(prec, batch=None, graphs=None):
        out = []
        for r in pts:
            p = params_of(r)
            if p.get("precision", "fp32") != prec or (batch is not None and as_int(p.get("batch_size")) != batch):
                continue
            if graphs is not None and (("cuda_graphs" in toggles_on(r)) != graphs):
                continue
            out.append(r)
        return out
    r65 = pick("fp32", 65536)
    xf = [(num(work_of(r).get("times_floor")), dlrm_label(r)) for r in r65 if num(work_of(r).get("times_floor"))]
    best = min(xf) if xf else None
    t.add(22, "DLRM dle batch 65,536 TF32 ≤ 3× its roofline floor", f"{best[0]:.2f}× ({best[1]})" if best else "-",
          None if not best else best[0] <= 3)
    sps = [(num((r.get("score") or {}).get("throughput_samples_per_s")), dlrm_label(r)) for r in r65]
    sps = [s for s in sps if s[0]]
    best = max(sps) if sps else None
    failed_gate = [r for r in r65 if not gate_of(r).get("passed")]
    t.add(22, "DLRM dle batch 65,536 TF32 ≥ 5M samples/s",
          f"{best[0] / 1e6:.2f}M ({best[1]})" if best else ("gate failed at every point" if r65 and failed_gate else "-"),
          None if not best else best[0] >= 5e6)
    bf = [(num((r.get("score") or {}).get("throughput_samples_per_s")), as_int(params_of(r).get("batch_size")),
           dlrm_label(r)) for r in pick("bf16")]
    bf = [b for b in bf if b[0]]
    best = max(bf) if bf else None
    t.add(22, "DLRM dle bf16 ≥ 10M samples/s", f"{best[0] / 1e6:.2f}M (batch {best[1]}, {best[2]})" if best else "-",
          None if not best else best[0] >= 10e6)
    g512 = {}
    for prec in ("fp32", "bf16"):
        ms = [(run_stat(r, "iteration_ms"), dlrm_label(r)) for r in pick(prec, 512, graphs=True)]
        ms = [m for m in ms if m[0] is not None]
        if ms:
            g512[prec] = min(ms)
    t.add(22, "DLRM batch 512 ≤ 0.15 ms per iteration with CUDA graphs",
          "; ".join(f"{p} {v[0]:.3f} ms ({v[1]})" for p, v in g512.items()) or "-",
          all_within([v[0] for v in g512.values()], lambda v: v <= 0.15))
    gs = {p: v for (p, b), v in dlrm.get("graphs", {}).items() if b == 512 and v}
    t.add(22, "DLRM batch 512: graphs ≥ 2× over eager launches (fused+sync_free, graphs on over off)",
          "; ".join(f"{p} {v:.2f}×" for p, v in sorted(gs.items())) or "-", all_within(gs.values(), lambda v: v >= 2))
    ratios = dlrm.get("ratios", {})
    for idx, name in ((2, "PyTorch eager"), (1, "torch.compile")):
        vals = {k: v[idx] for k, v in ratios.items() if v[idx]}
        missing = sorted(k for k, v in ratios.items() if not v[idx])
        ok = all_within(vals.values(), lambda v: v >= 1.5)
        if ok and missing:
            ok = None  # every measured point meets it, but not every point has its peer
        text = "; ".join(f"{p} {b}: {v:.2f}×" for (p, b), v in sorted(vals.items()))
        if missing and vals:
            text += "; no peer at " + ", ".join(f"{p} {b}" for p, b in missing)
        t.add(22, f"DLRM ≥ 1.5× {name} on the same GPU at every batch and precision measured", text or "-", ok)
    counts = []
    for r in pts:
        lp = launches_of(r)
        if lp and num(lp[0]) is not None and toggles_on(r) == "fused+cuda_graphs+sync_free":
            extra = dlrm_label(r)[len("fused+cuda_graphs+sync_free"):]
            counts.append((lp[0], f"{params_of(r).get('precision', 'fp32')} {params_of(r).get('batch_size')}{extra}"))
    allk = [num(lp[0]) for lp in (launches_of(r) for r in pts) if lp and num(lp[0]) is not None]
    t.add(22, "DLRM ≤ 20 kernels per training iteration (all toggles on)",
          ("; ".join(f"{k:g} ({w})" for k, w in counts) + (f"; every point: {min(allk):g}–{max(allk):g}" if allk else ""))
          if counts else "-", all_within([c[0] for c in counts], lambda v: v <= 20))
    ttt = [r for r in results if r.get("kind") == "time_to_train" and spec_of(r).get("workload") == "dlrm"
           and spec_of(r).get("preset") == "small"]
    steps_by = {}
    for r in ttt:
        ok = [as_int(x.get("iterations")) for x in runs_of(r) if x.get("status") == "success"]
        steps_by.setdefault(params_of(r).get("precision", "fp32"), []).extend(ok)
    if len(steps_by.get("fp32", [])) >= 3 and len(steps_by.get("bf16", [])) >= 3:
        a, b = statistics.mean(steps_by["fp32"]), statistics.mean(steps_by["bf16"])
        t.add(22, "DLRM bf16 time to train (small preset, n ≥ 3 seeds) within 10% of fp32's step count",
              f"bf16 {b:.0f} vs fp32 {a:.0f} steps ({b / a - 1:+.1%})", abs(b / a - 1) <= 0.10)
    else:
        t.add(22, "DLRM bf16 time to train (small preset, n ≥ 3 seeds) within 10% of fp32's step count",
              "-" if not steps_by else ", ".join(f"{k}: {len(v)} runs" for k, v in steps_by.items()), None)
    cpu_pts = [r for r in results if spec_of(r).get("workload") == "dlrm" and spec_of(r).get("backend") == "cpu"
               and is_throughput(r) and spec_of(r).get("preset") == "small"]
    cpu_peers = [p for p in peers if p.get("workload") == "dlrm" and p.get("device") == "cpu"]
    vals = []
    for r in cpu_pts:
        b = as_int(params_of(r).get("batch_size"))
        s = num((r.get("score") or {}).get("throughput_samples_per_s"))
        for variant in ("eager", "compile"):
            peer = median([p.get("samples_per_s") for p in cpu_peers if p.get("batch") == b
                           and str(p.get("variant", "")).startswith(variant)])
            if s and peer:
                vals.append((variant, b, s / peer))
    t.add(22, "DLRM CPU backend (small preset) ≥ 1.5× PyTorch eager and torch.compile",
          "; ".join(f"{v} {b}: {x:.2f}×" for v, b, x in vals) or "-", all_within([v[2] for v in vals], lambda v: v >= 1.5))

    # Issue 27: transducer (and halo).
    tphase = [p for p in state["phases"] if p["phase"] == "transducer"]
    trows = [r for r in steps if r[1] == "transducer"]
    if tphase:
        last = tphase[-1]
        over_limit = [r[2] for r in trows if r[3].startswith("TIMED OUT") or r[3].startswith("not run")]
        t.add(27, "the gpu-check transducer phase fits its time limit",
              f"{last['outcome']} in {last['seconds']} s (call {last['call']})"
              + (f"; over its limit: {', '.join(over_limit)}" if over_limit else ""),
              None if last["outcome"] in ("cut", "deferred") else not over_limit)
    else:
        t.add(27, "the gpu-check transducer phase fits its time limit", "-", None)
    fr = [(setup_fraction(r)[0], point_label(r)) for r in rnnt.get("points", [])]
    fr = [f for f in fr if f[0] is not None]
    worst = max(fr) if fr else None
    t.add(27, "transducer setup ≤ 10% of each point's wall time",
          f"worst {worst[0]:.0%} ({worst[1]}); {sum(1 for f in fr if f[0] <= 0.10)}/{len(fr)} points within" if worst else "-",
          None if not worst else worst[0] <= 0.10)
    shapes = rnnt.get("by_shape", {})
    mlperf = {k: v for k, v in shapes.items() if k[0] == "loss" and k[5] == 1024}

    def shape_text(vals, spec):
        return "; ".join(f"{k[1]} B={k[2]} {k[6]}: {spec.format(v)}" for k, v in sorted(vals, key=lambda kv: str(kv[0])))
    floors = [(k, v["x_floor"]) for k, v in mlperf.items() if v["x_floor"]]
    t.add(27, "transducer fused loss+gradient ≤ 1.5× its bandwidth floor (MLPerf shapes)",
          shape_text(floors, "{:.2f}×") or "-", all_within([v for _, v in floors], lambda v: v <= 1.5))
    sp = [(k, v["speedup"]) for k, v in mlperf.items() if v["speedup"]]
    t.add(27, "transducer fused ≥ 3× unfused (MLPerf shapes)", shape_text(sp, "{:.2f}×") or "-",
          all_within([v for _, v in sp], lambda v: v >= 3))
    xt = [(k, v["x_torch"]) for k, v in mlperf.items() if v["x_torch"]]
    t.add(27, "transducer ≥ 10× a straightforward PyTorch implementation (same GPU)", shape_text(xt, "{:.1f}×") or "-",
          all_within([v for _, v in xt], lambda v: v >= 10))
    xa = [(k, v["x_audio"]) for k, v in mlperf.items() if v["x_audio"]]
    has_audio = any(p.get("peer") == "torchaudio" for p in peers)
    has_rnnt_peer = any(p.get("workload") == "rnnt_loss" for p in peers)
    t.add(27, "transducer faster than torchaudio's CUDA rnnt_loss (where the image has torchaudio)",
          shape_text(xa, "{:.2f}×") or ("no torchaudio on the image" if has_rnnt_peer and not has_audio else "-"),
          all_within([v for _, v in xa], lambda v: v > 1))
    eff = (halo or {}).get("efficiency", [])
    eff_text = (halo or {}).get("efficiency_text", [])
    t.add(27, "halo_conv overlap hides ≥ 90% of the halo transfer (GPU)", ", ".join(eff_text) or "-",
          all_within(eff, lambda v: v >= 0.9))
    cost = (halo or {}).get("cost", [])
    t.add("halo (earlier)", "halo_conv P slabs on one GPU ≤ 1.15× one partition", ", ".join(f"{x:.2f}×" for x in cost) or "-",
          all_within(cost, lambda v: v <= 1.15))
    vs = (serving or {}).get("vs_cpu") or []
    t.add(28, "hot_cache on the GPU against the cpu backend's all_device serving, Offline "
              "(the production claim: > 3×)",
          "; ".join(f"{sc} {rows} rows: {v:.2f}×" for sc, rows, v in vs) or "-", all_within([v for _, _, v in vs], lambda v: v > 3))
    return t.render(), [row[3] for row in t.rows]
