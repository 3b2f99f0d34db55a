"""The transducer loss against its floor and its PyTorch peers."""
import json

from .common import (
    as_int, cell, fmt, gate_of, is_cuda, median, num, params_of, run_stat, setup_fraction, spec_of,
    toggles_on, work_of,
)


def transducer_section(results, peers):
    tr = [r for r in results if spec_of(r).get("workload") == "transducer" and is_cuda(r)]
    if not tr:
        return "## Transducer\n\nNo transducer results.\n", {"points": []}
    lines = ["## Transducer (cuda)", "",
             "| op | dtype | B | T | U | V/H | layout | toggles | iteration p50 (ms) | GB/s | floor (ms) | x floor | setup (s) | setup share | gate |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    by = {}
    for r in sorted(tr, key=lambda r: json.dumps(params_of(r), sort_keys=True) + toggles_on(r)):
        p = params_of(r)
        ms = run_stat(r, "iteration_ms")
        gate = gate_of(r)
        width = p.get("vocab") if p.get("op") == "loss" else p.get("hidden")
        frac, setup = setup_fraction(r)
        lines.append(f"| {p.get('op')} | {p.get('dtype')} | {p.get('batch')} | {p.get('max_time')} | {p.get('max_labels')} | "
                     f"{width} | {p.get('layout')} | {toggles_on(r)} | {fmt(ms, '{:.3f}')} | "
                     f"{fmt(num(work_of(r).get('achieved_gbytes_per_s')), '{:.0f}')} | "
                     f"{fmt(num(work_of(r).get('floor_ms')), '{:.3f}')} | {fmt(num(work_of(r).get('times_floor')), '{:.2f}')} | "
                     f"{fmt(setup, '{:.1f}')} | {fmt(frac, '{:.0%}')} | {'passed' if gate.get('passed') else 'FAILED'} |")
        key = (p.get("op"), p.get("dtype"), as_int(p.get("batch")), as_int(p.get("max_time")),
               as_int(p.get("max_labels")), as_int(width), p.get("layout"))
        by.setdefault(key, {})[toggles_on(r)] = (ms, num(work_of(r).get("times_floor")))
    lines += ["", "### Fused against unfused, and against PyTorch", "",
              "| op | dtype | B | T | U | V/H | layout | fused (ms) | unfused (ms) | fused speedup | fused x floor | torch (ms) | x torch | torchaudio (ms) | x torchaudio |",
              "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    facts = {}
    for key, t in sorted(by.items(), key=lambda kv: json.dumps(kv[0])):
        fused = t.get("fused+sync_free") or t.get("fused") or t.get("fused+cuda_graphs+sync_free")
        unfused = t.get("sync_free") or t.get("none")
        fms = fused[0] if fused else None
        ums = unfused[0] if unfused else None
        op, dtype, b, T, U, W, layout = key

        def peer_ms(name, dt):
            return median([p.get("median_ms") for p in peers if p.get("workload") == "rnnt_loss" and op == "loss"
                           and p.get("peer") == name and p.get("dtype") == dt and p.get("B") == b
                           and p.get("T") == T and p.get("U") == U and p.get("V") == W and not p.get("skipped")])
        torch_ms = peer_ms("torch_reference", dtype)
        audio_ms = peer_ms("torchaudio", dtype)
        sp = ums / fms if fms and ums else None
        xt = torch_ms / fms if torch_ms and fms else None
        xa = audio_ms / fms if audio_ms and fms else None
        facts[key] = {"speedup": sp, "x_floor": fused[1] if fused else None, "x_torch": xt, "x_audio": xa}
        lines.append(f"| {op} | {dtype} | {b} | {T} | {U} | {W} | {layout} | {fmt(fms, '{:.3f}')} | {fmt(ums, '{:.3f}')} | "
                     f"{fmt(sp, '{:.2f}x')} | {fmt(fused[1] if fused else None, '{:.2f}')} | {fmt(torch_ms, '{:.3f}')} | "
                     f"{fmt(xt, '{:.1f}x')} | {fmt(audio_ms, '{:.3f}')} | {fmt(xa, '{:.2f}x')} |")
    audio = [p for p in peers if p.get("workload") == "rnnt_loss" and p.get("peer") == "torchaudio"]
    if audio:
        lines += ["", "torchaudio.functional.rnnt_loss on the same GPU (for reference):", "",
                  "| B | T | U | V | dtype | median (ms) |", "|---|---|---|---|---|---|"]
        for p in audio:
            lines.append(f"| {p.get('B')} | {p.get('T')} | {p.get('U')} | {p.get('V')} | {p.get('dtype')} | "
                         f"{fmt(num(p.get('median_ms')), '{:.3f}')}"
                         f"{' (' + cell(p['skipped']) + ')' if p.get('skipped') else ''} |")
    return "\n".join(lines) + "\n", {"by_shape": facts, "points": tr}
