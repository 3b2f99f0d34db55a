"""Writes schema-valid perflab result documents for the compare and history
script tests, so they need no training runs.

usage: fake_results.py OUT_DIR FACTOR SEED [REVISION] [HOST] [CREATED] [REPS]
  A DLRM-tiny-like time-to-train result at two batch sizes: REPS runs (default 6)
  whose times, iteration times and throughput are scaled by FACTOR (1.2: 20%
  slower), with 1% seeded noise, written to OUT_DIR/b<batch>/result.json.
"""
import json
import os
import random
import sys

out, factor, seed = sys.argv[1], float(sys.argv[2]), int(sys.argv[3])
revision = sys.argv[4] if len(sys.argv) > 4 else "rev0"
host = sys.argv[5] if len(sys.argv) > 5 else "nightly-host"
created = sys.argv[6] if len(sys.argv) > 6 else "2026-01-01T00:00:00Z"
reps = int(sys.argv[7]) if len(sys.argv) > 7 else 6
rng = random.Random(seed)


def result(batch):
    runs = []
    for i in range(reps):
        noise = 1 + rng.gauss(0, 0.01)
        t = 20.0 * factor * noise * batch / 256
        it = 1.0 * factor * noise
        runs.append({
            "seed": i + 1, "status": "success", "reason": "", "init_s": 0.1,
            "time_to_train_s": t, "train_s": 0.8 * t, "eval_s": 0.2 * t, "iterations": 100,
            "samples": 100 * batch, "epochs": 1.0, "throughput_samples_per_s": batch * 1000 / it,
            "iteration_ms": {"n": 100, "mean": it, "min": it, "p50": it, "p90": it * 1.1, "p99": it * 1.2,
                             "max": it * 1.3},
            "quality_curve": [{"epoch": 1.0, "samples": 100 * batch, "value": 0.75, "train_loss": 0.5,
                               "elapsed_s": t}],
            "log": f"run_{i}.log"})
    names = ("cuda_graphs", "sharp", "sync_free", "fused")
    return {
        "schema_version": 1, "created": created, "kind": "time_to_train",
        "spec": {"workload": "dlrm", "preset": "tiny", "overrides": {},
                 "params": {"batch_size": batch, "learning_rate": 1.0},
                 "backend_requested": "cpu", "backend": "cpu",
                 "toggles_requested": {n: False for n in names},
                 "seeds": [r["seed"] for r in runs], "threads": 2, "warmup_iterations": 5},
        "environment": {"hostname": host, "perflab_version": "test", "git_revision": revision,
                        "cpu_model": "test cpu", "logical_cores": 2, "compiler": "test", "openblas": "test",
                        "cuda": None},
        "toggles": {n: {"requested": False, "in_effect": False} for n in names},
        "plan": {"train_samples": 65536, "eval_samples": 16384, "global_batch_size": batch,
                 "iterations_per_epoch": 256, "max_epochs": 8, "eval_interval_epochs": 0.5,
                 "precision": "fp32", "hyperparameters": {}, "data": {}},
        "quality": {"metric": "AUC", "target": 0.74, "ceiling": None},
        "prepare_s": 1.0, "runs": runs,
        "score": {"time_to_train_s": None, "method": "test", "reason": "test"}}


for batch in (256, 512):
    os.makedirs(os.path.join(out, f"b{batch}"), exist_ok=True)
    with open(os.path.join(out, f"b{batch}", "result.json"), "w") as f:
        json.dump(result(batch), f)
