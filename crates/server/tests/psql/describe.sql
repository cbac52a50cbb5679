-- psql's meta-commands against Centum's catalog: tables with hash and
-- range indexes, constraints, foreign keys; \copy through COPY FROM STDIN.
CREATE TABLE customers (
    id bigint PRIMARY KEY,
    email text NOT NULL UNIQUE,
    name varchar(40) DEFAULT 'anonymous',
    credit numeric(10,2) CHECK (credit >= 0)
) WITH (bucket_count = 1024);
CREATE TABLE orders (
    id bigserial PRIMARY KEY,
    customer_id bigint NOT NULL REFERENCES customers (id),
    placed timestamp NOT NULL,
    total numeric(12,2)
);
CREATE INDEX orders_by_customer ON orders USING hash (customer_id) WITH (bucket_count = 4096);
CREATE INDEX orders_by_placed ON orders (placed DESC);
\dt
\d customers
\d orders
\di
\d orders_by_customer
\dn
\copy customers (id, email, credit) from stdin
1	a@example.com	10.00
2	b@example.com	\N
3	c@example.com	7.5
\.
\copy (SELECT * FROM customers ORDER BY id) to stdout with (format csv)
SELECT id, email, name, credit FROM customers ORDER BY id;
BEGIN;
INSERT INTO orders (customer_id, placed, total) VALUES (1, '2026-01-02 03:04:05', 12.5) RETURNING id, total;
COMMIT;
SELECT count(*) AS orders FROM orders;
CREATE TYPE line AS (product int, qty int);
CREATE FUNCTION order_total(p_customer int, p_lines line[], p_discount numeric DEFAULT 0) RETURNS numeric LANGUAGE plpgsql AS $$
DECLARE
  l line;
  t numeric := 0;
BEGIN
  FOREACH l IN ARRAY p_lines LOOP
    t := t + l.qty;
  END LOOP;
  RETURN t * (1 - p_discount);
END;
$$;
CREATE FUNCTION big_orders(p_min numeric) RETURNS TABLE (id int, total numeric) LANGUAGE plpgsql AS $$
BEGIN
  RETURN QUERY SELECT o.id, o.total FROM orders o WHERE o.total >= p_min ORDER BY o.id;
END;
$$;
CREATE PROCEDURE forget(INOUT n bigint) LANGUAGE plpgsql AS $$
BEGIN
  DELETE FROM orders WHERE total < n;
  GET DIAGNOSTICS n = ROW_COUNT;
END;
$$;
\df
\df order*
SELECT order_total(1, '{"(7,2)","(8,3)"}', 0.5);
SELECT * FROM big_orders(10);
CALL forget(0);
\do ->>
-- A query's description carries its columns' type modifiers.
SELECT id, name, credit FROM customers \gdesc
-- Triggers: listed by \d, disabled ones apart, and firing.
CREATE FUNCTION default_total() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  NEW.total := coalesce(NEW.total, 0);
  RETURN NEW;
END;
$$;
CREATE TRIGGER orders_total BEFORE INSERT OR UPDATE OF total ON orders FOR EACH ROW EXECUTE FUNCTION default_total();
CREATE TRIGGER orders_cleared AFTER DELETE ON orders FOR EACH STATEMENT EXECUTE FUNCTION default_total();
ALTER TABLE orders DISABLE TRIGGER orders_cleared;
\d orders
INSERT INTO orders (customer_id, placed) VALUES (1, '2026-01-03 00:00:00') RETURNING total;
-- A view's INSTEAD OF and statement triggers are listed by \d too.
CREATE VIEW order_totals AS SELECT customer_id, sum(total) AS total FROM orders GROUP BY customer_id;
CREATE FUNCTION order_totals_insert() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO orders (customer_id, placed, total) VALUES (NEW.customer_id, '2026-01-04 00:00:00', NEW.total);
  RETURN NEW;
END;
$$;
CREATE TRIGGER order_totals_insert INSTEAD OF INSERT ON order_totals FOR EACH ROW EXECUTE FUNCTION order_totals_insert();
CREATE FUNCTION noted() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  RAISE NOTICE '% % on %', TG_WHEN, TG_OP, TG_TABLE_NAME;
  RETURN NULL;
END;
$$;
CREATE TRIGGER order_totals_noted AFTER INSERT ON order_totals FOR EACH STATEMENT EXECUTE FUNCTION noted();
\d order_totals
INSERT INTO order_totals VALUES (1, 7.5) RETURNING *;
-- COPY into such a view goes through its INSTEAD OF INSERT trigger.
COPY order_totals (customer_id, total) FROM STDIN;
1	1.25
1	0.25
\.
SELECT * FROM order_totals ORDER BY customer_id;
-- Indexes on expressions and partial indexes, as \d shows them; COPY
-- reads and writes the table's own columns only.
CREATE TABLE members (id int PRIMARY KEY, email text NOT NULL, left_at date);
CREATE UNIQUE INDEX members_email ON members (lower(email)) WHERE left_at IS NULL;
CREATE INDEX members_domain ON members (split_part(email, '@', 2), id DESC);
\d members
\d members_email
\d members_domain
COPY members FROM STDIN;
1	Ann@example.com	\N
2	ann@example.com	2024-01-01
\.
DELETE FROM members WHERE id = 2;
COPY members TO STDOUT;
