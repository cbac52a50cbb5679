#!/usr/bin/env bash
# The sales-order workload (W1, examples/sales-orders) against Centum and
# against a real PostgreSQL, on this machine, in one run, both with durable
# commits.
#
#   scripts/sales-orders-compare.sh [seconds per run, default 30] [rounds, default 2]
#
# Loads centum.sql into Centum and postgres.sql into PostgreSQL, then in
# every round, for 1, 8 and 32 clients, alternating between the two:
# empties the order tables (reset_sales_orders) and runs
# insert-order.pgbench (one order per call of insert_sales_order) with
# `-M prepared -j 2`. Then, at 8 clients on each system, the same work sent
# as separate statements from the client (insert-order-statements.pgbench).
# Orders/s is pgbench's tps: one order per transaction. After every run the
# integrity check (check.sql) must say ok. Prints each run and the medians.
set -euo pipefail
cd "$(dirname "$0")/.."
SECS=${1:-30}
ROUNDS=${2:-2}
source scripts/lib/servers.sh
EX=examples/sales-orders

"$PSQL" -h 127.0.0.1 -p "$PG_PORT" -U postgres -q -v ON_ERROR_STOP=1 -f $EX/postgres.sql postgres 2>&1 | grep -v NOTICE || true
"$PSQL" -h 127.0.0.1 -p "$CT_PORT" -U centum -q -v ON_ERROR_STOP=1 -f $EX/centum.sql postgres 2>&1 | grep -v NOTICE || true
"$PSQL" -h 127.0.0.1 -p "$PG_PORT" -U postgres -qc 'CHECKPOINT' postgres
sync; sleep 5

declare -A OPS
# run NAME SCRIPT CLIENTS ROUND
run() {
  local name=$1 script=$2 clients=$3 round=$4 user port
  for side in "postgres $PG_PORT" "centum $CT_PORT"; do
    read -r user port <<<"$side"
    "$PSQL" -h 127.0.0.1 -p "$port" -U "$user" -qc 'CALL reset_sales_orders()' postgres
    [ "$user" = postgres ] && "$PSQL" -h 127.0.0.1 -p "$port" -U "$user" -q -c 'VACUUM' -c 'CHECKPOINT' postgres
    out=$("$PGBENCH" -h 127.0.0.1 -p "$port" -U "$user" -n -M prepared -c "$clients" -j 2 -T "$SECS" -f "$EX/$script" postgres 2>&1)
    tps=$(echo "$out" | awk '/^tps = /{print $3}')
    failed=$(echo "$out" | awk '/number of failed transactions/{print $5}')
    check=$("$PSQL" -h 127.0.0.1 -p "$port" -U "$user" -At -f $EX/check.sql postgres)
    printf '%-10s %-8s c=%-2s round %d: %8.0f orders/s, %s failed, integrity %s\n' \
      "$name" "$user" "$clients" "$round" "${tps:-0}" "${failed:-?}" "$check"
    [ "$check" = ok ] || { echo "integrity check failed on $user" >&2; exit 1; }
    OPS[$name.$clients.$user]="${OPS[$name.$clients.$user]:-} ${tps:-0}"
  done
}
for round in $(seq "$ROUNDS"); do
  for c in 1 8 32; do run call insert-order.pgbench "$c" "$round"; done
  run statements insert-order-statements.pgbench 8 "$round"
done

echo
printf '%-34s %12s %12s %8s\n' 'orders/s (median)' postgres centum ratio
for key in call.1 call.8 call.32 statements.8; do
  p=$(echo "${OPS[$key.postgres]}" | median); c=$(echo "${OPS[$key.centum]}" | median)
  printf '%-34s %12.0f %12.0f %8s\n' "${key%%.*}, ${key##*.} clients" "$p" "$c" "$(ratio "$c" "$p")"
done
c1=$(echo "${OPS[call.8.centum]}" | median); c2=$(echo "${OPS[statements.8.centum]}" | median)
p1=$(echo "${OPS[call.8.postgres]}" | median); p2=$(echo "${OPS[statements.8.postgres]}" | median)
echo "one call vs client statements, 8 clients: centum $(ratio "$c1" "$c2"), postgres $(ratio "$p1" "$p2")"
