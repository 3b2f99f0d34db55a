"""DLRM serving (issue 28): the serve phase's LoadGen runs."""
from .common import fmt, median, num, runs_of, spec_of


# --- DLRM serving (issue 28): the serve phase's LoadGen runs ----------------------------------------

def serving_rows(results):
    rows = []
    for r in results:
        if r.get("kind") != "inference" or spec_of(r).get("workload") != "dlrm":
            continue
        spec = spec_of(r)
        inf = spec.get("inference") or {}
        runs = [x for x in runs_of(r) if isinstance(x.get("inference"), dict)]
        if not runs:
            continue
        engine = runs[0]["inference"].get("engine") or {}
        counters = engine.get("counters") or {}
        p99 = [next((num(p.get("latency_ns")) / 1e6 for p in x["inference"].get("percentiles") or []
                     if num(p.get("percentile")) == 99), None) for x in runs]
        p99 = [v for v in p99 if v is not None]
        rows.append({
            "backend": spec.get("backend", "?"), "scenario": inf.get("scenario", "?"),
            "bound": num(inf.get("latency_bound_ms")), "placement": engine.get("placement", "?"),
            "cache": (engine.get("cache") or {}).get("rows"), "policy": (engine.get("cache") or {}).get("policy", "-"),
            "updates": num(engine.get("update_rate_rows_per_s")) or 0,
            "rate": num((r.get("score") or {}).get("throughput_samples_per_s")),
            "p99": median(p99) if p99 else None,
            "valid": sum(1 for x in runs if x["inference"].get("valid")), "runs": len(runs),
            "hit": counters.get("hit_rate") if engine.get("placement") == "hot_cache" else None,
            "bytes": num(counters.get("host_embedding_bytes_per_sample")),
        })
    return rows


def serving_section(results):
    rows = serving_rows(results)
    if not rows:
        return "## DLRM serving\n\nNo serving results.\n", {"vs_cpu": []}
    base = {(x["scenario"], x["bound"]): x["rate"] for x in rows
            if x["backend"] == "cpu" and x["placement"] == "all_device" and not x["updates"] and x["rate"]}
    lines = ["## DLRM serving (MLCommons LoadGen)", "",
             "| backend | scenario | placement | cache rows | policy | updates/s | samples/s | vs cpu all_device | "
             "p99 (ms) | VALID | hit rate | host bytes/sample |", "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    vs_cpu = []
    for x in sorted(rows, key=lambda x: (x["backend"], x["scenario"], x["placement"], x["cache"] or 0, x["updates"])):
        b = base.get((x["scenario"], x["bound"]))
        ratio = x["rate"] / b if b and x["rate"] else None
        # Offline only: in Server LoadGen schedules the target rate, so a VALID run's samples/s is the target.
        if ratio is not None and x["backend"] == "cuda" and x["placement"] == "hot_cache" and not x["updates"] \
                and x["scenario"] == "offline":
            vs_cpu.append((x["scenario"], x["cache"], ratio))
        lines.append(f"| {x['backend']} | {x['scenario']} | {x['placement']} | {x['cache'] or '-'} | {x['policy']} | "
                     f"{x['updates']:g} | {fmt(x['rate'], '{:.0f}')} | {fmt(ratio, '{:.2f}x')} | {fmt(x['p99'], '{:.3f}')} | "
                     f"{x['valid']}/{x['runs']} | {fmt(x['hit'], '{:.1%}')} | {fmt(x['bytes'], '{:.0f}')} |")
    return "\n".join(lines) + "\n", {"vs_cpu": vs_cpu}
