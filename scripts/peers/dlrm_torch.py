#!/usr/bin/env python3
"""PyTorch peer of perflab's DLRM training step, for side-by-side timing.

Same model as perflab's dlrm workload: bottom MLP (Linear+ReLU on every
layer), one embedding table per categorical feature, dot interaction (the
dense vector followed by the strictly-lower triangle of the pairwise dot
products), top MLP (ReLU on all but the last layer), sigmoid BCE, plain SGD
with sparse embedding updates (gradients of duplicate ids summed, then one
update per row, as a fused sparse optimizer does).

Shapes come from a perflab result (--result RESULT.json: embed_dim, MLPs,
table sizes, batch size) or from the built-in DLE shapes. Two variants run in
the same invocation on the same GPU: eager, and torch.compile(mode=
"reduce-overhead") (CUDA graphs under the hood). Precision fp32 runs the GEMMs
in TF32 (perflab's default); bf16 uses autocast with fp32 master weights.

Before timing, the script checks itself: eager and compiled models, started
from the same weights, must give the same loss on the same batch, and the
loss must fall over a few steps on a learnable batch; otherwise it refuses
to time. Each timed step is bracketed by CUDA events; one JSON line is
printed per (variant, batch size) with n, median and spread.

Exit codes: 0 ok, 2 bad arguments, 3 PyTorch (or a GPU, unless --device cpu)
missing, 4 self-check failed.
"""
import argparse
import json
import statistics
import sys
import time

DLE = {
    "embed_dim": 128,
    "bottom_mlp": [512, 256, 128],
    "top_mlp": [1024, 1024, 512, 256, 1],
    # perflab's synthetic Criteo cardinalities capped at max_table_size=200000 (dle preset)
    "table_sizes": None,
    "num_dense": 13,
}


def parse_layers(text):
    return [int(x) for x in str(text).split("-")]


def shapes_from_result(path):
    with open(path) as f:
        result = json.load(f)
    hp = result["plan"]["hyperparameters"]
    data = result["plan"]["data"]
    return {
        "embed_dim": int(hp["embedding_dim"]),
        "bottom_mlp": parse_layers(hp["bottom_mlp"]),
        "top_mlp": parse_layers(hp["top_mlp"]),
        "table_sizes": [int(x) for x in data["table_sizes"]],
        "num_dense": 13,
        "batch_size": int(result["plan"]["global_batch_size"]),
        "precision": result["spec"]["params"].get("precision", "fp32"),
    }


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--result", help="perflab result.json to take the model shapes from")
    ap.add_argument("--batch-sizes", default="", help="comma list (default: the result's batch size, else 16384)")
    ap.add_argument("--precision", choices=["fp32", "bf16"], help="default: the result's, else fp32")
    ap.add_argument("--variants", default="eager,compile", help="comma list of eager, compile")
    ap.add_argument("--warmup", type=int, default=10)
    ap.add_argument("--iterations", type=int, default=50)
    ap.add_argument("--lr", type=float, default=0.5)
    ap.add_argument("--zipf", type=float, default=1.05, help="skew of the ids (perflab's synthetic default)")
    ap.add_argument("--max-table-size", type=int, default=200000, help="without --result: cap of the table sizes")
    ap.add_argument("--device", default="cuda", choices=["cuda", "cpu"], help="cpu: a smoke run only")
    ap.add_argument("--json-out", help="also append the JSON lines to this file")
    args = ap.parse_args()

    try:
        import torch
        import torch.nn as nn
    except ImportError as e:
        print(f"dlrm_torch: PyTorch is not installed ({e})", file=sys.stderr)
        return 3
    if args.device == "cuda" and not torch.cuda.is_available():
        print("dlrm_torch: no CUDA device visible to PyTorch", file=sys.stderr)
        return 3
    dev = torch.device(args.device)

    if args.result:
        shapes = shapes_from_result(args.result)
    else:
        shapes = dict(DLE)
        # Criteo day-0 style cardinalities, capped as perflab's synthetic generator caps them.
        criteo = [39884406, 39043, 17289, 7420, 20263, 3, 7120, 1543, 63, 38532951, 2953546, 403346,
                  10, 2208, 11938, 155, 4, 976, 14, 39979771, 25641295, 39664984, 585935, 12972, 108, 36]
        shapes["table_sizes"] = [min(c, args.max_table_size) for c in criteo]
        shapes["batch_size"] = 16384
        shapes["precision"] = "fp32"
    precision = args.precision or shapes.get("precision", "fp32")
    batch_sizes = [int(b) for b in args.batch_sizes.split(",") if b] or [shapes["batch_size"]]
    variants = [v for v in args.variants.split(",") if v]
    for v in variants:
        if v not in ("eager", "compile"):
            print(f"dlrm_torch: --variants: unknown variant '{v}' (eager, compile)", file=sys.stderr)
            return 2
    if args.device == "cuda":
        torch.backends.cuda.matmul.allow_tf32 = True
        torch.backends.cudnn.allow_tf32 = True

    D = shapes["embed_dim"]
    sizes = shapes["table_sizes"]
    T = len(sizes)
    offsets = torch.tensor([0] + list(torch.tensor(sizes).cumsum(0)[:-1].tolist()), device=dev)

    def mlp(widths, inputs, relu_last):
        layers = []
        for i, w in enumerate(widths):
            layers.append(nn.Linear(inputs, w))
            if relu_last or i + 1 < len(widths):
                layers.append(nn.ReLU())
            inputs = w
        return nn.Sequential(*layers)

    tril = torch.tril_indices(T + 1, T + 1, offset=-1, device=dev)

    class Dense(nn.Module):
        def __init__(self):
            super().__init__()
            self.bottom = mlp(shapes["bottom_mlp"], shapes["num_dense"], True)
            self.top = mlp(shapes["top_mlp"], D + (T + 1) * T // 2, False)

        def forward(self, dense, emb):
            x = self.bottom(dense)                                   # [B, D]
            feats = torch.cat([x.unsqueeze(1), emb], dim=1)          # [B, T+1, D]
            dots = torch.bmm(feats, feats.transpose(1, 2))           # [B, T+1, T+1]
            z = torch.cat([x, dots[:, tril[0], tril[1]]], dim=1)
            return self.top(z).squeeze(1)

    gen = torch.Generator(device="cpu").manual_seed(1)

    def make_batch(b, learnable=False):
        dense = torch.randn(b, shapes["num_dense"], generator=gen).to(dev)
        cols = []
        for rows in sizes:
            # Zipf-like ids: P(k) ∝ 1/(k+1)^s over the table's rows.
            weights = 1.0 / torch.arange(1, rows + 1, dtype=torch.float64) ** args.zipf
            cols.append(torch.multinomial(weights, b, replacement=True, generator=gen))
        ids = torch.stack(cols, dim=1).to(dev)                       # [B, T]
        if learnable:
            labels = (dense[:, 0] > 0).float()
        else:
            labels = (torch.rand(b, generator=gen) < 0.25).float().to(dev)
        return dense, ids, labels

    autocast = torch.autocast(device_type=args.device, dtype=torch.bfloat16, enabled=precision == "bf16")

    def build(seed):
        torch.manual_seed(seed)
        model = Dense().to(dev)
        table = (torch.rand(sum(sizes), D, device=dev) * 2 - 1) * 0.01
        return model, table

    def make_step(model, table, forward):
        opt = torch.optim.SGD(model.parameters(), lr=args.lr)
        loss_fn = nn.BCEWithLogitsLoss()

        def step(dense, ids, labels):
            flat = (ids + offsets).reshape(-1)
            emb = table.index_select(0, flat).view(ids.shape[0], T, D).requires_grad_(True)
            with autocast:
                logits = forward(dense, emb)
            loss = loss_fn(logits.float(), labels)
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            with torch.no_grad():
                table.index_add_(0, flat, emb.grad.reshape(-1, D), alpha=-args.lr)
            return loss.detach()
        return step

    # Self-check: eager and compiled agree; training reduces the loss.
    check_b = 64
    batch = make_batch(check_b, learnable=True)
    losses = {}
    for v in variants:
        model, table = build(0)
        fwd = torch.compile(model, mode="reduce-overhead") if v == "compile" else model
        step = make_step(model, table, fwd)
        first = [step(*batch).item() for _ in range(30)]
        losses[v] = first
        if not (first[-1] < first[0]) or any(x != x for x in first):
            print(f"dlrm_torch: self-check failed: {v} loss did not fall ({first[0]:.4f} -> {first[-1]:.4f})",
                  file=sys.stderr)
            return 4
    if len(losses) == 2:
        a, b = losses["eager"][0], losses["compile"][0]
        tol = 3e-2 if precision == "bf16" else 2e-3
        if abs(a - b) > tol * max(1.0, abs(a)):
            print(f"dlrm_torch: self-check failed: eager loss {a:.6f} != compiled {b:.6f}", file=sys.stderr)
            return 4

    out = open(args.json_out, "a") if args.json_out else None
    for b in batch_sizes:
        data = [make_batch(b) for _ in range(4)]
        for v in variants:
            model, table = build(0)
            fwd = torch.compile(model, mode="reduce-overhead") if v == "compile" else model
            step = make_step(model, table, fwd)
            for i in range(args.warmup):
                step(*data[i % len(data)])
            if args.device == "cuda":
                torch.cuda.synchronize()
            times, cpu = [], []
            for i in range(args.iterations):
                if args.device == "cuda":
                    start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                    start.record()
                t0 = time.perf_counter()
                step(*data[i % len(data)])
                cpu.append((time.perf_counter() - t0) * 1e3)
                if args.device == "cuda":
                    stop.record()
                    times.append((start, stop))
            if args.device == "cuda":
                torch.cuda.synchronize()
                ms = [s.elapsed_time(e) for s, e in times]
            else:
                ms = cpu
            p50 = statistics.median(ms)
            line = {
                "peer": "pytorch", "workload": "dlrm", "variant": "eager" if v == "eager" else "compile-reduce-overhead",
                "torch": torch.__version__, "device": torch.cuda.get_device_name() if args.device == "cuda" else "cpu",
                "batch": b, "precision": precision, "n": len(ms),
                "step_ms_p50": p50, "step_ms_min": min(ms), "step_ms_max": max(ms),
                "cpu_ms_p50": statistics.median(cpu), "samples_per_s": b / (p50 / 1e3),
                "ids": f"zipf {args.zipf}", "tables": T, "embed_dim": D,
            }
            print(json.dumps(line), flush=True)
            if out:
                out.write(json.dumps(line) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
