# Shared by the comparison scripts: starts a throw-away PostgreSQL and a
# Centum server on free loopback ports, both with durable commits
# (PostgreSQL's defaults fsync=on and synchronous_commit=on; Centum fsyncs
# every commit's log record before acknowledging it), and stops both on
# exit. Sets PGBIN, PGBENCH, PSQL, PG_PORT, CT_PORT and WORK.
# Needs PostgreSQL's server and clients (apt-get install postgresql).

PGBIN=${PG_BIN:-$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)}
[ -x "$PGBIN/initdb" ] || { echo "no PostgreSQL server binaries (set PG_BIN)" >&2; exit 1; }
PGBENCH=$PGBIN/pgbench; [ -x "$PGBENCH" ] || PGBENCH=$(command -v pgbench)
PSQL=$PGBIN/psql; [ -x "$PSQL" ] || PSQL=$(command -v psql)

cargo build --release -q -p centum-server
WORK=$(mktemp -d /tmp/centum-compare.XXXXXX)
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
for _ in $(seq 100); do "$PSQL" -h 127.0.0.1 -p "$CT_PORT" -U centum -c 'select 1' postgres >/dev/null 2>&1 && break; sleep 0.2; done

# The median of the numbers on stdin.
median() { tr ' ' '\n' | grep -v '^$' | sort -g | awk '{a[NR]=$1} END{print (NR%2)?a[(NR+1)/2]:(a[NR/2]+a[NR/2+1])/2}'; }
ratio() { python3 -c "print('%.2fx' % ($1 / $2))"; }
echo "machine: $(nproc) cores, $(uname -r); PostgreSQL $("$PGBIN/postgres" --version | awk '{print $3}'); $(date -u +%F)"
