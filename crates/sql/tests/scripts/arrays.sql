-- Arrays: columns of array types, literals and constructors, subscripts
-- and slices, op ANY/ALL, the operators and functions, aggregates and
-- unnest, NULLs inside and around arrays, and the errors.
CREATE TABLE posts (id int PRIMARY KEY, tags text[], scores integer[], ratios numeric(4,2)[], seen date[]);
INSERT INTO posts VALUES (1, '{news,rust}', '{5,3,9}', '{1.5,2}', '{2026-01-02}');
INSERT INTO posts VALUES (2, ARRAY['db', 'rust', 'a b'], ARRAY[1, NULL, 4], ARRAY[0.25], NULL);
INSERT INTO posts VALUES (3, '{}', '{}', '{}', '{}');
INSERT INTO posts VALUES (4, NULL, NULL, NULL, NULL);
INSERT INTO posts VALUES (5, '{"NULL",NULL,"x,y","q\"t"}', '{ 7 , 8 }', '{3.14159}', '{2026-05-06,2026-05-07}');
SELECT * FROM posts ORDER BY id;
SELECT id, tags[1], scores[2], tags[0], scores[10] FROM posts ORDER BY id;
SELECT id, scores[2:3], scores[:1], scores[2:], scores[3:2] FROM posts ORDER BY id;
SELECT id, array_length(scores, 1), cardinality(scores), array_upper(scores, 1), array_lower(scores, 1), array_ndims(scores), array_dims(scores) FROM posts ORDER BY id;
SELECT id FROM posts WHERE 'rust' = ANY(tags) ORDER BY id;
SELECT id FROM posts WHERE 4 = ANY(scores) ORDER BY id;
SELECT id, 2 < ALL(scores), 9 = ANY(scores), 6 <> ALL(scores), 1 >= ANY(scores) FROM posts ORDER BY id;
SELECT id FROM posts WHERE tags @> '{rust}' ORDER BY id;
SELECT id FROM posts WHERE tags && ARRAY['db', 'news'] ORDER BY id;
SELECT id FROM posts WHERE scores <@ ARRAY[1, 3, 5, 9, 7, 8] ORDER BY id;
SELECT id, tags || 'new'::text, 'first'::text || tags, scores || ARRAY[100], scores || '{0}' FROM posts ORDER BY id;
SELECT id, array_append(scores, 1), array_prepend(0, scores), array_cat(scores, scores) FROM posts ORDER BY id;
SELECT id, array_position(scores, 4), array_position(scores, NULL), array_positions(ARRAY[1, 2, 1], 1) FROM posts ORDER BY id;
SELECT id, array_remove(scores, 3), array_replace(scores, NULL, 0) FROM posts ORDER BY id;
SELECT id, array_to_string(tags, '|'), array_to_string(scores, ',', '-') FROM posts ORDER BY id;
SELECT string_to_array('a,b,,c', ','), string_to_array('abc', NULL), string_to_array('a-x-b', '-', 'x'), string_to_array('', ',');
SELECT ARRAY[1, 2] = ARRAY[1, 2], ARRAY[1, 2] < ARRAY[1, 3], ARRAY[1] < ARRAY[1, 0], ARRAY[1, NULL] = ARRAY[1, NULL], '{1,2}'::int[] <> ARRAY[2, 1];
SELECT id, scores FROM posts WHERE scores IS NOT NULL ORDER BY scores, id;
SELECT ARRAY[1, 2.5], ARRAY['a', NULL], ARRAY[]::int[], ARRAY[1::smallint, 70000];
SELECT '{1,2,3}'::int[], '{a,"b c"}'::text[], '{1.5,2}'::float8[], '{t,f}'::bool[], ('{1,2}'::int[])::text, ('{1,2}'::text[])::int[];
SELECT (ARRAY[10, 20, 30])[2], (ARRAY['x', 'y'])[1:1];
SELECT array_agg(id ORDER BY id), array_agg(tags[1] ORDER BY id) FROM posts;
SELECT array_agg(id ORDER BY id) FILTER (WHERE id > 10) FROM posts;
SELECT ARRAY(SELECT id FROM posts WHERE id > 2 ORDER BY id DESC);
SELECT unnest(ARRAY[3, 1, 2]);
SELECT u, n FROM unnest(ARRAY['p', NULL, 'r']) WITH ORDINALITY AS t(u, n) ORDER BY n;
SELECT id, unnest(scores) AS s FROM posts WHERE id < 3 ORDER BY id, s;
SELECT p.id, s FROM posts p, unnest(p.scores) s WHERE s > 3 ORDER BY p.id, s;
SELECT count(*) FROM posts WHERE id = ANY(ARRAY[1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
SELECT count(*) FROM posts WHERE id = ANY(ARRAY[1, 2, 3, 4, 5, 6, 7, 8, NULL]);
UPDATE posts SET scores = scores || 10 WHERE id = 1;
UPDATE posts SET scores = array_append(scores, 10) WHERE id = 1;
SELECT scores FROM posts WHERE id = 1;
UPDATE posts SET tags = array_remove(tags, 'rust') WHERE 'rust' = ANY(tags);
SELECT id, tags FROM posts ORDER BY id;
DELETE FROM posts WHERE scores @> ARRAY[4];
SELECT id FROM posts ORDER BY id;
-- Errors.
INSERT INTO posts (id, scores) VALUES (10, '{1,x}');
INSERT INTO posts (id, scores) VALUES (10, '{1,2');
INSERT INTO posts (id, scores) VALUES (11, '{{1,2},{3,4}}');
INSERT INTO posts (id, scores) VALUES (10, '{99999999999}');
INSERT INTO posts (id, ratios) VALUES (10, '{123.456}');
INSERT INTO posts (id, tags) VALUES (12, ARRAY[1, 2]);
SELECT ARRAY[1, 'x'::text];
SELECT ARRAY[1] @> ARRAY['a'::text];
SELECT 1 = ANY(ARRAY['a'::text]);
SELECT tags[1][2] FROM posts;
SELECT count(*) FROM posts WHERE id <> 11;
-- The catalog describes array columns with their element's modifier.
SELECT attname, format_type(atttypid, atttypmod), atttypmod FROM pg_attribute WHERE attrelid = 'posts'::regclass AND attnum > 1 ORDER BY attnum;
SELECT t.typname, e.typname FROM pg_type t JOIN pg_type e ON e.oid = t.typelem WHERE t.oid = (SELECT atttypid FROM pg_attribute WHERE attrelid = 'posts'::regclass AND attname = 'ratios');
-- Indexes on array columns: ordered element by element (a range index),
-- equal by value (a hash index: 1.0 and 1.00 are one key), and as keys.
CREATE TABLE ai (id int PRIMARY KEY, k int[], n numeric[]);
CREATE INDEX ai_k ON ai (k);
CREATE INDEX ai_n ON ai USING hash (n);
INSERT INTO ai VALUES (1, '{1,2}', '{1.0}'), (2, '{1}', '{1.00,2}'), (3, '{1,NULL}', '{1}'), (4, '{}', NULL), (5, '{2}', '{2.50}'), (6, NULL, '{1.000}');
SELECT id, k FROM ai WHERE k < '{1,3}' ORDER BY k;
SELECT id, k FROM ai WHERE k >= '{1,2}' ORDER BY k;
SELECT id, k FROM ai ORDER BY k DESC NULLS LAST;
SELECT id FROM ai WHERE n = '{1}' ORDER BY id;
SELECT id FROM ai WHERE k = '{1,NULL}';
CREATE TABLE apk (k text[] PRIMARY KEY);
INSERT INTO apk VALUES ('{a}'), ('{a,b}'), ('{a,NULL}');
INSERT INTO apk VALUES ('{a}');
SELECT k FROM apk ORDER BY k;
SELECT array_no_such_function(ARRAY[1]);
SELECT cardinality(1);
