-- Views: created, read, replaced, written through, dropped with what
-- depends on them; materialized views refreshed.
CREATE TABLE items (id int PRIMARY KEY, name text NOT NULL, price numeric(8,2), active boolean DEFAULT true);
INSERT INTO items VALUES (1, 'bolt', 0.25, true), (2, 'nut', 0.10, false), (3, 'gear', 12.50, true);
CREATE VIEW active_items AS SELECT id, name, price * 2 AS retail FROM items WHERE active;
SELECT * FROM active_items ORDER BY id;
SELECT a.name, i.price FROM active_items a JOIN items i ON i.id = a.id WHERE a.retail > 1 ORDER BY 1;
CREATE VIEW named (ident, label) AS SELECT * FROM active_items;
SELECT * FROM named ORDER BY ident;
SELECT label FROM named n WHERE n.ident = 3;
CREATE VIEW totals AS SELECT active, count(*) AS n, sum(price) AS total FROM items GROUP BY active;
SELECT * FROM totals ORDER BY active;
CREATE VIEW active_items AS SELECT 1 AS one;
CREATE VIEW items AS SELECT 1 AS one;
CREATE VIEW too_many (a, b, c, d) AS SELECT id, name FROM items;
CREATE VIEW twice AS SELECT id, id FROM items;
SELECT * FROM missing_view;
-- OR REPLACE may add columns at the end, not drop, rename or retype.
CREATE OR REPLACE VIEW active_items AS SELECT id, name, price * 2 AS retail, price FROM items WHERE active;
SELECT * FROM active_items ORDER BY id;
CREATE OR REPLACE VIEW active_items AS SELECT id, name FROM items WHERE active;
CREATE OR REPLACE VIEW active_items AS SELECT id, name AS title, price * 2 AS retail, price FROM items WHERE active;
CREATE OR REPLACE VIEW active_items AS SELECT id, name, price::text AS retail, price FROM items WHERE active;
CREATE OR REPLACE VIEW items AS SELECT 1 AS one;
-- A view's * keeps the columns it had.
CREATE VIEW everything AS SELECT * FROM items;
ALTER TABLE items ADD COLUMN stock int DEFAULT 0;
SELECT * FROM everything ORDER BY id;
-- information_schema.columns lists views' columns too.
SELECT table_name, column_name, ordinal_position, data_type, numeric_precision, numeric_scale, is_nullable, is_updatable FROM information_schema.columns WHERE table_name IN ('active_items', 'everything') ORDER BY table_name, ordinal_position;
-- Simple views take INSERT, UPDATE and DELETE.
INSERT INTO active_items (id, name, price) VALUES (4, 'spring', 1.00);
INSERT INTO everything VALUES (5, 'washer', 0.05, false) RETURNING *;
UPDATE active_items SET price = price + 1 WHERE id = 1 RETURNING id, retail;
UPDATE active_items SET name = 'cog' WHERE name = 'gear';
UPDATE active_items SET price = 0 WHERE id = 2;
DELETE FROM active_items WHERE id = 4 RETURNING name;
DELETE FROM active_items WHERE id = 5;
SELECT id, name, price, active FROM items ORDER BY id;
UPDATE active_items SET retail = 1;
INSERT INTO active_items (id, retail) VALUES (9, 1);
INSERT INTO totals VALUES (true, 1, 1);
UPDATE totals SET n = 0;
DELETE FROM totals;
-- Dropping what a view reads.
DROP TABLE items;
DROP VIEW active_items;
DROP TABLE active_items;
DROP VIEW items;
DROP VIEW nope;
DROP VIEW IF EXISTS nope;
ALTER TABLE items DROP COLUMN price;
ALTER TABLE items ALTER COLUMN name TYPE varchar(20);
ALTER TABLE items DROP COLUMN stock;
SELECT id, name, price FROM items ORDER BY id;
DROP VIEW active_items CASCADE;
SELECT viewname FROM pg_views WHERE schemaname = 'public' ORDER BY 1;
-- Materialized views.
CREATE MATERIALIZED VIEW priced AS SELECT id, name, price FROM items WHERE price > 0.20;
SELECT * FROM priced ORDER BY id;
INSERT INTO items VALUES (6, 'axle', 30, true);
SELECT count(*) FROM priced;
REFRESH MATERIALIZED VIEW priced;
SELECT * FROM priced ORDER BY id;
REFRESH MATERIALIZED VIEW CONCURRENTLY priced;
CREATE UNIQUE INDEX priced_id ON priced (id);
REFRESH MATERIALIZED VIEW CONCURRENTLY priced;
SELECT name FROM priced WHERE id = 6;
INSERT INTO priced VALUES (7, 'x', 1);
UPDATE priced SET price = 0;
DELETE FROM priced;
CREATE MATERIALIZED VIEW counted (n) AS SELECT count(*) FROM items WITH NO DATA;
SELECT * FROM counted;
REFRESH MATERIALIZED VIEW CONCURRENTLY counted;
REFRESH MATERIALIZED VIEW counted;
SELECT * FROM counted;
REFRESH MATERIALIZED VIEW counted WITH NO DATA;
SELECT * FROM counted;
CREATE MATERIALIZED VIEW IF NOT EXISTS counted AS SELECT 1;
REFRESH MATERIALIZED VIEW items;
DROP VIEW priced;
DROP TABLE priced;
SELECT relname, relkind, relispopulated FROM pg_class WHERE relkind IN ('v', 'm') AND relnamespace = 'public'::regnamespace ORDER BY 1;
SELECT matviewname, ispopulated, hasindexes FROM pg_matviews ORDER BY 1;
SELECT table_name, table_type FROM information_schema.tables WHERE table_schema = 'public' ORDER BY 1;
SELECT table_name, is_updatable, is_insertable_into FROM information_schema.views WHERE table_schema = 'public' ORDER BY 1;
ALTER MATERIALIZED VIEW counted RENAME TO counted2;
REFRESH MATERIALIZED VIEW counted2;
SELECT * FROM counted2;
-- Renaming a table keeps its views reading it.
ALTER TABLE items RENAME TO parts;
SELECT * FROM everything ORDER BY id;
ALTER VIEW everything RENAME TO all_parts;
SELECT count(*) FROM all_parts;
-- A view keeps its query as text: renaming a column it reads is refused.
ALTER TABLE parts RENAME COLUMN price TO cost;
SELECT count(*) FROM all_parts;
DROP TABLE parts;
DROP TABLE parts CASCADE;
SELECT relname FROM pg_class WHERE relkind IN ('r', 'v', 'm') AND relnamespace = 'public'::regnamespace ORDER BY 1;
-- psql's \d+ on a view reads its other rules through pg_get_ruledef.
CREATE VIEW ruled AS SELECT 1 AS a;
SELECT pg_get_ruledef(r.oid) FROM pg_rewrite r JOIN pg_class c ON c.oid = r.ev_class WHERE c.relname = 'ruled';
SELECT count(*) FROM pg_rewrite r JOIN pg_class c ON c.oid = r.ev_class WHERE c.relname = 'ruled' AND r.rulename <> '_RETURN';
DROP VIEW ruled;
