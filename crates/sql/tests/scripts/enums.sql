-- Enum types: labels ordered as declared, stored in columns, keys and
-- arrays, changed with ALTER TYPE, and shown in the catalog.
CREATE TYPE mood AS ENUM ('sad', 'ok', 'happy');
CREATE TYPE mood AS ENUM ('x');
CREATE TYPE dup AS ENUM ('a', 'a');
CREATE TABLE people (id int PRIMARY KEY, name text, m mood);
INSERT INTO people VALUES (1, 'ann', 'happy'), (2, 'bob', 'sad'), (3, 'cy', 'ok'), (4, 'di', NULL);
INSERT INTO people VALUES (5, 'ed', 'angry');
INSERT INTO people VALUES (5, 'ed', 'Happy');
-- Declaration order, not alphabetical.
SELECT name, m FROM people ORDER BY m, id;
SELECT name, m FROM people ORDER BY m DESC NULLS LAST, id;
SELECT name FROM people WHERE m > 'sad' ORDER BY id;
SELECT name FROM people WHERE m = 'ok';
SELECT name FROM people WHERE m IN ('sad', 'happy') ORDER BY id;
SELECT min(m), max(m), count(DISTINCT m) FROM people;
SELECT m, count(*) FROM people GROUP BY m ORDER BY m;
-- Casts to and from text.
SELECT 'ok'::mood, 'happy'::mood > 'ok'::mood AS later, CAST('sad' AS mood);
SELECT m::text, length(m::text) FROM people WHERE id = 1;
SELECT 'nope'::mood;
SELECT name FROM people WHERE m::text = 'happy';
SELECT ('ok'::text)::mood;
SELECT pg_typeof(m) FROM people WHERE id = 1;
-- enum_first, enum_last, enum_range.
SELECT enum_first(NULL::mood), enum_last(NULL::mood);
SELECT enum_range(NULL::mood);
SELECT enum_range('ok'::mood, NULL), enum_range(NULL, 'ok'::mood), enum_range('sad'::mood, 'ok'::mood);
SELECT enum_first(1);
-- Updates, keys and indexes.
UPDATE people SET m = 'ok' WHERE id = 4;
UPDATE people SET m = 'glum' WHERE id = 4;
SELECT id, m FROM people ORDER BY id;
CREATE TABLE moods (m mood PRIMARY KEY, note text);
INSERT INTO moods VALUES ('happy', 'h'), ('sad', 's'), ('ok', 'o');
INSERT INTO moods VALUES ('ok', 'again');
SELECT * FROM moods ORDER BY m;
SELECT note FROM moods WHERE m = 'sad';
SELECT note FROM moods WHERE m >= 'ok' ORDER BY m;
CREATE INDEX people_m ON people (m);
SELECT name FROM people WHERE m BETWEEN 'ok' AND 'happy' ORDER BY m, id;
CREATE INDEX people_m_hash ON people USING hash (m);
SELECT name FROM people WHERE m = 'happy';
SELECT p.name, o.note FROM people p JOIN moods o ON o.m = p.m ORDER BY p.id;
-- Arrays of an enum type.
CREATE TABLE history (id int PRIMARY KEY, ms mood[]);
INSERT INTO history VALUES (1, '{sad,ok}'), (2, ARRAY['happy'::mood, 'sad'::mood]), (3, '{}');
INSERT INTO history VALUES (4, '{sad,meh}');
SELECT id, ms, ms[1] FROM history ORDER BY id;
SELECT id FROM history WHERE 'sad' = ANY(ms) ORDER BY id;
-- ALTER TYPE ... ADD VALUE: BEFORE and AFTER keep declaration order.
ALTER TYPE mood ADD VALUE 'ecstatic';
ALTER TYPE mood ADD VALUE 'meh' BEFORE 'ok';
ALTER TYPE mood ADD VALUE 'content' AFTER 'ok';
ALTER TYPE mood ADD VALUE 'ok';
ALTER TYPE mood ADD VALUE IF NOT EXISTS 'ok';
ALTER TYPE mood ADD VALUE 'x' BEFORE 'missing';
SELECT enum_range(NULL::mood);
INSERT INTO people VALUES (5, 'ed', 'meh'), (6, 'fay', 'content'), (7, 'gus', 'ecstatic');
SELECT name, m FROM people ORDER BY m, id;
SELECT name FROM people WHERE m > 'meh' AND m < 'happy' ORDER BY m, id;
SELECT enumlabel, enumsortorder FROM pg_enum WHERE enumtypid = 'mood'::regtype ORDER BY enumsortorder;
-- ALTER TYPE ... RENAME VALUE changes stored values too.
ALTER TYPE mood RENAME VALUE 'sad' TO 'blue';
ALTER TYPE mood RENAME VALUE 'nope' TO 'x';
ALTER TYPE mood RENAME VALUE 'ok' TO 'happy';
SELECT id, m FROM people ORDER BY id;
SELECT id, ms FROM history ORDER BY id;
SELECT * FROM moods ORDER BY m;
SELECT name FROM people WHERE m = 'blue';
SELECT name FROM people WHERE m = 'sad';
-- The catalog.
SELECT typname, typtype, typcategory, typlen FROM pg_type WHERE typname IN ('mood', '_mood') ORDER BY typname;
SELECT format_type(atttypid, atttypmod) FROM pg_attribute WHERE attrelid = 'people'::regclass AND attname = 'm';
SELECT count(*) FROM pg_enum e JOIN pg_type t ON t.oid = e.enumtypid WHERE t.typname = 'mood';
-- Names: unknown types, schemas.
CREATE TABLE bad (m nosuchtype);
ALTER TYPE nosuchtype ADD VALUE 'x';
CREATE SCHEMA s;
CREATE TYPE s.color AS ENUM ('red', 'green');
CREATE TABLE s.paint (c s.color);
INSERT INTO s.paint VALUES ('green'), ('red');
SELECT c FROM s.paint ORDER BY c;
-- DDL in transaction blocks.
BEGIN;
CREATE TYPE size AS ENUM ('small', 'large');
CREATE TABLE boxes (s size);
INSERT INTO boxes VALUES ('large');
ROLLBACK;
SELECT 'small'::size;
BEGIN;
CREATE TYPE size AS ENUM ('small', 'large');
ALTER TYPE size ADD VALUE 'medium' BEFORE 'large';
CREATE TABLE boxes (s size);
COMMIT;
INSERT INTO boxes VALUES ('large'), ('medium'), ('small');
SELECT enum_range(NULL::size), enum_last(NULL::size);
SELECT s FROM boxes ORDER BY s DESC;
-- An enum type's label added in a block is gone when it rolls back.
BEGIN;
ALTER TYPE size ADD VALUE 'huge';
ROLLBACK;
SELECT enum_range(NULL::size);
INSERT INTO boxes VALUES ('huge');
-- DROP TYPE: refused while a column uses it.
DROP TYPE mood;
DROP TYPE mood RESTRICT;
DROP TYPE IF EXISTS nosuchtype;
DROP TYPE nosuchtype;
DROP TABLE history;
DROP TABLE moods;
DROP TYPE mood CASCADE;
SELECT * FROM people ORDER BY id;
SELECT 'ok'::mood;
DROP TYPE size;
DROP TABLE boxes;
DROP TYPE size;
DROP TABLE s.paint;
DROP TYPE s.color;
