-- A query decodes only the columns it reads; every other column of a row
-- stays undecoded. These shapes read columns in every place a plan can:
-- filters, projections, sort keys, groups, aggregate arguments, FILTER and
-- ORDER BY inside aggregates, HAVING, subqueries reading the outer row,
-- derived tables, CTEs, joins and DISTINCT.
CREATE TABLE wide (id int PRIMARY KEY, k int, a text, b text, n numeric(8,2), d date);
CREATE INDEX wide_k ON wide (k);
INSERT INTO wide SELECT g, CASE WHEN g % 7 = 0 THEN NULL ELSE g % 5 END, 'a' || g::text, CASE WHEN g % 3 = 0 THEN NULL ELSE 'b' || (g % 4)::text END, g * 1.25, DATE '2026-01-01' + g FROM generate_series(1, 30) g;
SELECT sum(k), count(b), max(d) FROM wide WHERE id BETWEEN 3 AND 17;
SELECT a FROM wide WHERE id BETWEEN 10 AND 14 ORDER BY n DESC;
SELECT DISTINCT b FROM wide WHERE id BETWEEN 1 AND 12 ORDER BY b;
SELECT k, count(*), sum(n) FILTER (WHERE b IS NOT NULL), string_agg(a, ',' ORDER BY d DESC) FROM wide WHERE id <= 12 GROUP BY k HAVING max(id) > 3 ORDER BY k;
SELECT id, (SELECT count(*) FROM wide w2 WHERE w2.k = w.k AND w2.b = w.b) AS same FROM wide w WHERE id BETWEEN 4 AND 9 ORDER BY id;
SELECT id FROM wide w WHERE EXISTS (SELECT 1 FROM wide w2 WHERE w2.id = w.id + 1 AND w2.d > w.d) AND id > 27 ORDER BY id;
SELECT id FROM wide w WHERE n > (SELECT avg(n) FROM wide w2 WHERE w2.k = w.k) AND id < 10 ORDER BY id;
SELECT x.a, x.m FROM (SELECT a, n * 2 AS m, d FROM wide WHERE id < 5) x ORDER BY x.d DESC;
WITH c AS (SELECT id, b, n FROM wide WHERE k = 2) SELECT b, sum(n) FROM c GROUP BY b ORDER BY b;
SELECT w.a, v.b FROM wide w JOIN wide v ON v.id = w.k WHERE w.id BETWEEN 5 AND 8 ORDER BY w.id;
SELECT a FROM wide WHERE b IS NULL AND id < 10 ORDER BY id LIMIT 2 OFFSET 1;
SELECT count(*) FROM wide WHERE d > DATE '2026-01-25';
SELECT id, k FROM wide WHERE k > 3 ORDER BY id;
SELECT upper(a) || coalesce(b, '-') FROM wide WHERE id = 6;
INSERT INTO wide (id, k, a) SELECT id + 100, k, b FROM wide WHERE id BETWEEN 1 AND 3;
SELECT id, k, a, b, n, d FROM wide WHERE id > 100 ORDER BY id;
-- Bounds an index answers exactly, and bounds it cannot: a fraction on an
-- integer key, values out of the column's range, NULL keys past the end.
SELECT id FROM wide WHERE id > 27.5 ORDER BY id;
SELECT id FROM wide WHERE id >= 2.5 AND id < 4.5 ORDER BY id;
SELECT id FROM wide WHERE id > -9999999999 AND id < 3 ORDER BY id;
SELECT id FROM wide WHERE id < 9999999999 AND id > 101 ORDER BY id;
SELECT id, k FROM wide WHERE k >= 4 ORDER BY id;
SELECT id, k FROM wide WHERE k > 3.5 AND k < 4.5 ORDER BY id;
SELECT id, k FROM wide WHERE k BETWEEN 4 AND 4 AND id > 20 ORDER BY id;
