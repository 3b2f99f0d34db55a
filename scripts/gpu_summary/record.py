"""The calls and steps of gpu-check's record, and per-test times from the ctest logs."""
import glob
import os
import re


# --- tests: per-test times from the ctest logs ------------------------------------------------------

# The name runs to the dots ctest pads it with: parameterised gtest names
# hold spaces (`Modes/X.Y/(false, true, "bf16")`), which a name taken up to
# the first space misread as failures on the first H200 run. A line without
# dots (a name too long to pad) falls back to a name without spaces.
CTEST_LINE = re.compile(r"^\s*\d+/\d+\s+Test\s+#\d+:\s+(.+?)\s+\.{2,}\s*(\*\*\*)?(.*?)\s+([\d.]+)\s+sec\s*$")


CTEST_LINE_UNPADDED = re.compile(r"^\s*\d+/\d+\s+Test\s+#\d+:\s+(\S+)\s+(\*\*\*)?(.*?)\s+([\d.]+)\s+sec\s*$")


def parse_ctest(path):
    tests = []
    try:
        for line in open(path, errors="replace"):
            m = CTEST_LINE.match(line) or CTEST_LINE_UNPADDED.match(line)
            if m:
                result = m.group(3).strip() or "?"
                tests.append({"name": m.group(1), "result": result, "seconds": float(m.group(4)),
                              "log": os.path.basename(path)})
    except OSError:
        pass
    return tests


def steps_rows(steps_text):
    """The steps table's rows: (call, phase, step, result, time)."""
    out = []
    for line in steps_text.splitlines():
        f = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(f) == 5 and f[0] not in ("call", "---"):
            out.append(f)
        elif len(f) == 3 and f[0] not in ("step", "---"):
            out.append(["-", "-"] + f)
    return out


def tests_section(work, steps):
    """The slowest tests and every timeout, GPU and CPU suites."""
    suites = {"GPU tests": parse_ctest(os.path.join(work, "gpu-tests.log")),
              "CPU suite": parse_ctest(os.path.join(work, "cpu-tests.log"))}
    for path in sorted(glob.glob(os.path.join(work, "cpu-test-*.log"))):
        suites["CPU suite"] += parse_ctest(path)
    # Tests run alone under gpu-check's own limit: a timeout there kills ctest before it prints a line.
    killed = [(r[2][len("cpu-test-"):], r[3]) for r in steps if r[2].startswith("cpu-test-")
              and (r[3].startswith("TIMED OUT") or r[3].startswith("not run"))]
    main_cut = [r[3] for r in steps if r[2] in ("cpu-tests", "gpu-tests") and r[3].startswith("TIMED OUT")]
    facts = {}
    lines = ["## Tests: slowest and timed out", ""]
    any_data = False
    for suite, tests in suites.items():
        if not tests:
            continue
        any_data = True
        timeouts = [t for t in tests if "timeout" in t["result"].lower()]
        failed = [t for t in tests if t["result"] != "Passed" and t not in timeouts
                  and not t["result"].startswith("Skipped") and not t["result"].startswith("Not Run")]
        skipped = [t for t in tests if t["result"].startswith("Skipped") or t["result"].startswith("Not Run")]
        lines.append(f"- {suite}: {len(tests)} tests, {sum(1 for t in tests if t['result'] == 'Passed')} passed, "
                     f"{len(failed)} failed, {len(skipped)} skipped, {len(timeouts)} timed out; "
                     f"{sum(t['seconds'] for t in tests):.0f} s of test time")
        for t in timeouts:
            lines.append(f"  - **timed out**: `{t['name']}` after {t['seconds']:.0f} s ({t['log']})")
        for t in failed[:20]:
            lines.append(f"  - failed: `{t['name']}` ({t['result']}, {t['seconds']:.1f} s, {t['log']})")
        slow = sorted(tests, key=lambda t: -t["seconds"])[:10]
        lines.append("  - slowest: " + ", ".join(f"`{t['name']}` {t['seconds']:.1f} s" for t in slow))
        facts[suite] = {"n": len(tests), "timeouts": [t["name"] for t in timeouts], "failed": [t["name"] for t in failed],
                        "skipped": [t["name"] for t in skipped], "slowest": slow[:1]}
    for name, result in killed:
        any_data = True
        lines.append(f"- **{result}**: `{name}` (run alone under gpu-check's limit; see cpu-test-{name}.log)")
    for result in main_cut:
        lines.append(f"- the ctest run itself stopped: {result} (tests after that point have no line)")
    if not any_data:
        lines.append("No test logs (the tests and cpu-tests phases did not run).")
    facts["killed"] = killed
    facts["main_cut"] = main_cut
    return "\n".join(lines) + "\n", facts


def calls_section(state, steps):
    lines = ["## Calls and steps", ""]
    calls, phases = state["calls"], state["phases"]
    for c in sorted(calls):
        ran = [p for p in phases if p["call"] == c]
        desc = ", ".join(f"{p['phase']} {p['outcome']}" + (f" ({p['seconds']} s)" if p["outcome"] != "deferred" else "")
                         for p in ran) or "no phase run"
        lines.append(f"- call {c} (`gpu-check {calls[c]['phases']}`): {calls[c]['elapsed_s']} s of a "
                     f"{calls[c]['budget_s']} s budget: {desc}")
    if state["all"]:
        left = [p for p in state["order"] if p not in state["done"]]
        lines.append(f"- `all`: {'every phase done' if not left else 'not yet done: ' + ', '.join(left)}")
    if len(lines) > 2:
        lines.append("")
    lines.append(steps)
    return "\n".join(lines) + "\n"
