-- PL/pgSQL beyond the basics: the CASE statement, dynamic SQL with
-- EXECUTE ... USING, overloading by argument types, named arguments and
-- LANGUAGE sql functions.
CREATE TABLE items (id int PRIMARY KEY, name text, qty int);
INSERT INTO items VALUES (1, 'bolt', 10), (2, 'nut', 0), (3, 'gear', 5);
-- The simple CASE: the operand is evaluated once and compared with each
-- WHEN list; the searched CASE tests conditions in order.
CREATE FUNCTION grade(n int) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
  r text;
BEGIN
  CASE n
    WHEN 1, 2 THEN r := 'low';
    WHEN 3 THEN
      r := 'mid';
    ELSE
      r := 'high';
  END CASE;
  CASE
    WHEN n < 0 THEN r := r || ' negative';
    WHEN n % 2 = 0 THEN r := r || ' even';
    ELSE r := r || ' odd';
  END CASE;
  RETURN r;
END;
$$;
SELECT n, grade(n) FROM generate_series(-1, 4) AS n ORDER BY n;
SELECT grade(NULL);
-- Without ELSE, a value no branch takes is an error.
CREATE FUNCTION pick(s text) RETURNS int LANGUAGE plpgsql AS $$
BEGIN
  CASE lower(s)
    WHEN 'one' THEN RETURN 1;
    WHEN 'two' THEN RETURN 2;
  END CASE;
  RETURN 0;
END;
$$;
SELECT pick('ONE'), pick('two');
SELECT pick('three');
-- The handler catches it by name.
CREATE FUNCTION pick_or(s text, d int) RETURNS int LANGUAGE plpgsql AS $$
BEGIN
  RETURN pick(s);
EXCEPTION WHEN case_not_found THEN
  RETURN d;
END;
$$;
SELECT pick_or('two', -1), pick_or('seven', -1);
-- CASE inside loops, with a CASE expression in a branch.
CREATE FUNCTION stock_report() RETURNS text LANGUAGE plpgsql AS $$
DECLARE
  r record;
  out text := '';
BEGIN
  FOR r IN SELECT id, name, qty FROM items ORDER BY id LOOP
    CASE
      WHEN r.qty = 0 THEN out := out || r.name || ':none ';
      WHEN r.qty < 6 THEN
        out := out || r.name || ':' || CASE WHEN r.qty = 1 THEN 'one' ELSE 'few' END || ' ';
      ELSE
        CASE r.id WHEN 1 THEN out := out || 'first:many '; ELSE out := out || 'many '; END CASE;
    END CASE;
  END LOOP;
  RETURN out;
END;
$$;
SELECT stock_report();
-- Overloading: one name, several lists of input types; a call takes the
-- overload its argument types match.
CREATE FUNCTION describe(x int) RETURNS text LANGUAGE plpgsql AS $$
BEGIN
  RETURN 'integer ' || x;
END;
$$;
CREATE FUNCTION describe(x text) RETURNS text LANGUAGE plpgsql AS $$
BEGIN
  RETURN 'text ' || x;
END;
$$;
CREATE FUNCTION describe(x int, y int) RETURNS text LANGUAGE plpgsql AS $$
BEGIN
  RETURN 'pair ' || x || ',' || y;
END;
$$;
SELECT describe(7), describe('seven'::text), describe(3, 4);
SELECT describe(id), describe(name) FROM items ORDER BY id;
-- A bigint converts within its kind.
SELECT describe(9::bigint);
-- Two overloads fit an untyped literal equally well.
SELECT describe('x');
-- The same input types again is a duplicate; OR REPLACE replaces that one.
CREATE FUNCTION describe(x int) RETURNS text LANGUAGE plpgsql AS $$ BEGIN RETURN 'again'; END; $$;
CREATE OR REPLACE FUNCTION describe(x int) RETURNS text LANGUAGE plpgsql AS $$
BEGIN
  RETURN 'int ' || x;
END;
$$;
SELECT describe(1), describe('one'::text);
SELECT proname, pg_get_function_arguments(oid) FROM pg_proc WHERE proname = 'describe' ORDER BY 2;
-- DROP needs the argument list when the name is overloaded.
DROP FUNCTION describe;
DROP FUNCTION describe(text);
DROP FUNCTION describe(boolean);
DROP FUNCTION IF EXISTS describe(boolean);
SELECT describe('one');
DROP FUNCTION describe(int, int);
DROP FUNCTION describe;
-- Overloaded procedures.
CREATE TABLE log (what text);
CREATE PROCEDURE note(n int) LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO log VALUES ('number ' || n);
END;
$$;
CREATE PROCEDURE note(s text, times int DEFAULT 1) LANGUAGE plpgsql AS $$
BEGIN
  FOR i IN 1..times LOOP
    INSERT INTO log VALUES ('text ' || s);
  END LOOP;
END;
$$;
CALL note(5);
CALL note('hi'::text);
CALL note('twice', 2);
SELECT what FROM log ORDER BY what;
-- Named arguments, with => or :=, after positional ones; parameters left
-- out take their defaults.
CREATE FUNCTION label(item text, qty int DEFAULT 1, unit text DEFAULT 'pcs', note text DEFAULT NULL)
RETURNS text LANGUAGE plpgsql AS $$
BEGIN
  RETURN item || ' x' || qty || ' ' || unit || coalesce(' (' || note || ')', '');
END;
$$;
SELECT label('bolt');
SELECT label('bolt', unit => 'kg');
SELECT label(item => 'nut', note => 'spare', qty => 3);
SELECT label('gear', note := 'old');
SELECT label(name, qty => qty) FROM items ORDER BY id;
SELECT * FROM label(unit => 'box', item => 'washer');
CALL note(times => 3, s => 'named');
SELECT count(*) FROM log WHERE what = 'text named';
-- Mistakes: a name no parameter has, a parameter given twice, a required
-- one left out, a positional argument after a named one.
SELECT label('bolt', colour => 'red');
SELECT label('bolt', item => 'nut');
SELECT label(qty => 2);
SELECT label(item => 'bolt', 2);
SELECT upper(string => 'x');
-- LANGUAGE sql functions: the last statement's rows are the result.
CREATE FUNCTION add_one(n int) RETURNS int LANGUAGE sql AS $$ SELECT n + 1 $$;
CREATE FUNCTION add_two(int) RETURNS int LANGUAGE sql AS 'SELECT $1 + 2';
CREATE FUNCTION add_three(n int) RETURNS int RETURN n + 3;
SELECT add_one(1), add_two(1), add_three(1), add_one(add_two(add_three(0)));
CREATE FUNCTION qty_of(item text) RETURNS int LANGUAGE sql AS $$
  SELECT qty FROM items WHERE name = item
$$;
SELECT qty_of('bolt'), qty_of('nut'), qty_of('nothing') IS NULL AS missing;
CREATE FUNCTION in_stock() RETURNS SETOF text LANGUAGE sql AS $$
  SELECT name FROM items WHERE qty > 0 ORDER BY name
$$;
SELECT * FROM in_stock();
CREATE FUNCTION stock(min_qty int DEFAULT 0) RETURNS TABLE (name text, qty int) LANGUAGE sql AS $$
  SELECT name, qty FROM items WHERE qty >= min_qty ORDER BY qty DESC
$$;
SELECT * FROM stock();
SELECT * FROM stock(min_qty => 6);
-- Several statements: the earlier ones run for their effect.
CREATE FUNCTION restock(item text, more int) RETURNS int LANGUAGE sql AS $$
  UPDATE items SET qty = qty + more WHERE name = item;
  INSERT INTO log VALUES ('restocked ' || item);
  SELECT qty FROM items WHERE name = item;
$$;
SELECT restock('nut', 4);
SELECT qty FROM items WHERE name = 'nut';
SELECT what FROM log WHERE what LIKE 'restocked%';
-- DML with RETURNING as the result.
CREATE FUNCTION add_item(id int, name text) RETURNS int LANGUAGE sql AS $$
  INSERT INTO items VALUES (id, name, 0) RETURNING id * 100
$$;
SELECT add_item(4, 'spring');
CREATE PROCEDURE clear_log() LANGUAGE sql AS $$ DELETE FROM log $$;
CALL clear_log();
SELECT count(*) FROM log;
-- An OUT parameter is the result.
CREATE FUNCTION total_qty(OUT total bigint) LANGUAGE sql AS $$ SELECT sum(qty) FROM items $$;
SELECT total_qty();
SELECT prolang = (SELECT oid FROM pg_language WHERE lanname = 'sql') AS is_sql FROM pg_proc WHERE proname = 'add_one';
-- An error names the SQL function's statement.
CREATE FUNCTION ratio(a int, b int) RETURNS int LANGUAGE sql AS $$ SELECT 1; SELECT a / b $$;
SELECT ratio(6, 3);
SELECT ratio(1, 0);
-- The final statement must return the result's columns.
CREATE FUNCTION no_result() RETURNS int LANGUAGE sql AS $$ DELETE FROM log $$;
CREATE FUNCTION two_columns() RETURNS int LANGUAGE sql AS $$ SELECT 1, 2 $$;
CREATE FUNCTION sql_trigger() RETURNS trigger LANGUAGE sql AS $$ SELECT 1 $$;
-- Dynamic SQL: EXECUTE runs a command built when the routine runs, with
-- USING values as $1, $2, ...
CREATE FUNCTION count_where(tbl text, col text, val int) RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE
  n bigint;
BEGIN
  EXECUTE format('SELECT count(*) FROM %I WHERE %I >= $1', tbl, col) INTO n USING val;
  RETURN n;
END;
$$;
SELECT count_where('items', 'qty', 1), count_where('items', 'id', 2);
SELECT count_where('no_such_table', 'qty', 1);
CREATE FUNCTION set_qty(item text, n int) RETURNS int LANGUAGE plpgsql AS $$
DECLARE
  changed int;
BEGIN
  EXECUTE 'UPDATE items SET qty = $2 WHERE name = $1' USING item, n;
  GET DIAGNOSTICS changed = ROW_COUNT;
  RETURN changed;
END;
$$;
SELECT set_qty('gear', 8), set_qty('nothing', 1);
SELECT name, qty FROM items ORDER BY id;
-- INTO several variables, STRICT, and a declared row type.
CREATE FUNCTION item_line(wanted int) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
  n text;
  q int;
  r items%ROWTYPE;
BEGIN
  EXECUTE 'SELECT name, qty FROM items WHERE id = $1' INTO STRICT n, q USING wanted;
  EXECUTE 'SELECT * FROM items WHERE id = $1' USING wanted INTO r;
  RETURN n || '=' || q || ' ' || r.name || '/' || r.id;
END;
$$;
SELECT item_line(1);
SELECT item_line(42);
CREATE FUNCTION first_name() RETURNS text LANGUAGE plpgsql AS $$
DECLARE
  n text;
BEGIN
  EXECUTE 'SELECT name FROM items ORDER BY id' INTO n;
  RETURN n;
END;
$$;
SELECT first_name();
-- RETURN QUERY EXECUTE and FOR ... IN EXECUTE.
CREATE FUNCTION names_from(tbl text, min_id int) RETURNS SETOF text LANGUAGE plpgsql AS $$
BEGIN
  RETURN QUERY EXECUTE 'SELECT name FROM ' || quote_ident(tbl) || ' WHERE id >= $1 ORDER BY id' USING min_id;
END;
$$;
SELECT * FROM names_from('items', 2);
CREATE FUNCTION sum_dynamic(query text) RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE
  v int;
  total bigint := 0;
BEGIN
  FOR v IN EXECUTE query LOOP
    total := total + v;
  END LOOP;
  RETURN total;
END;
$$;
SELECT sum_dynamic('SELECT qty FROM items'), sum_dynamic('SELECT id FROM items WHERE false');
-- Mistakes: a NULL command, a parameter without a USING value, a command
-- that does not parse.
CREATE FUNCTION run(cmd text) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
  EXECUTE cmd;
END;
$$;
SELECT run(NULL);
SELECT run('DELETE FROM items WHERE id = $1');
SELECT run('DELETE FROM items WHERE');
SELECT run('DELETE FROM items WHERE id = 4');
SELECT count(*) FROM items;
