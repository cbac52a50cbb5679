-- Window functions: ranking, offsets, first/last/nth value and aggregates
-- over partitions and frames (ROWS, RANGE, GROUPS), named windows, windows
-- over grouped rows and joins, and the errors.
CREATE TABLE emp (id int PRIMARY KEY, dept text, salary int, hired date);
INSERT INTO emp VALUES (1, 'eng', 100, '2020-01-01'), (2, 'eng', 200, '2021-03-01'), (3, 'eng', 200, '2019-06-15'), (4, 'ops', 50, '2022-01-01'), (5, 'ops', 70, '2018-02-02'), (6, NULL, 10, '2023-05-05'), (7, 'sales', NULL, '2020-07-07'), (8, 'sales', 90, NULL);
SELECT id, dept, salary, row_number() OVER (PARTITION BY dept ORDER BY salary, id), rank() OVER (PARTITION BY dept ORDER BY salary), dense_rank() OVER (PARTITION BY dept ORDER BY salary) FROM emp ORDER BY id;
SELECT id, percent_rank() OVER (ORDER BY salary), cume_dist() OVER (ORDER BY salary), ntile(3) OVER (ORDER BY id), ntile(10) OVER (ORDER BY id) FROM emp ORDER BY id;
SELECT id, salary, sum(salary) OVER (ORDER BY salary), count(*) OVER (ORDER BY salary), count(salary) OVER (), avg(salary) OVER (PARTITION BY dept) FROM emp ORDER BY id;
SELECT id, min(salary) OVER w, max(salary) OVER w, sum(salary) OVER w FROM emp WINDOW w AS (ORDER BY id ROWS BETWEEN 1 PRECEDING AND 1 FOLLOWING) ORDER BY id;
SELECT id, sum(id) OVER (ORDER BY id ROWS UNBOUNDED PRECEDING), sum(id) OVER (ORDER BY id ROWS BETWEEN CURRENT ROW AND UNBOUNDED FOLLOWING), sum(id) OVER (ORDER BY id ROWS BETWEEN 2 FOLLOWING AND 3 FOLLOWING), sum(id) OVER (ORDER BY id ROWS BETWEEN UNBOUNDED PRECEDING AND 2 PRECEDING) FROM emp ORDER BY id;
SELECT id, salary, sum(id) OVER (ORDER BY salary RANGE BETWEEN CURRENT ROW AND UNBOUNDED FOLLOWING), count(*) OVER (ORDER BY salary RANGE BETWEEN UNBOUNDED PRECEDING AND UNBOUNDED FOLLOWING) FROM emp ORDER BY id;
SELECT id, salary, sum(id) OVER (ORDER BY salary GROUPS BETWEEN 1 PRECEDING AND CURRENT ROW), count(*) OVER (ORDER BY salary GROUPS BETWEEN CURRENT ROW AND 1 FOLLOWING), count(*) OVER (ORDER BY salary GROUPS BETWEEN 1 PRECEDING AND 1 PRECEDING) FROM emp ORDER BY id;
SELECT id, lag(salary) OVER (ORDER BY id), lag(salary, 2) OVER (ORDER BY id), lead(salary) OVER (ORDER BY id), lead(salary, 2, -1) OVER (ORDER BY id), lag(id, -1) OVER (ORDER BY id), lead(dept, 1, 'none') OVER (PARTITION BY dept ORDER BY id) FROM emp ORDER BY id;
SELECT id, first_value(salary) OVER w, last_value(salary) OVER w, nth_value(salary, 2) OVER w, nth_value(salary, 5) OVER w FROM emp WINDOW w AS (PARTITION BY dept ORDER BY id) ORDER BY id;
SELECT id, first_value(id) OVER (ORDER BY id ROWS BETWEEN 1 FOLLOWING AND 2 FOLLOWING), last_value(id) OVER (ORDER BY id ROWS BETWEEN 1 FOLLOWING AND 2 FOLLOWING), last_value(id) OVER (ORDER BY id ROWS BETWEEN UNBOUNDED PRECEDING AND UNBOUNDED FOLLOWING) FROM emp ORDER BY id;
SELECT id, string_agg(dept, ',') OVER (ORDER BY id), array_agg(id) OVER (PARTITION BY dept ORDER BY id), bool_and(salary > 60) OVER (PARTITION BY dept) FROM emp ORDER BY id;
SELECT id, rank() OVER w, sum(salary) OVER (w ORDER BY id ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) FROM emp WINDOW w AS (PARTITION BY dept), w2 AS (w ORDER BY salary DESC, id) ORDER BY id;
SELECT id, rank() OVER w2 FROM emp WINDOW w AS (PARTITION BY dept), w2 AS (w ORDER BY salary DESC, id) ORDER BY id;
SELECT dept, sum(salary), rank() OVER (ORDER BY sum(salary) DESC), sum(sum(salary)) OVER (), count(*) * 100 / sum(count(*)) OVER () FROM emp GROUP BY dept ORDER BY dept;
SELECT dept, count(*) FROM emp GROUP BY dept HAVING count(*) > 1 ORDER BY rank() OVER (ORDER BY dept DESC);
SELECT id, rank() OVER (ORDER BY salary) AS r FROM emp ORDER BY r, id;
SELECT id FROM emp ORDER BY row_number() OVER (ORDER BY salary DESC NULLS LAST, id) LIMIT 3;
SELECT id, row_number() OVER (ORDER BY id DESC) FROM emp ORDER BY 2 LIMIT 3;
SELECT DISTINCT dept, count(*) OVER (PARTITION BY dept) FROM emp ORDER BY dept;
SELECT * FROM (SELECT id, dept, row_number() OVER (PARTITION BY dept ORDER BY salary DESC NULLS LAST, id) AS rn FROM emp) ranked WHERE rn = 1 ORDER BY id;
WITH top AS (SELECT dept, salary, dense_rank() OVER (ORDER BY salary DESC NULLS LAST) AS d FROM emp) SELECT dept, salary FROM top WHERE d <= 2 ORDER BY salary DESC, dept;
CREATE TABLE depts (name text PRIMARY KEY, floor int);
INSERT INTO depts VALUES ('eng', 3), ('ops', 1), ('sales', 2);
SELECT e.id, d.floor, rank() OVER (PARTITION BY d.floor ORDER BY e.salary DESC) FROM emp e JOIN depts d ON d.name = e.dept ORDER BY e.id;
SELECT id, salary - lag(salary) OVER (ORDER BY id) AS delta, salary * 100 / sum(salary) OVER (PARTITION BY dept) AS pct FROM emp ORDER BY id;
SELECT id, row_number() OVER () > 0, count(*) OVER () FROM emp ORDER BY id;
SELECT row_number() OVER (), rank() OVER (), sum(1) OVER () FROM emp WHERE false;
SELECT hired, sum(salary) OVER (ORDER BY hired NULLS FIRST) FROM emp ORDER BY hired NULLS FIRST;
SELECT id, salary, sum(salary) OVER (ORDER BY salary RANGE BETWEEN 50 PRECEDING AND 50 FOLLOWING), count(*) OVER (ORDER BY salary DESC RANGE BETWEEN 100 PRECEDING AND CURRENT ROW), count(*) OVER (ORDER BY salary NULLS FIRST RANGE BETWEEN 10 PRECEDING AND 10 FOLLOWING), sum(id) OVER (PARTITION BY dept ORDER BY salary RANGE 60 PRECEDING) FROM emp ORDER BY id;
SELECT id, salary, count(*) OVER (ORDER BY salary RANGE BETWEEN 20 FOLLOWING AND 100 FOLLOWING), min(id) OVER (ORDER BY salary DESC RANGE BETWEEN 30 PRECEDING AND 10 PRECEDING), max(id) OVER (ORDER BY salary DESC NULLS LAST RANGE BETWEEN CURRENT ROW AND 100 FOLLOWING) FROM emp ORDER BY id;
SELECT x, sum(x) OVER (ORDER BY x RANGE BETWEEN 1.5 PRECEDING AND 0.5 FOLLOWING), count(*) OVER (ORDER BY x RANGE BETWEEN 0 PRECEDING AND 0 FOLLOWING) FROM (VALUES (1.0), (2.0), (2.5), (4.0), (NULL), (NULL)) v(x) ORDER BY x;
SELECT x, count(*) OVER (ORDER BY x RANGE BETWEEN 2147483647 PRECEDING AND 2147483647 FOLLOWING), count(*) OVER (ORDER BY x DESC RANGE BETWEEN 1 PRECEDING AND 1 FOLLOWING) FROM (VALUES (2147483647), (-2147483648), (0), (2147483646)) v(x) ORDER BY x;
SELECT x, first_value(x) OVER (ORDER BY x DESC RANGE BETWEEN 1 FOLLOWING AND 3 FOLLOWING), last_value(x) OVER (ORDER BY x RANGE BETWEEN 2 PRECEDING AND 1 PRECEDING) FROM generate_series(1, 6) g(x) ORDER BY x;
SELECT x, sum(x) OVER (ORDER BY x RANGE BETWEEN 0.25 PRECEDING AND 0.25 FOLLOWING) FROM (VALUES (1.0::float8), (1.2), (1.5), (3.0)) v(x) ORDER BY x;
SELECT x, sum(x) OVER (ORDER BY x ROWS BETWEEN 1 PRECEDING AND 1 FOLLOWING) FROM generate_series(1, 5) AS g(x) ORDER BY x;
-- A sliding frame evaluates each row's input once, and a row that is in
-- no frame not at all (10 / 0 is never computed).
SELECT x, sum(10 / x) OVER (ORDER BY x ROWS BETWEEN 1 FOLLOWING AND 1 FOLLOWING), count(x) FILTER (WHERE x % 2 = 1) OVER (ORDER BY x ROWS BETWEEN 2 PRECEDING AND CURRENT ROW) FROM (VALUES (0), (1), (2), (5), (NULL)) v(x) ORDER BY x;
-- Sliding count and sum kept as rows enter and leave the frame: NULLs,
-- FILTER, smallint, int and bigint, frames that shrink at the end, and
-- GROUPS frames.
SELECT g, x, count(*) OVER w, count(x) OVER w, sum(x) OVER w, sum(x::smallint) FILTER (WHERE x <> 4) OVER w, sum(x::bigint) OVER w, count(*) OVER (PARTITION BY g ORDER BY x GROUPS BETWEEN 1 PRECEDING AND CURRENT ROW), sum(x) OVER (PARTITION BY g ORDER BY x ROWS BETWEEN 2 FOLLOWING AND 3 FOLLOWING) FROM (VALUES (1, 1), (1, 2), (1, NULL), (1, 4), (1, 4), (2, 7), (2, NULL), (2, 9)) v(g, x) WINDOW w AS (PARTITION BY g ORDER BY x ROWS BETWEEN 1 PRECEDING AND 1 FOLLOWING) ORDER BY g, x, 5;
-- Boolean and integer keys with NULLs, either direction, and text keys.
SELECT b, n, rank() OVER (PARTITION BY b ORDER BY n DESC NULLS FIRST), dense_rank() OVER (ORDER BY b NULLS FIRST, n), row_number() OVER (PARTITION BY t ORDER BY n NULLS LAST) FROM (VALUES (true, 1, 'a'), (false, NULL, 'b'), (true, NULL, 'a'), (NULL, 3, 'b'), (true, 1, NULL), (false, 2, 'a')) v(b, n, t) ORDER BY b, n, t;
CREATE TABLE ranked (id int PRIMARY KEY, r bigint);
INSERT INTO ranked SELECT id, rank() OVER (ORDER BY salary DESC NULLS LAST, id) FROM emp;
SELECT * FROM ranked ORDER BY r;
INSERT INTO ranked SELECT id + 100, row_number() OVER (ORDER BY id) FROM emp WHERE id < 3;
SELECT * FROM ranked WHERE id > 100 ORDER BY id;
-- Errors.
SELECT id FROM emp WHERE row_number() OVER () > 1;
SELECT dept FROM emp GROUP BY row_number() OVER ();
SELECT dept, count(*) FROM emp GROUP BY dept HAVING rank() OVER () > 1;
SELECT row_number() OVER (ORDER BY row_number() OVER ()) FROM emp;
SELECT sum(row_number() OVER ()) OVER () FROM emp;
SELECT lower(dept) OVER () FROM emp;
SELECT rank(id) OVER () FROM emp;
SELECT row_number(1) OVER () FROM emp;
SELECT lag() OVER () FROM emp;
SELECT ntile(0) OVER () FROM emp;
SELECT ntile(-1) OVER (ORDER BY id) FROM emp;
SELECT nth_value(id, 0) OVER () FROM emp;
SELECT sum(id) OVER (ROWS BETWEEN -1 PRECEDING AND CURRENT ROW) FROM emp;
SELECT sum(id) OVER (ROWS BETWEEN NULL PRECEDING AND CURRENT ROW) FROM emp;
SELECT sum(id) OVER (ROWS BETWEEN id PRECEDING AND CURRENT ROW) FROM emp;
SELECT sum(id) OVER (ROWS BETWEEN UNBOUNDED FOLLOWING AND CURRENT ROW) FROM emp;
SELECT sum(id) OVER (ROWS BETWEEN CURRENT ROW AND UNBOUNDED PRECEDING) FROM emp;
SELECT sum(id) OVER (ROWS BETWEEN CURRENT ROW AND 1 PRECEDING) FROM emp;
SELECT sum(id) OVER (ROWS BETWEEN 1 FOLLOWING AND CURRENT ROW) FROM emp;
SELECT sum(id) OVER (GROUPS BETWEEN 1 PRECEDING AND CURRENT ROW) FROM emp;
SELECT sum(id) OVER (ORDER BY id, salary RANGE 1 PRECEDING) FROM emp;
SELECT sum(id) OVER (RANGE BETWEEN CURRENT ROW AND 1 FOLLOWING) FROM emp;
SELECT sum(id) OVER (ORDER BY dept RANGE 1 PRECEDING) FROM emp;
SELECT sum(id) OVER (ORDER BY id RANGE -1 PRECEDING) FROM emp;
SELECT sum(id) OVER (ORDER BY id RANGE 1.5 PRECEDING) FROM emp;
SELECT sum(id) OVER (ORDER BY id RANGE id PRECEDING) FROM emp;
SELECT count(DISTINCT dept) OVER () FROM emp;
SELECT rank() OVER missing FROM emp;
SELECT rank() OVER w FROM emp WINDOW w AS (ORDER BY id), w AS (ORDER BY salary);
SELECT rank() OVER (w ORDER BY id) FROM emp WINDOW w AS (ORDER BY salary);
SELECT rank() OVER (w PARTITION BY id) FROM emp WINDOW w AS (ORDER BY salary);
SELECT lead(salary, 1, 'x') OVER (ORDER BY id) FROM emp;
UPDATE emp SET salary = row_number() OVER ();
SELECT sum(id) OVER (ORDER BY id) FROM emp ORDER BY 1;
