-- Three sessions: a failed statement frees its block's rows for the
-- others before ROLLBACK, waits behind two holders end at lock_timeout,
-- a schema change waits for two open transactions, and a client that
-- vanishes with its block open frees what the block held.
SESSION a;
CREATE TABLE t (id int PRIMARY KEY, v int);
INSERT INTO t VALUES (1, 0), (2, 0), (3, 0);
BEGIN;
UPDATE t SET v = 1 WHERE id = 1;
SESSION b;
SET lock_timeout = 100;
BEGIN;
UPDATE t SET v = 2 WHERE id = 2;
UPDATE t SET v = 2 WHERE id = 1;
SESSION c;
SET lock_timeout = 100;
UPDATE t SET v = 3 WHERE id = 2;
UPDATE t SET v = 3 WHERE id = 1;
SESSION b;
SELECT 1;
ROLLBACK;
SESSION a;
SELECT 1 / 0;
SESSION c;
UPDATE t SET v = 3 WHERE id = 1;
SESSION a;
SELECT 1;
ROLLBACK;
SELECT id, v FROM t ORDER BY id;
-- Two open writers; a schema change waits for both, then for the one left.
SESSION b;
BEGIN;
UPDATE t SET v = 20 WHERE id = 2;
SESSION c;
BEGIN;
INSERT INTO t VALUES (4, 40);
SESSION a;
SET lock_timeout = 100;
ALTER TABLE t ADD COLUMN w int;
SESSION b;
COMMIT;
SESSION a;
ALTER TABLE t ADD COLUMN w int;
SESSION c;
ROLLBACK;
SESSION a;
ALTER TABLE t ADD COLUMN w int DEFAULT 7;
SELECT * FROM t ORDER BY id;
-- One session waits on a second while the third holds what the second
-- needs next: each wait ends by its own limit, the holders keep going.
SESSION a;
BEGIN;
UPDATE t SET w = 1 WHERE id = 1;
SESSION b;
BEGIN;
UPDATE t SET w = 2 WHERE id = 2;
SESSION c;
BEGIN;
UPDATE t SET w = 3 WHERE id = 3;
SESSION a;
UPDATE t SET w = 1 WHERE id = 2;
SELECT 1;
ROLLBACK;
SESSION b;
UPDATE t SET w = 2 WHERE id = 1;
UPDATE t SET w = 2 WHERE id = 3;
SESSION c;
UPDATE t SET w = 3 WHERE id = 1;
COMMIT;
SESSION b;
ROLLBACK;
SELECT id, w FROM t ORDER BY id;
-- A client vanishes with its block open; what it held is free for the
-- others, and what it wrote is gone.
SESSION b;
BEGIN;
UPDATE t SET w = 9 WHERE id = 2;
INSERT INTO t VALUES (5, 50, 50);
DISCONNECT;
SESSION c;
SET lock_timeout = 5000;
UPDATE t SET w = 8 WHERE id = 2;
INSERT INTO t VALUES (5, 51, 51);
SELECT * FROM t ORDER BY id;
SESSION b;
SELECT count(*) FROM t;
