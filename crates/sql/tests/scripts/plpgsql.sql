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
