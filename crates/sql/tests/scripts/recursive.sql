-- WITH RECURSIVE, and unnest() in a select list.
WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r WHERE n < 5) SELECT * FROM r;
WITH RECURSIVE r(n) AS (SELECT 1 UNION SELECT n % 3 + 1 FROM r) SELECT n FROM r ORDER BY n;
CREATE TABLE parts (id int PRIMARY KEY, parent int, name text);
INSERT INTO parts VALUES (1, NULL, 'car'), (2, 1, 'engine'), (3, 2, 'piston'), (4, 1, 'wheel'), (5, 4, 'tyre'), (6, NULL, 'boat');
WITH RECURSIVE tree AS (
  SELECT id, name, 0 AS depth, name AS path FROM parts WHERE parent IS NULL
  UNION ALL
  SELECT p.id, p.name, t.depth + 1, t.path || '/' || p.name FROM parts p JOIN tree t ON p.parent = t.id
) SELECT depth, path FROM tree ORDER BY path;
WITH RECURSIVE up(id, parent) AS (SELECT id, parent FROM parts WHERE id = 3 UNION SELECT p.id, p.parent FROM parts p, up WHERE p.id = up.parent) SELECT count(*) FROM up;
-- A non-recursive CTE under WITH RECURSIVE.
WITH RECURSIVE plain AS (SELECT 42 AS x) SELECT x FROM plain;
-- A step whose columns are wider than the anchor's take the anchor's types.
WITH RECURSIVE w(x) AS (SELECT 1 UNION ALL SELECT x * 2 FROM w WHERE x < 100) SELECT sum(x) FROM w;
SELECT unnest('{1,2,3}'::text[]) AS v, 'x' AS k;
SELECT name, unnest('{a,b}'::text[]) FROM parts WHERE id <= 2 ORDER BY 1, 2;
SELECT unnest(NULL::text[]);
