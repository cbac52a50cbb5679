-- Integrity of the sales orders: one row, the word ok when every detail
-- has its header, every header has lines, sub_total is the sum of its
-- lines' totals and total_due adds tax and freight to it; otherwise the
-- first rule broken and how often.
SELECT CASE
    WHEN orphans > 0 THEN 'details without a header: ' || orphans::text
    WHEN empty > 0 THEN 'headers without details: ' || empty::text
    WHEN wrong_sub_total > 0 THEN 'sub_total differs from the sum of its lines: ' || wrong_sub_total::text
    WHEN wrong_total_due > 0 THEN 'total_due differs from sub_total + tax_amt + freight: ' || wrong_total_due::text
    ELSE 'ok'
  END AS integrity
FROM (
  SELECT
    (SELECT count(*) FROM sales_order_detail d
       LEFT JOIN sales_order_header h ON h.sales_order_id = d.sales_order_id
       WHERE h.sales_order_id IS NULL) AS orphans,
    (SELECT count(*) FROM sales_order_header h
       LEFT JOIN (SELECT sales_order_id, sum(line_total) AS lines_total FROM sales_order_detail GROUP BY sales_order_id) d
         ON d.sales_order_id = h.sales_order_id
       WHERE d.sales_order_id IS NULL) AS empty,
    (SELECT count(*) FROM sales_order_header h
       JOIN (SELECT sales_order_id, sum(line_total) AS lines_total FROM sales_order_detail GROUP BY sales_order_id) d
         ON d.sales_order_id = h.sales_order_id
       WHERE d.lines_total <> h.sub_total) AS wrong_sub_total,
    (SELECT count(*) FROM sales_order_header WHERE total_due <> sub_total + tax_amt + freight) AS wrong_total_due
) AS counts;
