-- Enum types as psql shows them: \dT lists them, \dT+ with their labels
-- in declaration order, \d with the type of a column.
CREATE TYPE mood AS ENUM ('sad', 'ok', 'happy');
ALTER TYPE mood ADD VALUE 'meh' BEFORE 'ok';
CREATE SCHEMA paint;
CREATE TYPE paint.color AS ENUM ('red', 'green');
CREATE TABLE feelings (id int PRIMARY KEY, m mood NOT NULL, hist mood[]);
INSERT INTO feelings VALUES (1, 'happy', '{sad,meh}'), (2, 'meh', NULL);
\dT
\dT+ mood
\dT paint.*
\d feelings
SELECT * FROM feelings ORDER BY m;
DROP TABLE feelings;
DROP TYPE mood;
\dT
