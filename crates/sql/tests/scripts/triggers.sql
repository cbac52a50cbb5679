-- Triggers: BEFORE and AFTER, per row and per statement, on INSERT,
-- UPDATE [OF], DELETE and TRUNCATE; WHEN; NEW, OLD and the TG_ variables;
-- transition tables; enabling, disabling and dropping; and the errors.
CREATE TABLE account (id int PRIMARY KEY, owner text NOT NULL, balance numeric(12,2) NOT NULL DEFAULT 0, updated int NOT NULL DEFAULT 0);
CREATE TABLE audit (seq serial PRIMARY KEY, tg text, op text, level text, tbl text, old_id int, new_id int, note text);

-- An AFTER ROW trigger that writes an audit row for each change.
CREATE FUNCTION audit_row() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'DELETE' THEN
    INSERT INTO audit (tg, op, level, tbl, old_id) VALUES (TG_NAME, TG_OP, TG_LEVEL, TG_TABLE_NAME, OLD.id);
    RETURN OLD;
  ELSIF TG_OP = 'UPDATE' THEN
    INSERT INTO audit (tg, op, level, tbl, old_id, new_id, note) VALUES (TG_NAME, TG_OP, TG_LEVEL, TG_TABLE_NAME, OLD.id, NEW.id, OLD.balance || ' -> ' || NEW.balance);
    RETURN NEW;
  END IF;
  INSERT INTO audit (tg, op, level, tbl, new_id, note) VALUES (TG_NAME, TG_OP, TG_LEVEL, TG_TABLE_NAME, NEW.id, TG_WHEN);
  RETURN NEW;
END;
$$;
CREATE TRIGGER account_audit AFTER INSERT OR UPDATE OR DELETE ON account FOR EACH ROW EXECUTE FUNCTION audit_row();
INSERT INTO account (id, owner, balance) VALUES (1, 'ann', 100), (2, 'bob', 50);
UPDATE account SET balance = balance + 10 WHERE id = 2;
DELETE FROM account WHERE id = 1;
SELECT tg, op, level, tbl, old_id, new_id, note FROM audit ORDER BY seq;

-- A BEFORE ROW trigger changes NEW; one returning NULL skips the row.
CREATE FUNCTION stamp() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF NEW.balance < 0 THEN
    RAISE NOTICE 'skipping %', NEW.id;
    RETURN NULL;
  END IF;
  NEW.owner := upper(NEW.owner);
  IF TG_OP = 'UPDATE' THEN
    NEW.updated := OLD.updated + 1;
  END IF;
  RETURN NEW;
END;
$$;
CREATE TRIGGER account_stamp BEFORE INSERT OR UPDATE ON account FOR EACH ROW EXECUTE FUNCTION stamp();
INSERT INTO account (id, owner, balance) VALUES (3, 'cy', 5), (4, 'dee', -1) RETURNING id, owner, updated;
WITH u AS (UPDATE account SET balance = balance * 2 RETURNING id, owner, balance, updated) SELECT * FROM u ORDER BY id;
UPDATE account SET balance = -5 WHERE id = 3;
SELECT id, owner, balance, updated FROM account ORDER BY id;
SELECT count(*) FROM audit WHERE new_id = 4;

-- Triggers of one kind fire in name order; each BEFORE sees the NEW the
-- one before returned.
CREATE FUNCTION append_arg() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  NEW.owner := NEW.owner || TG_ARGV[0];
  RETURN NEW;
END;
$$;
CREATE TRIGGER b_second BEFORE INSERT ON account FOR EACH ROW EXECUTE FUNCTION append_arg('-b');
CREATE TRIGGER a_first BEFORE INSERT ON account FOR EACH ROW EXECUTE FUNCTION append_arg('-a');
INSERT INTO account (id, owner) VALUES (5, 'eve') RETURNING owner;

-- WHEN conditions and UPDATE OF columns.
CREATE TABLE price (id int PRIMARY KEY, amount int, label text);
CREATE TABLE price_log (id int, old_amount int, new_amount int);
CREATE FUNCTION log_price() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO price_log VALUES (NEW.id, OLD.amount, NEW.amount);
  RETURN NULL;
END;
$$;
CREATE TRIGGER price_changed AFTER UPDATE OF amount ON price FOR EACH ROW WHEN (OLD.amount IS DISTINCT FROM NEW.amount) EXECUTE FUNCTION log_price();
INSERT INTO price VALUES (1, 10, 'a'), (2, 20, 'b');
UPDATE price SET label = 'x';
UPDATE price SET amount = amount WHERE id = 1;
UPDATE price SET amount = amount + 1 WHERE id = 2;
SELECT * FROM price_log ORDER BY id;

-- Statement triggers fire once, with no rows too; TG_LEVEL says so.
CREATE TABLE events (note text);
CREATE FUNCTION note_statement() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO events VALUES (TG_WHEN || ' ' || TG_OP || ' ' || TG_LEVEL || ' on ' || TG_TABLE_SCHEMA || '.' || TG_TABLE_NAME || ' (' || TG_NARGS || ' args)');
  RETURN NULL;
END;
$$;
CREATE TRIGGER price_before BEFORE UPDATE OR DELETE ON price FOR EACH STATEMENT EXECUTE FUNCTION note_statement();
CREATE TRIGGER price_after AFTER UPDATE OR DELETE ON price EXECUTE FUNCTION note_statement();
UPDATE price SET label = 'y' WHERE id = 99;
DELETE FROM price WHERE id = 1;
SELECT note FROM events ORDER BY note;

-- Transition tables: an AFTER STATEMENT trigger reads the statement's rows.
CREATE TABLE summary (op text, n bigint, total bigint);
CREATE FUNCTION summarize_new() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO summary SELECT TG_OP, count(*), sum(amount) FROM new_rows;
  RETURN NULL;
END;
$$;
CREATE FUNCTION summarize_old() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO summary SELECT TG_OP, count(*), sum(amount) FROM old_rows;
  RETURN NULL;
END;
$$;
CREATE TRIGGER price_inserted AFTER INSERT ON price REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION summarize_new();
CREATE TRIGGER price_deleted AFTER DELETE ON price REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION summarize_old();
INSERT INTO price VALUES (10, 1, 'p'), (11, 2, 'q'), (12, 3, 'r');
DELETE FROM price WHERE id >= 11;
SELECT * FROM summary ORDER BY op;

-- TRUNCATE triggers.
CREATE TRIGGER price_truncated BEFORE TRUNCATE ON price FOR EACH STATEMENT EXECUTE FUNCTION note_statement();
TRUNCATE price;
SELECT note FROM events WHERE note LIKE '%TRUNCATE%';

-- A trigger's error undoes the statement, its own writes included.
CREATE FUNCTION refuse_big() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO audit (tg, note) VALUES (TG_NAME, 'refusing');
  IF NEW.balance > 1000 THEN
    RAISE EXCEPTION 'balance % too big', NEW.balance USING ERRCODE = 'check_violation';
  END IF;
  RETURN NEW;
END;
$$;
CREATE TRIGGER account_refuse BEFORE UPDATE ON account FOR EACH ROW EXECUTE FUNCTION refuse_big();
SELECT count(*) FROM audit WHERE note = 'refusing';
UPDATE account SET balance = 5000 WHERE id = 2;
SELECT count(*) FROM audit WHERE note = 'refusing';
SELECT balance FROM account WHERE id = 2;

-- Disabled triggers do not fire; ENABLE brings them back.
ALTER TABLE account DISABLE TRIGGER account_refuse;
UPDATE account SET balance = 5000 WHERE id = 2;
ALTER TABLE account ENABLE TRIGGER account_refuse;
UPDATE account SET balance = 6000 WHERE id = 2;
ALTER TABLE account DISABLE TRIGGER ALL;
INSERT INTO account (id, owner) VALUES (6, 'fay') RETURNING owner;
ALTER TABLE account ENABLE TRIGGER ALL;
ALTER TABLE account DISABLE TRIGGER no_such_trigger;

-- Recursion is bounded.
CREATE TABLE chain (n int);
CREATE FUNCTION chain_more() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO chain VALUES (NEW.n + 1);
  RETURN NEW;
END;
$$;
CREATE TRIGGER chain_on AFTER INSERT ON chain FOR EACH ROW EXECUTE FUNCTION chain_more();
INSERT INTO chain VALUES (1);
SELECT count(*) FROM chain;
CREATE OR REPLACE FUNCTION chain_more() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF NEW.n < 10 THEN
    INSERT INTO chain VALUES (NEW.n + 1);
  END IF;
  RETURN NEW;
END;
$$;
INSERT INTO chain VALUES (1);
SELECT count(*), max(n) FROM chain;

-- MERGE fires the triggers of the actions it can take.
CREATE TABLE stock (sku int PRIMARY KEY, qty int NOT NULL);
CREATE TABLE stock_log (op text, sku int, qty int);
CREATE FUNCTION log_stock() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_LEVEL = 'STATEMENT' THEN
    INSERT INTO stock_log VALUES (TG_WHEN || ' ' || TG_OP, NULL, NULL);
  ELSIF TG_OP = 'DELETE' THEN
    INSERT INTO stock_log VALUES (TG_OP, OLD.sku, OLD.qty);
  ELSE
    INSERT INTO stock_log VALUES (TG_OP, NEW.sku, NEW.qty);
  END IF;
  RETURN NULL;
END;
$$;
INSERT INTO stock VALUES (1, 10), (2, 0), (3, 5);
CREATE TRIGGER stock_rows AFTER INSERT OR UPDATE OR DELETE ON stock FOR EACH ROW EXECUTE FUNCTION log_stock();
CREATE TRIGGER stock_statements BEFORE INSERT OR UPDATE OR DELETE ON stock FOR EACH STATEMENT EXECUTE FUNCTION log_stock();
MERGE INTO stock s USING (VALUES (1, 5), (2, 0), (4, 7)) AS d(sku, qty) ON s.sku = d.sku WHEN MATCHED AND d.qty = 0 THEN DELETE WHEN MATCHED THEN UPDATE SET qty = s.qty + d.qty WHEN NOT MATCHED THEN INSERT VALUES (d.sku, d.qty);
SELECT * FROM stock_log ORDER BY op, sku;
SELECT * FROM stock ORDER BY sku;

-- Foreign-key actions fire the referencing table's triggers.
CREATE TABLE parent (id int PRIMARY KEY);
CREATE TABLE child (id int PRIMARY KEY, parent_id int REFERENCES parent ON DELETE CASCADE ON UPDATE SET NULL);
CREATE TABLE child_log (op text, id int, parent_id int);
CREATE FUNCTION log_child() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'DELETE' THEN
    INSERT INTO child_log VALUES (TG_OP, OLD.id, OLD.parent_id);
  ELSE
    INSERT INTO child_log VALUES (TG_OP, NEW.id, NEW.parent_id);
  END IF;
  RETURN NULL;
END;
$$;
CREATE TRIGGER child_changes AFTER UPDATE OR DELETE ON child FOR EACH ROW EXECUTE FUNCTION log_child();
INSERT INTO parent VALUES (1), (2);
INSERT INTO child VALUES (10, 1), (11, 1), (20, 2);
DELETE FROM parent WHERE id = 1;
UPDATE parent SET id = 3 WHERE id = 2;
SELECT * FROM child_log ORDER BY op, id;
SELECT * FROM child ORDER BY id;

-- Renaming a column a trigger names carries the trigger along; dropping
-- it needs CASCADE, which drops the trigger.
CREATE TABLE gauge (id int PRIMARY KEY, level int, note text);
CREATE TABLE gauge_log (id int);
CREATE FUNCTION log_gauge() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN INSERT INTO gauge_log VALUES (NEW.id); RETURN NULL; END; $$;
CREATE TRIGGER gauge_changed AFTER UPDATE OF level ON gauge FOR EACH ROW WHEN (NEW.level > OLD.level) EXECUTE FUNCTION log_gauge();
INSERT INTO gauge VALUES (1, 5, 'a');
ALTER TABLE gauge RENAME COLUMN level TO reading;
UPDATE gauge SET reading = 7;
UPDATE gauge SET reading = 6;
UPDATE gauge SET note = 'b';
SELECT * FROM gauge_log;
SELECT tgattr FROM pg_trigger WHERE tgname = 'gauge_changed';
ALTER TABLE gauge DROP COLUMN note;
ALTER TABLE gauge DROP COLUMN reading;
ALTER TABLE gauge DROP COLUMN reading CASCADE;
SELECT count(*) FROM pg_trigger WHERE tgname = 'gauge_changed';

-- The catalog.
SELECT tgname, tgtype, tgenabled, tgnargs FROM pg_trigger WHERE tgrelid = 'account'::regclass ORDER BY tgname;
SELECT relhastriggers FROM pg_class WHERE relname IN ('account', 'events') ORDER BY relname;
SELECT pg_get_triggerdef(oid) FROM pg_trigger WHERE tgname = 'account_audit';
SELECT pg_get_triggerdef(oid) FROM pg_trigger WHERE tgname = 'b_second';
SELECT event_object_table, trigger_name, event_manipulation, action_timing, action_orientation FROM information_schema.triggers WHERE event_object_table = 'price' ORDER BY trigger_name, event_manipulation;

-- Errors.
CREATE TRIGGER account_audit AFTER INSERT ON account FOR EACH ROW EXECUTE FUNCTION audit_row();
CREATE TRIGGER t_missing AFTER INSERT ON account FOR EACH ROW EXECUTE FUNCTION no_such_function();
CREATE FUNCTION not_a_trigger() RETURNS int LANGUAGE plpgsql AS $$ BEGIN RETURN 1; END; $$;
CREATE TRIGGER t_wrong AFTER INSERT ON account FOR EACH ROW EXECUTE FUNCTION not_a_trigger();
CREATE TRIGGER t_table AFTER INSERT ON no_such_table FOR EACH ROW EXECUTE FUNCTION audit_row();
CREATE TRIGGER t_truncate AFTER TRUNCATE ON account FOR EACH ROW EXECUTE FUNCTION audit_row();
CREATE TRIGGER t_instead INSTEAD OF INSERT ON account FOR EACH ROW EXECUTE FUNCTION audit_row();
CREATE TRIGGER t_when AFTER INSERT ON account FOR EACH ROW WHEN (OLD.id > 0) EXECUTE FUNCTION audit_row();
CREATE TRIGGER t_when2 AFTER DELETE ON account FOR EACH ROW WHEN (NEW.id > 0) EXECUTE FUNCTION audit_row();
CREATE TRIGGER t_stmt_when AFTER INSERT ON account FOR EACH STATEMENT WHEN (NEW.id > 0) EXECUTE FUNCTION audit_row();
CREATE TRIGGER t_both AFTER INSERT OR DELETE ON account REFERENCING NEW TABLE AS n FOR EACH STATEMENT EXECUTE FUNCTION audit_row();
CREATE TRIGGER t_before_tt BEFORE INSERT ON account REFERENCING NEW TABLE AS n FOR EACH STATEMENT EXECUTE FUNCTION audit_row();
SELECT audit_row();
CREATE FUNCTION with_args(x int) RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RETURN NULL; END; $$;
CREATE FUNCTION no_return() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN NEW.id := 1; END; $$;
CREATE TABLE nr (id int);
CREATE TRIGGER nr_t BEFORE INSERT ON nr FOR EACH ROW EXECUTE FUNCTION no_return();
INSERT INTO nr VALUES (5);
DROP TRIGGER nr_t ON nr;
DROP TRIGGER nr_t ON nr;
DROP TRIGGER IF EXISTS nr_t ON nr;
DROP FUNCTION audit_row();
DROP TABLE nr;

-- DROP FUNCTION ... CASCADE drops its triggers; dropping a table drops its own.
DROP FUNCTION note_statement() CASCADE;
SELECT tgname FROM pg_trigger WHERE tgrelid = 'price'::regclass ORDER BY tgname;
DROP TABLE price;
SELECT count(*) FROM pg_trigger WHERE tgname LIKE 'price%';
