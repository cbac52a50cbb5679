-- Composite types as psql shows them: \dT lists them, \d describes a
-- type's fields and a table's composite columns, and values print as
-- record literals.
CREATE TYPE pair AS (a int, b text);
CREATE TABLE pairs (id int PRIMARY KEY, p pair NOT NULL, ps pair[]);
INSERT INTO pairs VALUES (1, '(1,x)', ARRAY[ROW(2, 'y y')::pair]), (2, ROW(3, NULL), NULL);
\dT
\d pair
\d pairs
SELECT id, p, (p).a, ps FROM pairs ORDER BY p;
DROP TABLE pairs;
DROP TYPE pair;
\dT
