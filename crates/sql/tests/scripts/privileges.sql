-- Privileges: owners, GRANT and REVOKE on tables, views, sequences,
-- schemas and functions, checked for the role a session runs as (42501).
CREATE ROLE app_owner;
CREATE ROLE app_reader;
CREATE ROLE app_writer;
-- Creating in public takes CREATE on it (PostgreSQL 15's default).
SET ROLE app_owner;
CREATE TABLE accounts (id int PRIMARY KEY, owner text, balance int);
RESET ROLE;
GRANT CREATE ON SCHEMA public TO app_owner;
SET ROLE app_owner;
CREATE TABLE accounts (id serial PRIMARY KEY, owner text, balance int);
INSERT INTO accounts (owner, balance) VALUES ('ann', 100), ('bob', 50);
CREATE VIEW rich AS SELECT owner, balance FROM accounts WHERE balance > 60;
CREATE MATERIALIZED VIEW account_count AS SELECT count(*) AS n FROM accounts;
CREATE FUNCTION total() RETURNS bigint LANGUAGE plpgsql AS $$ BEGIN RETURN (SELECT sum(balance) FROM accounts); END $$;
CREATE FUNCTION total_as_owner() RETURNS bigint LANGUAGE plpgsql SECURITY DEFINER AS $$ BEGIN RETURN (SELECT sum(balance) FROM accounts); END $$;
CREATE FUNCTION dynamic_total() RETURNS bigint LANGUAGE plpgsql AS $$ DECLARE n bigint; BEGIN EXECUTE 'SELECT sum(balance) FROM accounts' INTO n; RETURN n; END $$;
CREATE FUNCTION dynamic_total_as_owner() RETURNS bigint LANGUAGE plpgsql SECURITY DEFINER AS $$ DECLARE n bigint; BEGIN EXECUTE 'SELECT sum(balance) FROM accounts' INTO n; RETURN n; END $$;
SELECT relname, relacl FROM pg_class WHERE relname IN ('accounts', 'rich', 'accounts_id_seq') ORDER BY 1;
SELECT c.relname, pg_get_userbyid(c.relowner) FROM pg_class c WHERE c.relname IN ('accounts', 'rich', 'accounts_id_seq', 'accounts_pkey') ORDER BY 1;
SELECT tablename, tableowner FROM pg_tables WHERE tablename = 'accounts';
SELECT viewname, viewowner FROM pg_views WHERE viewname = 'rich';
SELECT proname, pg_get_userbyid(proowner), proacl FROM pg_proc WHERE proname = 'total';
-- Nobody else may read or write until granted.
SET ROLE app_reader;
SELECT * FROM accounts;
SELECT * FROM rich ORDER BY owner;
INSERT INTO accounts (owner, balance) VALUES ('eve', 1);
-- A function runs with its caller's privileges, unless SECURITY DEFINER.
SELECT total();
SELECT total_as_owner();
-- So does the dynamic SQL it runs.
SELECT dynamic_total();
SELECT dynamic_total_as_owner();
SELECT has_table_privilege('accounts', 'SELECT'), has_table_privilege('app_owner', 'accounts', 'SELECT, INSERT');
RESET ROLE;
SET ROLE app_owner;
GRANT SELECT ON accounts TO app_reader;
GRANT SELECT, INSERT, UPDATE ON TABLE accounts TO app_writer WITH GRANT OPTION;
GRANT USAGE ON SEQUENCE accounts_id_seq TO app_writer;
GRANT SELECT ON rich TO PUBLIC;
SELECT relname, relacl FROM pg_class WHERE relname IN ('accounts', 'rich', 'accounts_id_seq') ORDER BY 1;
RESET ROLE;
SET ROLE app_reader;
SELECT id, owner, balance FROM accounts ORDER BY id;
SELECT * FROM rich ORDER BY owner;
UPDATE accounts SET balance = 0;
DELETE FROM accounts;
TRUNCATE accounts;
SELECT has_table_privilege('accounts', 'SELECT'), has_table_privilege('accounts', 'UPDATE'), has_table_privilege('app_writer', 'accounts', 'INSERT WITH GRANT OPTION');
-- Changing what one does not own.
ALTER TABLE accounts ADD COLUMN note text;
CREATE INDEX accounts_owner ON accounts (owner);
DROP TABLE accounts;
DROP VIEW rich;
REFRESH MATERIALIZED VIEW account_count;
CREATE TABLE copied AS SELECT 1 AS x;
CREATE MATERIALIZED VIEW copied AS SELECT 1 AS x;
GRANT SELECT ON accounts TO app_writer;
RESET ROLE;
-- A writer inserts (the serial's sequence needs USAGE), updates with a
-- WHERE (which reads, so needs SELECT: held), and passes SELECT on.
SET ROLE app_writer;
INSERT INTO accounts (owner, balance) VALUES ('cy', 70);
UPDATE accounts SET balance = balance + 1 WHERE owner = 'cy';
DELETE FROM accounts WHERE owner = 'cy';
GRANT SELECT ON accounts TO app_reader;
GRANT DELETE ON accounts TO app_reader;
SELECT relacl FROM pg_class WHERE relname = 'accounts';
RESET ROLE;
-- REVOKE: what the writer passed on goes with its grant option (CASCADE).
SET ROLE app_owner;
REVOKE GRANT OPTION FOR SELECT ON accounts FROM app_writer;
REVOKE GRANT OPTION FOR SELECT ON accounts FROM app_writer CASCADE;
SELECT relacl FROM pg_class WHERE relname = 'accounts';
REVOKE ALL ON accounts FROM app_reader;
REVOKE EXECUTE ON FUNCTION total() FROM PUBLIC;
SELECT proacl FROM pg_proc WHERE proname = 'total';
RESET ROLE;
SET ROLE app_reader;
SELECT count(*) FROM accounts;
SELECT * FROM rich ORDER BY owner;
SELECT total();
RESET ROLE;
-- A prepared statement is checked again once privileges change.
SET ROLE app_writer;
PREPARE q AS SELECT count(*) FROM accounts;
EXECUTE q;
RESET ROLE;
SET ROLE app_owner;
REVOKE SELECT ON accounts FROM app_writer;
RESET ROLE;
SET ROLE app_writer;
EXECUTE q;
DEALLOCATE q;
RESET ROLE;
-- Schemas: USAGE and CREATE.
CREATE SCHEMA ledger;
CREATE TABLE ledger.entries (id int PRIMARY KEY, amount int);
SET ROLE app_owner;
CREATE TABLE ledger.mine (id int);
RESET ROLE;
GRANT CREATE ON SCHEMA ledger TO app_owner;
SET ROLE app_owner;
CREATE TABLE ledger.mine (id int);
RESET ROLE;
SELECT has_schema_privilege('app_owner', 'ledger', 'CREATE'), has_schema_privilege('app_reader', 'ledger', 'USAGE'), has_schema_privilege('app_reader', 'public', 'USAGE');
-- Invalid grants.
GRANT INSERT ON SCHEMA ledger TO app_reader;
GRANT SELECT ON accounts TO nobody_at_all;
GRANT SELECT ON no_such_table TO app_reader;
GRANT SELECT ON accounts TO PUBLIC WITH GRANT OPTION;
-- Owners: a superuser gives objects away; others may not.
ALTER TABLE accounts OWNER TO app_writer;
SELECT pg_get_userbyid(relowner), relacl FROM pg_class WHERE relname = 'accounts';
SET ROLE app_owner;
ALTER TABLE accounts OWNER TO app_owner;
ALTER VIEW rich OWNER TO app_reader;
RESET ROLE;
-- A role that owns objects or holds privileges cannot be dropped.
DROP ROLE app_writer;
-- Only superusers manage roles.
SET ROLE app_reader;
CREATE ROLE sneaky;
ALTER ROLE app_reader SUPERUSER;
-- Nor does anyone else decide what goes to the server's log.
SET log_min_duration_statement = 0;
SELECT set_config('log_min_duration_statement', '0', false);
RESET log_min_duration_statement;
SHOW log_min_duration_statement;
SET ROLE app_owner;
RESET ROLE;
-- A trigger's statements are checked against the role that fires it (or
-- the function's owner, SECURITY DEFINER); CREATE TRIGGER needs the
-- TRIGGER privilege.
CREATE TABLE watched (id int PRIMARY KEY);
CREATE TABLE watch_log (id int);
CREATE FUNCTION watch() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN INSERT INTO watch_log VALUES (NEW.id); RETURN NULL; END; $$;
CREATE FUNCTION watch_as_owner() RETURNS trigger LANGUAGE plpgsql SECURITY DEFINER AS $$ BEGIN INSERT INTO watch_log VALUES (-NEW.id); RETURN NULL; END; $$;
CREATE TRIGGER watched_log AFTER INSERT ON watched FOR EACH ROW EXECUTE FUNCTION watch();
GRANT INSERT ON watched TO app_writer;
SET ROLE app_writer;
INSERT INTO watched VALUES (1);
CREATE TRIGGER sneaky AFTER INSERT ON watched FOR EACH ROW EXECUTE FUNCTION watch();
RESET ROLE;
DROP TRIGGER watched_log ON watched;
CREATE TRIGGER watched_log AFTER INSERT ON watched FOR EACH ROW EXECUTE FUNCTION watch_as_owner();
SET ROLE app_writer;
INSERT INTO watched VALUES (2);
RESET ROLE;
SELECT id FROM watch_log;
-- A view's INSTEAD OF trigger: the write needs the privilege on the
-- view, and the trigger's statements are checked against the role that
-- fires it, or the function's owner.
CREATE VIEW watch_view AS SELECT id FROM watch_log GROUP BY id;
CREATE FUNCTION watch_view_insert() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN INSERT INTO watch_log VALUES (NEW.id * 10); RETURN NEW; END; $$;
CREATE TRIGGER watch_view_insert INSTEAD OF INSERT ON watch_view FOR EACH ROW EXECUTE FUNCTION watch_view_insert();
SET ROLE app_writer;
INSERT INTO watch_view VALUES (3);
RESET ROLE;
GRANT INSERT ON watch_view TO app_writer;
SET ROLE app_writer;
INSERT INTO watch_view VALUES (3);
RESET ROLE;
CREATE OR REPLACE FUNCTION watch_view_insert() RETURNS trigger LANGUAGE plpgsql SECURITY DEFINER AS $$ BEGIN INSERT INTO watch_log VALUES (NEW.id * 10); RETURN NEW; END; $$;
SET ROLE app_writer;
INSERT INTO watch_view VALUES (4);
RESET ROLE;
SELECT id FROM watch_log ORDER BY id;
-- And TRUNCATE's triggers.
CREATE FUNCTION watch_truncate() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN INSERT INTO watch_log VALUES (0); RETURN NULL; END; $$;
CREATE TRIGGER watched_truncate AFTER TRUNCATE ON watched FOR EACH STATEMENT EXECUTE FUNCTION watch_truncate();
GRANT TRUNCATE ON watched TO app_writer;
SET ROLE app_writer;
TRUNCATE watched;
RESET ROLE;
SELECT count(*) FROM watched;
GRANT INSERT ON watch_log TO app_writer;
SET ROLE app_writer;
TRUNCATE watched;
RESET ROLE;
SELECT count(*) FROM watched;
SELECT id FROM watch_log ORDER BY id;
DROP FUNCTION watch_truncate() CASCADE;
DROP VIEW watch_view;
DROP FUNCTION watch_view_insert();
DROP TABLE watched, watch_log;
DROP FUNCTION watch();
DROP FUNCTION watch_as_owner();
DROP TABLE ledger.entries, ledger.mine;
DROP SCHEMA ledger;
DROP VIEW rich;
DROP MATERIALIZED VIEW account_count;
DROP FUNCTION total();
DROP FUNCTION total_as_owner();
DROP FUNCTION dynamic_total(), dynamic_total_as_owner();
DROP TABLE accounts;
-- A foreign key's action runs as the referencing table's owner: its
-- BEFORE triggers there need that owner's privileges; its AFTER triggers
-- run at the end of the statement, as the statement's role.
CREATE TABLE fk_parent (id int PRIMARY KEY);
CREATE TABLE fk_log (id int, what text);
GRANT REFERENCES ON fk_parent TO app_owner;
SET ROLE app_owner;
CREATE TABLE fk_child (id int PRIMARY KEY, parent int REFERENCES fk_parent ON DELETE CASCADE ON UPDATE SET NULL);
CREATE FUNCTION fk_child_noted() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO fk_log VALUES (OLD.id, TG_WHEN || ' ' || TG_OP);
  IF TG_OP = 'DELETE' THEN
    RETURN OLD;
  END IF;
  RETURN NEW;
END;
$$;
CREATE TRIGGER fk_child_after AFTER DELETE OR UPDATE ON fk_child FOR EACH ROW EXECUTE FUNCTION fk_child_noted();
RESET ROLE;
INSERT INTO fk_parent VALUES (1), (2), (3);
INSERT INTO fk_child VALUES (10, 1), (20, 2), (30, 3);
DELETE FROM fk_parent WHERE id = 1;
SELECT * FROM fk_log ORDER BY id;
SET ROLE app_owner;
CREATE TRIGGER fk_child_before BEFORE DELETE OR UPDATE ON fk_child FOR EACH ROW EXECUTE FUNCTION fk_child_noted();
RESET ROLE;
DELETE FROM fk_parent WHERE id = 2;
UPDATE fk_parent SET id = 4 WHERE id = 3;
GRANT INSERT ON fk_log TO app_owner;
DELETE FROM fk_parent WHERE id = 2;
UPDATE fk_parent SET id = 4 WHERE id = 3;
SELECT * FROM fk_log ORDER BY id, what;
SELECT * FROM fk_child ORDER BY id;
DROP TABLE fk_child;
DROP TABLE fk_parent, fk_log;
DROP FUNCTION fk_child_noted();
REVOKE ALL ON SCHEMA public FROM app_owner;
DROP ROLE app_owner, app_reader, app_writer;
