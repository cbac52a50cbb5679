-- SELECT ... FOR UPDATE between two sessions: writers and lockers wait
-- (here until lock_timeout), NOWAIT fails at once, SKIP LOCKED passes the
-- locked rows by, readers are not held up; the locks end with the block.
-- A view made in an open block is not there for the other session yet.
SESSION a;
CREATE TABLE jobs (id int PRIMARY KEY, state text NOT NULL);
INSERT INTO jobs VALUES (1, 'new'), (2, 'new'), (3, 'new');
BEGIN;
SELECT id FROM jobs WHERE state = 'new' ORDER BY id LIMIT 1 FOR UPDATE SKIP LOCKED;
SESSION b;
SET lock_timeout = 100;
SELECT id FROM jobs WHERE state = 'new' ORDER BY id LIMIT 1 FOR UPDATE SKIP LOCKED;
SELECT id FROM jobs WHERE id = 1 FOR UPDATE NOWAIT;
SELECT id FROM jobs WHERE id = 1 FOR UPDATE;
UPDATE jobs SET state = 'mine' WHERE id = 1;
SELECT id, state FROM jobs ORDER BY id;
SELECT id FROM jobs ORDER BY id FOR UPDATE SKIP LOCKED;
SESSION a;
UPDATE jobs SET state = 'done' WHERE id = 1;
CREATE VIEW pending AS SELECT id FROM jobs WHERE state = 'new';
SESSION b;
SELECT id FROM pending ORDER BY id;
SESSION a;
COMMIT;
SESSION b;
SELECT id FROM pending ORDER BY id;
SELECT id FROM jobs WHERE state = 'new' ORDER BY id LIMIT 1 FOR UPDATE NOWAIT;
SELECT id, state FROM jobs ORDER BY id;
