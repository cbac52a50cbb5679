#!/usr/bin/env bash
# What replication costs: pgbench's TPC-B against one Centum server and
# against a replicated group of three on this machine, in one run, with
# durable commits everywhere (the group acknowledges a commit once two of
# its three members have fsynced it). The members share the machine's
# cores, so the server CPU per transaction is summed over every process.
#
#   scripts/cluster-compare.sh [seconds per run, default 15] [scale, default 1]
#
# Prints tps and server CPU per transaction (user + system, from
# /proc/<pid>/stat) for both. Needs pgbench (apt-get install
# postgresql-client) and a release build (cargo build --release).
set -euo pipefail
cd "$(dirname "$0")/.."
SECS=${1:-15}
SCALE=${2:-1}
BIN=target/release/centum
PGBIN=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)
PGBENCH=${PGBENCH:-$PGBIN/pgbench}
PSQL=${PSQL:-$PGBIN/psql}
WORK=$(mktemp -d)
PIDS=()
trap 'kill "${PIDS[@]}" 2>/dev/null; wait 2>/dev/null; rm -rf "$WORK"' EXIT
TICK=$(getconf CLK_TCK)

cpu() { # seconds of user + system CPU of the processes given
  local t=0
  for p in "$@"; do t=$((t + $(awk '{print $14 + $15}' "/proc/$p/stat"))); done
  echo "$t"
}

run() { # label port pids...
  local label=$1 port=$2; shift 2
  local c0 c1 out
  c0=$(cpu "$@")
  out=$("$PGBENCH" -n -M prepared -c 8 -j 2 -T "$SECS" -h 127.0.0.1 -p "$port" -U centum postgres 2>&1)
  c1=$(cpu "$@")
  local n tps
  n=$(sed -n 's/^number of transactions actually processed: \([0-9]*\).*/\1/p' <<<"$out")
  tps=$(sed -n 's/^tps = \([0-9.]*\).*/\1/p' <<<"$out")
  awk -v l="$label" -v n="$n" -v tps="$tps" -v c=$((c1 - c0)) -v hz="$TICK" \
    'BEGIN { printf "%-24s %8.0f tps   %6.0f us of server CPU per transaction\n", l, tps, c / hz * 1e6 / n }'
}

port() { # a free loopback port
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
}

ONE=$(port)
"$BIN" serve --data-dir "$WORK/one" --listen "127.0.0.1:$ONE" >"$WORK/one.log" 2>&1 &
PIDS+=($!)
SINGLE=$!
P="" ; PORTS=()
for i in 1 2 3; do P="$P${P:+,}$i=127.0.0.1:$(port)"; PORTS+=("$(port)"); done
MEMBERS=()
for i in 1 2 3; do
  "$BIN" serve --data-dir "$WORK/n$i" --listen "127.0.0.1:${PORTS[$((i - 1))]}" --node-id "$i" --peers "$P" \
    >"$WORK/n$i.log" 2>&1 &
  PIDS+=($!)
  MEMBERS+=($!)
done
PRIMARY=""
for _ in $(seq 100); do
  for p in "${PORTS[@]}"; do
    if [ "$("$PSQL" -tAh 127.0.0.1 -p "$p" -U centum -c 'SELECT pg_is_in_recovery()' postgres 2>/dev/null)" = f ]; then
      PRIMARY=$p
    fi
  done
  [ -n "$PRIMARY" ] && break
  sleep 0.2
done
[ -n "$PRIMARY" ] || { echo "the group elected no primary" >&2; exit 1; }
"$PGBENCH" -i -s "$SCALE" -q -h 127.0.0.1 -p "$ONE" -U centum postgres >/dev/null 2>&1
"$PGBENCH" -i -s "$SCALE" -q -h 127.0.0.1 -p "$PRIMARY" -U centum postgres >/dev/null 2>&1
echo "pgbench TPC-B, -M prepared -c 8 -j 2, ${SECS} s, scale $SCALE, $(nproc) cores"
run "one server" "$ONE" "$SINGLE"
run "group of three" "$PRIMARY" "${MEMBERS[@]}"
