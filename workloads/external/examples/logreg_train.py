#!/usr/bin/env python3
"""A small trainer that logs like an MLPerf reference implementation.

Logistic regression on a seeded synthetic data set (numpy only), trained
with minibatch SGD until its held-out accuracy reaches a target, logging
every MLPerf key through mlperf_logging.mllog: the example of
logreg.workload.yaml ("Your own workload" in the README). Seconds on a CPU.

--fused computes a batch's gradient in one matrix product; without it the
gradient is summed one sample at a time (what the toggle changes, measurably).
"""

import argparse
import sys

import numpy as np
from mlperf_logging import mllog
from mlperf_logging.mllog import constants as c


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--seed", type=int, required=True)
    p.add_argument("--lr", type=float, default=0.05)
    p.add_argument("--batch", type=int, default=64)
    p.add_argument("--features", type=int, default=32)
    p.add_argument("--samples", type=int, default=8192)
    p.add_argument("--target", type=float, default=0.96)
    p.add_argument("--max-epochs", type=int, default=20)
    p.add_argument("--fused", action="store_true")
    p.add_argument("--log", help="write the MLLOG here too (else stdout only)")
    a = p.parse_args()
    if a.log:
        mllog.config(filename=a.log)
    log = mllog.get_mllogger()

    log.event(key=c.CACHE_CLEAR, value=True)
    log.start(key=c.INIT_START)
    log.event(key=c.SUBMISSION_BENCHMARK, value="logreg")
    log.event(key=c.SUBMISSION_ORG, value="perflab-example")
    log.event(key=c.SUBMISSION_DIVISION, value="open")
    log.event(key=c.SUBMISSION_STATUS, value="onprem")
    log.event(key=c.SUBMISSION_PLATFORM, value="cpu")
    log.event(key=c.SEED, value=a.seed)
    log.event(key=c.GLOBAL_BATCH_SIZE, value=a.batch)
    log.event(key=c.OPT_NAME, value="sgd")
    log.event(key=c.OPT_BASE_LR, value=a.lr)

    rng = np.random.default_rng(a.seed)
    truth = rng.normal(size=a.features)
    x = rng.normal(size=(a.samples, a.features))
    y = (x @ truth + 0.5 * rng.normal(size=a.samples) > 0).astype(np.float64)
    held = a.samples // 4
    x_train, y_train, x_eval, y_eval = x[held:], y[held:], x[:held], y[:held]
    log.event(key=c.TRAIN_SAMPLES, value=len(y_train))
    log.event(key=c.EVAL_SAMPLES, value=len(y_eval))
    w = np.zeros(a.features)
    log.end(key=c.INIT_STOP)

    log.start(key=c.RUN_START)
    status = c.ABORTED
    seen = 0
    for epoch in range(1, a.max_epochs + 1):
        log.start(key=c.BLOCK_START, metadata={"first_epoch_num": epoch, "epoch_count": 1})
        order = rng.permutation(len(y_train))
        loss_sum, batches = 0.0, 0
        for start in range(0, len(order), a.batch):
            idx = order[start:start + a.batch]
            xb, yb = x_train[idx], y_train[idx]
            prob = 1.0 / (1.0 + np.exp(-(xb @ w)))
            if a.fused:
                grad = xb.T @ (prob - yb)
            else:
                grad = np.zeros_like(w)
                for row, pr, label in zip(xb, prob, yb):
                    grad += row * (pr - label)
            w -= a.lr * grad / len(idx)
            eps = 1e-12
            loss_sum += float(-np.mean(yb * np.log(prob + eps) + (1 - yb) * np.log(1 - prob + eps)))
            batches += 1
            seen += len(idx)
        log.end(key=c.BLOCK_STOP, metadata={"first_epoch_num": epoch})
        log.event(key="train_loss", value=loss_sum / batches, metadata={"epoch_num": epoch})
        log.start(key=c.EVAL_START, metadata={"epoch_num": epoch})
        accuracy = float(np.mean(((x_eval @ w) > 0) == (y_eval > 0.5)))
        log.event(key=c.EVAL_ACCURACY, value=accuracy, metadata={"epoch_num": epoch, "samples_count": seen})
        log.end(key=c.EVAL_STOP, metadata={"epoch_num": epoch})
        if accuracy >= a.target:
            status = c.SUCCESS
            break
    log.end(key=c.RUN_STOP, metadata={"status": status})
    return 0


if __name__ == "__main__":
    sys.exit(main())
