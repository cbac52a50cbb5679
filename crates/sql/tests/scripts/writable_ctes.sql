-- Data-modifying statements in WITH: each runs once, before the statement
-- that reads their RETURNING rows; read-only CTEs feed INSERT, UPDATE and
-- DELETE.
CREATE TABLE queue (id int PRIMARY KEY, payload text, done boolean DEFAULT false);
CREATE TABLE archive (id int PRIMARY KEY, payload text);
INSERT INTO queue (id, payload) SELECT g, 'job ' || g FROM generate_series(1, 6) g;
WITH moved AS (DELETE FROM queue WHERE id <= 3 RETURNING id, payload) INSERT INTO archive SELECT * FROM moved;
SELECT * FROM archive ORDER BY id;
SELECT id FROM queue ORDER BY id;
WITH d AS (UPDATE queue SET done = true WHERE id % 2 = 0 RETURNING id) SELECT count(*) FROM d;
SELECT id, done FROM queue ORDER BY id;
WITH x AS (SELECT id FROM queue WHERE done) INSERT INTO archive SELECT id, 'from x' FROM x;
SELECT * FROM archive ORDER BY id;
WITH ins AS (INSERT INTO queue VALUES (10, 'ten') RETURNING *), upd AS (UPDATE queue SET payload = 'nine' WHERE id = 5 RETURNING id) SELECT (SELECT count(*) FROM ins) AS inserted, (SELECT count(*) FROM upd) AS updated;
SELECT * FROM queue ORDER BY id;
-- Run once even when nothing reads them.
WITH d AS (DELETE FROM queue WHERE id = 6) SELECT 1 AS one;
SELECT count(*) FROM queue WHERE id = 6;
WITH d AS (DELETE FROM queue WHERE id = 10 RETURNING *) UPDATE archive SET payload = 'x' WHERE id IN (SELECT id FROM d);
WITH d AS (DELETE FROM archive WHERE payload = 'from x' RETURNING id) DELETE FROM queue WHERE id IN (SELECT id FROM d);
SELECT id FROM queue ORDER BY id;
SELECT * FROM archive ORDER BY id;
WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r WHERE n < 3), i AS (INSERT INTO archive SELECT n + 100, 'r' FROM r RETURNING id) SELECT array_agg(id ORDER BY id) FROM i;
WITH n (new_id, label) AS (INSERT INTO queue VALUES (20, 'twenty'), (21, 'twenty-one') RETURNING id, payload) SELECT label FROM n ORDER BY new_id;
WITH u AS (UPDATE queue SET payload = upper(payload) WHERE id >= 20 RETURNING id, payload) SELECT q.id, u.payload FROM u JOIN queue q ON q.id = u.id ORDER BY q.id;
PREPARE take(int) AS WITH t AS (DELETE FROM queue WHERE id = $1 RETURNING payload) SELECT payload FROM t;
EXECUTE take(20);
EXECUTE take(20);
-- The statement reads the tables after its WITH's writes (PostgreSQL:
-- before them, in one snapshot); listed in postgres-differences.txt.
WITH d AS (UPDATE queue SET payload = 'seen' WHERE id = 21 RETURNING id) SELECT q.payload FROM queue q JOIN d ON d.id = q.id;
-- Errors.
WITH d AS (DELETE FROM queue WHERE id = 5) SELECT * FROM d;
SELECT * FROM (WITH d AS (DELETE FROM queue RETURNING *) SELECT * FROM d) s;
SELECT (WITH d AS (DELETE FROM queue RETURNING id) SELECT count(*) FROM d);
INSERT INTO archive WITH d AS (DELETE FROM queue RETURNING *) SELECT id, payload FROM d;
WITH a AS (INSERT INTO archive WITH d AS (DELETE FROM queue RETURNING *) SELECT id, payload FROM d RETURNING id) SELECT * FROM a;
WITH d AS (INSERT INTO archive VALUES (1, 'again') RETURNING id) SELECT * FROM d;
SELECT count(*) FROM archive;
BEGIN READ ONLY;
WITH d AS (DELETE FROM queue RETURNING *) SELECT * FROM d;
ROLLBACK;
SELECT count(*) FROM queue;
