#!/usr/bin/env bash
# Programmatic dependent launch is safe only if every kernel that may be
# started early waits first (kernels/cuda/dependent_launch.cuh). The rule
# held here: a source file that launches through launch_kernel launches
# only so (no <<<...>>>), and every __global__ function defined in it
# begins with wait_for_prior_kernels(); the launch attribute is set in
# dependent_launch.cuh alone. The checker is run on two bad fixtures too,
# which it must reject.
set -uo pipefail
: "${PERFLAB_SOURCE_DIR:?}"
cd "$PERFLAB_SOURCE_DIR" || exit 1
py=${PYTHON:-python3}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cat > "$tmp/check.py" <<'PY'
import re, sys

def strip_comments(text):
    text = re.sub(r"/\*.*?\*/", lambda m: re.sub(r"[^\n]", " ", m.group(0)), text, flags=re.S)
    return re.sub(r"//[^\n]*", "", text)

def problems(path):
    text = strip_comments(open(path, encoding="utf-8").read())
    out = []
    if "cudaLaunchAttributeProgrammaticStreamSerialization" in text and not path.endswith("dependent_launch.cuh"):
        out.append(f"{path}: sets the dependent-launch attribute outside kernels/cuda/dependent_launch.cuh")
    if not re.search(r"\blaunch_kernel\(", text) or path.endswith("dependent_launch.cuh"):
        return out
    for m in re.finditer(r"<<<", text):
        line = text.count("\n", 0, m.start()) + 1
        out.append(f"{path}:{line}: a <<<...>>> launch in a file that launches through launch_kernel")
    kernels = 0
    for m in re.finditer(r"\b__global__\b", text):
        depth, j = 0, m.end()
        while j < len(text):
            c = text[j]
            if c == "(":
                depth += 1
            elif c == ")":
                depth -= 1
            elif depth == 0 and c in "{;":
                break
            j += 1
        if j >= len(text) or text[j] == ";":
            continue  # a declaration
        kernels += 1
        first = text[j + 1:].lstrip()
        if not first.startswith("wait_for_prior_kernels();"):
            line = text.count("\n", 0, m.start()) + 1
            names = [n for n in re.findall(r"(\w+)\s*\(", text[m.end():j]) if n != "__launch_bounds__"]
            out.append(f"{path}:{line}: kernel {names[0] if names else '?'} does not begin with "
                       "wait_for_prior_kernels()")
    if kernels == 0:
        out.append(f"{path}: launches through launch_kernel but defines no kernel to check")
    return out

bad = [p for f in sys.argv[1:] for p in problems(f)]
print("\n".join(bad) if bad else f"ok: {len(sys.argv) - 1} files")
sys.exit(1 if bad else 0)
PY
files=$(git ls-files '*.cu' '*.cc' '*.cuh' '*.h' 2>/dev/null || find kernels workloads harness collectives \( -name '*.cu' -o -name '*.cc' -o -name '*.cuh' -o -name '*.h' \))
[[ -n "$files" ]] || { echo "FAIL: no sources found"; exit 1; }
# shellcheck disable=SC2086
users=$(grep -lE '\blaunch_kernel\(' $files | grep -v 'dependent_launch\.cuh$' || true)
[[ -n "$users" ]] || { echo "FAIL: no file launches through launch_kernel (the rule would hold nothing)"; exit 1; }
# shellcheck disable=SC2086
"$py" "$tmp/check.py" $files || { echo "FAIL: the dependent-launch rule is broken (above)"; exit 1; }

# The checker must reject a kernel that does not wait, and a <<<...>>> beside launch_kernel.
cat > "$tmp/no_wait.cu" <<'CU'
__global__ void fine(int* x) {
  wait_for_prior_kernels();
  x[0] = 1;
}
__global__ void __launch_bounds__(256) early(int* x) {
  if (x == nullptr) return;  // no wait: must be caught
  wait_for_prior_kernels();
}
void run(int* x, cudaStream_t s) { launch_kernel(fine, 1, 1, 0, s, x); launch_kernel(early, 1, 1, 0, s, x); }
CU
cat > "$tmp/chevrons.cu" <<'CU'
__global__ void k(int* x) {
  wait_for_prior_kernels();
}
void run(int* x, cudaStream_t s) { launch_kernel(k, 1, 1, 0, s, x); k<<<1, 1, 0, s>>>(x); }
CU
for bad in no_wait chevrons; do
  if "$py" "$tmp/check.py" "$tmp/$bad.cu" > "$tmp/$bad.txt"; then
    echo "FAIL: the checker passed the bad fixture $bad.cu"
    exit 1
  fi
done
grep -q "kernel early does not begin" "$tmp/no_wait.txt" || { echo "FAIL: no_wait: $(cat "$tmp/no_wait.txt")"; exit 1; }
grep -q "kernel fine" "$tmp/no_wait.txt" && { echo "FAIL: no_wait flagged the kernel that waits"; exit 1; }
grep -q "<<<...>>> launch" "$tmp/chevrons.txt" || { echo "FAIL: chevrons: $(cat "$tmp/chevrons.txt")"; exit 1; }
echo "ok: every kernel launched through launch_kernel waits first ($(echo "$users" | wc -l) files); both bad fixtures rejected"
