-- SELECT ... FOR UPDATE in one session: the rows and errors; what locks
-- do between sessions is tested in tests/locking.rs.
CREATE TABLE jobs (id int PRIMARY KEY, state text NOT NULL, n int NOT NULL);
INSERT INTO jobs VALUES (1, 'new', 0), (2, 'new', 0), (3, 'done', 0), (4, 'new', 0);
SELECT * FROM jobs ORDER BY id FOR UPDATE;
SELECT id FROM jobs WHERE state = 'new' ORDER BY id LIMIT 2 FOR UPDATE SKIP LOCKED;
SELECT id, n + 1 AS next, upper(state) FROM jobs j WHERE j.id > 1 ORDER BY id DESC OFFSET 1 FOR NO KEY UPDATE NOWAIT;
SELECT id FROM jobs WHERE state = 'gone' FOR SHARE;
SELECT * FROM (SELECT id FROM jobs WHERE id < 3 FOR KEY SHARE) s ORDER BY id;
BEGIN;
SELECT id FROM jobs WHERE id = 2 FOR UPDATE;
UPDATE jobs SET n = 9 WHERE id = 2;
SELECT n FROM jobs WHERE id = 2 FOR SHARE;
COMMIT;
SELECT id, n FROM jobs WHERE n > 0 FOR UPDATE;
SELECT count(*) FROM jobs FOR UPDATE;
SELECT DISTINCT state FROM jobs FOR UPDATE;
SELECT state FROM jobs GROUP BY state FOR UPDATE;
SELECT id FROM jobs UNION SELECT id FROM jobs FOR UPDATE;
