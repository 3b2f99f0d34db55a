#!/usr/bin/env bash
# End-to-end through a real single-node SLURM cluster (Debian's munge,
# slurmctld, slurmd), brought up in a temporary folder and torn down at the
# end: a 2-rank DLRM step launched by srun (PMIx) and by mpirun inside an
# allocation, srun without PMI refused in one line, and a 4-run sweep
# submitted with --launcher slurm: queued while the node is drained, one job
# cancelled and one broken (failed), the rest done, the same command again
# submitting only the two missing runs, then nothing. Skips (77) only when
# the packages are missing and cannot be installed.
set -uo pipefail
: "${PERFLAB:?}" "${PERFLAB_SOURCE_DIR:?}"
# shellcheck source=tests/cli/lib.bash
source "$(dirname "$0")/lib.bash"

skip() {
  echo "SKIP: $*"
  exit 77
}

packages=(munge slurmctld slurmd slurm-client)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  [[ $(id -u) -eq 0 ]] || skip "SLURM packages missing (${missing[*]}) and not root to install them"
  echo "installing ${missing[*]}"
  { DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" ||
    { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
      "${missing[@]}"; }; } >"$tmp/apt.txt" 2>&1 ||
    skip "cannot install ${missing[*]}: $(tail -1 "$tmp/apt.txt")"
fi
for cmd in munged slurmctld slurmd sbatch srun squeue scontrol scancel; do
  command -v "$cmd" >/dev/null || skip "$cmd not found after installing ${packages[*]}"
done

# --- the cluster: one node (this machine), every file under $tmp/slurm ---
S="$tmp/slurm"
mkdir -p "$S/munge" "$S/ctld" "$S/spool"
chmod 700 "$S/munge"
head -c 1024 /dev/urandom >"$S/munge/munge.key"
chmod 400 "$S/munge/munge.key"
host=$(hostname -s)
port=$((20000 + $$ % 20000))  # two ports, unlikely to be taken
cat >"$S/slurm.conf" <<EOF
ClusterName=perflabtest
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=$port
SlurmdPort=$((port + 1))
AuthType=auth/munge
AuthInfo=socket=$S/munge/socket
CredType=cred/munge
SlurmUser=$(id -un)
SlurmdUser=$(id -un)
StateSaveLocation=$S/ctld
SlurmdSpoolDir=$S/spool
SlurmctldPidFile=$S/ctld.pid
SlurmdPidFile=$S/slurmd.pid
SlurmctldLogFile=$S/ctld.log
SlurmdLogFile=$S/slurmd.log
SlurmdParameters=config_overrides
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
MpiDefault=pmix
ReturnToService=2
MinJobAge=600
# A loaded machine answers slowly: more than SLURM's 10 s defaults before a
# message or a batch job's start counts as lost.
MessageTimeout=60
BatchStartTimeout=120
NodeName=$host NodeAddr=127.0.0.1 CPUs=4 State=UNKNOWN
PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP
EOF
# No cgroups: processes are tracked through /proc (the container has no systemd).
echo "CgroupPlugin=cgroup/v1" >"$S/cgroup.conf"
export SLURM_CONF="$S/slurm.conf"

daemons=()
teardown() {
  squeue --noheader --format=%i 2>/dev/null | xargs -r scancel 2>/dev/null
  for pid in "${daemons[@]}"; do kill "$pid" 2>/dev/null; done
  for pid in "${daemons[@]}"; do wait "$pid" 2>/dev/null; done
  rm -rf "$tmp"
  clean_openmp_registrations  # the steps SLURM killed (lib.bash)
}
trap teardown EXIT

munged -F --force -S "$S/munge/socket" --key-file="$S/munge/munge.key" --log-file="$S/munge/log" \
  --pid-file="$S/munge/pid" --seed-file="$S/munge/seed" >"$S/munge/out" 2>&1 &
daemons+=($!)
for _ in $(seq 50); do [[ -S $S/munge/socket ]] && break; sleep 0.1; done
slurmctld -D -i -f "$SLURM_CONF" >"$S/ctld.out" 2>&1 &
daemons+=($!)
slurmd -D -f "$SLURM_CONF" >"$S/slurmd.out" 2>&1 &
daemons+=($!)
state=""
for _ in $(seq 600); do  # 120 s at most
  state=$(sinfo --noheader --format=%T 2>/dev/null)
  [[ $state == idle ]] && break
  sleep 0.2
done
if [[ $state != idle ]]; then
  fail "the node did not come up idle (sinfo: '$state'): $(tail -3 "$S/ctld.log" "$S/slurmd.log" 2>&1)"
  finish
  exit 1
fi
pass "single-node cluster up: $(srun --version), node $host idle"

# Under ASan, Open MPI's own allocations at MPI_Init are reported as leaks
# (see collectives_test.sh): leak checking is off here, where ranks, jobs and
# steps all inherit this environment.
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0"

# --- multi-rank runs ---
dlrm=(run dlrm --preset tiny --mode throughput --iterations 5 --warmup 1 --threads 1)
check_two_ranks() {  # DIR WHAT: one result, written by rank 0 of an MPI world of 2
  local results
  results=$(find "$1" -name result.json | wc -l)
  if [[ $results -eq 1 ]] && "$PYTHON" - "$(find "$1" -name result.json)" <<'PY'; then
import json, sys
r = json.load(open(sys.argv[1]))
c = r["environment"]["communicator"]
assert c["kind"] == "mpi" and c["size"] == 2, c
assert len(r["environment"]["ranks"]) == 2, r["environment"]["ranks"]
assert r["runs"][0]["status"] == "success", r["runs"][0]
PY
    pass "$2: 2 ranks, one result"
  else
    fail "$2: $results result(s) in $1: $(cat "$tmp/rank.txt")"
  fi
}
srun -n 2 "$PERFLAB" "${dlrm[@]}" --out "$tmp/srun" >"$tmp/rank.txt" 2>&1 ||
  fail "srun -n 2 perflab run dlrm exited $?: $(tail -3 "$tmp/rank.txt")"
check_two_ranks "$tmp/srun" "srun -n 2 (MpiDefault=pmix)"

# mpirun inside an allocation: Open MPI starts its daemons through srun.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
salloc -n 2 mpirun -np 2 "$PERFLAB" "${dlrm[@]}" --out "$tmp/salloc" >"$tmp/rank.txt" 2>&1 ||
  fail "salloc -n 2 mpirun perflab run dlrm exited $?: $(tail -3 "$tmp/rank.txt")"
check_two_ranks "$tmp/salloc" "salloc -n 2 mpirun -np 2"

# srun without PMIx (none; pmi2, which Debian's Open MPI does not speak):
# MPI cannot join the tasks; task 0 says what to do in one line, exit 2.
for mpi in none pmi2; do
  srun --mpi=$mpi -n 2 "$PERFLAB" "${dlrm[@]}" --out "$tmp/nopmi" >"$tmp/rank.txt" 2>&1
  rc=$?
  if [[ $rc -ne 0 && $(grep -c "perflab: error: .*without PMIx.*--mpi=pmix" "$tmp/rank.txt") -eq 1 &&
    $(grep -c "^perflab" "$tmp/rank.txt") -eq 1 && ! -e $tmp/nopmi ]] &&
    grep -q "Exited with exit code 2" "$tmp/rank.txt"; then
    pass "srun --mpi=$mpi -> one line: $(grep -m1 'perflab: error' "$tmp/rank.txt")"
  else
    fail "srun --mpi=$mpi -n 2 exited $rc: $(cat "$tmp/rank.txt")"
  fi
done
# One task under srun without PMIx needs no MPI: it runs single-rank.
srun --mpi=none -n 1 "$PERFLAB" run triad --iterations 3 --threads 1 --out "$tmp/one" >"$tmp/rank.txt" 2>&1 &&
  [[ $(find "$tmp/one" -name result.json | wc -l) -eq 1 ]] && pass "srun --mpi=none -n 1: single rank" ||
  fail "srun -n 1: $(cat "$tmp/rank.txt")"

# --- a 4-run sweep through SLURM ---
cat >"$tmp/four.yaml" <<EOF
name: four
out: $tmp/sweeps
workload: triad
preset: tiny
params:
  elements: [1000, 2000]
seeds: 2
threads: 1
mode: throughput
iterations: 5
EOF
sweep() { "$PERFLAB" sweep "$tmp/four.yaml" "$@"; }
status_count() {  # STATE: how many runs --status shows in it
  sweep --status 2>&1 | grep -c "^$1 "
}
settled() {  # SWEEP_FILE: until nothing is queued or running (300 s at most); status in $tmp/status.txt
  for _ in $(seq 1500); do
    "$PERFLAB" sweep "$1" --status >"$tmp/status.txt" 2>&1
    grep -qE "^(queued|running) " "$tmp/status.txt" || return 0
    sleep 0.2
  done
  return 1
}

sweep --status >"$tmp/status.txt" 2>&1
status_exit=$?
[[ $status_exit -eq 4 && $(grep -c "^not submitted " "$tmp/status.txt") -eq 4 ]] &&
  pass "before submitting: 4 runs not submitted, exit 4" || fail "status before: $(cat "$tmp/status.txt")"

# Drained, the node takes no jobs: they wait in the queue.
scontrol update nodename="$host" state=drain reason=perflab-test
sweep --launcher slurm --time 5 >"$tmp/submit.txt" 2>&1 &&
  grep -q "4 job(s) submitted now" "$tmp/submit.txt" && [[ $(status_count queued) -eq 4 ]] &&
  pass "4 jobs submitted, all queued: $(head -1 "$tmp/submit.txt")" ||
  fail "submit: $(cat "$tmp/submit.txt"); status: $(sweep --status 2>&1)"
jobs_json="$tmp/sweeps/four/slurm/jobs.json"
mapfile -t keys < <("$PYTHON" -c 'import json,sys; print("\n".join(sorted(json.load(open(sys.argv[1]))["jobs"])))' "$jobs_json")
job_of() { "$PYTHON" -c 'import json,sys; print(json.load(open(sys.argv[1]))["jobs"][sys.argv[2]]["job_id"])' "$jobs_json" "$1"; }
sweep --launcher slurm >"$tmp/again.txt" 2>&1 && grep -q "0 job(s) submitted now" "$tmp/again.txt" &&
  pass "queued runs are not submitted again" || fail "submit while queued: $(cat "$tmp/again.txt")"
sweep --status >/dev/null 2>&1
status_exit=$?
[[ $status_exit -eq 3 ]] && pass "all queued: --status exits 3" || fail "all queued: --status exited $status_exit"
# One job cancelled while queued; one broken: its run file is gone.
scancel "$(job_of "${keys[0]}")"
rm -f "$tmp/sweeps/four/slurm/${keys[1]}.json"
scontrol update nodename="$host" state=resume
settled "$tmp/four.yaml" || fail "jobs did not finish in 300 s: $(cat "$tmp/status.txt")"
sweep --status >/dev/null 2>&1
status_exit=$?
if [[ $(grep -c "^done " "$tmp/status.txt") -eq 2 && $(grep -c "^failed " "$tmp/status.txt") -eq 2 ]] &&
  grep -q "CANCELLED" "$tmp/status.txt" && grep -q "^failed .*${keys[1]}" "$tmp/status.txt" && [[ $status_exit -eq 1 ]]; then
  pass "2 done, the cancelled and the broken job failed, exit 1"
else
  fail "status after the jobs: $(cat "$tmp/status.txt")"
fi
sweep --launcher slurm >"$tmp/again.txt" 2>&1 && grep -q "2 job(s) submitted now" "$tmp/again.txt" &&
  pass "again: only the 2 failed runs submitted" || fail "resubmit: $(cat "$tmp/again.txt")"
settled "$tmp/four.yaml" || fail "resubmitted jobs did not finish in 300 s: $(cat "$tmp/status.txt")"
sweep --status >/dev/null 2>&1
status_exit=$?
[[ $(grep -c "^done " "$tmp/status.txt") -eq 4 ]] && grep -q "4 run(s): 4 done" "$tmp/status.txt" &&
  [[ $status_exit -eq 0 ]] && pass "status: all 4 done, exit 0" || fail "status at the end: $(cat "$tmp/status.txt")"
results=$(find "$tmp/sweeps/four/runs" -name result.json | wc -l)
[[ $results -eq 4 ]] && pass "4 results in the sweep folder" || fail "$results results"
sweep --launcher slurm >"$tmp/again.txt" 2>&1 && grep -q "0 job(s) submitted now" "$tmp/again.txt" &&
  [[ -f $tmp/sweeps/four/report.md ]] && pass "all done: nothing submitted, reports written" ||
  fail "the last submit: $(cat "$tmp/again.txt")"
# The same sweep run locally finds everything done.
sweep >"$tmp/local.txt" 2>&1 && grep -q "4 run(s), 0 run now, 4 reused" "$tmp/local.txt" &&
  pass "a local run of the sweep reuses the 4 results" || fail "local: $(cat "$tmp/local.txt")"

# --- a run of 2 ranks per job (ntasks: 2 in the file: srun --mpi=pmix inside the job) ---
cat >"$tmp/ranks.yaml" <<EOF
name: ranks
out: $tmp/sweeps
workload: dlrm
preset: tiny
seeds: 1
threads: 1
mode: throughput
iterations: 5
warmup: 1
ntasks: 2
EOF
"$PERFLAB" sweep "$tmp/ranks.yaml" --launcher slurm >"$tmp/ranks.txt" 2>&1 &&
  grep -q "1 job(s) submitted now" "$tmp/ranks.txt" || fail "--ntasks 2 submit: $(cat "$tmp/ranks.txt")"
grep -q "^srun --mpi=pmix " "$tmp"/sweeps/ranks/slurm/*.sh &&
  pass "--ntasks 2: the job starts its ranks with srun --mpi=pmix" ||
  fail "job script: $(cat "$tmp"/sweeps/ranks/slurm/*.sh)"
settled "$tmp/ranks.yaml"
cp "$tmp"/sweeps/ranks/slurm/*.out "$tmp/rank.txt" 2>/dev/null
grep -q "^done " "$tmp/status.txt" && check_two_ranks "$tmp/sweeps/ranks/runs" "a sweep job with --ntasks 2" ||
  fail "--ntasks 2 job: $(cat "$tmp/status.txt")"

# --- the same 4 runs as one array job (--array, at most 2 tasks at once) ---
sed 's/^name: four/name: arr/' "$tmp/four.yaml" >"$tmp/arr.yaml"
arr() { "$PERFLAB" sweep "$tmp/arr.yaml" "$@"; }
scontrol update nodename="$host" state=drain reason=perflab-test
arr --launcher slurm --array --array-limit 2 >"$tmp/arr.txt" 2>&1 && grep -q "4 job(s) submitted now" "$tmp/arr.txt" &&
  [[ $(grep -c "^queued  *[0-9]*_[0-3] " <(arr --status 2>&1)) -eq 4 ]] &&
  pass "--array: one array job, its 4 tasks queued one per run" ||
  fail "--array submit: $(cat "$tmp/arr.txt"); status: $(arr --status 2>&1)"
arr_jobs="$tmp/sweeps/arr/slurm/jobs.json"
first_task=$("$PYTHON" -c 'import json,sys; print(sorted(j["job_id"] for j in json.load(open(sys.argv[1]))["jobs"].values())[0])' "$arr_jobs")
scontrol show job "${first_task%%_*}" 2>&1 | grep -q "ArrayTaskThrottle=2" &&
  pass "--array-limit 2: SLURM runs at most 2 tasks at once" ||
  fail "no throttle on the array: $(scontrol show job "${first_task%%_*}" 2>&1 | head -5)"
scancel "$first_task"
scontrol update nodename="$host" state=resume
settled "$tmp/arr.yaml" || fail "array tasks did not finish in 300 s: $(cat "$tmp/status.txt")"
if [[ $(grep -c "^done " "$tmp/status.txt") -eq 3 && $(grep -c "^failed " "$tmp/status.txt") -eq 1 ]] &&
  grep -q "^failed  *$first_task " "$tmp/status.txt"; then
  pass "array: 3 tasks done, the cancelled task failed"
else
  fail "array status: $(cat "$tmp/status.txt")"
fi
arr --launcher slurm --array >"$tmp/arr.txt" 2>&1 && grep -q "1 job(s) submitted now" "$tmp/arr.txt" &&
  pass "array again: only the failed run, as a new array of 1" || fail "array resubmit: $(cat "$tmp/arr.txt")"
settled "$tmp/arr.yaml" || fail "the resubmitted task did not finish: $(cat "$tmp/status.txt")"
arr --status >"$tmp/status.txt" 2>&1
status_exit=$?
[[ $status_exit -eq 0 && $(grep -c "^done " "$tmp/status.txt") -eq 4 ]] &&
  [[ $(find "$tmp/sweeps/arr/slurm" -name '*.out' ! -name 'array-*' | wc -l) -ge 4 ]] &&
  pass "array: all 4 done, each task's output beside its run" || fail "array at the end: $(cat "$tmp/status.txt")"

# --- an external program's sweep: perflab runs once per job, the program its ranks ---
cat >"$tmp/ext.yaml" <<EOF
name: ext
out: $tmp/sweeps
workload: $PERFLAB_SOURCE_DIR/tests/workloads/external/fake.workload.yaml
params: {mode: [ok, aborted]}
seeds: 2
ntasks: 2
EOF
"$PERFLAB" sweep "$tmp/ext.yaml" --launcher slurm >"$tmp/ext.txt" 2>&1 &&
  grep -q "4 job(s) submitted now" "$tmp/ext.txt" || fail "external submit: $(cat "$tmp/ext.txt")"
if grep -q "srun" "$tmp"/sweeps/ext/slurm/*.sh; then
  fail "an external program's job starts perflab on every rank: $(cat "$tmp"/sweeps/ext/slurm/*.sh)"
else
  pass "external program: the job runs perflab once (its command starts the ranks)"
fi
settled "$tmp/ext.yaml" || fail "the external jobs did not finish: $(cat "$tmp/status.txt")"
if [[ $(grep -c "^done " "$tmp/status.txt") -eq 4 ]] && "$PYTHON" - "$tmp/sweeps/ext/runs" <<'PY'; then
import glob, json, sys
runs = [json.load(open(p)) for p in glob.glob(sys.argv[1] + "/*/result.json")]
status = sorted((d["spec"]["params"]["mode"], d["runs"][0]["status"]) for d in runs)
assert status == [("aborted", "aborted")] * 2 + [("ok", "success")] * 2, status
PY
  pass "external program through SLURM: 4 jobs done, the aborted program's runs recorded as failed"
else
  fail "external status: $(cat "$tmp/status.txt")"
fi

# --- bad input and a missing sbatch: one line each ---
expect 2 "--time: '1h' is not a SLURM time limit" -- sweep "$tmp/four.yaml" --launcher slurm --time 1h
expect 2 "go with --launcher slurm" -- sweep "$tmp/four.yaml" --partition debug
expect 2 "--array-limit goes with --array$" -- sweep "$tmp/four.yaml" --launcher slurm --array-limit 2
expect 2 "launcher: .*slurm" -- sweep "$tmp/four.yaml" --launcher pbs
sed 's/^name: four/name: refused/' "$tmp/four.yaml" >"$tmp/refused.yaml"
expect 1 "sbatch refused run [0-9a-f]{16} \(triad .*\): .*partition" -- \
  sweep "$tmp/refused.yaml" --launcher slurm --partition nosuch
[[ ! -e $tmp/sweeps/refused/slurm/jobs.json ]] && pass "a refused job is not recorded" ||
  fail "refused: $(cat "$tmp/sweeps/refused/slurm/jobs.json")"
cp "$jobs_json" "$tmp/jobs.json.good"
echo '[1, 2]' >"$jobs_json"
expect 1 "jobs.json: not a perflab job record" -- sweep "$tmp/four.yaml" --status
cp "$tmp/jobs.json.good" "$jobs_json"
mkdir "$tmp/nosbatch"  # a PATH with the tools expect() uses, and no SLURM
for tool in wc cat grep; do ln -s "$(command -v $tool)" "$tmp/nosbatch/"; done
rm -rf "$tmp/sweeps"
PATH="$tmp/nosbatch" expect 1 "sbatch not found on PATH" -- sweep "$tmp/four.yaml" --launcher slurm
[[ ! -e $tmp/sweeps ]] && pass "nothing written without sbatch" || fail "without sbatch, $tmp/sweeps was written"

finish
