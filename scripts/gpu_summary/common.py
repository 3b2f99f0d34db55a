"""Loading a gpu-check work folder (results, peers, the call record) and the small helpers every
section shares."""
import glob
import json
import os
import statistics


TOP = 5


VERDICTS = ("met", "not met", "not measured")


# --- loading ----------------------------------------------------------------------

def load_results(work):
    out = []
    for path in sorted(glob.glob(os.path.join(work, "runs", "**", "result.json"), recursive=True)):
        try:
            with open(path) as f:
                r = json.load(f)
        except (OSError, json.JSONDecodeError):
            continue
        if isinstance(r, dict) and isinstance(r.get("spec"), dict):
            r["_path"] = os.path.relpath(path, work)
            out.append(r)
    return out


def load_peers(work):
    rows = []
    path = os.path.join(work, "peers.jsonl")
    if os.path.exists(path):
        for line in open(path):
            line = line.strip()
            if line:
                try:
                    row = json.loads(line)
                except json.JSONDecodeError:
                    continue
                if isinstance(row, dict):
                    rows.append(row)
    return rows


def load_state(work):
    """gpu-check's record of calls and phases (scripts/gpu-check: state/)."""
    state = os.path.join(work, "state")
    calls, phases, done = {}, [], {}
    for path in glob.glob(os.path.join(state, "call-*.tsv")):
        try:
            f = open(path).read().rstrip("\n").split("\t")
            calls[int(f[0])] = {"started": int(f[1]), "elapsed_s": int(f[2]), "budget_s": int(f[3]),
                                "phases": f[4] if len(f) > 4 else ""}
        except (OSError, ValueError, IndexError):
            pass
    try:
        for line in open(os.path.join(state, "phases.tsv")):
            f = line.rstrip("\n").split("\t")
            if len(f) >= 4:
                try:
                    phases.append({"call": int(f[0]), "phase": f[1], "outcome": f[2], "seconds": int(f[3])})
                except ValueError:
                    pass
    except OSError:
        pass
    for path in glob.glob(os.path.join(state, "done-*")):
        try:
            done[os.path.basename(path)[len("done-"):]] = open(path).read().strip()
        except OSError:
            pass
    # `all`'s phases as gpu-check ran them (state/order); a record from before
    # it wrote one: the order of that time.
    order = ["build", "tests", "dlrm", "dlrm-bf16", "transducer", "halo_conv", "peers", "serve", "sanitize",
             "cpu-tests"]  # (sanitize-quick came later, with state/order)
    try:
        order = open(os.path.join(state, "order")).read().split() or order
    except OSError:
        pass
    return {"calls": calls, "phases": phases, "done": done, "order": order,
            "all": os.path.exists(os.path.join(state, "all"))}


# --- small helpers ---------------------------------------------------------------------

def num(v):
    return v if isinstance(v, (int, float)) and not isinstance(v, bool) else None


def median(values):
    values = [v for v in values if num(v) is not None]
    return statistics.median(values) if values else None


def fmt(v, spec="{:.3g}"):
    return "-" if num(v) is None else spec.format(v)


def cell(text):
    return str(text).replace("|", "/").replace("\n", " ")


def spec_of(r):
    return r.get("spec") or {}


def params_of(r):
    return spec_of(r).get("params") or {}


def runs_of(r):
    return [x for x in (r.get("runs") or []) if isinstance(x, dict)]


def work_of(r):
    return r.get("work") or {}


def toggle_in_effect(result, toggle):
    return bool(((result.get("toggles") or {}).get(toggle) or {}).get("in_effect"))


def toggles_on(result):
    names = [k for k in ("fused", "cuda_graphs", "sync_free") if toggle_in_effect(result, k)]
    return "+".join(names) if names else "none"


def run_stat(result, key, field="p50"):
    return median([r[key].get(field) for r in runs_of(result) if isinstance(r.get(key), dict) and r[key].get("n")])


def is_cuda(r):
    return spec_of(r).get("backend") == "cuda"


def is_throughput(r):
    return r.get("kind") == "throughput" or spec_of(r).get("mode") == "throughput"


def as_int(v, default=0):
    try:
        return int(v)
    except (TypeError, ValueError):
        return default


def gate_of(r):
    runs = runs_of(r)
    return (runs[0].get("correctness") if runs else None) or {}


def point_label(r):
    """What distinguishes this point: workload, its shape and precision, its toggles."""
    s, p = spec_of(r), params_of(r)
    w = s.get("workload", "?")
    if w == "dlrm":
        label = f"dlrm {s.get('preset', '?')} {p.get('precision', 'fp32')} batch {p.get('batch_size', '?')}"
    elif w == "transducer":
        width = p.get("vocab") if p.get("op") == "loss" else p.get("hidden")
        label = (f"transducer {p.get('op', '?')} {p.get('dtype', '?')} B={p.get('batch')} T={p.get('max_time')} "
                 f"U={p.get('max_labels')} {'V' if p.get('op') == 'loss' else 'H'}={width} {p.get('layout', '?')}")
    else:
        over = s.get("overrides") or {}
        extra = " ".join(f"{k}={v}" for k, v in sorted(over.items())) if isinstance(over, dict) else ""
        label = f"{w} {s.get('preset', '?')}{' ' + extra if extra else ''}"
    return f"{label} · {dlrm_label(r) if w == 'dlrm' else toggles_on(r)}"


PRECISION_ORDER = {"fp32": 0, "tf32": 1, "bf16": 2, "fp16": 3}


def point_key(r):
    s, p = spec_of(r), params_of(r)
    prec = p.get("precision", p.get("dtype", ""))
    return (s.get("workload", ""), s.get("preset", ""), PRECISION_ORDER.get(prec, 9), prec,
            as_int(p.get("batch_size", p.get("batch"))), json.dumps(p, sort_keys=True), toggles_on(r))


def dlrm_label(r):
    """A DLRM point's toggles and the choices it made away from the
    defaults (tuned GEMMs, an interaction, epilogues, side streams or the
    data-gradient GEMMs' weights other than auto)."""
    algorithms = params_of(r).get("gemm_algorithms")
    tuned = {"tuned": "+tuned_gemms", "searched": "+searched_gemms"}.get(algorithms, "")
    return toggles_on(r) + tuned + chosen_params(r)


def chosen_params(r):
    """The DLRM choices a run set away from auto, as '+name=value' (auto and
    absent: nothing; wgrad_streams among them), and the hardware work queues
    and graph memsets when the run's environment set them, so rows that
    differ only in them stay apart."""
    p = params_of(r)
    env = "".join(f"+{name}={env_var(r, name)}" for name in ("CUDA_DEVICE_MAX_CONNECTIONS", "PERFLAB_GRAPH_MEMSETS")
                  if env_var(r, name))
    return "".join(f"+{k}={p[k]}" for k in ("interaction", "epilogues", "side_streams", "dgrad_weights", "wgrad_dy",
                                                  "dependent_launch", "wgrad_streams")
                   if p.get(k) not in (None, "auto")) + env


def env_var(r, name):
    """An environment variable the run recorded (environment.env), or None."""
    env = (r.get("environment") or {}).get("env")
    return env.get(name) if isinstance(env, dict) else None


def setup_fraction(r):
    """Setup (prepare_s, plus each run's init_s) over the point's wall time
    (setup plus each run's time from its start to its end, gate included)."""
    prep = num(r.get("prepare_s"))
    if prep is None:
        return None, None
    init = sum(num(x.get("init_s")) or 0 for x in runs_of(r))
    ran = sum(num(x.get("time_to_train_s")) or 0 for x in runs_of(r))
    wall = prep + init + ran
    return ((prep + init) / wall if wall > 0 else None), prep + init
