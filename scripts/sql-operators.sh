#!/usr/bin/env bash
# Window functions and jsonb containment over 1 M rows, Centum against
# PostgreSQL in one run.
#
#   scripts/sql-operators.sh [rounds, default 3]
#
# Loads the same two tables into a throw-away PostgreSQL (analysed after
# loading, as its users would) and a Centum server:
#   w(id int PRIMARY KEY, g int, v int)        1,000,000 rows, 1,000 groups
#   docs(id int PRIMARY KEY, doc jsonb)        1,000,000 documents
# then runs each query once on each system as a warm-up (discarded: the
# first statement after a load also meets the load's leftovers, such as
# memory the allocator has not handed back yet, on either system), then
# ROUNDS times on each system, alternating, and
# prints the median wall time per query as psql's \timing reports it, the
# server's CPU per query (user + system from /proc, the postmaster and
# every backend and parallel worker for PostgreSQL), and the ratio.
# Needs PostgreSQL's server and clients (apt-get install postgresql).
set -euo pipefail
cd "$(dirname "$0")/.."
ROUNDS=${1:-3}
source scripts/lib/servers.sh

LOAD="CREATE TABLE w (id int PRIMARY KEY, g int, v int);
INSERT INTO w SELECT i, i % 1000, ((i % 100003) * 7919) % 100003 FROM generate_series(1, 1000000) AS s(i);
CREATE TABLE docs (id int PRIMARY KEY, doc jsonb);
INSERT INTO docs SELECT i, jsonb_build_object('tag', 't' || (i % 100), 'tags',
  jsonb_build_array('a' || (i % 7), 'b' || (i % 11)), 'n', i) FROM generate_series(1, 1000000) AS s(i);"
"$PSQL" -q -h 127.0.0.1 -p "$PG_PORT" -U postgres -c "$LOAD" postgres
"$PSQL" -q -h 127.0.0.1 -p "$PG_PORT" -U postgres -c "VACUUM ANALYZE" postgres
"$PSQL" -q -h 127.0.0.1 -p "$CT_PORT" -U centum -c "$LOAD" postgres

QUERIES=(
  "SELECT max(r) FROM (SELECT row_number() OVER (PARTITION BY g ORDER BY v) AS r FROM w) s"
  "SELECT max(s) FROM (SELECT sum(v) OVER (PARTITION BY g ORDER BY id ROWS BETWEEN 2 PRECEDING AND CURRENT ROW) AS s FROM w) t"
  "SELECT max(r) FROM (SELECT rank() OVER (ORDER BY v) AS r FROM w) t"
  "SELECT count(*) FROM docs WHERE doc @> '{\"tag\":\"t42\"}'"
  "SELECT count(*) FROM docs WHERE doc @> '{\"tags\":[\"a3\"]}'"
)

# CPU ticks (user + system) of a server process, its threads, and the
# children it has reaped: PostgreSQL's backends and parallel workers end
# with the query's connection, and their time is then added to the
# postmaster's cutime and cstime.
tree_ticks() { awk '{print $14 + $15 + $16 + $17}' "/proc/$1/stat"; }
PG_PID=$(head -1 "$WORK/pg/postmaster.pid")
HZ=$(getconf CLK_TCK)
# Runs one query on one system; prints "wall_ms cpu_ms".
run_one() {
  local port=$1 user=$2 pid=$3 q=$4 out before after
  before=$(tree_ticks "$pid")
  out=$("$PSQL" -X -h 127.0.0.1 -p "$port" -U "$user" postgres -c '\timing on' -c "$q" 2>&1)
  sleep 0.3 # PostgreSQL's backend exits, and is reaped, after psql does
  after=$(tree_ticks "$pid")
  echo "$out" | grep -q '^Time:' || { echo "query failed: $q: $out" >&2; exit 1; }
  echo "$(echo "$out" | awk '/^Time:/ {print $2}') $(( (after - before) * 1000 / HZ ))"
}

printf '%-10s %10s %10s %10s %10s %7s  %s\n' "" "Centum ms" "PG ms" "Centum CPU" "PG CPU" "PG/Centum" "query"
for q in "${QUERIES[@]}"; do
  ct_w=(); pg_w=(); ct_c=(); pg_c=()
  run_one "$CT_PORT" centum "$CT_PID" "$q" >/dev/null
  run_one "$PG_PORT" postgres "$PG_PID" "$q" >/dev/null
  for _ in $(seq "$ROUNDS"); do
    read -r w c < <(run_one "$CT_PORT" centum "$CT_PID" "$q"); ct_w+=("$w"); ct_c+=("$c")
    read -r w c < <(run_one "$PG_PORT" postgres "$PG_PID" "$q"); pg_w+=("$w"); pg_c+=("$c")
  done
  cw=$(echo "${ct_w[*]}" | median); pw=$(echo "${pg_w[*]}" | median)
  cc=$(echo "${ct_c[*]}" | median); pc=$(echo "${pg_c[*]}" | median)
  printf '%-10s %10.1f %10.1f %10s %10s %7s  %s\n' "median" "$cw" "$pw" "$cc" "$pc" "$(ratio "$pw" "$cw")" "$q"
done
