#!/usr/bin/env bash
# pgbench against Centum and against a real PostgreSQL, on this machine, in
# one run, both with durable commits (Centum: every commit's log record is
# fdatasync'ed before it is acknowledged; PostgreSQL: its defaults,
# fsync=on and synchronous_commit=on).
#
#   scripts/pgbench-compare.sh [seconds per run, default 30] [rounds, default 2]
#
# Both databases are initialised with `pgbench -i -s 10`; then, alternating
# between the two in every round: TPC-B (the built-in script) with
# `-M prepared -c 8 -j 2`, and select-only `-S -M prepared -c 8 -j 2`.
# Prints each run's tps and failures, and the median ratio per workload.
# Needs PostgreSQL's server and clients (apt-get install postgresql).
set -euo pipefail
cd "$(dirname "$0")/.."
SECS=${1:-30}
ROUNDS=${2:-2}
source scripts/lib/servers.sh

for side in "postgres $PG_PORT" "centum $CT_PORT"; do
  set -- $side
  "$PGBENCH" -h 127.0.0.1 -p "$2" -U "$1" -i -s 10 -q postgres >/dev/null 2>&1
done
# Let the loads' background writes settle (PostgreSQL's dirty buffers,
# Centum's checkpoint of the loaded rows) so neither run pays for them.
"$PSQL" -h 127.0.0.1 -p "$PG_PORT" -U postgres -qc 'CHECKPOINT' postgres
sync; sleep 10

declare -A TPS
for round in $(seq "$ROUNDS"); do
  for load in "tpcb:" "select:-S"; do
    name=${load%%:*}; flag=${load#*:}
    for side in "postgres $PG_PORT" "centum $CT_PORT"; do
      set -- $side
      out=$("$PGBENCH" -h 127.0.0.1 -p "$2" -U "$1" $flag -M prepared -c 8 -j 2 -T "$SECS" postgres 2>&1)
      tps=$(echo "$out" | awk '/^tps = /{print $3}')
      failed=$(echo "$out" | awk '/number of failed transactions/{print $5}')
      printf '%-8s %-7s round %d: %10.0f tps, %s failed\n' "$name" "$1" "$round" "$tps" "${failed:-?}"
      TPS[$name.$1]="${TPS[$name.$1]:-} $tps"
    done
  done
done
echo
printf '%-22s %12s %12s %8s\n' workload postgres centum ratio
for name in tpcb select; do
  p=$(echo "${TPS[$name.postgres]}" | median); c=$(echo "${TPS[$name.centum]}" | median)
  label=$([ $name = tpcb ] && echo "TPC-B -M prepared -c8" || echo "-S -M prepared -c8")
  printf '%-22s %12.0f %12.0f %8s\n' "$label" "$p" "$c" "$(ratio "$c" "$p")"
done
