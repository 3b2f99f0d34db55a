# Cross-checks `perflab transducer loss` on .npy inputs against an independent
# NumPy implementation of the RNN-T forward recursion (costs), and checks the
# gradient file: dtype, shape, rows summing to zero, padding left at zero.
# Usage: rnnt_npy_check.py PERFLAB TMPDIR
import numpy as np, subprocess, sys, os
perflab, tmp = sys.argv[1], sys.argv[2]
rng = np.random.default_rng(5)
B, T, U, V = 3, 6, 4, 7
logits = rng.standard_normal((B, T, U + 1, V)).astype(np.float32)
t_len = np.array([6, 4, 5], dtype=np.int32)
u_len = np.array([4, 2, 0], dtype=np.int64)
labels = rng.integers(0, V - 1, size=(B, U)).astype(np.int32)
for name, a in (("logits", logits), ("labels", labels), ("t", t_len), ("u", u_len)):
    np.save(os.path.join(tmp, name + ".npy"), a)
out = os.path.join(tmp, "out")
subprocess.run([perflab, "transducer", "loss", "--logits", f"{tmp}/logits.npy", "--labels", f"{tmp}/labels.npy",
                "--logit-lengths", f"{tmp}/t.npy", "--label-lengths", f"{tmp}/u.npy", "--reduction", "sum",
                "--out", out], check=True, stdout=subprocess.DEVNULL)
costs, grads, loss = (np.load(f"{out}/{n}.npy") for n in ("costs", "grads", "loss"))

def reference_cost(z, y, Tb, Ub):  # independent alpha recursion in float64
    lp = z.astype(np.float64) - np.log(np.exp(z.astype(np.float64)).sum(-1, keepdims=True))
    blank = V - 1
    alpha = np.full((Tb, Ub + 1), -np.inf)
    alpha[0, 0] = 0
    for t in range(Tb):
        for u in range(Ub + 1):
            if t == 0 and u == 0: continue
            a = alpha[t - 1, u] + lp[t - 1, u, blank] if t > 0 else -np.inf
            b = alpha[t, u - 1] + lp[t, u - 1, y[u - 1]] if u > 0 else -np.inf
            alpha[t, u] = np.logaddexp(a, b)
    return -(alpha[Tb - 1, Ub] + lp[Tb - 1, Ub, blank])

ref = np.array([reference_cost(logits[b], labels[b], t_len[b], u_len[b]) for b in range(B)])
assert np.allclose(costs, ref, rtol=1e-6, atol=1e-6), (costs, ref)
assert abs(loss - ref.sum()) < 1e-5, (loss, ref.sum())
assert grads.dtype == np.float32 and grads.shape == logits.shape
assert np.abs(grads.sum(-1)).max() < 1e-5
assert np.all(grads[1, 4:] == 0) and np.all(grads[2, :, 1:] == 0)  # padding untouched
print("rnnt npy cross-check ok", costs)
