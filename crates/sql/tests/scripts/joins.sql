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
