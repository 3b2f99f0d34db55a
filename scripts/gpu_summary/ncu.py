"""Nsight Compute's counters for the DLRM kernels tuned without a GPU (gpu-check's ncu phase)."""
import csv
import glob
import os
import re
import statistics

from .common import fmt

# Display names in the details page, by section (SpeedOfLight, Occupancy,
# WarpStateStats, LaunchStats): what the table shows, in its order.
COLUMNS = [
    ("SM %", "Compute (SM) Throughput"),
    ("memory %", "Memory Throughput"),
    ("DRAM %", "DRAM Throughput"),
    ("achieved occupancy %", "Achieved Occupancy"),
    ("theoretical occupancy %", "Theoretical Occupancy"),
    ("registers", "Registers Per Thread"),
    ("cycles per issued instruction", "Warp Cycles Per Issued Instruction"),
    ("eligible warps per scheduler", "Eligible Warps Per Scheduler"),
]
# ncu's note where a rule lacked a metric it could use (the CPIStall rule
# without PC sampling): not a finding about the kernel.
MISSING_METRIC = "The optional metric"
# Stall reasons in the raw page: PC-sampling counts (SourceCounters) or
# cycles per issued instruction (WarpStateStats).
# (ncu also has "..._not_issued" twins of the sampled reasons: not reasons of
# their own, and counted with the rest they would double the total.)
STALL_SAMPLES = re.compile(r"^smsp__pcsamp_warps_issue_stalled_(?![a-z_]*_not_issued$)([a-z_]+)$")
STALL_CYCLES = re.compile(r"^smsp__average_warps_issue_stalled_([a-z_]+)_per_issue_active\.ratio$")
DURATION_SCALE = {"nsecond": 1e-3, "ns": 1e-3, "usecond": 1.0, "us": 1.0, "msecond": 1e3, "ms": 1e3,
                  "second": 1e6, "s": 1e6}


def number(text):
    """A details-page value ('1,234.5', '98.2') as a float, or None."""
    try:
        return float(str(text).replace(",", ""))
    except ValueError:
        return None


def kernel_base(name):
    """sgd_tiles_kernel from 'void perflab::...::sgd_tiles_kernel<float>(...)'. An
    anonymous namespace comes as '(anonymous namespace)::' or, in some ncu
    pages, as 'unnamed>::' (its '<unnamed>' cut), whose '>' would close no
    template: both dropped first."""
    name = re.sub(r"(\(anonymous namespace\)|<?unnamed>)::", "", name or "")
    name = re.sub(r"\(.*$", "", name)  # then the parameters
    depth, base = 0, ""
    for ch in name:  # drop template arguments, keep the last name
        if ch == "<":
            depth += 1
        elif ch == ">":
            depth -= 1
        elif depth == 0:
            base += ch
    return base.split("::")[-1].split()[-1] if base.split() else name


def read_launches(path):
    """{launch id: {"kernel": name, metric display name: (unit, value text), "stall": rule text}}."""
    launches = {}
    with open(path, newline="", encoding="utf-8", errors="replace") as f:
        lines = [line for line in f if line.startswith('"')]  # ncu's own "==PROF==" lines are not CSV
    for row in csv.DictReader(lines):
        launch = launches.setdefault(row.get("ID", ""), {"kernel": row.get("Kernel Name", "")})
        metric = row.get("Metric Name")
        if metric:
            launch[metric] = (row.get("Metric Unit", ""), row.get("Metric Value", ""))
        rule = (row.get("Rule Description") or "").strip()
        if rule.startswith(MISSING_METRIC):
            continue
        # Rule rows name the section by identifier (WarpStateStats), metric
        # rows by display name; ncu's stall rule is CPIStall.
        stall_rule = row.get("Rule Name") == "CPIStall" or row.get("Section Name") in (
            "WarpStateStats", "Warp State Statistics")
        if stall_rule and rule and "stall" not in launch:
            launch["stall"] = rule.split(". ")[0].strip().rstrip(".") + "."
        # The issue-slot rule's sentence with the eligible warps, for a
        # kernel whose stall rule said nothing.
        if row.get("Rule Name") == "IssueSlotUtilization" and "issue" not in launch:
            sentence = next((x for x in rule.split(". ") if "eligible" in x), "")
            if sentence:
                launch["issue"] = sentence.strip().rstrip(".") + "."
    return launches


def read_raw_stalls(path):
    """{kernel base name: [(reason, share %, unit)]} from ncu's raw page: the
    median over a kernel's launches of each stall reason, largest first;
    PC-sampling counts as shares of the kernel's samples, else cycles per
    issued instruction. {} when the file is missing or has neither."""
    try:
        with open(path, newline="", encoding="utf-8", errors="replace") as f:
            rows = list(csv.DictReader(line for line in f if line.startswith('"')))
    except OSError:
        return {}
    per_kernel = {}
    for row in rows:
        if not str(row.get("ID", "")).strip().isdigit():
            continue  # the units row
        samples = {m.group(1): number(v) for k, v in row.items() if k and (m := STALL_SAMPLES.match(k))}
        samples = {r: v for r, v in samples.items() if v is not None}
        total = sum(samples.values())
        if total > 0:
            reasons, unit = {r: 100.0 * v / total for r, v in samples.items()}, "% of samples"
        else:
            reasons = {m.group(1): number(v) for k, v in row.items() if k and (m := STALL_CYCLES.match(k))}
            reasons, unit = {r: v for r, v in reasons.items() if v is not None}, "cycles per issue"
        if reasons:
            per_kernel.setdefault(kernel_base(row.get("Kernel Name", "")), []).append((reasons, unit))
    out = {}
    for kernel, launches in per_kernel.items():
        unit = launches[0][1]
        names = {r for reasons, u in launches if u == unit for r in reasons}
        medians = {r: statistics.median([reasons.get(r, 0.0) for reasons, u in launches if u == unit]) for r in names}
        out[kernel] = [(r, v, unit) for r, v in sorted(medians.items(), key=lambda kv: -kv[1]) if v > 0]
    return out


def ncu_section(work):
    paths = sorted(p for p in glob.glob(os.path.join(work, "ncu-*.csv")) if not p.endswith("-raw.csv"))
    title = "## Nsight Compute: the DLRM kernels tuned without a GPU (gpu-check's ncu phase)"
    if not paths:
        return f"{title}\n\nNot measured.\n"
    lines = [title, ""]
    for path in paths:
        try:
            launches = read_launches(path)
        except (OSError, csv.Error) as e:
            lines += [f"`{os.path.basename(path)}`: unreadable ({e}).", ""]
            continue
        by_kernel = {}
        for launch in launches.values():
            by_kernel.setdefault(kernel_base(launch["kernel"]), []).append(launch)
        if not by_kernel:
            lines += [f"`{os.path.basename(path)}`: no launches read (not ncu's details page as CSV?).", ""]
            continue
        lines += [f"`{os.path.basename(path)}` ({len(launches)} launches): medians over a kernel's launches; "
                  "Nsight Compute's own figures, clocks left alone (`--clock-control none`).", "",
                  "| kernel | launches | duration (us) | " + " | ".join(c for c, _ in COLUMNS) + " |",
                  "|---|---|---|" + "---|" * len(COLUMNS)]
        stalls = []
        raw_stalls = read_raw_stalls(path[:-len(".csv")] + "-raw.csv")
        durations = {kernel: [number(r["Duration"][1]) * DURATION_SCALE.get(r["Duration"][0], 1.0)
                              for r in runs if "Duration" in r and number(r["Duration"][1]) is not None]
                     for kernel, runs in by_kernel.items()}
        for kernel, runs in sorted(by_kernel.items(), key=lambda kv: -sum(durations[kv[0]])):  # most time first
            cells = []
            for _, metric in COLUMNS:
                values = [number(r[metric][1]) for r in runs if metric in r and number(r[metric][1]) is not None]
                cells.append(fmt(statistics.median(values) if values else None, "{:.1f}"))
            lines.append(f"| `{kernel}` | {len(runs)} | "
                         f"{fmt(statistics.median(durations[kernel]) if durations[kernel] else None, '{:.1f}')} | "
                         + " | ".join(cells) + " |")
            stall = next((r["stall"] for r in runs if r.get("stall")), None)
            stall = stall or next((r["issue"] for r in runs if r.get("issue")), None)
            reasons = raw_stalls.get(kernel)
            if reasons:
                top = ", ".join(f"{r.replace('_', ' ')} {v:.1f}" for r, v, _ in reasons[:3])
                stall = f"{stall + ' ' if stall else ''}Stalls ({reasons[0][2]}, median a launch): {top}."
            if stall:
                stalls.append(f"- `{kernel}`: {stall}")
        lines.append("")
        if stalls:
            lines += ["Warp states (Nsight Compute's stall rule, first sentence, or its issue-slot rule's "
                      "eligible warps; the largest stall reasons where the raw page has them):", ""] + stalls + [""]
    return "\n".join(lines)
