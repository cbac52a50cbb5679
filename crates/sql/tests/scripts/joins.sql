CREATE TABLE dept (id int PRIMARY KEY, name text);
CREATE TABLE emp (id int PRIMARY KEY, name text, dept_id int, boss int);
INSERT INTO dept VALUES (1, 'eng'), (2, 'ops'), (3, 'empty');
INSERT INTO emp VALUES (1, 'ann', 1, NULL), (2, 'bob', 1, 1), (3, 'cy', 2, 1), (4, 'di', NULL, 2);
SELECT e.name, d.name FROM emp e JOIN dept d ON e.dept_id = d.id ORDER BY e.name;
SELECT e.name, d.name FROM emp e, dept d WHERE e.dept_id = d.id AND d.name = 'eng' ORDER BY e.name;
SELECT e.name, d.name FROM emp e LEFT JOIN dept d ON e.dept_id = d.id ORDER BY e.name;
SELECT e.name, d.name FROM emp e RIGHT JOIN dept d ON e.dept_id = d.id ORDER BY d.name, e.name;
SELECT e.name, d.name FROM emp e FULL JOIN dept d ON e.dept_id = d.id ORDER BY d.name, e.name;
SELECT e.name, b.name AS boss FROM emp e LEFT JOIN emp b ON e.boss = b.id ORDER BY e.id;
SELECT d.name, count(e.id) FROM dept d LEFT JOIN emp e ON e.dept_id = d.id GROUP BY d.name ORDER BY d.name;
SELECT e.name FROM emp e JOIN dept d USING (id) ORDER BY 1;
SELECT count(*) FROM emp CROSS JOIN dept;
SELECT e.name FROM emp e LEFT JOIN dept d ON e.dept_id = d.id WHERE d.id IS NULL;
SELECT e.name, d.name FROM emp e JOIN dept d ON e.dept_id < d.id ORDER BY 1, 2;
SELECT x.name FROM emp x JOIN emp y ON x.boss = y.id JOIN dept d ON y.dept_id = d.id WHERE d.name = 'eng' ORDER BY 1;
-- A derived table that does not read the left row runs once, over the
-- statement's outer row: its own correlated subqueries see its rows, not
-- the left row's columns.
CREATE TABLE dj (a int, b int, s text);
INSERT INTO dj VALUES (1, 10, 'x'), (2, 20, 'y');
SELECT x.a, d.m FROM dj x CROSS JOIN (SELECT (SELECT max(y.b) FROM dj y WHERE y.a = z.a) AS m FROM dj z ORDER BY 1 LIMIT 1) d ORDER BY 1;
SELECT x.a, d.a, d.m FROM dj x LEFT JOIN (SELECT z.a, (SELECT max(y.b) FROM dj y WHERE y.a = z.a) AS m FROM dj z) d ON x.a < d.a ORDER BY 1;
SELECT x.s, d.t FROM dj x CROSS JOIN (SELECT (SELECT y.s FROM dj y WHERE y.a = z.a ORDER BY trim(both z.s FROM y.s) LIMIT 1) AS t FROM dj z) d ORDER BY 1, 2;
-- USING and NATURAL: each pair reads as one column, listed first by *.
CREATE TABLE ua (id int, x text, k int);
CREATE TABLE ub (id int, y text, k int);
CREATE TABLE uc (id int, z text);
INSERT INTO ua VALUES (1, 'a1', 10), (2, 'a2', 20);
INSERT INTO ub VALUES (1, 'b1', 10), (3, 'b3', 30), (2, 'b2', 99);
INSERT INTO uc VALUES (1, 'c1'), (3, 'c3');
SELECT * FROM ua JOIN ub USING (id) ORDER BY id;
SELECT id, ua.id, ub.id, x, y FROM ua JOIN ub USING (id) ORDER BY 1;
SELECT * FROM ua LEFT JOIN ub USING (id) ORDER BY id;
SELECT * FROM ua RIGHT JOIN ub USING (id) ORDER BY id;
SELECT id FROM ua RIGHT JOIN ub USING (id) ORDER BY id;
SELECT * FROM ua NATURAL JOIN ub;
SELECT * FROM ua NATURAL LEFT JOIN ub ORDER BY id;
SELECT * FROM ua JOIN ub USING (id) JOIN uc USING (id);
SELECT ub.* FROM ua JOIN ub USING (id) ORDER BY 1;
SELECT * FROM ua NATURAL JOIN uc ORDER BY 1;
SELECT count(*) FROM ua NATURAL JOIN (SELECT 1 AS q) s;
SELECT * FROM (ua JOIN ub USING (id, k)) ORDER BY 1;
SELECT id, count(*) FROM ua JOIN ub USING (id) GROUP BY id ORDER BY id;
SELECT * FROM ua JOIN ub USING (nope);
