#!/bin/sh
# A stand-in for a user's trainer, for external_workload_test.sh: writes an
# MLPerf log to stdout (or to $4 when given) and then behaves as MODE says.
#   fake_trainer.sh MODE SEED GATE [LOG]
# ok: a complete log, status success; aborted: run_stop status aborted;
# crash: a partial log, then killed by SIGSEGV; hang: a partial log, then
# sleeps past any timeout; truncate: the log is cut off mid-line, exit 0;
# nolog: prints no MLLOG line; wait: waits up to 120 s for the file GATE,
# then as ok (an interruption that always lands inside a run).
mode=$1 seed=$2 gate=$3 log=${4:-}
t=$((1700000000000 + seed * 1000))
line() {  # KEY VALUE [METADATA] [MS]
  printf ':::MLLOG {"namespace": "", "time_ms": %s, "event_type": "POINT_IN_TIME", "key": "%s", "value": %s, "metadata": {%s}}\n' \
    "$((t + ${4:-0}))" "$1" "$2" "${3:-}"
}
out() { if [ -n "$log" ]; then cat >>"$log"; else cat; fi; }
[ "$mode" = nolog ] && { echo "fake trainer: no log" >&2; exit 0; }
{
  line cache_clear true
  line init_start null
  line submission_benchmark '"fake"'
  line submission_org '"perflab-tests"'
  line global_batch_size 32
  line train_samples 1000
  line init_stop null
  line run_start null '' 10
} | out
case $mode in
  crash) kill -SEGV $$ ;;
  hang) exec sleep 1000 ;;
  wait)
    i=0
    while [ ! -e "$gate" ] && [ $i -lt 1200 ]; do sleep 0.1; i=$((i + 1)); done ;;
esac
{
  line eval_accuracy 0.5 '"epoch_num": 1' 500
  line eval_accuracy "0.$((80 + seed))" '"epoch_num": 2' 1000
} | out
if [ "$mode" = truncate ]; then
  printf ':::MLLOG {"namespace": "", "time_ms": %s, "event_type": "INTERVAL_END", "key": "run_st' "$t" | out
  exit 0
fi
status=success
[ "$mode" = aborted ] && status=aborted
line run_stop null "\"status\": \"$status\"" 1500 | out
echo "fake trainer: $mode done" >&2
