-- IN lists and = ANY arrays long enough to be tested through a hash set
-- (eight members or more), next to the same tests member by member: NULL
-- members, NOT IN, mixed numeric families, text, and members that are not
-- constant for the statement.
CREATE TABLE n (id int PRIMARY KEY, big bigint, s smallint, num numeric(6,2), t text, v varchar(10));
INSERT INTO n SELECT g, g::bigint * 1000000000, g % 100, g / 4.0, 'x' || g::text, 'v' || (g % 7)::text FROM generate_series(1, 40) g;
INSERT INTO n VALUES (41, NULL, NULL, NULL, NULL, NULL);
SELECT id FROM n WHERE id IN (3, 5, 7, 11, 13, 17, 19, 23, 99) ORDER BY id;
SELECT id FROM n WHERE id NOT IN (3, 5, 7, 11, 13, 17, 19, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32, 33, 34, 35, 36, 37, 38, 39, 40) ORDER BY id;
SELECT count(*) FROM n WHERE id NOT IN (1, 2, 3, 4, 5, 6, 7, NULL);
SELECT count(*) FROM n WHERE id IN (1, 2, 3, 4, 5, 6, 7, NULL);
SELECT id, id IN (1, 2, 3, 4, 5, 6, 7, NULL) AS with_null FROM n WHERE id BETWEEN 6 AND 9 ORDER BY id;
SELECT id FROM n WHERE big IN (2000000000, 4000000000, 5, 6, 7, 8, 9, 10) ORDER BY id;
SELECT id FROM n WHERE s IN (1, 2, 3, 40, 50, 60, 70, 80) ORDER BY id;
SELECT id FROM n WHERE num IN (1, 2, 2.5, 3, 4, 5, 6, 7.25) ORDER BY id;
SELECT id FROM n WHERE id IN (1.0, 2, 3.5, 4, 5, 6, 7, 8) ORDER BY id;
SELECT id FROM n WHERE t IN ('x1', 'x2', 'x3', 'x30', 'y', 'z', 'w', 'x40') ORDER BY id;
SELECT id FROM n WHERE v IN ('v1', 'v2', 'a', 'b', 'c', 'd', 'e', 'f') AND id < 12 ORDER BY id;
SELECT id FROM n WHERE t NOT IN ('x1', 'x2', 'x3', 'x4', 'x5', 'x6', 'x7', 'x8', 'x9', 'x10', 'x11', 'x12', 'x13', 'x14', 'x15', 'x16', 'x17', 'x18', 'x19', 'x20', 'x21', 'x22', 'x23', 'x24', 'x25', 'x26', 'x27', 'x28', 'x29', 'x30', 'x31', 'x32', 'x33', 'x34', 'x35', 'x36', 'x37') ORDER BY id;
SELECT id FROM n a WHERE a.id IN (1, 2, 3, 4, 5, 6, 7, (SELECT max(id) FROM n b WHERE b.id < a.id)) AND id > 37 ORDER BY id;
SELECT id FROM n a WHERE 5 IN (1, 2, 3, 4, 6, 7, 8, a.id) ORDER BY id;
SELECT id FROM n WHERE id = ANY('{1,2,3,4,5,6,7,8,9,10,11,12}') AND id > 8 ORDER BY id;
SELECT id FROM n WHERE t = ANY('{x1,x2,x3,NULL,x9}') ORDER BY id;
SELECT count(*) FROM n WHERE (t = ANY('{x1,x2,NULL}')) IS NULL;
SELECT count(*) FROM n WHERE id = ANY('{}');
SELECT count(*) FROM n WHERE NOT (id = ANY('{1,2,3,4,5,6,7,8,9,10}'));
-- Writes through the look-up path.
UPDATE n SET s = -1 WHERE id IN (2, 4, 4, 6, 99, NULL);
DELETE FROM n WHERE id IN (1, 3, 3, 5) RETURNING id;
SELECT id, s FROM n WHERE id < 8 ORDER BY id;
-- char(n) is stored blank-padded and compares without trailing blanks.
CREATE TABLE ch (x char(5) PRIMARY KEY, y char(5), z varchar(5));
INSERT INTO ch VALUES ('abc', 'abc', 'abc'), ('de  ', 'de', 'de'), ('fghij', 'fghij', 'fghij');
SELECT x FROM ch WHERE x = 'abc';
SELECT x FROM ch WHERE y = 'abc  ';
SELECT x FROM ch WHERE x = 'de';
SELECT x FROM ch WHERE y = 'fghijk';
SELECT x FROM ch WHERE x IN ('abc', 'de   ') ORDER BY x;
SELECT x FROM ch WHERE y IN ('abc', 'de', 'q1', 'q2', 'q3', 'q4', 'q5', 'q6') ORDER BY x;
SELECT x FROM ch WHERE z = 'abc' AND y > 'abc' ORDER BY x;
SELECT count(*) FROM ch WHERE x BETWEEN 'abc' AND 'de';
-- = ANY over an array of constants (or a parameter) looks up each member
-- in an index of the column, once per distinct member.
EXPLAIN SELECT id FROM n WHERE id = ANY(ARRAY[2, 4, 2, NULL, 99]);
SELECT id FROM n WHERE id = ANY(ARRAY[2, 4, 2, NULL, 99]) ORDER BY id;
SELECT id FROM n WHERE id = ANY('{1.5,2,2.0}'::numeric[]) ORDER BY id;
SELECT count(*) FROM n WHERE id = ANY('{}'::int[]);
SELECT count(*) FROM n WHERE id = ANY(NULL::int[]);
