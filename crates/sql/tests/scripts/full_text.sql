-- Full-text search: tsvector and tsquery input and output, to_tsvector and
-- the to_tsquery family on the simple and english configurations (stop
-- words, stemming), @@ both ways round, the tsvector and tsquery
-- functions and operators, the default configuration, columns of both
-- types, filtering a table, NULLs and errors.
SELECT 'a fat cat sat on a mat and ate a fat rat'::tsvector;
SELECT 'fat:2,4 cat:3 rat:5A'::tsvector, 'b:3 a:2 b:1'::tsvector, ''::tsvector;
SELECT $$'don''t' 'a\\b' 'with space':1$$::tsvector;
SELECT 'fat & rat'::tsquery, 'fat & (rat | cat)'::tsquery, 'fat | rat & cat'::tsquery;
SELECT '!fat & !(a | b)'::tsquery, 'a <-> b <2> c'::tsquery, 'a <-> (b <-> c)'::tsquery;
SELECT '(a | b) <-> c'::tsquery, 'super:*AB & x:b'::tsquery, 'Fat'::tsquery, $$'it''s'$$::tsquery;
SELECT 'fat & rat'::tsquery::text, 'a:1 b:2'::tsvector::text, 'fat:1A'::text::tsvector;
SELECT pg_typeof('a'::tsvector), pg_typeof('a'::tsquery), pg_typeof(to_tsvector('a')), pg_typeof(to_tsquery('a'));
-- The configurations.
SELECT to_tsvector('english', 'The fat rats ate 3.14 cakes abc123');
SELECT to_tsvector('simple', 'The Fat rats, the FAT rats');
SELECT to_tsvector('english', 'running-shoes state-of-the-art x-ray');
SELECT to_tsvector('english', 'Supernovae stars are exploding; the quickest jumps were jumping');
SELECT to_tsvector('english', 'the and of to be'), to_tsvector('simple', 'the and of to be');
SELECT to_tsvector('english', 'caf'), to_tsvector('english', 'Universities universal university');
SELECT to_tsvector('english', '-5 +7 1,000 2nd 42abc under_score'), to_tsvector('simple', 'e.g. hello.world v1.2');
SELECT to_tsvector('pg_catalog.english', 'Rats'), to_tsvector('english'::regconfig, 'Rats'), to_tsvector('simple'::regconfig, 'Rats');
SELECT 'english'::regconfig, 'pg_catalog.simple'::regconfig;
SELECT to_tsvector('Rats running');
-- Queries.
SELECT to_tsquery('english', 'The & Fat & Rats'), to_tsquery('simple', 'The & Fat & Rats');
SELECT to_tsquery('english', 'supernovae:* & !stars'), to_tsquery('english', 'rats:AB | cats:*C');
SELECT to_tsquery('english', 'cat <-> the <-> rat'), to_tsquery('english', 'the <-> cat'), to_tsquery('english', '!the & cat');
SELECT to_tsquery('english', $$'cat the rat'$$), to_tsquery('english', 'running-shoes'), to_tsquery('english', 'fat <3> rats');
SELECT to_tsquery('english', 'the'), to_tsquery('english', '(the | a) & cat'), to_tsquery('english', '(fat | rat) <-> (cat | mat)');
SELECT plainto_tsquery('english', 'The Fat Rats'), plainto_tsquery('simple', 'The Fat Rats'), plainto_tsquery('english', 'the fat-cat & rats!');
SELECT phraseto_tsquery('english', 'The fat cat of the rats'), phraseto_tsquery('simple', 'The fat rats'), phraseto_tsquery('english', 'the');
SELECT websearch_to_tsquery('english', '"fat rat" or cat -dog'), websearch_to_tsquery('english', 'the fat rats'), websearch_to_tsquery('simple', 'a or b c');
SELECT websearch_to_tsquery('english', 'cat - dog'), websearch_to_tsquery('english', 'cat -'), websearch_to_tsquery('english', '- - cat'), websearch_to_tsquery('english', 'cat -!dog');
SELECT websearch_to_tsquery('english', 'cat "the" dog'), websearch_to_tsquery('english', '"cat" or -dog'), websearch_to_tsquery('english', 'fat:* rat');
SELECT to_tsquery('Rats & Cats'), plainto_tsquery('Rats Cats'), phraseto_tsquery('Rats Cats');
-- Matching.
SELECT to_tsvector('english', 'a fat cat sat on a mat and ate a fat rat') @@ to_tsquery('english', 'cat & rat');
SELECT to_tsvector('english', 'a fat cat sat on a mat and ate a fat rat') @@ to_tsquery('english', 'cat & dog');
SELECT to_tsvector('english', 'a fat cat sat on a mat and ate a fat rat') @@ 'cat | dog', 'a fat cat'::tsvector @@ '!dog';
SELECT to_tsvector('english', 'a fat cat sat on a mat and ate a fat rat') @@ to_tsquery('english', 'fat <-> cat'),
  to_tsvector('english', 'a fat cat sat on a mat and ate a fat rat') @@ to_tsquery('english', 'cat <-> fat');
SELECT to_tsvector('english', 'a fat cat sat on a mat and ate a fat rat') @@ 'sat <3> mat',
  to_tsvector('english', 'a fat cat sat on a mat and ate a fat rat') @@ 'sat <2> mat';
SELECT to_tsvector('english', 'a fat cat sat on a mat and ate a fat rat') @@ 'fat <-> !cat',
  to_tsvector('english', 'a fat cat sat on a mat and ate a fat rat') @@ '!fat <-> cat';
SELECT to_tsvector('english', 'a fat cat sat on a mat and ate a fat rat') @@ '(fat | sat) <-> (cat | mat)',
  to_tsvector('english', 'a fat cat sat on a mat') @@ 'ca:*', to_tsvector('english', 'a fat cat') @@ 'do:*';
SELECT to_tsquery('english', 'rats') @@ to_tsvector('english', 'The rats'), 'fat:1A cat:2B'::tsvector @@ 'fat:A', 'fat:1A cat:2B'::tsvector @@ 'fat:B & cat';
SELECT 'The fat rats' @@ to_tsquery('english', 'rat'), 'The fat rats' @@ 'rats', 'The fat rats'::text @@ 'fat cats';
SELECT strip(to_tsvector('english', 'fat cat')) @@ 'fat & cat', strip(to_tsvector('english', 'fat cat')) @@ 'fat <-> cat';
SELECT 'a b'::tsvector @@ 'a:A', 'a b'::tsvector @@ '!a:A', 'a b'::tsvector @@ 'a:A <-> b', 'a:1 b'::tsvector @@ '!(a <-> b)';
SELECT to_tsvector('english', 'PostgreSQL 15.4 supports full-text search since version 8.3');
SELECT to_tsvector('english', 'full-text search') @@ to_tsquery('english', 'full-text <-> search'), to_tsvector('english', 'full-text search') @@ phraseto_tsquery('english', 'full text search');
SELECT 'x:1 y:1'::tsvector @@ 'x <0> y', 'x:1 y:2'::tsvector @@ 'x <0> y', to_tsvector('simple', 'a x c') @@ 'a <-> !b <-> c', to_tsvector('simple', 'a b c') @@ 'a <-> (x | b) <-> c';
SELECT to_tsvector('english', 'fat cat') @@ ''::tsquery, ''::tsvector @@ 'a'::tsquery;
-- The functions and operators.
SELECT length(to_tsvector('english', 'a fat cat sat on a mat')), length(''::tsvector), length('abc'::text);
SELECT strip('fat:2,4 cat:3 rat:5A'::tsvector), setweight('fat:2,4 cat:3 rat:5A'::tsvector, 'B'), setweight('fat:2'::tsvector, 'd');
SELECT 'fat:2,4 cat:3 rat:5A'::tsvector || 'fat:1 dog:2B'::tsvector, 'a b'::tsvector || 'c:1'::tsvector, ''::tsvector || 'x:3'::tsvector;
SELECT setweight(to_tsvector('english', 'The Title'), 'A') || setweight(to_tsvector('english', 'the body text'), 'D');
SELECT 'fat'::tsquery || 'rat'::tsquery, 'fat'::tsquery && 'rat | cat'::tsquery, 'a & b'::tsquery || ''::tsquery, !! 'a & b'::tsquery;
SELECT numnode('a & (b | !c)'::tsquery), numnode(''::tsquery), tsvector_to_array('fat:2 cat:3'::tsvector), array_to_tsvector(array['b', 'a', 'b']);
SELECT tsquery_phrase('fat'::tsquery, 'cat'::tsquery), tsquery_phrase('fat'::tsquery, 'cat'::tsquery, 3);
SELECT round(ts_rank(to_tsvector('english', 'a fat cat sat on a mat and ate a fat rat'), to_tsquery('english', 'cat & rat'))::numeric, 4);
SELECT round(ts_rank(to_tsvector('english', 'a fat cat sat on a mat and ate a fat rat'), to_tsquery('english', 'fat | rat'))::numeric, 4);
SELECT round(ts_rank(to_tsvector('english', 'fat fat cat'), to_tsquery('english', 'fat'))::numeric, 4),
  round(ts_rank(to_tsvector('english', 'fat fat cat'), to_tsquery('english', 'dog'))::numeric, 4);
SELECT 'a:1 b:2'::tsvector = 'b:2 a:1'::tsvector, 'a & b'::tsquery = 'a & b'::tsquery, 'a'::tsvector <> 'b'::tsvector;
-- The default configuration.
SHOW default_text_search_config;
SELECT get_current_ts_config();
SET default_text_search_config = 'simple';
SHOW default_text_search_config;
SELECT to_tsvector('The Rats'), to_tsquery('The & Rats'), 'The rats' @@ 'the', get_current_ts_config();
SET default_text_search_config = 'pg_catalog.english';
SELECT to_tsvector('The Rats'), to_tsquery('The & Rats');
RESET default_text_search_config;
SHOW default_text_search_config;
-- Columns, filtering a table.
CREATE TABLE docs (id int PRIMARY KEY, body text, tsv tsvector, q tsquery);
INSERT INTO docs (id, body) VALUES
  (1, 'The quick brown fox jumps over the lazy dog'),
  (2, 'A fat cat sat on a mat and ate a fat rat'),
  (3, 'Rats and cats: a study of urban animals'),
  (4, 'Jumping foxes are quicker than sleeping dogs'),
  (5, NULL);
UPDATE docs SET tsv = to_tsvector('english', body);
CREATE INDEX docs_tsv ON docs USING gin (tsv);
SELECT id, tsv FROM docs ORDER BY id;
SELECT id FROM docs WHERE tsv @@ to_tsquery('english', 'cat & rat') ORDER BY id;
SELECT id FROM docs WHERE tsv @@ to_tsquery('english', 'jump & (fox | dog)') ORDER BY id;
SELECT id FROM docs WHERE tsv @@ to_tsquery('english', 'quick:*') ORDER BY id;
SELECT id FROM docs WHERE tsv @@ plainto_tsquery('english', 'the lazy dogs') ORDER BY id;
SELECT id FROM docs WHERE tsv @@ phraseto_tsquery('english', 'fat rat') ORDER BY id;
SELECT id FROM docs WHERE to_tsvector('english', body) @@ websearch_to_tsquery('english', 'cat -mat') ORDER BY id;
SELECT id FROM docs WHERE NOT (tsv @@ to_tsquery('english', 'cat')) ORDER BY id;
SELECT id, tsv @@ 'dog'::tsquery AS has_dog FROM docs ORDER BY id;
SELECT id, round(ts_rank(tsv, to_tsquery('english', 'fox | dog | cat'))::numeric, 4) AS rank FROM docs WHERE tsv @@ to_tsquery('english', 'fox | dog | cat') ORDER BY rank DESC, id;
UPDATE docs SET q = to_tsquery('english', 'fox & dog') WHERE id = 1;
UPDATE docs SET q = 'cat <-> sat'::tsquery WHERE id = 2;
SELECT id, q FROM docs WHERE q IS NOT NULL ORDER BY id;
SELECT a.id, b.id FROM docs a JOIN docs b ON b.tsv @@ a.q ORDER BY a.id, b.id;
INSERT INTO docs VALUES (6, 'typed', 'typed:1 tsvector:2'::tsvector, 'typed & !untyped');
INSERT INTO docs VALUES (7, 'literal', 'literal:1A', 'lit:*');
SELECT id, tsv, q, tsv @@ q FROM docs WHERE id >= 6 ORDER BY id;
SELECT count(*) FROM docs WHERE tsv @@ 'typed | literal';
CREATE TABLE vecs AS SELECT id, tsv FROM docs WHERE id <= 2;
SELECT id, tsv FROM vecs ORDER BY id;
-- NULLs.
SELECT to_tsvector(NULL), to_tsvector('english', NULL), to_tsquery(NULL), NULL::tsvector @@ 'a'::tsquery, 'a'::tsvector @@ NULL::tsquery;
SELECT length(NULL::tsvector), strip(NULL), setweight(NULL, 'A'), NULL::tsvector || 'a'::tsvector;
-- Differences: other token types of PostgreSQL's parser, other
-- configurations (see docs/sql-compatibility.md).
SELECT to_tsvector('simple', 'mail foo@example.com or see http://example.com/a/b.html <b>bold</b> 1e5');
SELECT to_tsvector('french', 'les chats');
-- Errors.
SELECT to_tsvector('nosuch_config', 'les chats');
SELECT to_tsquery('nosuch', 'a');
SELECT 'nosuch'::regconfig;
SET default_text_search_config = 'nosuch';
SELECT to_tsquery('english', 'fat &');
SELECT to_tsquery('english', '(fat');
SELECT 'fat rat'::tsquery;
SELECT '& a'::tsquery;
SELECT 'a:0'::tsvector;
SELECT $$'unterminated$$::tsvector;
SELECT setweight('a:1'::tsvector, 'X');
SELECT to_tsvector(42);
SELECT 'a'::tsvector @@ 42;
SELECT 'a'::tsvector + 'b'::tsvector;
INSERT INTO docs (id, tsv) VALUES (8, 'a & b');
