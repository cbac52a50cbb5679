-- What Centum's PL/pgSQL refuses, and how: each error is found when the
-- routine is created, with the line, or when it is called, with the
-- routine's context. Not compared with PostgreSQL (which accepts some of
-- these bodies and checks others only at the call).
CREATE TABLE t (id int PRIMARY KEY, v text);
CREATE TYPE pair AS (a int, b text);
CREATE FUNCTION reraise_outside() RETURNS int LANGUAGE plpgsql AS $$
BEGIN
  RAISE;
END;
$$;
CREATE FUNCTION dynamic_record() RETURNS int LANGUAGE plpgsql AS $$
DECLARE
  r record;
BEGIN
  FOR r IN EXECUTE 'SELECT id FROM t' LOOP
  END LOOP;
  RETURN 0;
END;
$$;
CREATE FUNCTION dynamic_ddl(name text) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
  EXECUTE 'CREATE TABLE ' || quote_ident(name) || ' (id int)';
END;
$$;
SELECT dynamic_ddl('made');
CREATE FUNCTION commits() RETURNS void LANGUAGE plpgsql AS $$
BEGIN
  COMMIT;
END;
$$;
CREATE FUNCTION ddl() RETURNS void LANGUAGE plpgsql AS $$
BEGIN
  CREATE TABLE u (id int);
END;
$$;
CREATE FUNCTION whole_array(xs int[]) RETURNS text LANGUAGE plpgsql AS $$
BEGIN
  RETURN xs::text;
END;
$$;
CREATE FUNCTION whole_record(p pair) RETURNS text LANGUAGE plpgsql AS $$
BEGIN
  RETURN p;
END;
$$;
CREATE FUNCTION whole_element(ps pair[]) RETURNS text LANGUAGE plpgsql AS $$
BEGIN
  RETURN ps[1];
END;
$$;
CREATE FUNCTION bad_field(p pair) RETURNS int LANGUAGE plpgsql AS $$
BEGIN
  RETURN p.c;
END;
$$;
CREATE FUNCTION constant_change() RETURNS int LANGUAGE plpgsql AS $$
DECLARE
  k CONSTANT int := 1;
BEGIN
  k := 2;
  RETURN k;
END;
$$;
CREATE FUNCTION foreach_scalar(x int) RETURNS int LANGUAGE plpgsql AS $$
DECLARE
  y int;
BEGIN
  FOREACH y IN ARRAY x LOOP
  END LOOP;
  RETURN 0;
END;
$$;
CREATE FUNCTION bad_type() RETURNS int LANGUAGE plpgsql AS $$
DECLARE
  y no_such_type;
BEGIN
  RETURN 0;
END;
$$;
CREATE FUNCTION return_in_void() RETURNS void LANGUAGE plpgsql AS $$
BEGIN
  RETURN 1;
END;
$$;
CREATE FUNCTION query_in_scalar() RETURNS int LANGUAGE plpgsql AS $$
BEGIN
  RETURN QUERY SELECT 1;
END;
$$;
CREATE PROCEDURE returns_value() LANGUAGE plpgsql AS $$
BEGIN
  RETURN 1;
END;
$$;
CREATE PROCEDURE with_returns() RETURNS int LANGUAGE plpgsql AS $$ BEGIN END; $$;
CREATE FUNCTION unknown_setting() RETURNS int LANGUAGE plpgsql SET work_mem = '1MB' AS $$ BEGIN RETURN 1; END; $$;
CREATE FUNCTION bad_retry() RETURNS int LANGUAGE plpgsql SET centum.retry_on_conflict = 'many' AS $$ BEGIN RETURN 1; END; $$;
CREATE FUNCTION no_body() RETURNS int LANGUAGE plpgsql;
-- Arguments: wrong count, wrong types, malformed array and record text.
CREATE FUNCTION takes(xs int[], p pair) RETURNS int LANGUAGE plpgsql AS $$
BEGIN
  RETURN cardinality(xs) + p.a;
END;
$$;
SELECT takes('{1,2}', '(40,x)');
SELECT takes('{1,2}');
SELECT takes(7, '(1,x)');
SELECT takes('{1,2', '(1,x)');
SELECT takes('{1,2}', '(1,x,extra)');
SELECT takes('{1,2}', '(one,x)');
SELECT * FROM takes('{}', '(2,y)');
-- A function that returns a set is called in FROM.
CREATE FUNCTION some_rows() RETURNS SETOF int LANGUAGE plpgsql AS $$
BEGIN
  RETURN NEXT 1;
END;
$$;
SELECT some_rows();
-- Statement timeouts reach loops inside routines.
CREATE FUNCTION spin() RETURNS int LANGUAGE plpgsql AS $$
BEGIN
  LOOP
  END LOOP;
END;
$$;
SET statement_timeout = '50ms';
SELECT spin();
SET statement_timeout = 0;
SELECT 1;
