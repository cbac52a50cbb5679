CREATE TABLE sales (region text, item text, qty int, price numeric(8,2));
INSERT INTO sales VALUES ('n', 'a', 2, 1.50), ('n', 'b', 1, 10.00), ('s', 'a', 5, 1.50), ('s', 'a', 1, 1.25), ('e', 'c', NULL, NULL);
SELECT count(*), count(qty), sum(qty), avg(qty), min(price), max(price) FROM sales;
SELECT region, sum(qty * price) AS revenue FROM sales GROUP BY region ORDER BY region;
SELECT region, count(*) FROM sales GROUP BY region HAVING count(*) > 1 ORDER BY region;
SELECT item, count(DISTINCT region) FROM sales GROUP BY item ORDER BY item;
SELECT region, string_agg(item, ',') FROM sales WHERE region = 's' GROUP BY region;
SELECT bool_and(qty > 0), bool_or(qty > 4) FROM sales;
SELECT count(*) FILTER (WHERE qty > 1) FROM sales;
SELECT sum(qty) FROM sales WHERE false;
SELECT count(*) FROM sales WHERE false;
SELECT region, qty FROM sales GROUP BY region;
SELECT region FROM sales WHERE sum(qty) > 1;
SELECT 1 AS r, count(*) FROM sales GROUP BY 1;
SELECT region AS r FROM sales GROUP BY r ORDER BY r;
SELECT region, max(qty) FROM sales GROUP BY region ORDER BY max(qty) DESC NULLS LAST, region;
SELECT avg(price) FROM sales;
-- Ordered aggregates and array_agg.
SELECT string_agg(x::text, ',' ORDER BY x DESC) FROM (VALUES (2), (1), (3)) v(x);
SELECT array_agg(x ORDER BY x NULLS FIRST) FROM (VALUES (2), (NULL), (1)) v(x);
SELECT g, array_agg(s ORDER BY s), string_agg(s, '|' ORDER BY s DESC) FROM (VALUES (1, 'b'), (1, 'a c'), (2, 'z')) v(g, s) GROUP BY g ORDER BY g;
SELECT array_agg(x) FROM (VALUES (1)) v(x) WHERE x > 5;
SELECT 12 & 10, 12 | 10, 12 # 10, 1 << 10, 1024 >> 3, (7::smallint & 3::smallint);
-- Grouped by a table's primary key, its other columns are one value per
-- group (functional dependency), as ORMs' annotate queries rely on; a
-- column of another table, or a key only partly grouped by, is refused.
CREATE TABLE fd_author (id int PRIMARY KEY, name text, born int);
CREATE TABLE fd_book (id int PRIMARY KEY, author int, title text);
INSERT INTO fd_author VALUES (1, 'Austen', 1775), (2, 'Borges', 1899), (3, 'Calvino', 1923);
INSERT INTO fd_book VALUES (10, 1, 'Emma'), (11, 1, 'Persuasion'), (12, 2, 'Ficciones');
SELECT a.id, a.name, count(b.id) FROM fd_author a LEFT JOIN fd_book b ON b.author = a.id GROUP BY a.id ORDER BY a.id;
SELECT a.*, count(*) AS books FROM fd_author a JOIN fd_book b ON b.author = a.id GROUP BY a.id ORDER BY a.id;
SELECT name FROM fd_author GROUP BY id HAVING born > 1800 ORDER BY name;
SELECT fd_author.name, max(title) FROM fd_author JOIN fd_book ON author = fd_author.id GROUP BY fd_author.id ORDER BY 1;
SELECT a.name, b.title FROM fd_author a JOIN fd_book b ON b.author = a.id GROUP BY a.id;
SELECT a.name FROM fd_author a JOIN fd_book b ON b.author = a.id GROUP BY b.id ORDER BY 1;
CREATE TABLE fd_pair (a int, b int, v text, PRIMARY KEY (a, b));
INSERT INTO fd_pair VALUES (1, 1, 'x'), (1, 2, 'y');
SELECT a, v FROM fd_pair GROUP BY a;
SELECT a, b, v FROM fd_pair GROUP BY a, b ORDER BY b;
DROP TABLE fd_pair, fd_book, fd_author;
-- A quoted alias and column keep their case through a grouped t.*.
CREATE TABLE "Mixed" ("Id" int PRIMARY KEY, "Val" text);
INSERT INTO "Mixed" VALUES (1, 'one');
SELECT "M".*, count(*) FROM "Mixed" "M" GROUP BY "M"."Id";
DROP TABLE "Mixed";
