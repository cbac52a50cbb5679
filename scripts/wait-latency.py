#!/usr/bin/env python3
# How fast waits end, against any PostgreSQL-protocol server (issue goals:
# the survivor of a deadlock proceeds within 10 ms of the other's 40P01,
# before any ROLLBACK; a client killed while its statement waits frees
# what its block held within 100 ms).
#
#   python3 scripts/wait-latency.py PORT [USER]     (needs psycopg 3)
#
# 1. Deadlock, 5 times: A and B each update one of two rows in a block,
#    then each the other's row. Prints who got what and the milliseconds
#    between the two answers (neither session rolls back before both have
#    answered).
# 2. Kill, 3 times: A holds row 1; a client process updates row 2 in a
#    block and then waits for row 1; C waits for row 2; the client process
#    is killed with SIGKILL. Prints the milliseconds from the kill until
#    C's update of row 2 returns.
import psycopg, threading, time, sys, subprocess, os, signal
port = int(sys.argv[1]); user = sys.argv[2] if len(sys.argv) > 2 else "centum"
dsn = f"host=127.0.0.1 port={port} user={user} dbname=postgres"
def conn(auto=False):
    return psycopg.connect(dsn, autocommit=auto)
s = conn(True)
s.execute("DROP TABLE IF EXISTS wt"); s.execute("CREATE TABLE wt (id int PRIMARY KEY, v int)")
s.execute("INSERT INTO wt VALUES (1,0),(2,0)")
# 1. Deadlock: the survivor proceeds at the 40P01, before the loser's ROLLBACK.
res = []
for trial in range(5):
    a, b = conn(), conn()
    a.execute("UPDATE wt SET v = v + 1 WHERE id = 1"); b.execute("UPDATE wt SET v = v + 1 WHERE id = 2")
    t = {}
    def run(c, row, name):
        try:
            c.execute(f"UPDATE wt SET v = v + 1 WHERE id = {row}"); t[name] = ("ok", time.monotonic())
        except Exception as e:
            t[name] = (getattr(e, 'sqlstate', str(e)), time.monotonic())
    ta = threading.Thread(target=run, args=(a, 2, "a")); ta.start(); time.sleep(0.2)
    tb = threading.Thread(target=run, args=(b, 1, "b")); tb.start()
    ta.join(5); tb.join(5)
    # Nobody has rolled back yet: both threads returned on their own.
    (sa, ea), (sb, eb) = t["a"], t["b"]
    res.append((sa, sb, abs(ea - eb) * 1000))
    a.rollback(); b.rollback(); a.close(); b.close()
print("deadlock (a, b, ms between the 40P01 and the survivor's answer):", [(x, y, round(z, 2)) for x, y, z in res])
# 2. A killed client's waiting statement stops and frees its rows.
kills = []
for trial in range(3):
    a = conn(); a.execute("UPDATE wt SET v = v + 1 WHERE id = 1")
    script = f"import psycopg; c = psycopg.connect('{dsn}'); c.execute('UPDATE wt SET v = v + 1 WHERE id = 2'); c.execute('UPDATE wt SET v = v + 1 WHERE id = 1')"
    p = subprocess.Popen([sys.executable, "-c", script]); time.sleep(0.5)
    c = conn(); done = {}
    def waiter():
        c.execute("UPDATE wt SET v = v + 1 WHERE id = 2"); done["t"] = time.monotonic()
    tw = threading.Thread(target=waiter); tw.start(); time.sleep(0.3)
    k = time.monotonic(); os.kill(p.pid, signal.SIGKILL); p.wait()
    tw.join(10)
    kills.append(round((done.get("t", float("nan")) - k) * 1000, 1))
    c.rollback(); a.rollback(); c.close(); a.close()
print("kill -9 of a client waiting in a block: ms until its row is free for another session:", kills)
