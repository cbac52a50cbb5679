CREATE ROLE reader LOGIN;
CREATE ROLE writer LOGIN;
CREATE TABLE notes (id serial PRIMARY KEY, body text);
INSERT INTO notes (body) VALUES ('first');
CREATE VIEW note_bodies AS SELECT body FROM notes;
GRANT SELECT ON notes, note_bodies TO reader;
GRANT SELECT, INSERT, UPDATE ON notes TO writer WITH GRANT OPTION;
GRANT USAGE ON SEQUENCE notes_id_seq TO writer;
CREATE FUNCTION note_count() RETURNS bigint LANGUAGE plpgsql AS $$ BEGIN RETURN (SELECT count(*) FROM notes); END $$;
REVOKE EXECUTE ON FUNCTION note_count() FROM PUBLIC;
GRANT EXECUTE ON FUNCTION note_count() TO reader;
\dp
\dp notes
\df+ note_count
\dn+
\c - reader
SELECT current_user;
SELECT body FROM notes;
SELECT * FROM note_bodies;
SELECT note_count();
\c - writer
INSERT INTO notes (body) VALUES ('second');
UPDATE notes SET body = 'second, edited' WHERE body = 'second';
\c - centum
SELECT id, body FROM notes ORDER BY id;
