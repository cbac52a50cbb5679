-- The centum schema's views from an embedded session over a database in
-- memory only, and the table memory limit's SQL.
CREATE TABLE t (id int PRIMARY KEY, k int, v text) WITH (bucket_count = 256, memory_limit = '1MB');
CREATE INDEX t_k ON t (k);
INSERT INTO t SELECT g, g % 4, 'row' FROM generate_series(1, 200) g;
SELECT table_name, rows, memory_limit FROM centum.table_memory;
SELECT index_name, total_buckets, sampled_buckets, entries, duplicate_keys FROM centum.hash_index_stats;
SELECT index_name, keys, height FROM centum.range_index_stats;
-- A hash index starts at its bucket_count and doubles online as rows come,
-- past two entries per bucket; an index whose key has few distinct values
-- stays as it is, since more buckets would not shorten its chains.
CREATE TABLE grows (id int PRIMARY KEY, k int) WITH (bucket_count = 8);
CREATE INDEX grows_k ON grows USING hash (k) WITH (bucket_count = 8);
INSERT INTO grows SELECT g, g % 3 FROM generate_series(1, 5000) g;
SELECT index_name, starting_buckets, total_buckets, entries FROM centum.hash_index_stats WHERE table_name = 'grows' ORDER BY 1;
SELECT * FROM grows WHERE id = 4321;
DELETE FROM grows WHERE id % 2 = 0;
SELECT count(*) FROM grows WHERE k = 1;
SELECT * FROM grows WHERE id IN (4321, 4322);
DROP TABLE grows;
-- No data directory: no log, no checkpoint files.
SELECT count(*) FROM centum.log;
SELECT count(*) FROM centum.checkpoint_files;
SELECT versions_queued >= 0 AS ok FROM centum.gc;
-- Embedded sessions have no process id.
SELECT pid, state, isolation FROM centum.transactions;
-- Where the limit stops the insert varies by a few bytes from run to
-- run, so the message is shown with the figure masked.
CREATE FUNCTION fill() RETURNS text LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO t SELECT g, 0, repeat('x', 1000) FROM generate_series(1000, 3000) g;
  RETURN 'inserted';
EXCEPTION WHEN out_of_memory THEN
  IF SQLERRM LIKE 'out of memory: table "t" holds %, which passes its memory limit of 1MB (memory_limit); rows cannot be added to it or changed until some are deleted or the limit is raised' THEN
    RETURN SQLSTATE || ': out of memory: table "t" holds ..., which passes its memory limit of 1MB';
  END IF;
  RETURN SQLSTATE || ': ' || SQLERRM;
END;
$$;
SELECT fill();
SELECT count(*) FROM t;
ALTER TABLE t SET (memory_limit = '64MB', fillfactor = 90);
INSERT INTO t SELECT g, 0, repeat('x', 1000) FROM generate_series(1000, 1100) g;
-- A rolled-back change of the limit leaves the old one.
BEGIN;
ALTER TABLE t SET (memory_limit = '1kB');
ROLLBACK;
SELECT memory_limit FROM centum.table_memory;
INSERT INTO t VALUES (5000, 1, 'fits');
ALTER TABLE t RESET (memory_limit);
SELECT memory_limit FROM centum.table_memory;
ALTER TABLE t SET (memory_limit = 'lots');
CREATE TABLE u (a int) WITH (memory_limit = -5);
DROP SCHEMA centum;
CREATE SCHEMA centum;
SELECT * FROM centum.no_such_view;
SELECT 'centum.table_memory'::regclass::oid > 0 AS known;
-- Bytes per row, per table and per index.
CREATE TABLE bpr (id int PRIMARY KEY, k int, v text);
CREATE INDEX bpr_k ON bpr USING hash (k) WITH (bucket_count = 64);
SELECT bytes_per_version IS NULL AS empty, index_bytes_per_row IS NULL AS no_rows FROM centum.table_memory WHERE table_name = 'bpr';
INSERT INTO bpr SELECT g, g % 10, 'v' || g FROM generate_series(1, 1000) g;
SELECT bytes_per_version > 0 AS versions, index_bytes_per_row > 0 AS indexes FROM centum.table_memory WHERE table_name = 'bpr';
SELECT index_name, bytes_per_row > 0 AS measured FROM centum.hash_index_stats WHERE table_name = 'bpr';
SELECT index_name, bytes_per_row > 0 AS measured FROM centum.range_index_stats WHERE table_name = 'bpr';
SELECT abs((SELECT sum(bytes_per_row) FROM centum.range_index_stats WHERE table_name = 'bpr') + (SELECT sum(bytes_per_row) FROM centum.hash_index_stats WHERE table_name = 'bpr') - index_bytes_per_row) < 1 AS adds_up FROM centum.table_memory WHERE table_name = 'bpr';
-- Outside a replicated group: no members, no applied index, nothing to wait for.
SELECT count(*) FROM centum.cluster;
SELECT centum_applied_index() IS NULL AS no_group;
SELECT centum_wait_applied(1, 10);
SELECT centum_add_member(4, '127.0.0.1:7004');
