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
