-- Publications: which tables' changes a pgoutput stream carries, as
-- PostgreSQL's CREATE, ALTER and DROP PUBLICATION declare them and its
-- catalogs and a subscriber's table sync read them.
CREATE TABLE a (id int PRIMARY KEY, v text);
CREATE TABLE b (id int PRIMARY KEY, n int);
CREATE TABLE c (x int);
CREATE TABLE scratch (id int PRIMARY KEY) WITH (durability = schema_only);
CREATE VIEW va AS SELECT * FROM a;
CREATE PUBLICATION p1 FOR TABLE a, b;
CREATE PUBLICATION p1;
CREATE PUBLICATION p2 FOR ALL TABLES WITH (publish = 'insert, update');
CREATE PUBLICATION p3;
CREATE PUBLICATION p4 FOR TABLE nope;
CREATE PUBLICATION p4 FOR TABLE va;
CREATE PUBLICATION p4 FOR TABLE scratch;
CREATE PUBLICATION p4 WITH (publish = 'insert, nope');
CREATE PUBLICATION p4 WITH (nope = 'x');
SELECT pubname, puballtables, pubinsert, pubupdate, pubdelete, pubtruncate, pubviaroot FROM pg_publication ORDER BY pubname;
-- FOR ALL TABLES leaves out what is never logged.
SELECT pubname, schemaname, tablename, attnames, rowfilter FROM pg_publication_tables ORDER BY pubname, tablename;
SELECT p.pubname, c.relname, r.prqual, r.prattrs FROM pg_publication_rel r JOIN pg_publication p ON p.oid = r.prpubid JOIN pg_class c ON c.oid = r.prrelid ORDER BY 1, 2;
-- A table without a key cannot take the updates or deletes a
-- publication carries: a subscriber could not tell which row changed.
INSERT INTO c VALUES (1), (2);
UPDATE c SET x = 3 WHERE x = 1;
DELETE FROM c WHERE x = 2;
UPDATE b SET n = 1;
ALTER PUBLICATION p3 ADD TABLE c;
DELETE FROM c;
ALTER PUBLICATION p3 ADD TABLE ONLY c;
ALTER PUBLICATION p3 DROP TABLE a;
ALTER PUBLICATION p3 SET TABLE a, b;
ALTER PUBLICATION p2 ADD TABLE a;
ALTER PUBLICATION p2 DROP TABLE a;
ALTER PUBLICATION p3 SET (publish = 'delete');
ALTER PUBLICATION p3 RENAME TO p5;
ALTER PUBLICATION p5 RENAME TO p1;
ALTER PUBLICATION nope RENAME TO p6;
SELECT pubname, pubinsert, pubupdate, pubdelete FROM pg_publication ORDER BY pubname;
SELECT tablename FROM pg_publication_tables WHERE pubname = 'p5' ORDER BY 1;
-- A renamed table stays published; a dropped one leaves its publications.
ALTER TABLE b RENAME TO b2;
DROP TABLE a CASCADE;
SELECT pubname, tablename FROM pg_publication_tables ORDER BY 1, 2;
-- What a PostgreSQL 15 subscriber asks when it copies a table.
SELECT DISTINCT t.schemaname, t.tablename, t.attnames FROM pg_catalog.pg_publication_tables t WHERE t.pubname IN ('p1', 'p5') ORDER BY 1, 2;
SELECT DISTINCT (CASE WHEN (array_length(gpt.attrs, 1) = c.relnatts) THEN NULL ELSE gpt.attrs END) AS attrs FROM pg_publication p, LATERAL pg_get_publication_tables(p.pubname) gpt, pg_class c WHERE c.relname = 'b2' AND c.oid = gpt.relid AND p.pubname IN ('p1');
SELECT c.relname, gpt.attrs, gpt.qual FROM pg_publication p, LATERAL pg_get_publication_tables(p.pubname) gpt, pg_class c WHERE c.oid = gpt.relid AND p.pubname = 'p2' ORDER BY 1;
SELECT i.relname FROM pg_class i WHERE i.oid = pg_get_replica_identity_index((SELECT oid FROM pg_class WHERE relname = 'b2'));
SELECT pg_get_replica_identity_index((SELECT oid FROM pg_class WHERE relname = 'c')) IS NULL AS no_key;
SELECT a.attnum, a.attname, a.attnum = ANY(i.indkey) AS key FROM pg_catalog.pg_attribute a LEFT JOIN pg_catalog.pg_index i ON (i.indexrelid = pg_get_replica_identity_index((SELECT oid FROM pg_class WHERE relname = 'b2'))) WHERE a.attnum > 0::pg_catalog.int2 AND NOT a.attisdropped AND a.attgenerated = '' AND a.attrelid = (SELECT oid FROM pg_class WHERE relname = 'b2') ORDER BY a.attnum;
DROP PUBLICATION p1, p5;
DROP PUBLICATION p1;
DROP PUBLICATION IF EXISTS p1, p2;
SELECT count(*) FROM pg_publication;
