-- Deadlocks: a statement waits on threads of its own (ASYNC) while
-- another session closes the cycle. The session that closes it is the
-- victim (40P01): its block fails and frees its rows at once, and the
-- waiter's statement finishes before the victim says ROLLBACK.
-- PostgreSQL's victim is the session whose deadlock_timeout passes first,
-- so the first waiters here wait longer before they look: the session
-- that closes the cycle finds it, as Centum's does at once.
SESSION a;
SET statement_timeout = 20000;
SET deadlock_timeout = '5s';
CREATE TABLE t (id int PRIMARY KEY, v int);
INSERT INTO t VALUES (1, 0), (2, 0), (3, 0);
BEGIN;
UPDATE t SET v = 1 WHERE id = 1;
SESSION b;
SET statement_timeout = 20000;
BEGIN;
UPDATE t SET v = 2 WHERE id = 2;
SESSION a;
ASYNC UPDATE t SET v = 1 WHERE id = 2;
SESSION b;
UPDATE t SET v = 2 WHERE id = 1;
SESSION a;
WAIT;
COMMIT;
SESSION b;
SELECT 1;
ROLLBACK;
SELECT id, v FROM t ORDER BY id;
-- Three sessions in a cycle: a waits for b, b for c, and c closes it.
SESSION a;
BEGIN;
UPDATE t SET v = 10 WHERE id = 1;
SESSION b;
SET deadlock_timeout = '5s';
BEGIN;
UPDATE t SET v = 20 WHERE id = 2;
SESSION c;
SET statement_timeout = 20000;
BEGIN;
UPDATE t SET v = 30 WHERE id = 3;
SESSION a;
ASYNC UPDATE t SET v = 10 WHERE id = 2;
SESSION b;
ASYNC UPDATE t SET v = 20 WHERE id = 3;
SESSION c;
UPDATE t SET v = 30 WHERE id = 1;
SELECT 1;
SESSION b;
WAIT;
COMMIT;
SESSION a;
WAIT;
COMMIT;
SESSION c;
ROLLBACK;
SELECT id, v FROM t ORDER BY id;
