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
PGBIN=${PG_BIN:-$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)}
[ -x "$PGBIN/initdb" ] || { echo "no PostgreSQL server binaries (set PG_BIN)" >&2; exit 1; }
PGBENCH=$PGBIN/pgbench; [ -x "$PGBENCH" ] || PGBENCH=$(command -v pgbench)

cargo build --release -q -p centum-server
WORK=$(mktemp -d /tmp/centum-pgbench.XXXXXX)
chmod 755 "$WORK"
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
PG_PORT=$(free_port); CT_PORT=$(free_port)
AS_PG=()
if [ "$(id -u)" = 0 ]; then
  id postgres >/dev/null 2>&1 || useradd -r postgres
  chown -R postgres "$WORK"; AS_PG=(su postgres -c)
fi
run_pg() { if [ ${#AS_PG[@]} -gt 0 ]; then "${AS_PG[@]}" "$*"; else bash -c "$*"; fi; }
cleanup() {
  run_pg "$PGBIN/pg_ctl -D $WORK/pg -m immediate stop" >/dev/null 2>&1 || true
  [ -n "${CT_PID:-}" ] && kill "$CT_PID" 2>/dev/null && wait "$CT_PID" 2>/dev/null || true
  rm -rf "$WORK"
}
trap cleanup EXIT

run_pg "$PGBIN/initdb -D $WORK/pg -A trust -U postgres" >/dev/null
run_pg "$PGBIN/pg_ctl -D $WORK/pg -l $WORK/pg.log -w -o '-p $PG_PORT -k $WORK -c listen_addresses=127.0.0.1 -c shared_buffers=1GB -c max_connections=100' start" >/dev/null
target/release/centum serve --data-dir "$WORK/centum" --listen "127.0.0.1:$CT_PORT" --log warn &
CT_PID=$!
for _ in $(seq 100); do "$PGBIN/psql" -h 127.0.0.1 -p "$CT_PORT" -U centum -c 'select 1' postgres >/dev/null 2>&1 && break; sleep 0.2; done

echo "machine: $(nproc) cores, $(uname -r); PostgreSQL $("$PGBIN/postgres" --version | awk '{print $3}'); $(date -u +%F)"
for side in "postgres $PG_PORT" "centum $CT_PORT"; do
  set -- $side
  "$PGBENCH" -h 127.0.0.1 -p "$2" -U "$1" -i -s 10 -q postgres >/dev/null 2>&1
done
# Let the loads' background writes settle (PostgreSQL's dirty buffers,
# Centum's checkpoint of the loaded rows) so neither run pays for them.
"$PGBIN/psql" -h 127.0.0.1 -p "$PG_PORT" -U postgres -qc 'CHECKPOINT' postgres
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
median() { tr ' ' '\n' | grep -v '^$' | sort -g | awk '{a[NR]=$1} END{print (NR%2)?a[(NR+1)/2]:(a[NR/2]+a[NR/2+1])/2}'; }
echo
printf '%-22s %12s %12s %8s\n' workload postgres centum ratio
for name in tpcb select; do
  p=$(echo "${TPS[$name.postgres]}" | median); c=$(echo "${TPS[$name.centum]}" | median)
  label=$([ $name = tpcb ] && echo "TPC-B -M prepared -c8" || echo "-S -M prepared -c8")
  printf '%-22s %12.0f %12.0f %7.2fx\n' "$label" "$p" "$c" "$(python3 -c "print($c / $p)")"
done
