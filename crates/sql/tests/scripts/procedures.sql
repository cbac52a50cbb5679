-- PL/pgSQL functions and procedures: every construct, and the errors.
CREATE TABLE item (id int PRIMARY KEY, name text NOT NULL, price numeric(10,2) NOT NULL);
INSERT INTO item VALUES (1, 'bolt', 0.25), (2, 'nut', 0.10), (3, 'gear', 12.50);

-- DECLARE with defaults and CONSTANT, assignment, IF / ELSIF / ELSE.
CREATE FUNCTION grade(score int) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
  result text := 'unknown';
  bonus CONSTANT int = 5;
BEGIN
  IF score IS NULL THEN
    RETURN NULL;
  ELSIF score + bonus >= 90 THEN
    result := 'A';
  ELSIF score >= 70 THEN
    result := 'B';
  ELSE
    result := 'C';
  END IF;
  RETURN result;
END;
$$;
SELECT grade(87), grade(75), grade(10), grade(NULL);
CREATE FUNCTION grade(x int) RETURNS text LANGUAGE plpgsql AS $$ BEGIN RETURN 'x'; END; $$;

-- WHILE, LOOP, EXIT WHEN, CONTINUE WHEN, FOR over ranges (REVERSE, BY),
-- labelled loops.
CREATE FUNCTION loops(n int) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
  i int := 0;
  s text := '';
BEGIN
  WHILE i < n LOOP
    i := i + 1;
    CONTINUE WHEN i % 2 = 0;
    s := s || i::text || ',';
  END LOOP;
  LOOP
    i := i - 1;
    EXIT WHEN i < n - 2;
  END LOOP;
  s := s || '|' || i::text || '|';
  FOR k IN REVERSE 10..1 BY 3 LOOP
    s := s || k::text || ' ';
  END LOOP;
  <<outer>>
  FOR a IN 1..3 LOOP
    FOR b IN 1..3 LOOP
      EXIT outer WHEN a * b = 4;
      CONTINUE outer WHEN b > a;
      s := s || a::text || b::text || ' ';
    END LOOP;
  END LOOP;
  RETURN s;
END;
$$;
SELECT loops(7);

-- SELECT INTO, FOUND, RAISE with ERRCODE.
CREATE FUNCTION price_of(p_id int) RETURNS numeric LANGUAGE plpgsql AS $$
DECLARE
  p numeric;
BEGIN
  SELECT price INTO p FROM item WHERE id = p_id;
  IF NOT FOUND THEN
    RAISE EXCEPTION 'no item %', p_id USING ERRCODE = 'P0002';
  END IF;
  RETURN p;
END;
$$;
SELECT price_of(3);
SELECT price_of(9);

-- INTO STRICT: exactly one row.
CREATE FUNCTION strict_name(p_min numeric) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
  n text;
BEGIN
  SELECT name INTO STRICT n FROM item WHERE price >= p_min;
  RETURN n;
END;
$$;
SELECT strict_name(10);
SELECT strict_name(0);
SELECT strict_name(100);

-- GET DIAGNOSTICS ROW_COUNT, INSERT ... RETURNING ... INTO, FOUND after DML.
CREATE FUNCTION reprice(p_factor numeric) RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE
  n bigint;
  new_id int;
BEGIN
  UPDATE item SET price = price * p_factor WHERE price < 1;
  GET DIAGNOSTICS n = ROW_COUNT;
  INSERT INTO item (id, name, price) VALUES (10 + n, 'washer', 0.05) RETURNING id INTO new_id;
  DELETE FROM item WHERE id = new_id;
  IF FOUND THEN
    n := n * 100 + new_id;
  END IF;
  RETURN n;
END;
$$;
SELECT reprice(2);
SELECT id, price FROM item ORDER BY id;

-- FOR over query rows: into a record, and into a list of variables.
CREATE FUNCTION catalog_text() RETURNS text LANGUAGE plpgsql AS $$
DECLARE
  r record;
  s text := '';
  v_id int;
  v_name text;
BEGIN
  FOR r IN SELECT id, name FROM item ORDER BY id LOOP
    s := s || r.id::text || '=' || r.name || ';';
  END LOOP;
  FOR v_id, v_name IN SELECT id, name FROM item WHERE id > 1 ORDER BY id DESC LOOP
    s := s || v_name;
  END LOOP;
  RETURN s;
END;
$$;
SELECT catalog_text();

-- %ROWTYPE and %TYPE.
CREATE FUNCTION describe_item(p_id int) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
  it item%ROWTYPE;
  nm item.name%TYPE;
BEGIN
  SELECT * INTO it FROM item WHERE id = p_id;
  nm := it.name;
  RETURN nm || ' costs ' || it.price::text;
END;
$$;
SELECT describe_item(3);

-- int[] and text[] parameters: FOREACH, subscripts, array_length,
-- cardinality.
CREATE FUNCTION sum_ints(xs int[]) RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE
  x int;
  total bigint := 0;
BEGIN
  FOREACH x IN ARRAY xs LOOP
    total := total + coalesce(x, 0);
  END LOOP;
  RETURN total;
END;
$$;
SELECT sum_ints(ARRAY[1, 2, 3]), sum_ints('{10,NULL,30}'), sum_ints('{}');
SELECT sum_ints(NULL);
SELECT sum_ints('{1,two}');
CREATE FUNCTION join_texts(words text[]) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
  s text := '';
BEGIN
  FOR i IN 1..coalesce(array_length(words, 1), 0) LOOP
    s := s || upper(words[i]);
    IF i < array_length(words, 1) THEN
      s := s || '-';
    END IF;
  END LOOP;
  RETURN s || ' (' || cardinality(words)::text || ')';
END;
$$;
SELECT join_texts(ARRAY['a', 'b c', 'd']), join_texts('{}');

-- A composite type, and a whole order with its lines in one call.
CREATE TYPE order_line AS (item_id int, qty int);
CREATE TABLE orders (id int PRIMARY KEY, total numeric(12,2));
CREATE TABLE order_lines (order_id int, line int, item_id int, qty int, amount numeric(12,2), PRIMARY KEY (order_id, line));
CREATE FUNCTION place_order(p_id int, p_lines order_line[]) RETURNS numeric LANGUAGE plpgsql AS $$
DECLARE
  l order_line;
  n int := 0;
  v_total numeric(12,2) := 0;
  unit numeric;
BEGIN
  INSERT INTO orders VALUES (p_id, 0);
  FOREACH l IN ARRAY p_lines LOOP
    n := n + 1;
    unit := NULL;
    SELECT price INTO unit FROM item WHERE id = l.item_id;
    IF unit IS NULL THEN
      RAISE EXCEPTION 'order %: unknown item %', p_id, l.item_id USING ERRCODE = '23503', HINT = 'check the catalog';
    END IF;
    INSERT INTO order_lines VALUES (p_id, n, l.item_id, l.qty, unit * l.qty);
    v_total := v_total + unit * l.qty;
  END LOOP;
  UPDATE orders SET total = v_total WHERE id = p_id;
  RETURN v_total;
END;
$$;
SELECT place_order(1, ARRAY[ROW(1, 4), ROW(3, 1)]::order_line[]);
SELECT place_order(2, '{"(2,10)","(1,1)"}');
SELECT place_order(3, '{"(2,1)","(99,1)"}');
SELECT place_order(4, '{"(1"}');
SELECT * FROM orders ORDER BY id;
SELECT * FROM order_lines ORDER BY order_id, line;
CREATE FUNCTION first_qty(p_lines order_line[]) RETURNS int LANGUAGE plpgsql AS $$
BEGIN
  RETURN (p_lines[1]).qty;
END;
$$;
SELECT first_qty('{"(5,7)","(6,8)"}'), first_qty('{}');

-- RETURNS TABLE with RETURN QUERY and RETURN NEXT; SETOF; called in FROM.
CREATE FUNCTION cheap_items(p_max numeric) RETURNS TABLE (item_id int, item_name text) LANGUAGE plpgsql AS $$
BEGIN
  RETURN QUERY SELECT id, name FROM item WHERE price <= p_max ORDER BY id;
  item_id := 0;
  item_name := 'end';
  RETURN NEXT;
END;
$$;
SELECT * FROM cheap_items(1);
CREATE FUNCTION evens(n int) RETURNS SETOF int LANGUAGE plpgsql AS $$
BEGIN
  FOR i IN 1..n LOOP
    IF i % 2 = 0 THEN
      RETURN NEXT i;
    END IF;
  END LOOP;
  RETURN;
END;
$$;
SELECT * FROM evens(7);
SELECT evens * 10 FROM evens(5) ORDER BY 1;

-- Procedures: CALL alone (its own transaction) and in a block (the
-- block's), atomic either way; INOUT and OUT parameters.
CREATE PROCEDURE add_item(p_id int, p_name text, p_price numeric) LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO item VALUES (p_id, p_name, p_price);
  IF p_price <= 0 THEN
    RAISE EXCEPTION 'price of % must be positive', p_name;
  END IF;
END;
$$;
CALL add_item(20, 'spring', 1.5);
CALL add_item(21, 'free', 0);
SELECT id FROM item WHERE id >= 20 ORDER BY id;
BEGIN;
CALL add_item(22, 'pin', 0.5);
SELECT count(*) FROM item WHERE id = 22;
ROLLBACK;
SELECT count(*) FROM item WHERE id = 22;
CREATE PROCEDURE counts(INOUT n_items bigint, OUT n_orders bigint) LANGUAGE plpgsql AS $$
BEGIN
  SELECT count(*) + n_items INTO n_items FROM item;
  SELECT count(*) INTO n_orders FROM orders;
END;
$$;
CALL counts(100, NULL);
SELECT add_item(1, 'x', 1);
CALL grade(1);

-- PERFORM, NULL, nested blocks with labels, RAISE NOTICE, calls of other
-- functions and of itself.
CREATE FUNCTION nested(n int) RETURNS int LANGUAGE plpgsql AS $$
DECLARE
  x int := n;
BEGIN
  PERFORM grade(x);
  <<inner>>
  DECLARE
    x int := n * 2;
  BEGIN
    IF x > 10 THEN
      EXIT inner;
    END IF;
    RAISE NOTICE 'inner x is %', x;
    NULL;
  END;
  RETURN x + sum_ints(ARRAY[x, 1]);
END;
$$;
SELECT nested(3), nested(6);
CREATE FUNCTION fact(n int) RETURNS bigint LANGUAGE plpgsql AS $$
BEGIN
  IF n <= 1 THEN
    RETURN 1;
  END IF;
  RETURN n * fact(n - 1);
END;
$$;
SELECT fact(20);

-- Defaults for trailing parameters.
CREATE FUNCTION greet(who text, greeting text DEFAULT 'hello') RETURNS text LANGUAGE plpgsql AS $$
BEGIN
  RETURN greeting || ', ' || who;
END;
$$;
SELECT greet('ann'), greet('bob', 'hi');
SELECT greet();

-- RAISE forms, NOT NULL variables.
CREATE FUNCTION raiser(kind text) RETURNS void LANGUAGE plpgsql AS $$
DECLARE
  v int NOT NULL := 1;
BEGIN
  IF kind = 'state' THEN
    RAISE SQLSTATE '22023';
  ELSIF kind = 'name' THEN
    RAISE division_by_zero;
  ELSIF kind = 'using' THEN
    RAISE EXCEPTION USING MESSAGE = 'custom ' || kind, ERRCODE = 'XX123', DETAIL = 'some detail';
  ELSIF kind = 'null' THEN
    v := NULL;
  END IF;
  RAISE NOTICE 'nothing raised for %', kind;
END;
$$;
SELECT raiser('state');
SELECT raiser('name');
SELECT raiser('using');
SELECT raiser('null');
SELECT raiser('none');

-- Run-time errors name the line and the statement.
CREATE FUNCTION divide(a int, b int) RETURNS int LANGUAGE plpgsql AS $$
DECLARE
  q int;
BEGIN
  q := a / b;
  RETURN q;
END;
$$;
SELECT divide(7, 2);
SELECT divide(1, 0);
CREATE FUNCTION no_return(a int) RETURNS int LANGUAGE plpgsql AS $$
BEGIN
  IF a > 0 THEN
    RETURN a;
  END IF;
END;
$$;
SELECT no_return(1);
SELECT no_return(-1);

-- Errors found when the routine is created.
CREATE FUNCTION bad_table() RETURNS bigint LANGUAGE plpgsql AS $$
BEGIN
  RETURN (SELECT count(*) FROM no_such_table);
END;
$$;
CREATE FUNCTION bad_if() RETURNS int LANGUAGE plpgsql AS $$
BEGIN
  IF true THEN RETURN 1;
END;
$$;
CREATE FUNCTION bad_raise(a int) RETURNS int LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION 'x % %', a;
END;
$$;
CREATE FUNCTION bad_select() RETURNS int LANGUAGE plpgsql AS $$
BEGIN
  SELECT 1;
END;
$$;
CREATE FUNCTION bad_exit() RETURNS void LANGUAGE plpgsql AS $$
BEGIN
  EXIT;
END;
$$;
CREATE FUNCTION bad_var() RETURNS int LANGUAGE plpgsql AS $$
BEGIN
  x := 1;
  RETURN 1;
END;
$$;
CREATE FUNCTION bad_language() RETURNS int LANGUAGE plperl AS $$ return 1; $$;
SELECT bad_table();

-- Schema changes: a dependent routine is compiled again, or fails with a
-- clear error; it never runs a stale plan.
CREATE TABLE stock (item_id int PRIMARY KEY, qty int NOT NULL);
INSERT INTO stock VALUES (1, 5);
CREATE FUNCTION stock_of(p int) RETURNS int LANGUAGE plpgsql AS $$
DECLARE
  q int;
BEGIN
  SELECT qty INTO q FROM stock WHERE item_id = p;
  RETURN q;
END;
$$;
SELECT stock_of(1);
ALTER TABLE stock ADD COLUMN note text;
SELECT stock_of(1);
ALTER TABLE stock DROP COLUMN qty;
SELECT stock_of(1);
ALTER TABLE stock ADD COLUMN qty int DEFAULT 6;
SELECT stock_of(1);
DROP TABLE stock;
SELECT stock_of(1);
CREATE TABLE stock (item_id int PRIMARY KEY, extra int, qty int NOT NULL);
INSERT INTO stock VALUES (1, 99, 7);
SELECT stock_of(1);
PREPARE g AS SELECT grade($1);
EXECUTE g(95);
CREATE OR REPLACE FUNCTION grade(score int) RETURNS text LANGUAGE plpgsql AS $$
BEGIN
  RETURN 'replaced ' || score::text;
END;
$$;
EXECUTE g(95);

-- The retry setting is accepted by both systems.
CREATE FUNCTION bump(p int) RETURNS int LANGUAGE plpgsql SET centum.retry_on_conflict = 3 AS $$
BEGIN
  UPDATE stock SET qty = qty + 1 WHERE item_id = p;
  RETURN (SELECT qty FROM stock WHERE item_id = p);
END;
$$;
SELECT bump(1);

-- DROP.
DROP TYPE order_line;
DROP FUNCTION place_order;
DROP FUNCTION first_qty(order_line[]);
DROP TYPE order_line;
DROP FUNCTION no_such_fn;
DROP FUNCTION IF EXISTS no_such_fn;
DROP PROCEDURE add_item;
CALL add_item(30, 'x', 1);
-- EXCEPTION blocks: a handler takes the error, the block's writes are undone.
CREATE TABLE ex_t (k int PRIMARY KEY, v text);
CREATE FUNCTION safe_insert(k int, v text) RETURNS text LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO ex_t VALUES (k, v);
  RETURN 'inserted';
EXCEPTION WHEN unique_violation THEN
  RETURN 'duplicate: ' || SQLSTATE;
END $$;
SELECT safe_insert(1, 'a');
SELECT safe_insert(1, 'b');
SELECT * FROM ex_t;
CREATE FUNCTION partial(n int) RETURNS int LANGUAGE plpgsql AS $$
DECLARE done int := 0;
BEGIN
  BEGIN
    INSERT INTO ex_t VALUES (10, 'x');
    done := 1;
    PERFORM 1 / (n - n);
  EXCEPTION WHEN division_by_zero THEN
    RETURN done;
  END;
  RETURN -1;
END $$;
SELECT partial(3);
SELECT count(*) FROM ex_t WHERE k = 10;
CREATE FUNCTION classes() RETURNS text LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO ex_t VALUES (NULL, 'n');
  RETURN 'no';
EXCEPTION
  WHEN data_exception THEN RETURN 'data';
  WHEN integrity_constraint_violation THEN RETURN 'integrity ' || SQLSTATE;
END $$;
SELECT classes();
CREATE FUNCTION reraise() RETURNS int LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION 'boom' USING ERRCODE = '22023';
EXCEPTION WHEN others THEN
  RAISE NOTICE 'caught %', SQLERRM;
  RAISE;
END $$;
SELECT reraise();
CREATE FUNCTION by_code() RETURNS text LANGUAGE plpgsql AS $$
BEGIN
  PERFORM 1 / 0;
  RETURN 'no';
EXCEPTION WHEN SQLSTATE '22012' OR unique_violation THEN RETURN 'code ' || SQLSTATE;
END $$;
SELECT by_code();
CREATE FUNCTION uncaught() RETURNS text LANGUAGE plpgsql AS $$
BEGIN
  PERFORM 1 / 0;
  RETURN 'no';
EXCEPTION WHEN unique_violation THEN RETURN 'wrong';
END $$;
SELECT uncaught();
CREATE FUNCTION bad_condition() RETURNS int LANGUAGE plpgsql AS $$
BEGIN
  RETURN 1;
EXCEPTION WHEN no_such_condition THEN RETURN 2;
END $$;
BEGIN;
INSERT INTO ex_t VALUES (20, 'outer');
SELECT safe_insert(20, 'again');
SELECT safe_insert(21, 'new');
COMMIT;
SELECT k, v FROM ex_t ORDER BY k;
