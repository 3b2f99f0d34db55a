"""The summary, section by section (scripts/gpu-summary runs main())."""
import json
import os
import sys

from .common import VERDICTS, load_peers, load_results, load_state
from .graphs import graphs_section
from .dlrm import dlrm_section, graph_bench_section, lookup_bench_section, relu_bias_grad_bench_section, ttt_section
from .halo import halo_section
from .kernels import kernels_section, launches_section
from .ncu import ncu_section
from .record import calls_section, steps_rows, tests_section
from .serving import serving_section
from .targets import targets_section
from .transducer import transducer_section


def main():
    if len(sys.argv) != 3:
        print("usage: gpu-summary WORK_DIR STEPS_MD (a gpu-check work folder and its steps table)", file=sys.stderr)
        return 2
    work, steps_path = sys.argv[1], sys.argv[2]
    env = {}
    try:
        env = json.load(open(os.path.join(work, "environment.json")))
    except (OSError, json.JSONDecodeError):
        pass
    try:
        steps_text = open(steps_path).read()
    except OSError:
        steps_text = "(no steps recorded)\n"
    steps = steps_rows(steps_text)
    # A step run again in a later call (a phase cut off and resumed): its latest outcome counts.
    latest = list({r[2]: r for r in steps}.values())
    results = load_results(work)
    peers = load_peers(work)
    state = load_state(work)
    cuda = env.get("cuda") if isinstance(env.get("cuda"), dict) else {}
    devices = cuda.get("devices") or []
    out = ["# perflab gpu-check", ""]
    out.append(f"- GPU: {devices[0].get('name') if devices else 'unknown'}; driver {cuda.get('driver_version', '?')}, "
               f"runtime {cuda.get('runtime_version', '?')}")
    for lib in ("cudnn", "nccl"):
        built, running = cuda.get(f"{lib}_compiled_version"), cuda.get(f"{lib}_version")
        if built and running and built != running:
            out.append(f"- **{lib}: built against {built}'s headers, running {running}** (a mismatched pair: "
                       "see the configure log)")
    out.append(f"- perflab {env.get('perflab_version', '?')} (git {env.get('git_revision', '?')}); "
               f"host {env.get('cpu_model', '?')}")
    out.append(f"- {len(results)} result files, {len(peers)} peer measurements")
    out.append("")
    d_text, d_facts = dlrm_section(results, peers)
    r_text, r_facts = transducer_section(results, peers)
    h_text, h_facts = halo_section(results)
    s_text, s_facts = serving_section(results)
    t_text, t_facts = tests_section(work, latest)
    targets, verdicts = targets_section(results, peers, state, d_facts, r_facts, h_facts, t_facts, latest, s_facts)
    tally = {v: verdicts.count(v) for v in VERDICTS}
    out.insert(-1, f"- targets from the open issues (below the kernel tables): {tally['met']} met, "
                   f"{tally['not met']} not met, {tally['not measured']} not measured")
    out += [kernels_section(results), graphs_section(results), targets,
            launches_section(results),
            calls_section(state, steps_text), t_text, d_text, lookup_bench_section(work), relu_bias_grad_bench_section(work), graph_bench_section(work),
            ncu_section(work),
            ttt_section(results),
            r_text, h_text, s_text]
    print("\n".join(out))
    return 0
