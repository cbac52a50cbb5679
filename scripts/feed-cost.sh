#!/usr/bin/env bash
# What the change feed costs TPC-B: pgbench (scale 10, `-c 8 -j 2`,
# durable commits) against a Centum server with `--wal-level replica` and
# no consumer, then against one with `--wal-level logical` and
# pg_recvlogical streaming every change to a file (`-F 1 -s 1`), in
# alternating rounds on fresh data directories.
#
#   scripts/feed-cost.sh [seconds per run, default 20] [rounds, default 2]
#
# Prints each run's tps and the server's CPU per transaction (user +
# system from /proc/PID/stat over the run, divided by its transactions),
# then each side's median and the ratio logical / replica. The consumer
# runs on the same machine, so its CPU competes with the server's as a
# consumer on the same host would. Needs pgbench and pg_recvlogical
# (apt-get install postgresql-client).
set -euo pipefail
cd "$(dirname "$0")/.."
SECONDS_PER_RUN=${1:-20}
ROUNDS=${2:-2}
PGBIN=${PG_BIN:-$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)}
PGBENCH=$PGBIN/pgbench; [ -x "$PGBENCH" ] || PGBENCH=$(command -v pgbench)
RECV=$PGBIN/pg_recvlogical; [ -x "$RECV" ] || RECV=$(command -v pg_recvlogical)

cargo build --release -q -p centum-server
WORK=$(mktemp -d /tmp/centum-feed.XXXXXX)
trap 'pkill -P $$ 2>/dev/null || true; rm -rf "$WORK"' EXIT
TICK=$(getconf CLK_TCK)
cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }

run() {
  local level=$1 data="$WORK/data-$1"
  rm -rf "$data"
  local port
  port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
  target/release/centum serve --data-dir "$data" --listen "127.0.0.1:$port" --wal-level "$level" --log warn &
  local pid=$!
  for _ in $(seq 100); do "$PGBENCH" -h 127.0.0.1 -p "$port" -U centum -n -t 1 -f /dev/null postgres >/dev/null 2>&1 && break; sleep 0.1; done
  "$PGBENCH" -h 127.0.0.1 -p "$port" -U centum -i -s 10 -q postgres >/dev/null 2>&1
  local recv=
  if [ "$level" = logical ]; then
    "$RECV" -h 127.0.0.1 -p "$port" -U centum -d postgres --slot feed --create-slot -P test_decoding
    "$RECV" -h 127.0.0.1 -p "$port" -U centum -d postgres --slot feed --start -F 1 -s 1 -f "$WORK/feed.txt" 2>/dev/null &
    recv=$!
  fi
  sleep 1
  local before after out tps n
  before=$(cpu_ticks "$pid")
  out=$("$PGBENCH" -h 127.0.0.1 -p "$port" -U centum -n -c 8 -j 2 -T "$SECONDS_PER_RUN" postgres 2>&1)
  after=$(cpu_ticks "$pid")
  tps=$(echo "$out" | grep -oP 'tps = \K[0-9.]+' | head -1)
  n=$(echo "$out" | grep -oP 'actually processed: \K[0-9]+')
  local us
  us=$(python3 -c "print(f'{($after - $before) * 1e6 / $TICK / $n:.1f}')")
  echo "$level $tps $us" >> "$WORK/results"
  printf '%-8s tps %8.1f   server CPU per transaction %6s us\n' "$level" "$tps" "$us"
  if [ -n "$recv" ]; then kill -INT "$recv"; wait "$recv" 2>/dev/null || true; fi
  kill "$pid"; wait "$pid" 2>/dev/null || true
  rm -f "$WORK/feed.txt"
}

for _ in $(seq "$ROUNDS"); do run replica; run logical; done
python3 - "$WORK/results" <<'EOF'
import statistics, sys
rows = [l.split() for l in open(sys.argv[1])]
med = lambda level, i: statistics.median(float(r[i]) for r in rows if r[0] == level)
for name, i in (("tps", 1), ("CPU us/txn", 2)):
    r, l = med("replica", i), med("logical", i)
    print(f"median {name}: replica {r:.1f}, logical with a consumer {l:.1f}, ratio {l / r:.3f}")
EOF
