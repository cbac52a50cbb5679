-- GROUPING SETS, ROLLUP and CUBE: subtotals and grand totals in one query,
-- GROUPING() to tell them apart, sets multiplied out across GROUP BY
-- items, HAVING and ORDER BY over them, and the errors.
CREATE TABLE sales (id int PRIMARY KEY, region text, product text, year int, amount numeric(8,2));
INSERT INTO sales VALUES (1, 'north', 'apple', 2024, 10.00), (2, 'north', 'pear', 2024, 5.50), (3, 'north', 'apple', 2025, 7.25), (4, 'south', 'apple', 2024, 3.00), (5, 'south', 'plum', 2025, 8.00), (6, NULL, 'pear', 2025, 1.00), (7, 'south', NULL, 2024, NULL);
SELECT region, product, sum(amount), count(*) FROM sales GROUP BY ROLLUP (region, product) ORDER BY region NULLS LAST, product NULLS LAST, count(*);
SELECT region, product, sum(amount), GROUPING(region), GROUPING(product), GROUPING(region, product) FROM sales GROUP BY ROLLUP (region, product) ORDER BY 4, 5, region, product;
SELECT region, year, count(*), GROUPING(region, year) AS g FROM sales GROUP BY CUBE (region, year) ORDER BY g, region NULLS LAST, year NULLS LAST;
SELECT region, product, year, sum(amount) FROM sales GROUP BY GROUPING SETS ((region), (product), (year), ()) ORDER BY region NULLS LAST, product NULLS LAST, year NULLS LAST, 4 NULLS FIRST;
SELECT region, product, count(*) FROM sales GROUP BY region, ROLLUP (product) ORDER BY region NULLS LAST, product NULLS LAST, count(*);
SELECT region, product, year, count(*) FROM sales GROUP BY ROLLUP (region), CUBE (product, year) ORDER BY region NULLS LAST, product NULLS LAST, year NULLS LAST, count(*);
SELECT region, year, count(*) FROM sales GROUP BY ROLLUP ((region, year)) ORDER BY region NULLS LAST, year NULLS LAST;
SELECT region, count(*) FROM sales GROUP BY GROUPING SETS ((region), (region), ()) ORDER BY region NULLS LAST, count(*);
SELECT CASE WHEN GROUPING(region) = 1 THEN 'all regions' ELSE coalesce(region, '(none)') END AS label, sum(amount) FROM sales GROUP BY ROLLUP (region) ORDER BY label;
SELECT region, sum(amount) FROM sales GROUP BY ROLLUP (region) HAVING sum(amount) > 10 ORDER BY region NULLS LAST;
SELECT region, sum(amount), rank() OVER (ORDER BY sum(amount) DESC NULLS LAST) FROM sales GROUP BY ROLLUP (region) ORDER BY 3, region NULLS LAST;
SELECT upper(region), count(*) FROM sales GROUP BY ROLLUP (upper(region)) ORDER BY 1 NULLS LAST, 2;
SELECT count(*), sum(amount) FROM sales GROUP BY GROUPING SETS (());
SELECT count(*) FROM sales WHERE false GROUP BY ROLLUP (region);
SELECT region, count(*) FROM sales WHERE false GROUP BY CUBE (region);
SELECT region, count(*) FROM sales WHERE false GROUP BY GROUPING SETS ((region));
SELECT region, GROUPING(region) FROM sales GROUP BY region ORDER BY region NULLS LAST;
-- Errors.
SELECT region, product, count(*) FROM sales GROUP BY ROLLUP (region);
SELECT GROUPING(product) FROM sales GROUP BY ROLLUP (region);
SELECT region FROM sales GROUP BY CUBE (region, product, year, id, amount, region, product, year, id, amount, region, product, year);
