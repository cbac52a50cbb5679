-- COMMENT ON: comments on tables, columns, indexes and materialized views,
-- read back as psql and pg_dump read them; they belong to the block they
-- are made in and go with what they describe.
CREATE TABLE orders (id int PRIMARY KEY, placed date, note text);
CREATE INDEX orders_placed ON orders (placed);
COMMENT ON TABLE orders IS 'One row per order';
COMMENT ON COLUMN orders.placed IS 'When the customer placed it';
COMMENT ON COLUMN public.orders.note IS 'Free text, may be empty';
COMMENT ON INDEX orders_placed IS 'For reports by day';
SELECT obj_description('orders'::regclass, 'pg_class'), obj_description('orders'::regclass), obj_description('orders_placed'::regclass, 'pg_class');
SELECT a.attname, col_description(a.attrelid, a.attnum) FROM pg_attribute a WHERE a.attrelid = 'orders'::regclass AND a.attnum > 0 ORDER BY a.attnum;
SELECT c.relname, d.objsubid, d.description FROM pg_description d JOIN pg_class c ON c.oid = d.objoid AND d.classoid = 'pg_class'::regclass WHERE c.relname LIKE 'orders%' ORDER BY 1, 2;
SELECT obj_description('orders'::regclass, 'pg_namespace'), col_description('orders'::regclass, 1), col_description('orders'::regclass, 99);
-- Replaced, and removed with NULL or ''.
COMMENT ON TABLE orders IS 'Orders';
COMMENT ON COLUMN orders.note IS NULL;
COMMENT ON COLUMN orders.placed IS '';
SELECT obj_description('orders'::regclass), col_description('orders'::regclass, 2), col_description('orders'::regclass, 3);
-- Undone by ROLLBACK, kept by COMMIT.
BEGIN;
COMMENT ON TABLE orders IS 'changed in a block';
SELECT obj_description('orders'::regclass);
ROLLBACK;
SELECT obj_description('orders'::regclass);
BEGIN;
COMMENT ON COLUMN orders.id IS 'Order number';
COMMIT;
SELECT col_description('orders'::regclass, 1);
-- A renamed table keeps its comments; a dropped column or index takes its
-- comment with it.
ALTER TABLE orders RENAME TO purchases;
SELECT obj_description('purchases'::regclass), col_description('purchases'::regclass, 1);
ALTER TABLE purchases DROP COLUMN placed;
SELECT a.attname, col_description(a.attrelid, a.attnum) FROM pg_attribute a WHERE a.attrelid = 'purchases'::regclass AND a.attnum > 0 AND NOT a.attisdropped ORDER BY a.attnum;
DROP INDEX orders_placed;
CREATE INDEX orders_placed ON purchases (id);
SELECT obj_description('orders_placed'::regclass, 'pg_class');
CREATE MATERIALIZED VIEW purchase_count AS SELECT count(*) AS n FROM purchases;
COMMENT ON MATERIALIZED VIEW purchase_count IS 'Refreshed nightly';
SELECT obj_description('purchase_count'::regclass, 'pg_class');
-- Views, sequences, schemas and functions.
CREATE VIEW big_purchases AS SELECT id FROM purchases WHERE id > 10;
CREATE SEQUENCE invoice_numbers;
CREATE SCHEMA archive;
CREATE FUNCTION purchase_total() RETURNS bigint LANGUAGE plpgsql AS $$ BEGIN RETURN (SELECT count(*) FROM purchases); END $$;
COMMENT ON VIEW big_purchases IS 'Over ten';
COMMENT ON SEQUENCE invoice_numbers IS 'One per invoice';
COMMENT ON SCHEMA archive IS 'Old rows';
COMMENT ON FUNCTION purchase_total() IS 'How many purchases';
SELECT obj_description('big_purchases'::regclass, 'pg_class'), obj_description('invoice_numbers'::regclass, 'pg_class');
SELECT n.nspname, obj_description(n.oid, 'pg_namespace') FROM pg_namespace n WHERE n.nspname IN ('archive', 'public') ORDER BY 1;
SELECT p.proname, obj_description(p.oid, 'pg_proc') FROM pg_proc p WHERE p.proname = 'purchase_total';
BEGIN;
COMMENT ON SCHEMA archive IS NULL;
COMMENT ON SCHEMA public IS 'Everything';
SELECT n.nspname, obj_description(n.oid, 'pg_namespace') FROM pg_namespace n WHERE n.nspname IN ('archive', 'public') ORDER BY 1;
ROLLBACK;
SELECT n.nspname, obj_description(n.oid, 'pg_namespace') FROM pg_namespace n WHERE n.nspname IN ('archive', 'public') ORDER BY 1;
ALTER VIEW big_purchases RENAME TO large_purchases;
SELECT obj_description('large_purchases'::regclass, 'pg_class');
DROP VIEW large_purchases;
CREATE VIEW large_purchases AS SELECT id FROM purchases;
SELECT obj_description('large_purchases'::regclass, 'pg_class');
DROP SEQUENCE invoice_numbers;
DROP FUNCTION purchase_total();
DROP SCHEMA archive;
SELECT count(*) FROM pg_description WHERE classoid IN ('pg_proc'::regclass, 'pg_namespace'::regclass) AND objoid >= 16384;
DROP VIEW large_purchases;
-- Errors.
COMMENT ON VIEW purchase_count IS 'x';
COMMENT ON SEQUENCE no_such_sequence IS 'x';
COMMENT ON SCHEMA no_such_schema IS 'x';
COMMENT ON FUNCTION no_such_function() IS 'x';
COMMENT ON TABLE no_such_table IS 'x';
COMMENT ON COLUMN purchases.no_such_column IS 'x';
COMMENT ON INDEX no_such_index IS 'x';
COMMENT ON TABLE purchase_count IS 'x';
COMMENT ON MATERIALIZED VIEW purchases IS 'x';
DROP TABLE purchases CASCADE;
SELECT count(*) FROM pg_description WHERE classoid = 'pg_class'::regclass;
