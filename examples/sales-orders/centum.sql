-- Sales orders (workload W1): the AdventureWorks tables of the In-Memory
-- OLTP sample, the procedure that inserts one order with its lines in one
-- call, the one that ships an order, a reset procedure, and seed data.
--
-- Load:  psql -h 127.0.0.1 -p 5433 -U centum -f centum.sql
--
-- postgres.sql is this file without Centum's bucket_count options.

DROP FUNCTION IF EXISTS insert_sales_order;
DROP FUNCTION IF EXISTS update_sales_order_ship_info;
DROP PROCEDURE IF EXISTS reset_sales_orders;
DROP TABLE IF EXISTS sales_order_detail;
DROP TABLE IF EXISTS sales_order_header;
DROP TABLE IF EXISTS special_offer_product;
DROP TABLE IF EXISTS special_offer;
DROP TABLE IF EXISTS product;
DROP TABLE IF EXISTS demo_sales_order_seed;
DROP SEQUENCE IF EXISTS sales_order_id_seq;
DROP TYPE IF EXISTS sales_order_detail_type;

-- Hash indexes start small and double as the tables grow (a bucket_count
-- is where an index starts, not a limit); the sample sizes them for the
-- millions of orders SQL Server could not grow them to, which here would
-- cost memory up front: 16,777,216 buckets are 128 MB before one row.
-- Products and special offers are looked up by key on every line; headers
-- and details are inserted and found by order. sales_person_id and
-- product_id have few distinct values (most orders have no sales person;
-- 1,000 products). Centum gives them hash indexes, as the sample does:
-- each value's rows share one long bucket chain, which the garbage
-- collector sweeps in batches (docs/design.md, section 6, "Long chains"),
-- and more buckets would not shorten, so those indexes do not grow.
-- PostgreSQL gives them B-trees, its default and what its users choose
-- for such columns. These two indexes are the only difference between
-- centum.sql and postgres.sql after their heads.
CREATE TABLE product (
  product_id int PRIMARY KEY,
  name text NOT NULL,
  product_number text NOT NULL,
  make_flag boolean NOT NULL DEFAULT true,
  finished_goods_flag boolean NOT NULL DEFAULT true,
  color text,
  safety_stock_level smallint NOT NULL,
  reorder_point smallint NOT NULL,
  standard_cost numeric(19,4) NOT NULL,
  list_price numeric(19,4) NOT NULL,
  days_to_manufacture int NOT NULL,
  sell_start_date timestamp NOT NULL,
  modified_date timestamp NOT NULL
) WITH (bucket_count = 1024);

CREATE TABLE special_offer (
  special_offer_id int PRIMARY KEY,
  description text NOT NULL,
  discount_pct numeric(10,4) NOT NULL DEFAULT 0,
  type text NOT NULL,
  category text NOT NULL,
  start_date timestamp NOT NULL,
  end_date timestamp NOT NULL,
  min_qty int NOT NULL DEFAULT 0,
  max_qty int,
  modified_date timestamp NOT NULL
) WITH (bucket_count = 1024);

-- Not on the hot path: range indexes.
CREATE TABLE special_offer_product (
  special_offer_id int NOT NULL,
  product_id int NOT NULL,
  modified_date timestamp NOT NULL,
  PRIMARY KEY (special_offer_id, product_id)
);
CREATE INDEX special_offer_product_product ON special_offer_product (product_id);

CREATE SEQUENCE sales_order_id_seq;

CREATE TABLE sales_order_header (
  sales_order_id bigint PRIMARY KEY,
  revision_number smallint NOT NULL DEFAULT 0,
  order_date timestamp NOT NULL,
  due_date timestamp NOT NULL,
  ship_date timestamp,
  status smallint NOT NULL DEFAULT 1,
  online_order_flag boolean NOT NULL DEFAULT true,
  purchase_order_number text,
  account_number text,
  customer_id int NOT NULL,
  sales_person_id int,
  territory_id int,
  bill_to_address_id int NOT NULL,
  ship_to_address_id int NOT NULL,
  ship_method_id int NOT NULL,
  credit_card_id int,
  credit_card_approval_code text,
  currency_rate_id int,
  sub_total numeric(19,4) NOT NULL DEFAULT 0,
  tax_amt numeric(19,4) NOT NULL DEFAULT 0,
  freight numeric(19,4) NOT NULL DEFAULT 0,
  total_due numeric(19,4) NOT NULL DEFAULT 0,
  comment text,
  modified_date timestamp NOT NULL
) WITH (bucket_count = 16384);
CREATE INDEX sales_order_header_customer ON sales_order_header USING hash (customer_id) WITH (bucket_count = 1024);
CREATE INDEX sales_order_header_sales_person ON sales_order_header USING hash (sales_person_id) WITH (bucket_count = 1024);

CREATE TABLE sales_order_detail (
  sales_order_id bigint NOT NULL,
  sales_order_detail_id int NOT NULL,
  carrier_tracking_number text,
  order_qty smallint NOT NULL,
  product_id int NOT NULL,
  special_offer_id int NOT NULL,
  unit_price numeric(19,4) NOT NULL,
  unit_price_discount numeric(19,4) NOT NULL DEFAULT 0,
  line_total numeric(19,4) NOT NULL,
  modified_date timestamp NOT NULL,
  PRIMARY KEY (sales_order_id, sales_order_detail_id)
) WITH (bucket_count = 65536);
CREATE INDEX sales_order_detail_order ON sales_order_detail USING hash (sales_order_id) WITH (bucket_count = 16384);
CREATE INDEX sales_order_detail_product ON sales_order_detail USING hash (product_id) WITH (bucket_count = 1024);

-- One line item of an order, as the client sends it (the sample's
-- table-valued parameter).
CREATE TYPE sales_order_detail_type AS (order_qty smallint, product_id int, special_offer_id int);

-- The 106 sample orders the driver draws from, each a list of lines.
CREATE TABLE demo_sales_order_seed (order_no int PRIMARY KEY, lines text NOT NULL);

-- Inserts one order and its lines; returns the new order's id. Reads the
-- clock once for every date column; looks up each line's list price and
-- discount; keeps sub_total equal to the sum of the line totals.
CREATE FUNCTION insert_sales_order(
  p_customer_id int,
  p_bill_to_address_id int,
  p_ship_to_address_id int,
  p_ship_method_id int,
  p_lines sales_order_detail_type[],
  p_due_date timestamp DEFAULT NULL,
  p_online_order_flag boolean DEFAULT true,
  p_purchase_order_number text DEFAULT NULL,
  p_account_number text DEFAULT NULL,
  p_comment text DEFAULT NULL
) RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE
  v_now timestamp := localtimestamp;
  v_order_id bigint := nextval('sales_order_id_seq');
  v_line sales_order_detail_type;
  v_line_no int := 0;
  v_price numeric(19,4);
  v_discount numeric(10,4);
  v_line_total numeric(19,4);
  v_sub_total numeric(19,4) := 0;
  v_tax numeric(19,4);
  v_freight numeric(19,4);
BEGIN
  IF coalesce(cardinality(p_lines), 0) = 0 THEN
    RAISE EXCEPTION 'an order needs at least one line' USING ERRCODE = '22023';
  END IF;
  INSERT INTO sales_order_header (sales_order_id, order_date, due_date, online_order_flag, purchase_order_number,
      account_number, customer_id, bill_to_address_id, ship_to_address_id, ship_method_id, comment, modified_date)
    VALUES (v_order_id, v_now, coalesce(p_due_date, v_now), p_online_order_flag, p_purchase_order_number,
      p_account_number, p_customer_id, p_bill_to_address_id, p_ship_to_address_id, p_ship_method_id, p_comment, v_now);
  FOREACH v_line IN ARRAY p_lines LOOP
    v_line_no := v_line_no + 1;
    SELECT list_price INTO v_price FROM product WHERE product_id = v_line.product_id;
    IF NOT FOUND THEN
      RAISE EXCEPTION 'product % does not exist', v_line.product_id USING ERRCODE = '23503';
    END IF;
    SELECT discount_pct INTO v_discount FROM special_offer WHERE special_offer_id = v_line.special_offer_id;
    IF NOT FOUND THEN
      RAISE EXCEPTION 'special offer % does not exist', v_line.special_offer_id USING ERRCODE = '23503';
    END IF;
    v_line_total := round(v_line.order_qty * v_price * (1 - v_discount), 4);
    INSERT INTO sales_order_detail (sales_order_id, sales_order_detail_id, order_qty, product_id, special_offer_id,
        unit_price, unit_price_discount, line_total, modified_date)
      VALUES (v_order_id, v_line_no, v_line.order_qty, v_line.product_id, v_line.special_offer_id,
        v_price, v_discount, v_line_total, v_now);
    v_sub_total := v_sub_total + v_line_total;
  END LOOP;
  v_tax := round(v_sub_total * 0.08, 4);
  v_freight := round(v_sub_total * 0.025, 4);
  UPDATE sales_order_header
    SET sub_total = v_sub_total, tax_amt = v_tax, freight = v_freight, total_due = v_sub_total + v_tax + v_freight
    WHERE sales_order_id = v_order_id;
  RETURN v_order_id;
END;
$$;

-- Ships an order: its ship date and status, and every line's tracking
-- number. Centum runs a call that hits a write conflict again, up to ten
-- times, before the client sees 40001.
CREATE FUNCTION update_sales_order_ship_info(p_order_id bigint, p_ship_date timestamp, p_carrier_tracking_number text)
RETURNS int LANGUAGE plpgsql SET centum.retry_on_conflict = 10 AS $$
DECLARE
  v_lines int;
BEGIN
  UPDATE sales_order_header
    SET ship_date = p_ship_date, status = 5, revision_number = revision_number + 1, modified_date = p_ship_date
    WHERE sales_order_id = p_order_id;
  IF NOT FOUND THEN
    RAISE EXCEPTION 'sales order % does not exist', p_order_id USING ERRCODE = 'P0002';
  END IF;
  UPDATE sales_order_detail
    SET carrier_tracking_number = p_carrier_tracking_number, modified_date = p_ship_date
    WHERE sales_order_id = p_order_id;
  GET DIAGNOSTICS v_lines = ROW_COUNT;
  RETURN v_lines;
END;
$$;

-- Removes every order, for a fresh run.
CREATE PROCEDURE reset_sales_orders() LANGUAGE plpgsql AS $$
BEGIN
  DELETE FROM sales_order_detail;
  DELETE FROM sales_order_header;
END;
$$;

-- Seed data: 1,000 products, 16 special offers, which offers apply to
-- which product, and the 106 sample orders.
INSERT INTO product (product_id, name, product_number, color, safety_stock_level, reorder_point, standard_cost,
    list_price, days_to_manufacture, sell_start_date, modified_date)
  SELECT i, 'Product ' || i::text, 'PN-' || lpad(i::text, 5, '0'),
    CASE i % 4 WHEN 0 THEN 'Black' WHEN 1 THEN 'Red' WHEN 2 THEN 'Silver' ELSE NULL END,
    (100 + i % 900)::smallint, (75 + i % 600)::smallint, round((i % 97) * 2.5 + 1.99, 4),
    round((i % 97) * 4.25 + 3.99, 4), i % 5, timestamp '2011-05-31 00:00:00', timestamp '2014-02-08 10:01:36'
  FROM generate_series(1, 1000) AS g(i);

INSERT INTO special_offer (special_offer_id, description, discount_pct, type, category, start_date, end_date,
    min_qty, max_qty, modified_date)
  SELECT i, CASE WHEN i = 1 THEN 'No Discount' ELSE 'Offer ' || i::text END,
    CASE WHEN i = 1 THEN 0 ELSE round(0.01 * ((i * 7) % 40 + 2), 4) END,
    CASE WHEN i = 1 THEN 'No Discount' WHEN i % 3 = 0 THEN 'Volume Discount' ELSE 'Seasonal Discount' END,
    CASE WHEN i % 2 = 0 THEN 'Reseller' ELSE 'Customer' END,
    timestamp '2011-05-01 00:00:00', timestamp '2014-11-30 00:00:00', 0, NULL, timestamp '2011-04-01 00:00:00'
  FROM generate_series(1, 16) AS g(i);

INSERT INTO special_offer_product (special_offer_id, product_id, modified_date)
  SELECT 1, i, timestamp '2011-04-01 00:00:00' FROM generate_series(1, 1000) AS g(i);
INSERT INTO special_offer_product (special_offer_id, product_id, modified_date)
  SELECT i % 15 + 2, i, timestamp '2011-04-01 00:00:00' FROM generate_series(1, 1000) AS g(i);

INSERT INTO demo_sales_order_seed (order_no, lines) VALUES
  (1, '{"(5,728,10)","(6,18,1)","(2,841,1)","(5,824,1)","(2,373,1)"}'),
  (2, '{"(5,765,1)","(2,664,1)","(1,374,1)","(1,295,1)"}'),
  (3, '{"(1,444,1)","(1,756,1)","(5,809,16)"}'),
  (4, '{"(5,318,5)","(1,458,1)","(2,913,1)","(3,160,1)","(2,579,11)","(1,135,1)","(3,605,7)","(6,564,11)"}'),
  (5, '{"(2,219,11)","(4,645,1)","(1,771,8)","(3,166,1)","(1,551,1)","(5,787,1)"}'),
  (6, '{"(6,530,7)","(2,933,5)","(4,909,11)","(2,117,1)","(1,218,10)","(2,70,1)","(2,688,15)"}'),
  (7, '{"(1,340,12)","(2,440,1)"}'),
  (8, '{"(1,310,1)","(5,298,15)"}'),
  (9, '{"(1,294,11)","(6,620,1)","(6,162,14)","(3,345,2)"}'),
  (10, '{"(1,782,4)","(1,847,1)"}'),
  (11, '{"(6,196,3)","(4,383,10)"}'),
  (12, '{"(2,354,1)"}'),
  (13, '{"(3,473,1)","(10,549,1)","(3,8,10)","(6,410,1)","(6,297,1)","(2,488,10)","(2,863,10)","(2,782,4)","(2,346,3)","(1,541,1)"}'),
  (14, '{"(5,158,1)","(2,456,1)","(1,907,1)","(1,29,16)","(6,601,1)"}'),
  (15, '{"(1,459,1)","(4,91,1)","(1,212,4)","(2,917,1)","(4,631,1)","(2,16,1)","(1,739,1)","(1,55,12)","(4,995,7)"}'),
  (16, '{"(5,936,1)","(10,169,1)","(2,302,4)","(2,801,1)","(10,521,13)"}'),
  (17, '{"(10,140,7)"}'),
  (18, '{"(1,483,1)","(10,36,1)","(2,745,1)","(1,412,9)","(5,55,1)"}'),
  (19, '{"(4,20,1)","(1,599,1)","(5,782,4)","(1,447,1)","(4,480,1)","(3,519,11)","(6,567,14)","(1,504,1)","(2,910,1)"}'),
  (20, '{"(2,505,1)","(10,922,1)","(1,966,1)","(4,525,2)","(2,354,11)","(6,98,10)","(1,195,1)","(1,675,1)"}'),
  (21, '{"(10,460,1)","(6,247,9)"}'),
  (22, '{"(2,532,9)","(10,211,3)","(1,518,1)","(10,981,8)","(3,155,7)","(2,691,1)","(3,973,1)"}'),
  (23, '{"(10,665,1)","(1,864,1)","(1,249,1)","(3,234,1)","(10,253,1)"}'),
  (24, '{"(3,414,1)","(6,303,5)","(1,997,1)"}'),
  (25, '{"(6,534,1)","(2,65,1)","(3,36,1)","(2,66,8)","(5,385,12)","(2,612,1)"}'),
  (26, '{"(2,713,10)","(5,661,1)","(10,716,13)","(2,453,1)","(2,852,1)","(1,428,1)","(2,400,1)","(1,718,15)","(1,583,1)","(10,383,1)"}'),
  (27, '{"(4,859,1)","(6,749,16)","(1,194,1)","(2,268,1)"}'),
  (28, '{"(2,67,9)","(3,335,1)","(4,428,1)"}'),
  (29, '{"(1,931,1)","(6,811,3)","(2,544,1)","(10,113,10)","(1,312,1)","(2,65,7)","(2,204,1)","(1,869,16)","(4,492,1)"}'),
  (30, '{"(1,337,1)"}'),
  (31, '{"(6,133,1)","(1,769,1)","(1,766,3)"}'),
  (32, '{"(2,765,1)","(6,525,1)","(5,223,15)","(4,427,1)","(10,858,1)","(6,737,1)","(1,828,1)"}'),
  (33, '{"(3,877,1)","(5,285,2)","(6,672,1)","(2,519,1)","(5,138,5)"}'),
  (34, '{"(4,677,1)","(2,90,1)","(1,82,9)","(5,236,1)","(4,86,1)","(10,7,9)","(1,388,15)","(5,606,8)","(4,976,1)","(2,440,1)"}'),
  (35, '{"(5,781,3)","(10,774,1)","(10,579,1)","(1,558,1)","(6,39,1)","(6,921,8)","(1,596,1)","(1,166,3)","(10,147,14)","(1,577,1)"}'),
  (36, '{"(3,638,1)","(3,903,5)","(3,275,7)","(4,354,1)","(6,203,1)","(3,996,1)","(2,220,12)","(10,796,3)"}'),
  (37, '{"(1,794,16)","(6,990,1)"}'),
  (38, '{"(6,46,3)","(4,726,1)","(2,968,10)","(4,969,11)"}'),
  (39, '{"(1,685,12)","(1,676,3)","(3,400,1)","(1,303,1)","(1,134,16)","(3,38,1)","(6,608,10)"}'),
  (40, '{"(10,72,1)","(10,617,1)","(5,893,1)","(1,248,1)"}'),
  (41, '{"(5,287,1)","(5,930,2)"}'),
  (42, '{"(5,807,1)","(5,775,12)","(6,940,1)","(1,731,13)","(1,965,1)","(3,118,15)","(1,578,10)","(1,915,1)","(4,978,5)","(1,71,1)"}'),
  (43, '{"(2,503,1)","(1,103,15)","(10,573,5)","(2,628,15)","(1,128,10)","(3,788,10)","(1,616,3)","(1,343,1)","(10,687,1)"}'),
  (44, '{"(10,665,7)","(1,602,1)","(2,624,1)"}'),
  (45, '{"(3,13,1)"}'),
  (46, '{"(2,636,1)","(2,449,16)","(2,465,2)","(2,287,4)","(1,919,6)"}'),
  (47, '{"(6,159,11)","(10,857,4)","(6,540,2)","(2,183,1)","(4,899,16)"}'),
  (48, '{"(5,628,15)","(6,580,12)","(1,842,4)","(1,821,1)","(1,271,1)"}'),
  (49, '{"(10,760,1)","(1,363,1)","(4,693,1)","(4,636,8)","(3,738,5)"}'),
  (50, '{"(1,776,1)","(1,134,16)"}'),
  (51, '{"(1,260,7)","(3,552,14)"}'),
  (52, '{"(5,498,5)","(1,107,1)","(2,648,1)","(2,307,1)","(2,124,1)","(2,937,1)","(3,141,1)","(4,546,1)","(3,495,2)"}'),
  (53, '{"(3,682,9)","(4,367,1)"}'),
  (54, '{"(5,987,1)","(2,235,1)","(4,208,1)","(3,932,1)","(4,225,2)","(10,379,6)","(6,777,1)","(1,887,4)"}'),
  (55, '{"(6,640,1)","(1,677,1)","(1,636,8)"}'),
  (56, '{"(4,711,8)","(2,447,1)","(1,371,1)","(3,872,1)","(2,919,6)"}'),
  (57, '{"(3,369,11)","(1,158,1)","(1,114,1)","(1,323,1)","(10,317,1)","(3,315,1)","(6,678,1)"}'),
  (58, '{"(4,237,1)","(1,220,1)","(3,472,9)","(5,989,1)","(3,670,1)"}'),
  (59, '{"(2,424,6)","(3,874,6)","(2,89,1)","(2,382,1)","(3,526,1)"}'),
  (60, '{"(2,226,3)"}'),
  (61, '{"(3,650,7)","(1,551,1)"}'),
  (62, '{"(10,817,1)","(2,207,1)","(3,62,1)","(10,9,1)","(10,548,1)"}'),
  (63, '{"(2,511,3)","(2,575,7)","(1,59,1)","(2,680,7)","(1,20,1)","(4,92,4)"}'),
  (64, '{"(10,146,1)","(10,456,1)","(5,85,1)","(10,799,1)","(4,264,1)"}'),
  (65, '{"(5,756,8)","(1,272,1)","(1,983,1)","(4,679,1)","(10,292,1)","(1,694,1)","(1,928,15)","(3,714,1)","(10,280,12)","(1,682,1)"}'),
  (66, '{"(2,673,1)","(6,178,1)","(3,236,1)","(1,478,1)"}'),
  (67, '{"(1,669,11)","(2,724,1)","(6,67,1)","(1,729,11)","(1,41,13)"}'),
  (68, '{"(2,851,13)","(3,145,1)","(1,646,3)","(6,519,1)","(3,2,4)"}'),
  (69, '{"(10,74,1)","(4,841,1)","(1,360,1)","(1,642,1)","(1,461,13)","(1,146,13)","(1,701,1)","(1,109,1)","(2,743,1)"}'),
  (70, '{"(2,989,1)","(1,96,8)","(3,269,1)","(1,374,1)","(10,98,1)","(5,360,2)","(1,707,4)"}'),
  (71, '{"(10,903,1)","(1,807,14)"}'),
  (72, '{"(10,956,1)","(5,192,1)","(1,150,1)"}'),
  (73, '{"(2,804,11)"}'),
  (74, '{"(3,142,9)","(4,839,16)","(2,187,9)","(6,804,11)","(6,879,1)"}'),
  (75, '{"(10,779,16)","(1,976,1)","(10,844,1)","(1,308,1)","(5,33,1)","(1,401,1)","(5,841,3)","(3,293,1)","(1,301,1)","(10,565,1)"}'),
  (76, '{"(1,252,1)","(1,270,1)","(3,532,1)","(10,864,11)","(10,505,1)","(2,171,1)","(1,177,1)","(10,556,1)"}'),
  (77, '{"(2,427,1)","(6,124,1)","(2,185,1)","(5,423,1)","(2,768,1)","(10,370,12)"}'),
  (78, '{"(5,404,1)"}'),
  (79, '{"(1,808,1)","(10,180,1)","(6,303,1)","(5,637,1)","(2,489,11)","(1,252,14)","(6,269,16)","(3,919,1)","(1,727,9)","(2,955,1)"}'),
  (80, '{"(4,761,13)","(1,182,4)","(2,772,1)"}'),
  (81, '{"(1,815,1)","(3,567,1)","(1,217,1)","(2,855,1)"}'),
  (82, '{"(1,839,1)","(4,925,1)","(2,387,1)","(1,269,16)","(1,783,1)"}'),
  (83, '{"(10,702,14)"}'),
  (84, '{"(3,766,1)","(4,11,1)","(5,398,1)","(6,844,1)","(6,188,1)","(2,704,16)","(2,584,16)","(10,93,1)","(3,211,1)"}'),
  (85, '{"(1,356,13)"}'),
  (86, '{"(2,467,1)","(5,8,1)","(5,526,1)","(5,121,1)","(1,553,1)","(10,508,15)","(2,660,1)","(5,937,9)","(6,450,1)","(10,367,9)"}'),
  (87, '{"(6,261,1)","(3,217,1)","(3,981,1)","(2,716,13)","(4,336,1)"}'),
  (88, '{"(2,120,1)","(10,872,1)","(1,536,13)","(3,3,5)","(3,16,3)","(3,427,9)","(1,806,1)","(1,295,12)"}'),
  (89, '{"(1,335,7)","(1,987,14)"}'),
  (90, '{"(2,347,1)"}'),
  (91, '{"(1,904,1)","(1,814,6)","(5,927,14)","(6,982,1)","(4,351,8)","(1,292,1)","(4,908,10)"}'),
  (92, '{"(2,583,15)","(2,760,1)","(5,522,1)","(2,76,3)","(4,366,8)"}'),
  (93, '{"(1,536,13)","(1,802,9)","(2,85,1)","(5,193,15)","(3,316,1)","(4,809,1)","(10,766,1)","(2,831,1)","(2,700,12)"}'),
  (94, '{"(1,111,1)","(2,36,8)","(1,246,1)","(1,696,1)","(1,848,1)","(1,444,11)","(6,727,1)","(2,984,1)"}'),
  (95, '{"(6,44,1)","(3,78,1)","(4,166,3)","(1,405,2)"}'),
  (96, '{"(3,935,1)","(1,22,1)","(3,150,1)","(1,332,4)","(4,694,1)"}'),
  (97, '{"(10,812,1)","(5,721,1)","(10,756,8)","(2,802,9)","(2,293,1)","(2,550,1)","(3,877,1)","(5,853,15)","(2,483,5)"}'),
  (98, '{"(1,725,1)","(1,912,14)"}'),
  (99, '{"(2,79,6)"}'),
  (100, '{"(1,265,1)"}'),
  (101, '{"(10,704,1)","(3,548,10)","(6,448,1)","(10,68,10)","(10,744,11)"}'),
  (102, '{"(1,571,1)","(2,530,1)","(2,66,8)","(1,400,12)"}'),
  (103, '{"(5,822,1)","(2,343,15)","(10,931,1)","(6,115,1)","(4,758,1)","(2,194,16)","(4,139,1)","(6,970,1)","(1,626,13)","(10,188,1)"}'),
  (104, '{"(1,968,10)","(1,500,1)"}'),
  (105, '{"(2,776,1)","(1,473,1)","(1,927,14)"}'),
  (106, '{"(5,151,1)","(2,199,6)","(10,488,10)","(5,405,1)"}');
