-- INSTEAD OF triggers on views: INSERT, UPDATE and DELETE on a view that
-- is not simple, carried out by its triggers; what counts as written and
-- what RETURNING reads; the view's statement triggers; the catalog; and
-- the errors.
CREATE TABLE customer (id int PRIMARY KEY, name text NOT NULL);
CREATE TABLE orders (id int PRIMARY KEY, customer_id int NOT NULL REFERENCES customer, amount numeric(10,2) NOT NULL);
CREATE TABLE trail (seq serial PRIMARY KEY, note text);
INSERT INTO customer VALUES (1, 'ann'), (2, 'bob');
INSERT INTO orders VALUES (10, 1, 5.00), (11, 2, 7.50);
-- A join: not automatically updatable.
CREATE VIEW order_lines AS SELECT o.id, c.name AS customer, o.amount, o.amount * 2 AS doubled FROM orders o JOIN customer c ON c.id = o.customer_id;
INSERT INTO order_lines (id, customer, amount) VALUES (12, 'ann', 1);

-- One function serves all three events; it writes to the tables under
-- the view, changes NEW, and skips rows by returning NULL.
CREATE FUNCTION order_lines_write() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  cid int;
BEGIN
  INSERT INTO trail (note) VALUES (TG_NAME || ' ' || TG_OP || ' ' || TG_WHEN || ' ' || TG_LEVEL || ' ' || TG_TABLE_NAME);
  IF TG_OP = 'INSERT' THEN
    IF NEW.amount < 0 THEN
      RETURN NULL;
    END IF;
    SELECT id INTO cid FROM customer WHERE name = NEW.customer;
    IF cid IS NULL THEN
      cid := (SELECT coalesce(max(id), 0) + 1 FROM customer);
      INSERT INTO customer VALUES (cid, NEW.customer);
    END IF;
    INSERT INTO orders VALUES (NEW.id, cid, NEW.amount);
    NEW.doubled := NEW.amount * 2;
    RETURN NEW;
  ELSIF TG_OP = 'UPDATE' THEN
    IF NEW.customer <> OLD.customer THEN
      RAISE EXCEPTION 'cannot move order % to %', OLD.id, NEW.customer;
    END IF;
    UPDATE orders SET id = NEW.id, amount = NEW.amount WHERE id = OLD.id;
    NEW.doubled := NEW.amount * 2;
    RETURN NEW;
  END IF;
  IF OLD.amount > 100 THEN
    RETURN NULL;
  END IF;
  DELETE FROM orders WHERE id = OLD.id;
  RETURN OLD;
END;
$$;
CREATE TRIGGER order_lines_write INSTEAD OF INSERT OR UPDATE OR DELETE ON order_lines FOR EACH ROW EXECUTE FUNCTION order_lines_write();
INSERT INTO order_lines (id, customer, amount) VALUES (12, 'ann', 1), (13, 'cy', 2.5), (14, 'bob', -1) RETURNING *;
INSERT INTO order_lines VALUES (15, 'dee', '3.25', 0);
INSERT INTO order_lines (amount, customer, id) SELECT 4, 'ann', 16;
SELECT * FROM order_lines ORDER BY id;
SELECT * FROM customer ORDER BY id;
WITH u AS (UPDATE order_lines SET amount = amount + 1 WHERE customer = 'ann' RETURNING id, amount, doubled) SELECT * FROM u ORDER BY id;
UPDATE order_lines SET id = 20, amount = '9.99' WHERE id = 13;
UPDATE order_lines SET customer = 'bob' WHERE id = 10;
UPDATE order_lines SET amount = 500 WHERE id = 11;
DELETE FROM order_lines WHERE id IN (11, 12) RETURNING id, customer;
DELETE FROM order_lines WHERE id = 999;
SELECT * FROM order_lines ORDER BY id;
SELECT note, count(*) FROM trail GROUP BY note ORDER BY note;

-- UPDATE ... FROM and DELETE ... USING join each view row to the other
-- tables; a row that joins none is left alone.
CREATE TABLE bonus (customer text PRIMARY KEY, extra numeric);
INSERT INTO bonus VALUES ('ann', 0.5), ('cy', 1), ('nobody', 9);
WITH u AS (UPDATE order_lines o SET amount = o.amount + b.extra FROM bonus b WHERE b.customer = o.customer RETURNING o.id, o.amount, b.extra) SELECT * FROM u ORDER BY id;
DELETE FROM order_lines USING bonus b WHERE b.customer = order_lines.customer AND b.extra = 1 RETURNING order_lines.id, b.customer;
SELECT id, customer, amount FROM order_lines ORDER BY id;

-- Triggers of a view fire in name order; each sees the NEW the one before
-- returned.
CREATE FUNCTION first_pass() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN NEW.customer := upper(NEW.customer); RETURN NEW; END; $$;
CREATE TRIGGER a_first INSTEAD OF INSERT ON order_lines FOR EACH ROW EXECUTE FUNCTION first_pass();
INSERT INTO order_lines (id, customer, amount) VALUES (30, 'eve', 1) RETURNING customer;
SELECT name FROM customer ORDER BY id;
DROP TRIGGER a_first ON order_lines;

-- Statement triggers on a view fire around a write its INSTEAD OF
-- triggers carry out; UPDATE OF columns is honoured.
CREATE FUNCTION note_statement() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE NOTICE '% % % on %', TG_WHEN, TG_LEVEL, TG_OP, TG_TABLE_NAME; RETURN NULL; END; $$;
CREATE TRIGGER order_lines_before BEFORE INSERT OR UPDATE OR DELETE ON order_lines FOR EACH STATEMENT EXECUTE FUNCTION note_statement();
CREATE TRIGGER order_lines_after AFTER UPDATE OF amount ON order_lines FOR EACH STATEMENT EXECUTE FUNCTION note_statement();
UPDATE order_lines SET amount = 6 WHERE id = 16;
UPDATE order_lines SET id = 17 WHERE id = 16;
DELETE FROM order_lines WHERE false;

-- A write whose trigger fails leaves nothing behind, whichever rows it
-- had written before.
SELECT count(*), sum(amount) FROM order_lines;
UPDATE order_lines SET amount = amount + 1, customer = CASE WHEN id = 15 THEN 'zed' ELSE customer END;
SELECT count(*), sum(amount) FROM order_lines;

-- The writes commit or roll back with the statement's transaction.
BEGIN;
INSERT INTO order_lines (id, customer, amount) VALUES (40, 'fay', 1);
ROLLBACK;
SELECT count(*) FROM customer WHERE name = 'fay';

-- In a data-modifying WITH, and from PL/pgSQL.
WITH w AS (INSERT INTO order_lines (id, customer, amount) VALUES (41, 'gus', 2) RETURNING id, doubled) SELECT * FROM w;
CREATE FUNCTION add_line(i int, c text, a numeric) RETURNS int LANGUAGE plpgsql AS $$
DECLARE
  n int;
BEGIN
  INSERT INTO order_lines (id, customer, amount) VALUES (i, c, a);
  GET DIAGNOSTICS n = ROW_COUNT;
  RETURN n;
END;
$$;
SELECT add_line(42, 'gus', 3), add_line(43, 'gus', -3);

-- A simple view with an INSTEAD OF trigger: the trigger, not the
-- rewrite onto its table, takes the write; the events it lacks are still
-- rewritten.
CREATE VIEW cheap AS SELECT id, customer_id, amount FROM orders WHERE amount < 5;
CREATE FUNCTION cheap_insert() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN INSERT INTO orders VALUES (NEW.id, NEW.customer_id, least(NEW.amount, 4.99)); RETURN NEW; END; $$;
CREATE TRIGGER cheap_insert INSTEAD OF INSERT ON cheap FOR EACH ROW EXECUTE FUNCTION cheap_insert();
INSERT INTO cheap VALUES (50, 1, 80) RETURNING *;
UPDATE cheap SET amount = 1 WHERE id = 50;
SELECT * FROM orders WHERE id = 50;

-- ON CONFLICT DO NOTHING without a target means nothing on such a view.
INSERT INTO cheap VALUES (51, 1, 1) ON CONFLICT DO NOTHING;
INSERT INTO cheap VALUES (52, 1, 1) ON CONFLICT (id) DO NOTHING;

-- CREATE OR REPLACE VIEW keeps the triggers; DROP VIEW drops them.
CREATE OR REPLACE VIEW cheap AS SELECT id, customer_id, amount, amount * 100 AS cents FROM orders WHERE amount < 5;
INSERT INTO cheap VALUES (53, 2, 2, 0) RETURNING cents;
SELECT tgname FROM pg_trigger WHERE tgrelid = 'cheap'::regclass;

-- The catalog.
SELECT tgname, tgtype, tgenabled, tgattr FROM pg_trigger WHERE tgrelid = 'order_lines'::regclass ORDER BY tgname;
SELECT pg_get_triggerdef(oid) FROM pg_trigger WHERE tgrelid = 'order_lines'::regclass ORDER BY tgname;
SELECT relname, relhastriggers FROM pg_class WHERE relname IN ('order_lines', 'cheap', 'customer') ORDER BY relname;
SELECT trigger_name, event_manipulation, event_object_table, action_order, action_timing, action_orientation FROM information_schema.triggers WHERE event_object_table IN ('order_lines', 'cheap') ORDER BY 1, 2;

-- Errors.
CREATE TRIGGER bad BEFORE INSERT ON order_lines FOR EACH ROW EXECUTE FUNCTION order_lines_write();
CREATE TRIGGER bad AFTER DELETE ON order_lines FOR EACH ROW EXECUTE FUNCTION order_lines_write();
CREATE TRIGGER bad BEFORE TRUNCATE ON order_lines FOR EACH STATEMENT EXECUTE FUNCTION note_statement();
CREATE TRIGGER bad AFTER INSERT ON order_lines REFERENCING NEW TABLE AS n FOR EACH STATEMENT EXECUTE FUNCTION note_statement();
CREATE TRIGGER bad INSTEAD OF INSERT ON order_lines REFERENCING NEW TABLE AS n FOR EACH ROW EXECUTE FUNCTION order_lines_write();
CREATE TRIGGER bad INSTEAD OF INSERT ON order_lines FOR EACH STATEMENT EXECUTE FUNCTION order_lines_write();
CREATE TRIGGER bad INSTEAD OF UPDATE OF amount ON order_lines FOR EACH ROW EXECUTE FUNCTION order_lines_write();
CREATE TRIGGER bad INSTEAD OF INSERT ON order_lines FOR EACH ROW WHEN (NEW.id > 0) EXECUTE FUNCTION order_lines_write();
CREATE TRIGGER bad INSTEAD OF INSERT ON orders FOR EACH ROW EXECUTE FUNCTION order_lines_write();
CREATE TRIGGER bad INSTEAD OF INSERT ON orders FOR EACH STATEMENT EXECUTE FUNCTION order_lines_write();
CREATE TRIGGER bad AFTER UPDATE OF nothing ON order_lines FOR EACH STATEMENT EXECUTE FUNCTION note_statement();
CREATE TRIGGER order_lines_write INSTEAD OF INSERT ON order_lines FOR EACH ROW EXECUTE FUNCTION order_lines_write();
CREATE MATERIALIZED VIEW order_totals AS SELECT customer_id, sum(amount) AS total FROM orders GROUP BY customer_id;
CREATE TRIGGER bad INSTEAD OF INSERT ON order_totals FOR EACH ROW EXECUTE FUNCTION order_lines_write();
CREATE TRIGGER bad AFTER INSERT ON order_totals FOR EACH STATEMENT EXECUTE FUNCTION note_statement();
DROP TRIGGER missing ON order_lines;
DROP TRIGGER IF EXISTS missing ON order_lines;
ALTER TABLE order_lines DISABLE TRIGGER order_lines_write;
TRUNCATE order_lines;
DROP FUNCTION order_lines_write();

-- DROP FUNCTION ... CASCADE drops the view's triggers with it; then the
-- view refuses writes again.
DROP FUNCTION order_lines_write() CASCADE;
INSERT INTO order_lines (id, customer, amount) VALUES (60, 'ann', 1);
DROP VIEW cheap;
SELECT count(*) FROM pg_trigger WHERE tgname = 'cheap_insert';
