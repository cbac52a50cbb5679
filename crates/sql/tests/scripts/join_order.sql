-- The join order of a comma-separated FROM list comes from estimated rows
-- (planner/join_order.rs): the smallest item first, then the smallest one
-- a WHERE condition connects to those joined. Answers and their columns
-- stay as written.
CREATE TABLE r1 (a int, b int);
CREATE TABLE r2 (a int, b int);
CREATE TABLE r3 (a int, b int);
CREATE TABLE r4 (a int, b int);
CREATE TABLE r5 (a int, b int);
CREATE TABLE r6 (a int, b int);
CREATE TABLE r7 (a int, b int);
CREATE TABLE r8 (a int, b int);
INSERT INTO r1 SELECT g, g FROM generate_series(1, 10) g;
INSERT INTO r2 SELECT g, g FROM generate_series(1, 10) g;
INSERT INTO r3 SELECT g, g FROM generate_series(1, 10) g;
INSERT INTO r4 SELECT g, g FROM generate_series(1, 10) g;
INSERT INTO r5 SELECT g, g FROM generate_series(1, 10) g;
INSERT INTO r6 SELECT g, g FROM generate_series(1, 10) g;
INSERT INTO r7 SELECT g, g FROM generate_series(1, 10) g;
INSERT INTO r8 SELECT g, g FROM generate_series(1, 10) g;
-- Written in this order, r1..r4 share no condition: joined as written they
-- would make 10,000 rows before r5 connects them. Each next table is one
-- a condition ties to the tables before it.
EXPLAIN SELECT count(*) FROM r1, r2, r3, r4, r5, r6, r7, r8 WHERE r1.a = r5.b AND r2.a = r6.b AND r3.a = r7.b AND r4.a = r8.b AND r5.a = r2.b AND r6.a = r3.b AND r7.a = r4.b AND r8.a = r1.b;
SELECT count(*) FROM r1, r2, r3, r4, r5, r6, r7, r8 WHERE r1.a = r5.b AND r2.a = r6.b AND r3.a = r7.b AND r4.a = r8.b AND r5.a = r2.b AND r6.a = r3.b AND r7.a = r4.b AND r8.a = r1.b;
-- A filter on one table makes it the smallest: it goes first, and * lists
-- the columns in the order written.
EXPLAIN SELECT * FROM r2, r1 WHERE r1.a = r2.b AND r1.a < 3;
SELECT * FROM r2, r1 WHERE r1.a = r2.b AND r1.a < 3 ORDER BY 1;
SELECT r1.*, r2.b FROM r2, r1, r3 WHERE r1.a = r2.b AND r3.a = r2.a AND r3.b > 8 ORDER BY 1;
-- A small table drives look-ups into a big one through its key.
CREATE TABLE big (id int PRIMARY KEY, grp int, v int);
CREATE TABLE small (id int PRIMARY KEY, name text);
INSERT INTO big SELECT g, g % 5, (g * 37) % 1000 FROM generate_series(1, 2000) g;
INSERT INTO small VALUES (1, 'one'), (2, 'two'), (3, 'three'), (4, 'four'), (5, 'five');
EXPLAIN SELECT s.name, b.v FROM big b, small s WHERE b.id = s.id;
SELECT s.name, b.v FROM big b, small s WHERE b.id = s.id ORDER BY 1;
-- An equality on a unique key leaves one row: that table goes first.
EXPLAIN SELECT s.name FROM small s, big b WHERE b.id = 7 AND s.id = b.grp;
SELECT s.name FROM small s, big b WHERE b.id = 7 AND s.id = b.grp;
-- A table nothing connects comes after the connected ones.
EXPLAIN SELECT count(*) FROM r1, big b, small s WHERE b.id = s.id;
SELECT count(*) FROM r1, big b, small s WHERE b.id = s.id;
-- A subquery counts as 1,000 rows; a condition with a subquery connects
-- nothing.
EXPLAIN SELECT count(*) FROM (SELECT id FROM big) d, small s WHERE d.id = s.id;
SELECT count(*) FROM (SELECT id FROM big) d, small s WHERE d.id = s.id AND s.id IN (SELECT a FROM r1);
-- JOIN ... ON keeps the order written.
EXPLAIN SELECT s.name FROM big b JOIN small s ON b.id = s.id;
-- ORDER BY through a range index, with or without LIMIT.
CREATE INDEX big_v ON big (v);
EXPLAIN SELECT id FROM big ORDER BY v;
EXPLAIN SELECT id FROM big ORDER BY v DESC LIMIT 3;
EXPLAIN SELECT id FROM big WHERE v > 990 ORDER BY v;
SELECT id, v FROM big WHERE v > 990 ORDER BY v, id;
-- A filter no index answers may keep few rows: without LIMIT they are
-- sorted rather than the whole index walked; with one the walk stops early.
EXPLAIN SELECT id FROM big WHERE grp = 3 ORDER BY v;
EXPLAIN SELECT id FROM big WHERE grp = 3 ORDER BY v LIMIT 2;
SELECT id, v FROM big WHERE grp = 3 ORDER BY v, id LIMIT 2;
SELECT v FROM big ORDER BY v DESC LIMIT 4;
-- Grouping, DISTINCT and a sort on another column still sort.
EXPLAIN SELECT DISTINCT v FROM big ORDER BY v;
EXPLAIN SELECT id FROM big ORDER BY grp;
-- A scalar subquery that reads no outer row runs once per execution, so it
-- bounds an index like a constant; a correlated one cannot.
EXPLAIN SELECT id FROM big WHERE v > (SELECT max(a) + 985 FROM r1);
SELECT id, v FROM big WHERE v > (SELECT max(a) + 985 FROM r1) ORDER BY v, id;
EXPLAIN SELECT id FROM big WHERE id = (SELECT min(a) FROM r1);
SELECT id, v FROM big WHERE id = (SELECT min(a) FROM r1);
SELECT id FROM big WHERE id = (SELECT a FROM r1 WHERE a > 10);
SELECT id FROM big WHERE id = (SELECT a FROM r1 WHERE a > 8);
EXPLAIN SELECT s.name FROM small s WHERE s.id = (SELECT min(b.id) FROM big b WHERE b.grp = s.id);
-- min and max of a column a range index leads with read one row in the
-- index's order, NULLs passed by; other shapes aggregate every row.
INSERT INTO big VALUES (2001, 1, NULL), (2002, 2, NULL);
EXPLAIN SELECT max(v) FROM big;
EXPLAIN SELECT min(v) AS lowest FROM big WHERE grp = 3;
SELECT max(v), (SELECT min(v) FROM big) FROM big;
SELECT min(v) AS lowest FROM big WHERE grp = 3;
SELECT max(v) FROM big WHERE v < 0;
SELECT max(big.v) FROM big WHERE id > 1990;
EXPLAIN SELECT max(v) FROM big WHERE id = 5;
SELECT max(v) FROM big WHERE id = 5;
EXPLAIN SELECT max(grp) FROM big;
EXPLAIN SELECT max(v) FROM big GROUP BY grp;
SELECT count(*), max(v) FROM big;
DELETE FROM big WHERE v IS NOT NULL;
SELECT max(v), min(v) IS NULL AS none FROM big;
