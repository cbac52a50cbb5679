-- The virtual catalog: pg_catalog and information_schema tables made from
-- the live catalog, and the exact queries psql 15 sends for \d, \d TABLE,
-- \d INDEX, \dt, \di, \l, \dn and \du, pgbench's start-up probes and
-- tokio-postgres' type look-up. OIDs are derived from engine table ids
-- (16384 + 4096 * id) and names, so they are the same in every fresh
-- database and psql's literal OIDs can be written here.
CREATE TABLE p (id int PRIMARY KEY, name text UNIQUE NOT NULL);
CREATE TABLE t (id int PRIMARY KEY, pid int REFERENCES p(id) ON DELETE CASCADE, v int DEFAULT 42 CHECK (v > 0), s text);
CREATE INDEX t_v ON t (v);
CREATE INDEX t_s_hash ON t USING hash (s) WITH (bucket_count = 1024);
CREATE TABLE ty (a smallint, b varchar(5), c numeric(10,2), d char(3), e timestamptz, q serial, r int GENERATED ALWAYS AS IDENTITY, g int GENERATED ALWAYS AS (a * 2) STORED, u text DEFAULT 'x');
CREATE SCHEMA s;
CREATE TABLE s.other (k bigint PRIMARY KEY, d date);
SELECT c.oid, c.relname, c.relkind FROM pg_catalog.pg_class c ORDER BY c.oid;
