-- A standby serves reads and refuses every write, as PostgreSQL's hot
-- standby does. `\standby on` and `\standby off` turn the database into a
-- standby and back between statements.
--
-- Run against PostgreSQL 15 (a pg_basebackup standby, then its primary),
-- every statement fails or succeeds alike, with the same SQLSTATE, except
-- that PostgreSQL shows default_transaction_read_only off on a standby
-- (Centum reports it on, as its server does to clients), names a
-- writable CTE's refusal after the statement around it (SELECT), and
-- keeps currval per standby session.
CREATE TABLE t (id int PRIMARY KEY, v text DEFAULT 'x', CHECK (id > 0));
CREATE SEQUENCE s;
CREATE VIEW tv AS SELECT id, v FROM t;
CREATE FUNCTION twice(n int) RETURNS int LANGUAGE plpgsql AS $$ BEGIN RETURN n * 2; END; $$;
CREATE PROCEDURE add_row(n int) LANGUAGE plpgsql AS $$ BEGIN INSERT INTO t VALUES (n, 'p'); END; $$;
CREATE PROCEDURE count_rows() LANGUAGE plpgsql AS $$ BEGIN RAISE NOTICE 'rows: %', (SELECT count(*) FROM t); END; $$;
CREATE FUNCTION stamp() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN NEW.v := upper(NEW.v); RETURN NEW; END; $$;
CREATE TRIGGER t_stamp BEFORE UPDATE ON t FOR EACH ROW EXECUTE FUNCTION stamp();
INSERT INTO t VALUES (1, 'one'), (2, 'two');
SELECT nextval('s');
SELECT pg_is_in_recovery();
SHOW transaction_read_only;
SHOW default_transaction_read_only;
SHOW in_hot_standby;
-- A block open when the database turns is refused at its next write.
BEGIN;
INSERT INTO t VALUES (3, 'three');
\standby on
INSERT INTO t VALUES (4, 'four');
ROLLBACK;
SELECT pg_is_in_recovery();
SHOW transaction_read_only;
SHOW default_transaction_read_only;
SHOW in_hot_standby;
SELECT current_setting('transaction_read_only'), current_setting('default_transaction_read_only');
SELECT name, setting FROM pg_settings WHERE name IN ('transaction_read_only', 'default_transaction_read_only', 'in_hot_standby') ORDER BY name;
-- Reads.
SELECT * FROM t ORDER BY id;
SELECT * FROM tv ORDER BY id;
SELECT twice(21);
SELECT last_value, is_called FROM s;
SELECT currval('s');
CALL count_rows();
BEGIN ISOLATION LEVEL REPEATABLE READ;
SHOW transaction_read_only;
SELECT count(*) FROM t;
COMMIT;
-- Rows.
INSERT INTO t VALUES (3, 'three');
UPDATE t SET v = 'uno' WHERE id = 1;
DELETE FROM t WHERE id = 2;
MERGE INTO t USING (VALUES (1)) AS src(id) ON t.id = src.id WHEN MATCHED THEN DELETE;
INSERT INTO tv VALUES (4, 'four');
WITH d AS (DELETE FROM t RETURNING id) SELECT count(*) FROM d;
SELECT * FROM t WHERE id = 1 FOR UPDATE;
SELECT * FROM t WHERE id = 1 FOR SHARE;
SELECT * FROM t WHERE id = 99 FOR UPDATE;
CALL add_row(5);
EXPLAIN ANALYZE INSERT INTO t VALUES (6, 'six');
-- Sequences.
SELECT nextval('s');
SELECT setval('s', 10);
-- Schema, roles, privileges.
CREATE TABLE u (id int);
CREATE TEMPORARY TABLE tmp (id int);
CREATE TABLE u AS SELECT 1 AS x;
CREATE INDEX t_v ON t (v);
ALTER TABLE t ADD COLUMN w int;
ALTER INDEX t_pkey RENAME TO t_key;
DROP TABLE t;
TRUNCATE t;
CREATE SEQUENCE s2;
ALTER SEQUENCE s RESTART;
DROP SEQUENCE s;
CREATE VIEW v2 AS SELECT 1 AS one;
CREATE MATERIALIZED VIEW mv AS SELECT 1 AS one;
DROP VIEW tv;
CREATE SCHEMA sc;
CREATE ROLE someone;
CREATE USER somebody;
GRANT SELECT ON t TO PUBLIC;
REVOKE SELECT ON t FROM PUBLIC;
COMMENT ON TABLE t IS 'rows';
CREATE FUNCTION one() RETURNS int LANGUAGE plpgsql AS $$ BEGIN RETURN 1; END; $$;
CREATE PROCEDURE nothing() LANGUAGE plpgsql AS $$ BEGIN END; $$;
DROP FUNCTION twice;
DROP PROCEDURE add_row;
CREATE TYPE mood AS ENUM ('calm', 'busy');
CREATE TRIGGER t_stamp2 BEFORE INSERT ON t FOR EACH ROW EXECUTE FUNCTION stamp();
DROP TRIGGER t_stamp ON t;
CREATE PUBLICATION everything FOR ALL TABLES;
-- What a READ ONLY transaction may do but a standby may not.
LISTEN ch;
NOTIFY ch;
SELECT pg_notify('ch', 'payload');
VACUUM;
ANALYZE;
BEGIN;
LOCK TABLE t IN ACCESS EXCLUSIVE MODE;
ROLLBACK;
-- What a standby allows.
UNLISTEN ch;
BEGIN;
LOCK TABLE t IN ACCESS SHARE MODE;
COMMIT;
SELECT pg_advisory_lock(7), pg_advisory_unlock(7);
PREPARE ins AS INSERT INTO t VALUES ($1, 'prepared');
EXECUTE ins(8);
DEALLOCATE ins;
EXPLAIN INSERT INTO t VALUES (6, 'six');
SET search_path = public;
-- No transaction turns READ WRITE.
BEGIN READ WRITE;
COMMIT;
SET transaction_read_only = off;
SET TRANSACTION READ WRITE;
BEGIN;
SET transaction_read_only = off;
ROLLBACK;
SET default_transaction_read_only = off;
SHOW default_transaction_read_only;
SET SESSION CHARACTERISTICS AS TRANSACTION READ WRITE;
SHOW transaction_read_only;
\standby off
-- A primary again: the same session writes.
SELECT pg_is_in_recovery();
SHOW transaction_read_only;
SHOW default_transaction_read_only;
SHOW in_hot_standby;
INSERT INTO t VALUES (3, 'three');
UPDATE t SET v = 'uno' WHERE id = 1;
SELECT nextval('s');
CREATE TABLE u (id int);
CALL add_row(5);
SELECT * FROM t ORDER BY id;
-- default_transaction_read_only on a primary.
SET default_transaction_read_only = on;
SHOW default_transaction_read_only;
SHOW transaction_read_only;
INSERT INTO t VALUES (9, 'nine');
SELECT nextval('s');
DROP TABLE u;
VACUUM;
LISTEN ch;
UNLISTEN ch;
BEGIN;
SHOW transaction_read_only;
SET TRANSACTION READ WRITE;
SHOW transaction_read_only;
INSERT INTO t VALUES (9, 'nine');
COMMIT;
BEGIN READ WRITE;
INSERT INTO t VALUES (10, 'ten');
COMMIT;
BEGIN;
SELECT count(*) FROM t;
SET TRANSACTION READ WRITE;
ROLLBACK;
BEGIN;
SAVEPOINT a;
SET transaction_read_only = off;
ROLLBACK;
SET default_transaction_read_only = off;
BEGIN READ ONLY;
SET transaction_read_only = off;
INSERT INTO t VALUES (11, 'eleven');
COMMIT;
BEGIN;
SET transaction_read_only = on;
SHOW transaction_read_only;
DELETE FROM t;
ROLLBACK;
SET SESSION CHARACTERISTICS AS TRANSACTION READ ONLY;
SHOW default_transaction_read_only;
DELETE FROM t;
RESET default_transaction_read_only;
SHOW default_transaction_read_only;
SET default_transaction_read_only = maybe;
SELECT id, v FROM t ORDER BY id;
