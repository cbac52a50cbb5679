-- The engine's views in the centum schema over a known workload. Only
-- figures the workload fixes are shown; the rest (bytes, timestamps,
-- rates) are checked for sense.
CREATE TABLE accounts (
    id int PRIMARY KEY,
    branch int NOT NULL,
    note text
) WITH (bucket_count = 1024);
CREATE INDEX accounts_by_branch ON accounts USING hash (branch) WITH (bucket_count = 64);
CREATE INDEX accounts_by_note ON accounts (note);
CREATE UNLOGGED TABLE scratch (k int PRIMARY KEY, v text);
INSERT INTO accounts SELECT g, g % 10, 'note ' || g FROM generate_series(1, 1000) g;
INSERT INTO scratch SELECT g, 'v' FROM generate_series(1, 100) g;
UPDATE accounts SET note = 'changed' WHERE id <= 100;
DELETE FROM accounts WHERE id > 900;
VACUUM;
\dv centum.*
\d centum.hash_index_stats
SELECT schema_name, table_name, durability, rows, versions, dead_versions, garbage_bytes,
       row_bytes > 0 AS has_rows, index_bytes > 0 AS has_indexes,
       total_bytes = row_bytes + index_bytes AS adds_up, memory_limit
  FROM centum.table_memory ORDER BY table_name;
SELECT table_name, index_name, total_buckets, sampled_buckets, entries, duplicate_keys,
       empty_buckets BETWEEN 0 AND total_buckets AS empty_in_range,
       avg_chain_length >= 1 AS avg_sane, max_chain_length >= 1 AS max_sane,
       bytes >= 8 * total_buckets AS counts_buckets
  FROM centum.hash_index_stats ORDER BY table_name, index_name;
SELECT table_name, index_name, keys, height >= 1 AS has_height, leaf_nodes >= 1 AS has_leaves,
       fill > 0 AND fill <= 1 AS fill_sane, bytes > 0 AS has_bytes
  FROM centum.range_index_stats ORDER BY index_name;
CHECKPOINT;
SELECT file_type, state, count(*) > 0 AS present,
       bool_and(file LIKE CASE file_type WHEN 'DATA' THEN 'data-%.cdat' ELSE 'delta-%.cdlt' END) AS named,
       bool_and(bytes > 0) AS sized
  FROM centum.checkpoint_files WHERE state = 'ACTIVE' GROUP BY file_type, state ORDER BY file_type;
SELECT sum(rows) FILTER (WHERE file_type = 'DATA') >= 900 AS data_rows,
       sum(rows) FILTER (WHERE file_type = 'DELTA') >= 100 AS delta_rows
  FROM centum.checkpoint_files WHERE state = 'ACTIVE';
SELECT durable_ts = appended_ts AS all_durable, records >= 5 AS records, flushes >= 1 AS flushed,
       largest_batch_records >= 1 AS batched, pending_records, delayed_records, failed_writes, failure
  FROM centum.log;
SELECT versions_queued, oldest_snapshot_pid = pg_backend_pid() AS mine,
       oldest_snapshot_ts <= horizon_ts + 1000000 AS ts_sane
  FROM centum.gc;
BEGIN ISOLATION LEVEL SERIALIZABLE;
SELECT count(*) FROM accounts WHERE id <= 10;
UPDATE accounts SET note = 'again' WHERE id = 1;
SELECT pid = pg_backend_pid() AS mine, state, isolation, read_set >= 1 AS has_reads, write_set,
       holds_rows, waiting_for_txid, commit_dependency_ts, age_s >= 0 AS age_sane
  FROM centum.transactions WHERE pid = pg_backend_pid();
COMMIT;
ALTER TABLE scratch SET (memory_limit = '64MB');
SELECT table_name, memory_limit FROM centum.table_memory WHERE memory_limit IS NOT NULL;
ALTER TABLE scratch RESET (memory_limit);
SELECT count(*) FROM centum.table_memory WHERE memory_limit IS NOT NULL;
