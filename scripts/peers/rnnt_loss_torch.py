#!/usr/bin/env python3
"""PyTorch peer of perflab's CUDA RNN-T loss (kernels/cuda/rnnt_loss.h).

A straightforward implementation of the same loss: log_softmax over V in
fp32, the alpha recursion over t with the u-direction done as one vectorised
log-cumsum-exp scan per frame, cost_b = -(alpha(T_b-1, U_b) + lp_blank(T_b-1,
U_b)), mean over the batch, gradient by autograd. Blank is V-1. Each timed
repetition is forward + gradient with respect to the logits.

Shapes (padded [B, T, U+1, V]; lengths seeded: T_b uniform in [0.6T, T], U_b
in [0.6U, U], sequence 0 full, as in kernels/bench/transducer_cuda_bench.cc):
  tiny    B=2, T=7, U=4, V=5 (smoke)
  small   B=128, T=150, U=40, V=28
  mlperf  B in {16, 64, 192}, T=279, U=125 (U+1=126), V=1024
  all     small + mlperf

Before timing it checks its own loss against the closed form for all-equal
logits, cost = (T+U) log V - log C(T+U-1, U), and refuses (exit 4) if wrong.
If torchaudio is importable, torchaudio.functional.rnnt_loss is timed too
(fp32 only) and labelled "torchaudio". Prints one JSON line per (shape,
implementation) with median and spread in ms; --json-out also writes them
(JSON Lines). Exit 3 when torch is not installed.

  python3 scripts/peers/rnnt_loss_torch.py --device cpu --shapes tiny
"""
import argparse
import json
import math
import statistics
import sys
import time

try:
    import torch
except ImportError:
    print("rnnt_loss_torch: PyTorch is not installed (pip install torch); nothing timed")
    sys.exit(3)

# A finite stand-in for -inf: exp() of it is 0, and autograd through
# logcumsumexp/logaddexp never sees inf - inf.
NEG = -1.0e30

SHAPES = {
    "tiny": [(2, 7, 4, 5)],
    "small": [(128, 150, 40, 28)],
    "mlperf": [(16, 279, 125, 1024), (64, 279, 125, 1024), (192, 279, 125, 1024)],
}
SHAPES["all"] = SHAPES["small"] + SHAPES["mlperf"]


def rnnt_costs(logits, labels, logit_lengths, label_lengths):
    """Per-sequence costs [B] (fp32) of padded logits [B, T, U+1, V]."""
    batch, max_time, positions, vocab = logits.shape
    blank = vocab - 1
    lp = torch.log_softmax(logits.float(), dim=-1)
    lp_blank = lp[..., blank]  # [B, T, U+1]
    max_labels = positions - 1
    if max_labels > 0:
        index = labels.long().clamp(0, vocab - 1)  # entries past U_b are never used
        index = index[:, None, :, None].expand(batch, max_time, max_labels, 1)
        lp_label = lp[:, :, :max_labels, :].gather(3, index).squeeze(3)  # [B, T, U]
    else:
        lp_label = lp.new_zeros(batch, max_time, 0)
    alphas = []
    # alpha(t, u) = logaddexp(alpha(t-1, u) + blank(t-1, u), alpha(t, u-1) + label(t, u-1)):
    # with a[u] the blank term and c[u] = sum_{j<u} label(t, j),
    # alpha(t, u) = c[u] + logcumsumexp_k<=u(a[k] - c[k]).
    zero_c = lp.new_zeros(batch, 1)
    start = torch.full((batch, positions), NEG, dtype=lp.dtype, device=lp.device)
    start[:, 0] = 0.0
    previous = None
    for t in range(max_time):
        a = start if previous is None else previous + lp_blank[:, t - 1, :]
        c = torch.cat([zero_c, torch.cumsum(lp_label[:, t, :], dim=1)], dim=1)
        previous = c + torch.logcumsumexp(a - c, dim=1)
        alphas.append(previous)
    alpha = torch.stack(alphas, dim=1)  # [B, T, U+1]
    b = torch.arange(batch, device=lp.device)
    t_last = logit_lengths.long() - 1
    u_last = label_lengths.long()
    return -(alpha[b, t_last, u_last] + lp_blank[b, t_last, u_last])


def closed_form(t, u, v):
    log_paths = math.lgamma(t + u) - math.lgamma(u + 1) - math.lgamma(t)
    return (t + u) * math.log(v) - log_paths


def self_check(device):
    """The loss on all-equal logits must match the closed form."""
    for t, u, v in [(1, 0, 2), (3, 2, 5), (7, 4, 11), (40, 12, 29)]:
        logits = torch.full((1, t, u + 1, v), 0.25, device=device)
        labels = torch.zeros(1, u, dtype=torch.int32, device=device)
        cost = rnnt_costs(logits, labels, torch.tensor([t], device=device),
                          torch.tensor([u], device=device)).item()
        expected = closed_form(t, u, v)
        if not abs(cost - expected) <= 1e-4 * expected:
            return f"T={t} U={u} V={v}: cost {cost}, closed form {expected}"
    return None


def make_problem(shape, dtype, device, seed=2024):
    batch, max_time, max_labels, vocab = shape
    gen = torch.Generator().manual_seed(seed)
    lo_t, lo_u = (max_time * 6 + 9) // 10, (max_labels * 6 + 9) // 10
    frames = torch.randint(lo_t, max_time + 1, (batch,), generator=gen, dtype=torch.int32)
    lengths = torch.randint(lo_u, max_labels + 1, (batch,), generator=gen, dtype=torch.int32)
    frames[0], lengths[0] = max_time, max_labels
    labels = torch.randint(0, max(vocab - 1, 1), (batch, max_labels), generator=gen,
                           dtype=torch.int32)
    logits = (torch.rand(batch, max_time, max_labels + 1, vocab, generator=gen) * 6 - 3)
    logits = logits.to(device=device, dtype=dtype)
    return logits, labels.to(device), frames.to(device), lengths.to(device)


def perflab_peer_step(logits, labels, frames, lengths):
    logits.grad = None
    loss = rnnt_costs(logits, labels, frames, lengths).mean()
    loss.backward()


# torchaudio.functional.rnnt_loss on CUDA crashed (illegal memory access)
# on logits of B*T*(U+1)*V >= 2^31 elements; larger shapes are skipped.
TORCHAUDIO_MAX_ELEMENTS = 2**31


def torchaudio_step(logits, labels, frames, lengths):
    import torchaudio
    logits.grad = None
    loss = torchaudio.functional.rnnt_loss(logits, labels, frames, lengths,
                                           blank=logits.shape[-1] - 1, reduction="mean")
    loss.backward()


def time_step(step, tensors, device, warmup, repeats):
    for _ in range(warmup):
        step(*tensors)
    times = []
    for _ in range(repeats):
        if device == "cuda":
            start = torch.cuda.Event(enable_timing=True)
            stop = torch.cuda.Event(enable_timing=True)
            start.record()
            step(*tensors)
            stop.record()
            stop.synchronize()
            times.append(start.elapsed_time(stop))
        else:
            t0 = time.perf_counter()
            step(*tensors)
            times.append((time.perf_counter() - t0) * 1e3)
    times.sort()
    def pct(q):
        return times[min(len(times) - 1, int(q * (len(times) - 1) + 0.5))]
    return {"median_ms": statistics.median(times), "min_ms": times[0], "max_ms": times[-1],
            "p10_ms": pct(0.1), "p90_ms": pct(0.9), "spread_ms": pct(0.9) - pct(0.1)}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shapes", choices=sorted(SHAPES), default="all")
    parser.add_argument("--dtype", choices=["fp32", "bf16"], default="fp32")
    parser.add_argument("--repeats", type=int, default=20)
    parser.add_argument("--warmup", type=int, default=3)
    parser.add_argument("--device", choices=["cuda", "cpu"], default="cuda")
    parser.add_argument("--json-out", help="also append the JSON lines to this file")
    args = parser.parse_args()
    if args.repeats < 1:
        parser.error("--repeats must be >= 1")
    if args.device == "cuda" and not torch.cuda.is_available():
        print("rnnt_loss_torch: no CUDA device visible to PyTorch (use --device cpu for a smoke run)")
        return 3
    problem = self_check(args.device)
    if problem is not None:
        print(f"rnnt_loss_torch: self-check against the closed form failed ({problem}); "
              "refusing to time a wrong implementation")
        return 4
    dtype = torch.float32 if args.dtype == "fp32" else torch.bfloat16
    impls = [("torch_reference", perflab_peer_step)]
    audio_version = None
    try:
        import torchaudio
        audio_version = torchaudio.__version__
        impls.append(("torchaudio", torchaudio_step))
    except ImportError:
        pass
    for shape in SHAPES[args.shapes]:
        batch, max_time, max_labels, vocab = shape
        for name, step in impls:
            record = {"peer": name, "workload": "rnnt_loss", "op": "rnnt_loss forward+grad", "reduction": "mean",
                      "B": batch, "T": max_time, "U": max_labels, "V": vocab,
                      "dtype": args.dtype, "device": args.device, "repeats": args.repeats,
                      "torch": torch.__version__}
            if name == "torchaudio":
                record["torchaudio"] = audio_version
            elements = batch * max_time * (max_labels + 1) * vocab
            if name == "torchaudio" and args.dtype != "fp32":
                record["skipped"] = "torchaudio.functional.rnnt_loss takes fp32/fp16 logits only"
            elif name == "torchaudio" and elements >= TORCHAUDIO_MAX_ELEMENTS:
                # An illegal address corrupts the CUDA context: every later
                # shape would fail too, so this one is not attempted.
                record["skipped"] = (f"{elements:,} logits: torchaudio's CUDA rnnt_loss made an illegal memory "
                                     "access at 2^31 logits and above (seen at B=64, T=279, U=125, V=1024 on an "
                                     "H200, 2026-11-26; 32-bit indexing, presumably)")
            else:
                try:
                    logits, labels, frames, lengths = make_problem(shape, dtype, args.device)
                    logits.requires_grad_(True)
                    record.update(time_step(step, (logits, labels, frames, lengths), args.device,
                                            args.warmup, args.repeats))
                except RuntimeError as error:  # e.g. out of memory at B=192
                    record["skipped"] = str(error).splitlines()[0][:200]
                finally:
                    logits = labels = frames = lengths = None
                    if args.device == "cuda":
                        torch.cuda.empty_cache()
            line = json.dumps(record)
            print(line, flush=True)
            if args.json_out:  # line by line: a crash later keeps what was measured
                with open(args.json_out, "a") as out:
                    out.write(line + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
