-- Indexes on expressions and partial indexes: uniqueness over a key
-- expression and only where the predicate holds; the plans that use them;
-- what the catalog shows; and what happens to them when their table
-- changes.
CREATE TABLE users (id int PRIMARY KEY, email text NOT NULL, deleted_at timestamp, tier int NOT NULL, score int);
INSERT INTO users VALUES (1, 'Ann@example.com', NULL, 1, 10), (2, 'bob@example.com', NULL, 2, 20),
  (3, 'BOB@example.com', '2024-01-01', 2, 30), (4, 'cy@example.com', NULL, 3, NULL);

-- Unique over lower(email): the two BOBs collide.
CREATE UNIQUE INDEX users_email_ci ON users (lower(email));
CREATE INDEX users_email_ci ON users (lower(email));
-- Unique only among live rows: the deleted BOB does not count.
CREATE UNIQUE INDEX users_live_email ON users (lower(email)) WHERE deleted_at IS NULL;
INSERT INTO users VALUES (5, 'ANN@example.com', NULL, 1, 50);
INSERT INTO users VALUES (5, 'ANN@example.com', '2024-02-01', 1, 50);
UPDATE users SET deleted_at = NULL WHERE id = 5;
UPDATE users SET deleted_at = '2024-03-01' WHERE id = 1;
UPDATE users SET deleted_at = NULL WHERE id = 5;
SELECT id, email, deleted_at FROM users ORDER BY id;

-- Plain columns, expressions and a predicate together; an index with a
-- default name; a hash index on an expression.
CREATE INDEX ON users (tier, (score * 2)) WHERE score IS NOT NULL;
CREATE INDEX users_score_hash ON users USING hash ((score + tier));
CREATE INDEX users_upper ON users (upper(email) DESC);

-- The rows a query finds are the same whichever path reads them.
EXPLAIN SELECT id FROM users WHERE lower(email) = 'bob@example.com' AND deleted_at IS NULL;
SELECT id FROM users WHERE lower(email) = 'bob@example.com' AND deleted_at IS NULL;
SELECT id FROM users WHERE lower(email) = 'bob@example.com' ORDER BY id;
EXPLAIN SELECT id FROM users WHERE tier = 2 AND score * 2 = 40 AND score IS NOT NULL;
SELECT id FROM users WHERE tier = 2 AND score * 2 = 40 AND score IS NOT NULL;
EXPLAIN SELECT id FROM users WHERE score + tier = 22;
SELECT id FROM users WHERE score + tier = 22;
SELECT id FROM users WHERE upper(email) = 'CY@EXAMPLE.COM';
PREPARE by_email(text) AS SELECT id FROM users WHERE lower(email) = lower($1) AND deleted_at IS NULL;
EXECUTE by_email('BOB@EXAMPLE.COM');
UPDATE users SET email = 'robert@example.com' WHERE lower(email) = 'bob@example.com' AND deleted_at IS NULL;
EXECUTE by_email('robert@example.com');
DELETE FROM users WHERE lower(email) = 'robert@example.com' AND deleted_at IS NULL RETURNING *;
INSERT INTO users VALUES (2, 'Bob@example.com', NULL, 2, 20) RETURNING *;

-- The key columns stay out of sight: *, RETURNING, column lists.
SELECT * FROM users ORDER BY id;
SELECT u.* FROM users u WHERE id = 4;
INSERT INTO users VALUES (6, 'dee@example.com', NULL, 1, 5) RETURNING *;
UPDATE users SET tier = tier WHERE id = 6 RETURNING *;
SELECT * FROM users AS u (a, b) WHERE a = 4;
INSERT INTO users SELECT id + 100, 'x' || email, deleted_at, tier, score FROM users;
SELECT count(*) FROM users WHERE lower(email) LIKE 'x%';

-- The catalog (a hash index shows its bucket count, which PostgreSQL's
-- do not have).
DROP INDEX users_score_hash;
SELECT indexrelid::regclass AS index, indisunique, indkey, indexprs IS NOT NULL AS exprs, indpred IS NOT NULL AS pred
  FROM pg_index WHERE indrelid = 'users'::regclass ORDER BY indexrelid::regclass::text;
SELECT pg_get_indexdef(indexrelid) FROM pg_index WHERE indrelid = 'users'::regclass ORDER BY 1;
SELECT pg_get_indexdef('users_email_ci'::regclass, 1, true), pg_get_indexdef('users_tier_expr_idx'::regclass, 2, true);
SELECT indexname, indexdef FROM pg_indexes WHERE tablename = 'users' ORDER BY 1;
SELECT attname, attnum FROM pg_attribute WHERE attrelid = 'users'::regclass AND attnum > 0 ORDER BY attnum;
SELECT attname FROM pg_attribute WHERE attrelid = 'users_tier_expr_idx'::regclass ORDER BY attnum;
SELECT column_name FROM information_schema.columns WHERE table_name = 'users' ORDER BY ordinal_position;

-- The table changes under its indexes.
ALTER TABLE users ADD COLUMN note text DEFAULT 'none';
INSERT INTO users VALUES (7, 'eve@example.com', NULL, 2, 7, 'new');
SELECT * FROM users WHERE lower(email) = 'eve@example.com' AND deleted_at IS NULL;
ALTER TABLE users RENAME COLUMN email TO mail;
ALTER INDEX users_live_email RENAME TO users_live_mail;
SELECT pg_get_indexdef('users_live_mail'::regclass);
SELECT pg_get_indexdef('users_email_ci'::regclass);
INSERT INTO users VALUES (8, 'EVE@example.com', NULL, 2, 8, 'dup');
SELECT id FROM users WHERE lower(mail) = 'eve@example.com';
-- A column's new type reaches the keys computed from it.
CREATE INDEX users_tier_big ON users ((tier * 1000000));
ALTER TABLE users ALTER COLUMN tier TYPE bigint;
INSERT INTO users VALUES (13, 'ivy@example.com', NULL, 5000000, 1, 'big');
SELECT id, tier FROM users WHERE tier * 1000000 = 5000000000000;
DROP INDEX users_tier_big;
DELETE FROM users WHERE id = 13;
-- Dropping a column drops the indexes that read it.
ALTER TABLE users DROP COLUMN score;
SELECT indexname FROM pg_indexes WHERE tablename = 'users' ORDER BY 1;
SELECT * FROM users WHERE id IN (1, 7) ORDER BY id;
DROP INDEX users_email_ci;
INSERT INTO users VALUES (9, 'ann@example.com', NULL, 1, 'again');
SELECT indexname FROM pg_indexes WHERE tablename = 'users' ORDER BY 1;
SELECT count(*) FROM users;

-- Inside a block: built and rolled back, built and kept.
BEGIN;
CREATE UNIQUE INDEX users_tier_one ON users (tier) WHERE tier = 3 AND id < 100;
INSERT INTO users VALUES (10, 'fay@example.com', NULL, 3, 'x');
ROLLBACK;
INSERT INTO users VALUES (10, 'fay@example.com', NULL, 3, 'x');
DELETE FROM users WHERE id = 10;
BEGIN;
CREATE INDEX users_note ON users (lower(note));
INSERT INTO users VALUES (10, 'fay@example.com', NULL, 3, 'Hello');
SELECT id FROM users WHERE lower(note) = 'hello';
COMMIT;
SELECT id FROM users WHERE lower(note) = 'hello';

-- A BEFORE trigger's change to NEW is what the key is computed from; a
-- row type and a view over the table have the table's own columns.
CREATE FUNCTION trim_note() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN NEW.note := trim(NEW.note); RETURN NEW; END $$;
CREATE TRIGGER users_trim BEFORE INSERT OR UPDATE ON users FOR EACH ROW EXECUTE FUNCTION trim_note();
INSERT INTO users VALUES (11, 'gus@example.com', NULL, 1, '  Padded  ');
SELECT id FROM users WHERE lower(note) = 'padded';
CREATE FUNCTION note_of(k int) RETURNS text LANGUAGE plpgsql AS $$ DECLARE r users%ROWTYPE; BEGIN SELECT * INTO r FROM users WHERE id = k; RETURN r.note; END $$;
SELECT note_of(11);
CREATE VIEW live_users AS SELECT * FROM users WHERE deleted_at IS NULL;
INSERT INTO live_users VALUES (12, 'hal@example.com', NULL, 2, 'view');
SELECT * FROM live_users WHERE id >= 11 ORDER BY id;
DROP VIEW live_users;

-- Errors.
CREATE INDEX bad ON users (lower(nothing));
CREATE INDEX bad ON users (tier) WHERE nothing > 1;
CREATE INDEX bad ON users ((random() > 0.5));
CREATE INDEX bad ON users (tier) WHERE deleted_at < now();
CREATE INDEX bad ON users (((SELECT 1) + tier));
CREATE INDEX bad ON users (tier) WHERE tier;
CREATE INDEX users_note ON users (upper(note));
CREATE INDEX IF NOT EXISTS users_note ON users (upper(note));
CREATE UNIQUE INDEX bad ON users ((tier > 0));
SELECT indexname FROM pg_indexes WHERE tablename = 'users' ORDER BY 1;
DROP TABLE users;
