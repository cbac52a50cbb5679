CREATE TABLE items (id int PRIMARY KEY, sku text, price int, cat int) WITH (bucket_count = 1024);
CREATE INDEX items_price ON items (price);
CREATE INDEX items_cat_price ON items (cat, price);
CREATE INDEX items_sku ON items USING hash (sku);
INSERT INTO items SELECT g, 'sku' || g, g % 100, g % 7 FROM generate_series(1, 200) g;
-- Full-key equality on a hash index.
EXPLAIN SELECT * FROM items WHERE id = 5;
EXPLAIN SELECT * FROM items WHERE sku = 'sku9';
-- A hash index never serves ranges: the range index does.
EXPLAIN SELECT * FROM items WHERE price > 90;
EXPLAIN SELECT * FROM items WHERE price BETWEEN 10 AND 20;
-- Prefix equality plus a range.
EXPLAIN SELECT * FROM items WHERE cat = 3 AND price < 10;
EXPLAIN SELECT * FROM items WHERE cat = 3;
-- ORDER BY ... LIMIT through the index, both directions.
EXPLAIN SELECT * FROM items ORDER BY price LIMIT 3;
EXPLAIN SELECT * FROM items ORDER BY price DESC LIMIT 3;
SELECT id, price FROM items ORDER BY price DESC, id LIMIT 3;
SELECT price FROM items ORDER BY price DESC LIMIT 3;
-- No index applies.
EXPLAIN SELECT * FROM items WHERE price + 1 = 5;
-- Parameters and joins use indexes too.
CREATE TABLE orders (id int PRIMARY KEY, item_id int, n int);
EXPLAIN SELECT o.id, i.sku FROM orders o JOIN items i ON i.id = o.item_id;
EXPLAIN SELECT o.id FROM orders o JOIN items i ON i.price = o.n WHERE i.cat = 1;
EXPLAIN UPDATE items SET price = price + 1 WHERE id = 7;
EXPLAIN DELETE FROM items WHERE price >= 99;
SELECT count(*) FROM items WHERE price >= 99;
SELECT count(*) FROM items WHERE cat = 3 AND price < 10;
-- An IN list of constants on an indexed column: one look-up per member.
EXPLAIN SELECT * FROM items WHERE id IN (3, 5, 8) AND cat > 1;
EXPLAIN SELECT * FROM items WHERE sku IN ('sku1', 'sku2');
EXPLAIN SELECT * FROM items WHERE price IN (1, 2);
SELECT id, price FROM items WHERE price IN (1, 2, 2, 1000, NULL) AND id < 110 ORDER BY id;
SELECT id FROM items WHERE id IN (3, 3, 5.0, 5.5, 8, NULL) ORDER BY id;
-- Members that read the row are no look-up keys.
EXPLAIN SELECT * FROM items WHERE id IN (3, cat);
