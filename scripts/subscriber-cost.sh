#!/usr/bin/env bash
# What a PostgreSQL subscriber costs Centum under the sales-order workload
# (W1, examples/sales-orders/insert-order.pgbench, `-M prepared -c 8 -j 2`,
# durable commits): a Centum server with `--wal-level replica` and no
# consumer, then one with `--wal-level logical`, a FOR ALL TABLES
# publication and a PostgreSQL subscription to it (pgoutput), in
# alternating rounds on fresh data directories.
#
#   scripts/subscriber-cost.sh [seconds per run, default 20] [rounds, default 2]
#
# Prints each run's orders per second and Centum's CPU per order (user +
# system from /proc/PID/stat over the run, divided by its orders), then
# each side's median and the ratio logical / replica. For the subscribed
# runs it also prints how long after the workload the subscriber held
# every order, and whether its order and line totals equal Centum's. The
# subscriber runs on the same machine, so its CPU competes with Centum's:
# the orders per second of a subscribed run include that competition,
# Centum's CPU per order does not. Needs PostgreSQL's server and clients
# (apt-get install postgresql).
set -euo pipefail
cd "$(dirname "$0")/.."
SECONDS_PER_RUN=${1:-20}
ROUNDS=${2:-2}
source scripts/lib/servers.sh
# The shared Centum server is not used: each run starts its own.
kill "$CT_PID" 2>/dev/null && wait "$CT_PID" 2>/dev/null || true
CT_PID=
TICK=$(getconf CLK_TCK)
cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }
EX=examples/sales-orders
TABLES="product, special_offer, special_offer_product, sales_order_header, sales_order_detail, demo_sales_order_seed"
TOTALS="SELECT (SELECT count(*) || '/' || sum(total_due) FROM sales_order_header) || ' ' || (SELECT count(*) || '/' || sum(line_total) FROM sales_order_detail)"
ct() { PGOPTIONS='-c client_min_messages=warning' "$PSQL" -h 127.0.0.1 -p "$1" -U centum -X -q -At -v ON_ERROR_STOP=1 "${@:2}" postgres; }
pg() { PGOPTIONS='-c client_min_messages=warning' "$PSQL" -h 127.0.0.1 -p "$PG_PORT" -U postgres -X -q -At -v ON_ERROR_STOP=1 "$@" sub; }

run() {
  local level=$1 data="$WORK/data-$1" port
  rm -rf "$data"
  port=$(free_port)
  target/release/centum serve --data-dir "$data" --listen "127.0.0.1:$port" --wal-level "$level" --log warn &
  CT_PID=$!
  for _ in $(seq 100); do ct "$port" -c 'select 1' >/dev/null 2>&1 && break; sleep 0.1; done
  ct "$port" -f "$EX/centum.sql" >/dev/null
  if [ "$level" = logical ]; then
    ct "$port" -c "CREATE PUBLICATION w1 FOR ALL TABLES"
    PGOPTIONS='-c client_min_messages=warning' "$PSQL" -h 127.0.0.1 -p "$PG_PORT" -U postgres -X -q \
      -c "DROP DATABASE IF EXISTS sub" -c "CREATE DATABASE sub" postgres
    pg -f "$EX/postgres.sql" >/dev/null
    pg -c "TRUNCATE $TABLES CASCADE"
    pg -c "CREATE SUBSCRIPTION w1 CONNECTION 'host=127.0.0.1 port=$port user=centum dbname=postgres' PUBLICATION w1"
    for _ in $(seq 600); do
      [ "$(pg -c "SELECT count(*) FROM pg_subscription_rel WHERE srsubstate <> 'r'")" = 0 ] && break
      sleep 0.1
    done
  fi
  sleep 1
  local before after out orders us rate
  before=$(cpu_ticks "$CT_PID")
  out=$("$PGBENCH" -h 127.0.0.1 -p "$port" -U centum -n -M prepared -c 8 -j 2 -T "$SECONDS_PER_RUN" -f "$EX/insert-order.pgbench" postgres 2>&1)
  after=$(cpu_ticks "$CT_PID")
  orders=$(echo "$out" | grep -oP 'actually processed: \K[0-9]+')
  rate=$(python3 -c "print(f'{$orders / $SECONDS_PER_RUN:.1f}')")
  us=$(python3 -c "print(f'{($after - $before) * 1e6 / $TICK / $orders:.1f}')")
  echo "$level $rate $us" >> "$WORK/results"
  printf '%-8s orders/s %8s   Centum CPU per order %7s us' "$level" "$rate" "$us"
  if [ "$level" = logical ]; then
    local want got start=$SECONDS
    want=$(ct "$port" -c "$TOTALS")
    for _ in $(seq 1200); do
      got=$(pg -c "$TOTALS")
      [ "$got" = "$want" ] && break
      sleep 0.1
    done
    printf '   subscriber: %s %s s after the run' "$([ "$got" = "$want" ] && echo 'in step' || echo "BEHIND ($got vs $want)")" "$((SECONDS - start))"
    pg -c "DROP SUBSCRIPTION w1"
  fi
  echo
  kill "$CT_PID"; wait "$CT_PID" 2>/dev/null || true
  CT_PID=
}

for _ in $(seq "$ROUNDS"); do
  run replica
  run logical
done
for level in replica logical; do
  rate=$(awk -v l=$level '$1 == l {print $2}' "$WORK/results" | median)
  us=$(awk -v l=$level '$1 == l {print $3}' "$WORK/results" | median)
  printf 'median %-8s orders/s %8s   Centum CPU per order %7s us\n' "$level" "$rate" "$us"
  eval "${level}_rate=$rate ${level}_us=$us"
done
echo "logical / replica: orders/s $(ratio "$logical_rate" "$replica_rate"), CPU per order $(ratio "$logical_us" "$replica_us")"
