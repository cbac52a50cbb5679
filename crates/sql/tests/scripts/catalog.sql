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
-- psql 15: \d
SELECT n.nspname as "Schema",
  c.relname as "Name",
  CASE c.relkind WHEN 'r' THEN 'table' WHEN 'v' THEN 'view' WHEN 'm' THEN 'materialized view' WHEN 'i' THEN 'index' WHEN 'S' THEN 'sequence' WHEN 't' THEN 'TOAST table' WHEN 'f' THEN 'foreign table' WHEN 'p' THEN 'partitioned table' WHEN 'I' THEN 'partitioned index' END as "Type",
  pg_catalog.pg_get_userbyid(c.relowner) as "Owner"
FROM pg_catalog.pg_class c
     LEFT JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
     LEFT JOIN pg_catalog.pg_am am ON am.oid = c.relam
WHERE c.relkind IN ('r','p','v','m','S','f','')
      AND n.nspname <> 'pg_catalog'
      AND n.nspname !~ '^pg_toast'
      AND n.nspname <> 'information_schema'
  AND pg_catalog.pg_table_is_visible(c.oid)
ORDER BY 1,2;
-- psql 15: \d t
SELECT c.oid,
  n.nspname,
  c.relname
FROM pg_catalog.pg_class c
     LEFT JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
WHERE c.relname OPERATOR(pg_catalog.~) '^(t)$' COLLATE pg_catalog.default
  AND pg_catalog.pg_table_is_visible(c.oid)
ORDER BY 2, 3;
SELECT c.relchecks, c.relkind, c.relhasindex, c.relhasrules, c.relhastriggers, c.relrowsecurity, c.relforcerowsecurity, false AS relhasoids, c.relispartition, '', c.reltablespace, CASE WHEN c.reloftype = 0 THEN '' ELSE c.reloftype::pg_catalog.regtype::pg_catalog.text END, c.relpersistence, c.relreplident, am.amname
FROM pg_catalog.pg_class c
 LEFT JOIN pg_catalog.pg_class tc ON (c.reltoastrelid = tc.oid)
LEFT JOIN pg_catalog.pg_am am ON (c.relam = am.oid)
WHERE c.oid = '24576';
SELECT a.attname,
  pg_catalog.format_type(a.atttypid, a.atttypmod),
  (SELECT pg_catalog.pg_get_expr(d.adbin, d.adrelid, true)
   FROM pg_catalog.pg_attrdef d
   WHERE d.adrelid = a.attrelid AND d.adnum = a.attnum AND a.atthasdef),
  a.attnotnull,
  (SELECT c.collname FROM pg_catalog.pg_collation c, pg_catalog.pg_type t
   WHERE c.oid = a.attcollation AND t.oid = a.atttypid AND a.attcollation <> t.typcollation) AS attcollation,
  a.attidentity,
  a.attgenerated
FROM pg_catalog.pg_attribute a
WHERE a.attrelid = '24576' AND a.attnum > 0 AND NOT a.attisdropped
ORDER BY a.attnum;
SELECT c2.relname, i.indisprimary, i.indisunique, i.indisclustered, i.indisvalid, pg_catalog.pg_get_indexdef(i.indexrelid, 0, true),
  pg_catalog.pg_get_constraintdef(con.oid, true), contype, condeferrable, condeferred, i.indisreplident, c2.reltablespace
FROM pg_catalog.pg_class c, pg_catalog.pg_class c2, pg_catalog.pg_index i
  LEFT JOIN pg_catalog.pg_constraint con ON (conrelid = i.indrelid AND conindid = i.indexrelid AND contype IN ('p','u','x'))
WHERE c.oid = '24576' AND c.oid = i.indrelid AND i.indexrelid = c2.oid
ORDER BY i.indisprimary DESC, c2.relname;
SELECT r.conname, pg_catalog.pg_get_constraintdef(r.oid, true)
FROM pg_catalog.pg_constraint r
WHERE r.conrelid = '24576' AND r.contype = 'c'
ORDER BY 1;
SELECT true as sametable, conname,
  pg_catalog.pg_get_constraintdef(r.oid, true) as condef,
  conrelid::pg_catalog.regclass AS ontable
FROM pg_catalog.pg_constraint r
WHERE r.conrelid = '24576' AND r.contype = 'f'
     AND conparentid = 0
ORDER BY conname;
SELECT conname, conrelid::pg_catalog.regclass AS ontable,
       pg_catalog.pg_get_constraintdef(oid, true) AS condef
  FROM pg_catalog.pg_constraint c
 WHERE confrelid IN (SELECT pg_catalog.pg_partition_ancestors('24576')
                     UNION ALL VALUES ('24576'::pg_catalog.regclass))
       AND contype = 'f' AND conparentid = 0
ORDER BY conname;
SELECT pol.polname, pol.polpermissive,
  CASE WHEN pol.polroles = '{0}' THEN NULL ELSE pg_catalog.array_to_string(array(select rolname from pg_catalog.pg_roles where oid = any (pol.polroles) order by 1),',') END,
  pg_catalog.pg_get_expr(pol.polqual, pol.polrelid),
  pg_catalog.pg_get_expr(pol.polwithcheck, pol.polrelid),
  CASE pol.polcmd
    WHEN 'r' THEN 'SELECT'
    WHEN 'a' THEN 'INSERT'
    WHEN 'w' THEN 'UPDATE'
    WHEN 'd' THEN 'DELETE'
    END AS cmd
FROM pg_catalog.pg_policy pol
WHERE pol.polrelid = '24576' ORDER BY 1;
SELECT oid, stxrelid::pg_catalog.regclass, stxnamespace::pg_catalog.regnamespace::pg_catalog.text AS nsp, stxname,
pg_catalog.pg_get_statisticsobjdef_columns(oid) AS columns,
  'd' = any(stxkind) AS ndist_enabled,
  'f' = any(stxkind) AS deps_enabled,
  'm' = any(stxkind) AS mcv_enabled,
stxstattarget
FROM pg_catalog.pg_statistic_ext
WHERE stxrelid = '24576'
ORDER BY nsp, stxname;
SELECT pubname
     , NULL
     , NULL
FROM pg_catalog.pg_publication p
     JOIN pg_catalog.pg_publication_namespace pn ON p.oid = pn.pnpubid
     JOIN pg_catalog.pg_class pc ON pc.relnamespace = pn.pnnspid
WHERE pc.oid ='24576' and pg_catalog.pg_relation_is_publishable('24576')
UNION
SELECT pubname
     , pg_get_expr(pr.prqual, c.oid)
     , (CASE WHEN pr.prattrs IS NOT NULL THEN
         (SELECT string_agg(attname, ', ')
           FROM pg_catalog.generate_series(0, pg_catalog.array_upper(pr.prattrs::pg_catalog.int2[], 1)) s,
                pg_catalog.pg_attribute
          WHERE attrelid = pr.prrelid AND attnum = prattrs[s])
        ELSE NULL END) FROM pg_catalog.pg_publication p
     JOIN pg_catalog.pg_publication_rel pr ON p.oid = pr.prpubid
     JOIN pg_catalog.pg_class c ON c.oid = pr.prrelid
WHERE pr.prrelid = '24576'
UNION
SELECT pubname
     , NULL
     , NULL
FROM pg_catalog.pg_publication p
WHERE p.puballtables AND pg_catalog.pg_relation_is_publishable('24576')
ORDER BY 1;
SELECT t.tgname, pg_catalog.pg_get_triggerdef(t.oid, true), t.tgenabled, t.tgisinternal,
  CASE WHEN t.tgparentid != 0 THEN
    (SELECT u.tgrelid::pg_catalog.regclass
     FROM pg_catalog.pg_trigger AS u,
          pg_catalog.pg_partition_ancestors(t.tgrelid) WITH ORDINALITY AS a(relid, depth)
     WHERE u.tgname = t.tgname AND u.tgrelid = a.relid
           AND u.tgparentid = 0
     ORDER BY a.depth LIMIT 1)
  END AS parent
FROM pg_catalog.pg_trigger t
WHERE t.tgrelid = '24576' AND (NOT t.tgisinternal OR (t.tgisinternal AND t.tgenabled = 'D'))
ORDER BY 1;
SELECT c.oid::pg_catalog.regclass
FROM pg_catalog.pg_class c, pg_catalog.pg_inherits i
WHERE c.oid = i.inhparent AND i.inhrelid = '24576'
  AND c.relkind != 'p' AND c.relkind != 'I'
ORDER BY inhseqno;
SELECT c.oid::pg_catalog.regclass, c.relkind, inhdetachpending, pg_catalog.pg_get_expr(c.relpartbound, c.oid)
FROM pg_catalog.pg_class c, pg_catalog.pg_inherits i
WHERE c.oid = i.inhrelid AND i.inhparent = '24576'
ORDER BY pg_catalog.pg_get_expr(c.relpartbound, c.oid) = 'DEFAULT', c.oid::pg_catalog.regclass::pg_catalog.text;
-- psql 15: \d t_s_hash
SELECT c.oid,
  n.nspname,
  c.relname
FROM pg_catalog.pg_class c
     LEFT JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
WHERE c.relname OPERATOR(pg_catalog.~) '^(t_s_hash)$' COLLATE pg_catalog.default
  AND pg_catalog.pg_table_is_visible(c.oid)
ORDER BY 2, 3;
SELECT c.relchecks, c.relkind, c.relhasindex, c.relhasrules, c.relhastriggers, c.relrowsecurity, c.relforcerowsecurity, false AS relhasoids, c.relispartition, '', c.reltablespace, CASE WHEN c.reloftype = 0 THEN '' ELSE c.reloftype::pg_catalog.regtype::pg_catalog.text END, c.relpersistence, c.relreplident, am.amname
FROM pg_catalog.pg_class c
 LEFT JOIN pg_catalog.pg_class tc ON (c.reltoastrelid = tc.oid)
LEFT JOIN pg_catalog.pg_am am ON (c.relam = am.oid)
WHERE c.oid = '24641';
SELECT a.attname,
  pg_catalog.format_type(a.atttypid, a.atttypmod),
  CASE WHEN a.attnum <= (SELECT i.indnkeyatts FROM pg_catalog.pg_index i WHERE i.indexrelid = '24641') THEN 'yes' ELSE 'no' END AS is_key,
  pg_catalog.pg_get_indexdef(a.attrelid, a.attnum, TRUE) AS indexdef
FROM pg_catalog.pg_attribute a
WHERE a.attrelid = '24641' AND a.attnum > 0 AND NOT a.attisdropped
ORDER BY a.attnum;
SELECT i.indisunique, i.indisprimary, i.indisclustered, i.indisvalid,
  (NOT i.indimmediate) AND EXISTS (SELECT 1 FROM pg_catalog.pg_constraint WHERE conrelid = i.indrelid AND conindid = i.indexrelid AND contype IN ('p','u','x') AND condeferrable) AS condeferrable,
  (NOT i.indimmediate) AND EXISTS (SELECT 1 FROM pg_catalog.pg_constraint WHERE conrelid = i.indrelid AND conindid = i.indexrelid AND contype IN ('p','u','x') AND condeferred) AS condeferred,
i.indisreplident,
i.indnullsnotdistinct,
  a.amname, c2.relname, pg_catalog.pg_get_expr(i.indpred, i.indrelid, true)
FROM pg_catalog.pg_index i, pg_catalog.pg_class c, pg_catalog.pg_class c2, pg_catalog.pg_am a
WHERE i.indexrelid = c.oid AND c.oid = '24641' AND c.relam = a.oid
AND i.indrelid = c2.oid;
-- psql 15: \d p_pkey
SELECT c.oid,
  n.nspname,
  c.relname
FROM pg_catalog.pg_class c
     LEFT JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
WHERE c.relname OPERATOR(pg_catalog.~) '^(p_pkey)$' COLLATE pg_catalog.default
  AND pg_catalog.pg_table_is_visible(c.oid)
ORDER BY 2, 3;
SELECT c.relchecks, c.relkind, c.relhasindex, c.relhasrules, c.relhastriggers, c.relrowsecurity, c.relforcerowsecurity, false AS relhasoids, c.relispartition, '', c.reltablespace, CASE WHEN c.reloftype = 0 THEN '' ELSE c.reloftype::pg_catalog.regtype::pg_catalog.text END, c.relpersistence, c.relreplident, am.amname
FROM pg_catalog.pg_class c
 LEFT JOIN pg_catalog.pg_class tc ON (c.reltoastrelid = tc.oid)
LEFT JOIN pg_catalog.pg_am am ON (c.relam = am.oid)
WHERE c.oid = '21266';
SELECT a.attname,
  pg_catalog.format_type(a.atttypid, a.atttypmod),
  CASE WHEN a.attnum <= (SELECT i.indnkeyatts FROM pg_catalog.pg_index i WHERE i.indexrelid = '21266') THEN 'yes' ELSE 'no' END AS is_key,
  pg_catalog.pg_get_indexdef(a.attrelid, a.attnum, TRUE) AS indexdef
FROM pg_catalog.pg_attribute a
WHERE a.attrelid = '21266' AND a.attnum > 0 AND NOT a.attisdropped
ORDER BY a.attnum;
SELECT i.indisunique, i.indisprimary, i.indisclustered, i.indisvalid,
  (NOT i.indimmediate) AND EXISTS (SELECT 1 FROM pg_catalog.pg_constraint WHERE conrelid = i.indrelid AND conindid = i.indexrelid AND contype IN ('p','u','x') AND condeferrable) AS condeferrable,
  (NOT i.indimmediate) AND EXISTS (SELECT 1 FROM pg_catalog.pg_constraint WHERE conrelid = i.indrelid AND conindid = i.indexrelid AND contype IN ('p','u','x') AND condeferred) AS condeferred,
i.indisreplident,
i.indnullsnotdistinct,
  a.amname, c2.relname, pg_catalog.pg_get_expr(i.indpred, i.indrelid, true)
FROM pg_catalog.pg_index i, pg_catalog.pg_class c, pg_catalog.pg_class c2, pg_catalog.pg_am a
WHERE i.indexrelid = c.oid AND c.oid = '21266' AND c.relam = a.oid
AND i.indrelid = c2.oid;
-- psql 15: \dt
SELECT n.nspname as "Schema",
  c.relname as "Name",
  CASE c.relkind WHEN 'r' THEN 'table' WHEN 'v' THEN 'view' WHEN 'm' THEN 'materialized view' WHEN 'i' THEN 'index' WHEN 'S' THEN 'sequence' WHEN 't' THEN 'TOAST table' WHEN 'f' THEN 'foreign table' WHEN 'p' THEN 'partitioned table' WHEN 'I' THEN 'partitioned index' END as "Type",
  pg_catalog.pg_get_userbyid(c.relowner) as "Owner"
FROM pg_catalog.pg_class c
     LEFT JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
     LEFT JOIN pg_catalog.pg_am am ON am.oid = c.relam
WHERE c.relkind IN ('r','p','')
      AND n.nspname <> 'pg_catalog'
      AND n.nspname !~ '^pg_toast'
      AND n.nspname <> 'information_schema'
  AND pg_catalog.pg_table_is_visible(c.oid)
ORDER BY 1,2;
-- psql 15: \di
SELECT n.nspname as "Schema",
  c.relname as "Name",
  CASE c.relkind WHEN 'r' THEN 'table' WHEN 'v' THEN 'view' WHEN 'm' THEN 'materialized view' WHEN 'i' THEN 'index' WHEN 'S' THEN 'sequence' WHEN 't' THEN 'TOAST table' WHEN 'f' THEN 'foreign table' WHEN 'p' THEN 'partitioned table' WHEN 'I' THEN 'partitioned index' END as "Type",
  pg_catalog.pg_get_userbyid(c.relowner) as "Owner",
  c2.relname as "Table"
FROM pg_catalog.pg_class c
     LEFT JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
     LEFT JOIN pg_catalog.pg_am am ON am.oid = c.relam
     LEFT JOIN pg_catalog.pg_index i ON i.indexrelid = c.oid
     LEFT JOIN pg_catalog.pg_class c2 ON i.indrelid = c2.oid
WHERE c.relkind IN ('i','I','')
      AND n.nspname <> 'pg_catalog'
      AND n.nspname !~ '^pg_toast'
      AND n.nspname <> 'information_schema'
  AND pg_catalog.pg_table_is_visible(c.oid)
ORDER BY 1,2;
-- psql 15: \l
SELECT d.datname as "Name",
       pg_catalog.pg_get_userbyid(d.datdba) as "Owner",
       pg_catalog.pg_encoding_to_char(d.encoding) as "Encoding",
       d.datcollate as "Collate",
       d.datctype as "Ctype",
       d.daticulocale as "ICU Locale",
       CASE d.datlocprovider WHEN 'c' THEN 'libc' WHEN 'i' THEN 'icu' END AS "Locale Provider",
       pg_catalog.array_to_string(d.datacl, E'\n') AS "Access privileges"
FROM pg_catalog.pg_database d
ORDER BY 1;
-- psql 15: \dn
SELECT n.nspname AS "Name",
  pg_catalog.pg_get_userbyid(n.nspowner) AS "Owner"
FROM pg_catalog.pg_namespace n
WHERE n.nspname !~ '^pg_' AND n.nspname <> 'information_schema'
ORDER BY 1;
-- psql 15: \du
SELECT r.rolname, r.rolsuper, r.rolinherit,
  r.rolcreaterole, r.rolcreatedb, r.rolcanlogin,
  r.rolconnlimit, r.rolvaliduntil,
  ARRAY(SELECT b.rolname
        FROM pg_catalog.pg_auth_members m
        JOIN pg_catalog.pg_roles b ON (m.roleid = b.oid)
        WHERE m.member = r.oid) as memberof
, r.rolreplication
, r.rolbypassrls
FROM pg_catalog.pg_roles r
WHERE r.rolname !~ '^pg_'
ORDER BY 1;
-- psql 15: \d p, with OIDs found by subqueries instead of literals.
SELECT conname, conrelid::pg_catalog.regclass AS ontable,
       pg_catalog.pg_get_constraintdef(oid, true) AS condef
  FROM pg_catalog.pg_constraint c
 WHERE confrelid IN (SELECT pg_catalog.pg_partition_ancestors((SELECT oid FROM pg_class WHERE relname = 'p'))
                     UNION ALL VALUES ('p'::pg_catalog.regclass))
       AND contype = 'f' AND conparentid = 0
ORDER BY conname;
SELECT c2.relname, i.indisprimary, i.indisunique, pg_catalog.pg_get_indexdef(i.indexrelid, 0, true),
  pg_catalog.pg_get_constraintdef(con.oid, true), contype
FROM pg_catalog.pg_class c, pg_catalog.pg_class c2, pg_catalog.pg_index i
  LEFT JOIN pg_catalog.pg_constraint con ON (conrelid = i.indrelid AND conindid = i.indexrelid AND contype IN ('p','u','x'))
WHERE c.oid = (SELECT oid FROM pg_class WHERE relname = 'p') AND c.oid = i.indrelid AND i.indexrelid = c2.oid
ORDER BY i.indisprimary DESC, c2.relname;
-- psql 15: \d ty (identity, generated and serial columns).
SELECT a.attname,
  pg_catalog.format_type(a.atttypid, a.atttypmod),
  (SELECT pg_catalog.pg_get_expr(d.adbin, d.adrelid, true)
   FROM pg_catalog.pg_attrdef d
   WHERE d.adrelid = a.attrelid AND d.adnum = a.attnum AND a.atthasdef),
  a.attnotnull,
  a.attidentity,
  a.attgenerated
FROM pg_catalog.pg_attribute a
WHERE a.attrelid = 'ty'::regclass AND a.attnum > 0 AND NOT a.attisdropped
ORDER BY a.attnum;
-- psql 15: \dt s.*, and \d on a table outside the search path.
SELECT n.nspname as "Schema",
  c.relname as "Name",
  CASE c.relkind WHEN 'r' THEN 'table' WHEN 'p' THEN 'partitioned table' END as "Type",
  pg_catalog.pg_get_userbyid(c.relowner) as "Owner"
FROM pg_catalog.pg_class c
     LEFT JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
WHERE c.relkind IN ('r','p','')
  AND c.relname OPERATOR(pg_catalog.~) '^(.*)$' COLLATE pg_catalog.default
  AND n.nspname OPERATOR(pg_catalog.~) '^(s)$' COLLATE pg_catalog.default
ORDER BY 1,2;
SELECT c.oid::pg_catalog.regclass, pg_catalog.pg_table_is_visible(c.oid), pg_catalog.pg_get_indexdef(i.indexrelid)
FROM pg_catalog.pg_class c JOIN pg_catalog.pg_index i ON i.indrelid = c.oid
WHERE c.relname = 'other';
-- pgbench 15's start-up probes (the table is missing here, then present).
select count(*) from pgbench_branches;
select o.n, p.partstrat, pg_catalog.count(i.inhparent) from pg_catalog.pg_class as c join pg_catalog.pg_namespace as n on (n.oid = c.relnamespace) cross join lateral (select pg_catalog.array_position(pg_catalog.current_schemas(true), n.nspname)) as o(n) left join pg_catalog.pg_partitioned_table as p on (p.partrelid = c.oid) left join pg_catalog.pg_inherits as i on (c.oid = i.inhparent) where c.relname = 'pgbench_accounts' and o.n is not null group by 1, 2 order by 1 asc limit 1;
CREATE TABLE pgbench_accounts (aid int PRIMARY KEY, bid int, abalance int, filler char(84));
select o.n, p.partstrat, pg_catalog.count(i.inhparent) from pg_catalog.pg_class as c join pg_catalog.pg_namespace as n on (n.oid = c.relnamespace) cross join lateral (select pg_catalog.array_position(pg_catalog.current_schemas(true), n.nspname)) as o(n) left join pg_catalog.pg_partitioned_table as p on (p.partrelid = c.oid) left join pg_catalog.pg_inherits as i on (c.oid = i.inhparent) where c.relname = 'pgbench_accounts' and o.n is not null group by 1, 2 order by 1 asc limit 1;
-- tokio-postgres' type look-up.
SELECT t.typname, t.typtype, t.typelem, r.rngsubtype, t.typbasetype, n.nspname, t.typrelid FROM pg_catalog.pg_type t LEFT OUTER JOIN pg_catalog.pg_range r ON r.rngtypid = t.oid INNER JOIN pg_catalog.pg_namespace n ON t.typnamespace = n.oid WHERE t.oid = 1007;
-- information_schema.
SELECT table_schema, table_name, table_type FROM information_schema.tables ORDER BY 1, 2;
SELECT column_name, ordinal_position, column_default, is_nullable, data_type, character_maximum_length, numeric_precision, numeric_scale, udt_name, is_identity, is_generated
FROM information_schema.columns WHERE table_name = 'ty' ORDER BY ordinal_position;
SELECT constraint_name, table_name, constraint_type FROM information_schema.table_constraints ORDER BY 2, 1;
SELECT constraint_name, table_name, column_name, ordinal_position, position_in_unique_constraint FROM information_schema.key_column_usage ORDER BY 2, 1, 4;
SELECT schema_name FROM information_schema.schemata ORDER BY 1;
-- Functions and operators.
SELECT 't'::regclass::oid = (SELECT oid FROM pg_class WHERE relname = 't'), 'int4'::regtype, 23::regtype, 'public'::regnamespace::oid, 'pg_catalog.int4'::regtype::oid;
SELECT 'abc' ~ '^a', 'abc' !~ 'B', 'abc' ~* 'B', 'abc' !~* 'B', 'x' OPERATOR(pg_catalog.=) 'x';
SELECT array_to_string('{a,NULL,"b c"}', '-'), array_to_string('{a,NULL}', '-', '*'), array_position('{x,y}', 'y'), array_upper('{1,2,3}'::int2[], 1), ('{4,5}'::int2[])[2];
SELECT 2 = ANY('{1,2}'), 3 = ANY('{1,NULL}'), 3 = ANY('{1,2}'), ARRAY(SELECT relname FROM pg_class WHERE relname LIKE 't%' AND relkind = 'r' ORDER BY 1);
SELECT pg_size_pretty(1234567::bigint), pg_encoding_to_char(6), pg_get_userbyid(999), format_type(1043, 9), format_type(1700, 655366), obj_description(1, 'pg_class');
SELECT current_setting('server_version_num'), current_setting('search_path'), current_schemas(false), current_schemas(true);
SELECT current_setting('no_such_setting');
SELECT 'no_such_table'::regclass;
SELECT 'x' ~ '(';
SELECT relname COLLATE "C" FROM pg_class WHERE relname = 'p';
-- A user table named like a catalog table wins when unqualified.
CREATE TABLE pg_am (x int);
SELECT count(*) FROM pg_am;
SELECT count(*) FROM pg_catalog.pg_am;
DROP TABLE pg_am;
-- Roles from the catalog: \du lists them, and the first superuser is
-- reported as every object's owner.
CREATE ROLE alice LOGIN PASSWORD 'secret';
CREATE ROLE admin SUPERUSER LOGIN;
CREATE ROLE nologin;
SELECT r.rolname, r.rolsuper, r.rolinherit,
  r.rolcreaterole, r.rolcreatedb, r.rolcanlogin,
  r.rolconnlimit, r.rolvaliduntil,
  ARRAY(SELECT b.rolname
        FROM pg_catalog.pg_auth_members m
        JOIN pg_catalog.pg_roles b ON (m.roleid = b.oid)
        WHERE m.member = r.oid) as memberof
, r.rolreplication
, r.rolbypassrls
FROM pg_catalog.pg_roles r
WHERE r.rolname !~ '^pg_'
ORDER BY 1;
SELECT usename, usesuper FROM pg_user ORDER BY 1;
SELECT rolname, rolpassword IS NOT NULL AS has_password, rolpassword LIKE 'SCRAM-SHA-256$%' AS scram FROM pg_authid ORDER BY 1;
SELECT pg_catalog.pg_get_userbyid(c.relowner) AS owner, count(*) FROM pg_class c GROUP BY 1;
SELECT current_user, current_database(), (SELECT datname FROM pg_database);
-- psql 15: \d SEQUENCE, \dt+ and \l+ (sizes are bytes in memory).
SELECT pg_catalog.format_type(seqtypid, NULL) AS "Type",
       seqstart AS "Start",
       seqmin AS "Minimum",
       seqmax AS "Maximum",
       seqincrement AS "Increment",
       CASE WHEN seqcycle THEN 'yes' ELSE 'no' END AS "Cycles?",
       seqcache AS "Cache"
FROM pg_catalog.pg_sequence
WHERE seqrelid = 'ty_q_seq'::regclass;
SELECT pg_catalog.quote_ident(nspname) || '.' ||
   pg_catalog.quote_ident(relname) || '.' ||
   pg_catalog.quote_ident(attname),
   d.deptype
FROM pg_catalog.pg_class c
INNER JOIN pg_catalog.pg_depend d ON c.oid=d.refobjid
INNER JOIN pg_catalog.pg_namespace n ON n.oid=c.relnamespace
INNER JOIN pg_catalog.pg_attribute a ON (
 a.attrelid=c.oid AND
 a.attnum=d.refobjsubid)
WHERE d.classid='pg_catalog.pg_class'::pg_catalog.regclass
 AND d.refclassid='pg_catalog.pg_class'::pg_catalog.regclass
 AND d.objid='ty_q_seq'::regclass
 AND d.deptype IN ('a', 'i');
SELECT 'pg_catalog.pg_class'::regclass::oid, 'pg_class'::regclass::oid, 1259::regclass, quote_ident('Mixed Case'), quote_ident('plain');
SELECT c.relname, pg_catalog.pg_table_size(c.oid) > 0 AS has_rows, pg_catalog.pg_indexes_size(c.oid) > 0 AS has_indexes
FROM pg_catalog.pg_class c WHERE c.relname IN ('t', 'p') ORDER BY 1;
INSERT INTO p VALUES (1, 'one');
SELECT pg_catalog.pg_table_size('p'::regclass) > 0, pg_catalog.pg_total_relation_size('p'::regclass) > pg_catalog.pg_table_size('p'::regclass), pg_catalog.pg_database_size(current_database()) > 0, pg_catalog.pg_database_size('other');
-- A quoted name is a regclass for the size functions.
SELECT pg_total_relation_size('p') = pg_total_relation_size('p'::regclass), pg_relation_size('p') = pg_table_size('p'::regclass), pg_indexes_size('p') > 0;
SELECT pg_total_relation_size('no_such_table');
-- The views tools list tables and indexes with.
SELECT schemaname, tablename, tablespace, hasindexes, hasrules, hastriggers, rowsecurity FROM pg_tables WHERE schemaname IN ('public', 's') ORDER BY 1, 2;
SELECT schemaname, tablename, indexname, tablespace, indexdef FROM pg_indexes WHERE tablename IN ('p', 't', 'other') AND indexname <> 't_s_hash' ORDER BY 1, 2, 3;
SELECT count(*) FROM pg_stat_user_tables WHERE relname IN ('p', 't', 'ty');
SELECT relname, indexrelname FROM pg_stat_user_indexes WHERE relname = 't' ORDER BY 2;
SELECT datname, temp_files, conflicts, deadlocks FROM pg_stat_database WHERE datname = current_database();
-- Pseudo-types, as admin tools and query generators read them.
SELECT oid, typname, typtype, typcategory, typlen, typbyval, typalign FROM pg_type WHERE typtype = 'p' ORDER BY oid;
SELECT 'record'::regtype::oid, format_type('anyarray'::regtype, NULL), format_type(2281, NULL);
-- A view's definition by name.
CREATE VIEW pv AS SELECT id FROM p;
SELECT pg_get_viewdef('pv') = pg_get_viewdef('pv'::regclass), pg_get_viewdef('p') IS NULL;
DROP VIEW pv;
-- to_reg* and pg_get_serial_sequence, as drivers and ORMs ask them.
CREATE TABLE ser (id serial PRIMARY KEY, n int, g int GENERATED BY DEFAULT AS IDENTITY);
SELECT to_regclass('nope') IS NULL, to_regclass('ser') IS NOT NULL, to_regtype('hstore') IS NULL, to_regtype('int4') IS NOT NULL, to_regnamespace('public') IS NOT NULL, to_regnamespace('nope') IS NULL;
SELECT count(*) FROM pg_type t WHERE t.oid = to_regtype('int4');
SELECT count(*) FROM pg_class c WHERE c.oid = to_regclass('ser');
SELECT pg_get_serial_sequence('ser', 'id'), pg_get_serial_sequence('ser', 'n'), pg_get_serial_sequence('public.ser', 'g');
SELECT pg_get_serial_sequence('ser', 'nope');
-- A parameter cast to regclass is a relation's name, as SQLAlchemy's
-- inspection sends it.
PREPARE by_class AS SELECT count(*) FROM pg_class WHERE oid = $1::regclass;
EXECUTE by_class('ser');
EXECUTE by_class('public.ser');
PREPARE class_oid AS SELECT $1::regclass::oid > 0;
EXECUTE class_oid('pg_catalog.pg_class');
EXECUTE class_oid('nope');
DEALLOCATE by_class;
DEALLOCATE class_oid;
-- OIDs are of type oid; the catalogs' vectors are int2vector and
-- oidvector, arrays of smallint and oid to clients.
SELECT pg_typeof(c.oid), pg_typeof(c.relnamespace), pg_typeof(i.indkey), pg_typeof(i.indclass)
FROM pg_class c, pg_index i WHERE c.relname = 'p' AND i.indrelid = 'p'::regclass LIMIT 1;
SELECT 23::oid, '25'::oid = 25, pg_typeof(23::oid), pg_typeof('{1,2}'::oid[]), 7::oid < 8;
SELECT '4294967296'::oid;
SELECT 'x'::oid;
SELECT typname, typelem FROM pg_type WHERE typname IN ('int2vector', 'oidvector') ORDER BY 1;
SELECT i.indkey, i.indkey::text, i.indkey[0] FROM pg_index i WHERE i.indrelid = 'p'::regclass ORDER BY 2;
SELECT a.attname FROM pg_attribute a, pg_index i WHERE i.indrelid = 'p'::regclass AND a.attrelid = i.indrelid AND a.attnum = ANY (i.indkey) ORDER BY 1;
-- A character(n) beside another string type compares as text, without
-- its trailing blanks.
SELECT 'a'::char(3) = 'a'::text, ''::text <> ' '::char(1), 'ab'::varchar = 'ab '::char(3), 'a'::char(3) < 'a '::text;
SELECT d FROM ty WHERE d = 'x'::text;
