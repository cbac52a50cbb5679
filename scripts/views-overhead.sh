#!/usr/bin/env bash
# What reading the `centum` schema's views costs a running workload:
# pgbench TPC-B (`-M prepared -c 8 -j 2`, durable commits) against one
# Centum server, alternating runs without and with a monitoring session
# that reads all seven views ten times a second over one connection.
#
#   scripts/views-overhead.sh [seconds per run, default 20] [rounds, default 3]
#
# Prints each run's tps and the server's CPU per transaction (user +
# system, from /proc/PID/stat), then the median ratio of the runs with
# views to those without. Rounds alternate which side runs first. Set
# VIEWS_SQL to read something else at the same rate (seven `SELECT 1;`
# measure what the monitoring session costs by itself), and VIEWS_EVERY to
# read them every so many seconds instead (1: a monitoring scrape). Needs
# pgbench and psql (apt-get install postgresql-client).
set -euo pipefail
cd "$(dirname "$0")/.."
SECS=${1:-20}
ROUNDS=${2:-3}
# Seconds between two readings of all the views.
EVERY=${VIEWS_EVERY:-0.1}
PGBIN=${PG_BIN:-$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)}
PGBENCH=$PGBIN/pgbench; [ -x "$PGBENCH" ] || PGBENCH=$(command -v pgbench)
PSQL=$PGBIN/psql; [ -x "$PSQL" ] || PSQL=$(command -v psql)

cargo build --release -q -p centum-server
WORK=$(mktemp -d /tmp/centum-views.XXXXXX)
PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
target/release/centum serve --data-dir "$WORK/data" --listen "127.0.0.1:$PORT" --log warn &
PID=$!
cleanup() { kill "$PID" 2>/dev/null; wait "$PID" 2>/dev/null || true; rm -rf "$WORK"; }
trap cleanup EXIT
for _ in $(seq 100); do "$PSQL" -h 127.0.0.1 -p "$PORT" -U centum -c 'select 1' postgres >/dev/null 2>&1 && break; sleep 0.2; done
"$PGBENCH" -h 127.0.0.1 -p "$PORT" -U centum -i -s 10 -q postgres >/dev/null 2>&1
sleep 5

VIEWS=${VIEWS_SQL:-"SELECT * FROM centum.table_memory; SELECT * FROM centum.hash_index_stats;
SELECT * FROM centum.range_index_stats; SELECT * FROM centum.checkpoint_files; SELECT * FROM centum.log;
SELECT * FROM centum.gc; SELECT * FROM centum.transactions;"}
ticks() { awk '{print $14 + $15}' "/proc/$PID/stat"; }
HZ=$(getconf CLK_TCK)
declare -A TPS CPU
for round in $(seq "$ROUNDS"); do
  # ABBA order: the database grows as pgbench runs, so a fixed order
  # would charge that drift to whichever side always runs second.
  order="plain views"; [ $((round % 2)) = 0 ] && order="views plain"
  for mode in $order; do
    READER=
    if [ $mode = views ]; then
      (while sleep "$EVERY"; do echo "$VIEWS"; done) | "$PSQL" -h 127.0.0.1 -p "$PORT" -U centum -q -o /dev/null postgres &
      READER=$!
    fi
    t0=$(ticks)
    out=$("$PGBENCH" -h 127.0.0.1 -p "$PORT" -U centum -M prepared -c 8 -j 2 -T "$SECS" postgres 2>&1)
    t1=$(ticks)
    if [ -n "$READER" ]; then pkill -P "$READER" 2>/dev/null || true; kill "$READER" 2>/dev/null || true; wait "$READER" 2>/dev/null || true; fi
    tps=$(echo "$out" | awk '/^tps = /{print $3}')
    txns=$(echo "$out" | awk '/number of transactions actually processed/{print $6}' | cut -d/ -f1)
    cpu=$(python3 -c "print('%.1f' % (($t1 - $t0) / $HZ * 1e6 / $txns))")
    printf '%-6s round %d: %8.0f tps, %6s us server CPU per transaction\n' "$mode" "$round" "$tps" "$cpu"
    TPS[$mode]="${TPS[$mode]:-} $tps"; CPU[$mode]="${CPU[$mode]:-} $cpu"
  done
done
median() { tr ' ' '\n' | grep -v '^$' | sort -g | awk '{a[NR]=$1} END{print (NR%2)?a[(NR+1)/2]:(a[NR/2]+a[NR/2+1])/2}'; }
tp=$(echo "${TPS[plain]}" | median); tv=$(echo "${TPS[views]}" | median)
cp=$(echo "${CPU[plain]}" | median); cv=$(echo "${CPU[views]}" | median)
echo
printf 'median tps: %.0f without views, %.0f with (%+.1f%%)\n' "$tp" "$tv" "$(python3 -c "print(($tv / $tp - 1) * 100)")"
printf 'median server CPU per transaction: %.1f us without, %.1f us with (%+.1f%%)\n' "$cp" "$cv" "$(python3 -c "print(($cv / $cp - 1) * 100)")"
