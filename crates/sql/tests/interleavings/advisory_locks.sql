-- Advisory locks between sessions: exclusive and shared, counted
-- session-level holds, two key spaces, transaction-level locks released
-- when the transaction ends, lock_timeout, a waiter woken by an unlock,
-- and a deadlock, whose victim is the session that closes the circle.
-- (PostgreSQL's victim is the session whose deadlock_timeout passes
-- first, so the first waiter here waits longer before it looks.)
SESSION a;
SET lock_timeout = 5000;
SELECT pg_advisory_lock(1);
SELECT pg_try_advisory_lock(1);
SESSION b;
SET lock_timeout = 100;
SELECT pg_try_advisory_lock(1);
SELECT pg_try_advisory_lock_shared(1);
SELECT pg_advisory_lock(1);
SELECT pg_try_advisory_lock(0, 1);
SELECT locktype, classid, objid, objsubid, mode, granted FROM pg_locks WHERE locktype = 'advisory' ORDER BY objsubid, mode, granted;
SESSION a;
SELECT pg_advisory_unlock(1);
SESSION b;
SELECT pg_try_advisory_lock(1);
SESSION a;
SELECT pg_advisory_unlock(1);
SESSION b;
SELECT pg_try_advisory_lock(1);
SELECT pg_advisory_unlock(0, 1);
-- Shared holders share; an exclusive request waits for all of them.
SELECT pg_try_advisory_lock_shared(7);
SESSION a;
SELECT pg_try_advisory_lock_shared(7);
SELECT pg_try_advisory_lock(7);
SELECT pg_advisory_unlock_shared(7);
-- Transaction-level locks go with their transaction.
BEGIN;
SELECT pg_advisory_xact_lock(5);
SESSION b;
SELECT pg_try_advisory_xact_lock(5);
SESSION a;
COMMIT;
SESSION b;
SELECT pg_try_advisory_xact_lock(5);
SELECT pg_try_advisory_lock(5);
SELECT pg_advisory_unlock(5);
-- A waiter is woken when the holder unlocks.
SESSION a;
ASYNC SELECT pg_advisory_lock(1);
SESSION b;
SELECT pg_advisory_unlock(1);
SESSION a;
WAIT;
SELECT pg_advisory_unlock_all();
-- Two transactions that wait for each other's locks: the one that
-- closes the circle fails, and its locks go with its transaction, so the
-- other one's wait ends.
SESSION b;
SET lock_timeout = 5000;
BEGIN;
SELECT pg_advisory_xact_lock(20);
SESSION a;
SET deadlock_timeout = '5s';
BEGIN;
SELECT pg_advisory_xact_lock(10);
ASYNC SELECT pg_advisory_xact_lock(20);
SESSION b;
SELECT pg_advisory_xact_lock(10);
ROLLBACK;
SESSION a;
WAIT;
COMMIT;
SELECT count(*) FROM pg_locks WHERE locktype = 'advisory';
