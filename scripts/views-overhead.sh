#!/usr/bin/env bash
# What reading the `centum` schema's views costs a running workload:
# pgbench TPC-B (`-M prepared -c 8 -j 2`, durable commits) against one
# Centum server, with a monitoring session that reads all seven views
# every VIEWS_EVERY seconds (default 1, a monitoring scrape) during every
# other window of one long pgbench run.
#
#   scripts/views-overhead.sh [seconds per window, default 10] [pairs of windows, default 8]
#
# Runs without and with the reader alternate inside one pgbench run
# (ABBA by pair), so that the growth of the database and the machine's
# other load fall on both sides alike; separate runs on a shared VM
# differ by more than the effect measured. For each window it prints
# pgbench's mean tps over the window's whole seconds (from `-P 1`) and
# the server's CPU per transaction (user + system from /proc/PID/stat
# over the window, divided by those transactions), then the median of
# each side and their ratio. The first second of each window is left
# out of the tps, as the reader starts or stops then.
#
# Set VIEWS_SQL to read something else (seven `SELECT 1;` measure what
# the monitoring session costs by itself). Needs pgbench and psql
# (apt-get install postgresql-client).
set -euo pipefail
cd "$(dirname "$0")/.."
WINDOW=${1:-10}
PAIRS=${2:-8}
EVERY=${VIEWS_EVERY:-1}
PGBIN=${PG_BIN:-$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)}
PGBENCH=$PGBIN/pgbench; [ -x "$PGBENCH" ] || PGBENCH=$(command -v pgbench)
PSQL=$PGBIN/psql; [ -x "$PSQL" ] || PSQL=$(command -v psql)

cargo build --release -q -p centum-server
WORK=$(mktemp -d /tmp/centum-views.XXXXXX)
PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
target/release/centum serve --data-dir "$WORK/data" --listen "127.0.0.1:$PORT" --log warn &
PID=$!
READER=
stop_reader() {
  if [ -n "$READER" ]; then pkill -P "$READER" 2>/dev/null || true; kill "$READER" 2>/dev/null || true; wait "$READER" 2>/dev/null || true; READER=; fi
}
cleanup() { stop_reader; kill "$PID" 2>/dev/null; wait "$PID" 2>/dev/null || true; rm -rf "$WORK"; }
trap cleanup EXIT
for _ in $(seq 100); do "$PSQL" -h 127.0.0.1 -p "$PORT" -U centum -c 'select 1' postgres >/dev/null 2>&1 && break; sleep 0.2; done
"$PGBENCH" -h 127.0.0.1 -p "$PORT" -U centum -i -s 10 -q postgres >/dev/null 2>&1
sleep 5

VIEWS=${VIEWS_SQL:-"SELECT * FROM centum.table_memory; SELECT * FROM centum.hash_index_stats;
SELECT * FROM centum.range_index_stats; SELECT * FROM centum.checkpoint_files; SELECT * FROM centum.log;
SELECT * FROM centum.gc; SELECT * FROM centum.transactions;"}
ticks() { awk '{print $14 + $15}' "/proc/$PID/stat"; }
now() { date +%s.%N; }

# One pgbench run covers a warm-up window and every measured window.
TOTAL=$((WINDOW * (2 * PAIRS + 1) + 2))
"$PGBENCH" -h 127.0.0.1 -p "$PORT" -U centum -M prepared -c 8 -j 2 -T "$TOTAL" -P 1 postgres \
  > "$WORK/pgbench.out" 2> "$WORK/progress" &
BENCH=$!
START=$(now)
sleep "$WINDOW"
: > "$WORK/windows"
for pair in $(seq "$PAIRS"); do
  order="plain views"; [ $((pair % 2)) = 0 ] && order="views plain"
  for mode in $order; do
    if [ $mode = views ]; then
      (while sleep "$EVERY"; do echo "$VIEWS"; done) | "$PSQL" -h 127.0.0.1 -p "$PORT" -U centum -q -o /dev/null postgres &
      READER=$!
    fi
    t0=$(now); c0=$(ticks)
    sleep "$WINDOW"
    t1=$(now); c1=$(ticks)
    stop_reader
    echo "$mode $t0 $t1 $c0 $c1" >> "$WORK/windows"
  done
done
wait "$BENCH"
python3 - "$START" "$(getconf CLK_TCK)" "$WORK/progress" "$WORK/windows" <<'PY'
import re, statistics, sys
start, hz = float(sys.argv[1]), int(sys.argv[2])
# "progress: 12.0 s, 5801.3 tps, ...": the second ending 12 s after start.
secs = {}
for line in open(sys.argv[3]):
    m = re.match(r"progress: ([\d.]+) s, ([\d.]+) tps", line)
    if m:
        secs[round(float(m.group(1)))] = float(m.group(2))
side = {"plain": ([], []), "views": ([], [])}
for line in open(sys.argv[4]):
    mode, t0, t1, c0, c1 = line.split()
    lo, hi = float(t0) - start, float(t1) - start
    # Whole seconds inside the window, skipping the first.
    inside = [secs[s] for s in secs if s - 1 >= lo + 1 and s <= hi]
    if not inside:
        continue
    tps = statistics.mean(inside)
    cpu = (int(c1) - int(c0)) / hz / (tps * (hi - lo)) * 1e6
    print(f"{mode:6} {lo:6.1f}-{hi:6.1f} s: {tps:8.0f} tps, {cpu:6.1f} us server CPU per transaction")
    side[mode][0].append(tps)
    side[mode][1].append(cpu)
(tp, cp), (tv, cv) = [(statistics.median(a), statistics.median(b)) for a, b in side.values()]
print()
print(f"median tps: {tp:.0f} without views, {tv:.0f} with ({(tv / tp - 1) * 100:+.1f}%)")
print(f"median server CPU per transaction: {cp:.1f} us without, {cv:.1f} us with ({(cv / cp - 1) * 100:+.1f}%)")
PY
grep -E 'failed|tps =' "$WORK/pgbench.out" || true
