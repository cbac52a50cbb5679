SELECT length('hello'), upper('a'), lower('B'), substr('hello', 2, 3), replace('aXbX', 'X', '-');
SELECT trim('  x  '), ltrim('xxa', 'x'), lpad('7', 3, '0'), position('l' IN 'hello'), substring('hello' FROM 2 FOR 2);
SELECT abs(-3), round(2.567, 2), floor(2.5), ceil(2.1), mod(7, 3), power(2, 10);
SELECT greatest(1, 5, 3), least(4, 2, 8), coalesce(NULL, NULL, 'x');
SELECT extract(year FROM DATE '2024-03-15'), date_trunc('month', TIMESTAMP '2024-03-15 10:11:12');
SELECT now() = now(), current_date IS NOT NULL;
SELECT concat('a', NULL, 'b'), concat_ws('-', 'a', 'b');
-- format(): %s, %I, %L and %%, positions, widths, NULLs and the errors.
SELECT format('Hello %s, %s!', 'World', 42), format('%s|%s', NULL, true), format('100%%');
SELECT format('INSERT INTO %I VALUES (%L, %L)', 'My Table', 'O''Reilly', NULL), format('%I', 'plain_name');
SELECT format('%2$s %1$s %2$s', 'a', 'b'), format('[%5s][%-5s]', 'ab', 'cd'), format('%L', 'back\slash');
SELECT format('%1$s then %s', 'x', 'y'), format('%3s|', 'toolong'), format(NULL, 1), format('%s', 1.50);
SELECT format('%s %s', 'only one');
SELECT format('%I', NULL);
SELECT format('%x', 1);
SELECT format('%0$s', 1);
SELECT format('%');
-- pg_sleep and its forms: void (printed empty), NULL for NULL, no pause for the past.
SELECT pg_sleep(0.01), pg_sleep('0.01'), pg_sleep(NULL) IS NULL, pg_sleep(-1);
SELECT pg_sleep_for('10 milliseconds'), pg_sleep_until(now() - interval '1 day');
SELECT pg_sleep('soon');
