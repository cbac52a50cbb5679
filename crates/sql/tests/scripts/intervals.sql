-- Intervals and times of day: input, output, arithmetic with dates and
-- timestamps, extract, date_trunc, age, the justify family, aggregates,
-- columns, keys and errors.
SELECT interval '1 day', interval '1 year 2 mons 3 days 04:05:06.5', interval '-1 day +02:00:00', interval '0';
SELECT interval '1.5 days', interval '1.5 months', interval '1.5 years', interval '0.1 mon', interval '1.5 weeks';
SELECT interval '@ 1 day ago', interval '1 hour -30 minutes ago', interval '1:30:00 ago';
SELECT interval 'P1Y2M3DT4H5M6S', interval 'PT1.5H', interval 'P1W', interval 'P0.5D';
SELECT interval '10:00', interval '-10:00', interval '1:30.5', interval '1 2:03', interval '-1 2:03', interval '1-2', interval '-1-2 +3 4:05:06';
SELECT interval '5', interval '1.5', interval '1 mon 2', interval '1 day 5', interval '2 h 3 m', interval '1y 2mon', interval '1day';
SELECT interval '1 decade 2 centuries', interval '1 millennium', interval '90 minutes', interval '100 ms', interval '1 microsecond', interval '1 us 1 ms';
SELECT interval '1 day 02:00:00.123456789', interval '-0.5 days', interval '1 mon -1 day', interval '-1 year -2 mons +3 days';
SELECT interval '100000000 hours', interval '-2147483648 days', interval '178956970 years';
SELECT interval '1' day, interval '1 day 2 hours' day, interval '1:30' hour to minute, interval '2' hour, interval '3' year;
SELECT '5 minutes'::interval, CAST('1 week' AS interval), '1 year 2 mons'::interval::text;
-- Bad input.
SELECT interval 'abc';
SELECT interval '1 day 1 day';
SELECT interval '1 2';
SELECT interval '1 fortnight';
SELECT interval '2147483648 days';
SELECT interval '1:60';
SELECT interval '178956971 years';
-- Comparison counts a month as 30 days and a day as 24 hours.
SELECT interval '1 mon' = interval '30 days', interval '25 hours' > interval '1 day', interval '-1 day' < interval '0';
-- Arithmetic.
SELECT timestamp '2024-01-31' + interval '1 month', date '2024-01-31' + interval '1 month', timestamp '2024-03-31' - interval '1 mon';
SELECT timestamp '2024-01-31 10:00' - interval '1 mon 1 day 1 hour', interval '1 day' + date '2024-01-01', interval '2 days' + timestamp '2024-02-28';
SELECT timestamp '2024-03-05 10:00' - timestamp '2024-01-01', timestamptz '2024-03-31 10:00+00' - timestamptz '2024-01-01', date '2024-03-01' - timestamp '2024-02-28 12:00';
SELECT timestamp '2024-01-31' + '1 day', date '2024-01-01' - '1 day'::interval, interval '1 day' + '1 hour';
SELECT now() - interval '1 day' < now(), now() + '1 hour' > now(), current_date - interval '1 week' < now();
SELECT interval '1 day' * 1.5, interval '1 mon' * 0.3, interval '10 days 3 hours' * -1.7, 2 * interval '1 day', interval '1 day' * 2;
SELECT interval '1 mon' / 3, interval '1 day' / 2, interval '1 mon 1 day' / 7, -interval '1 day', - interval '1 mon 2 hours';
SELECT interval '1 mon' - interval '1 day', interval '1 day' - interval '25 hours';
SELECT interval '1 day' / 0;
SELECT interval '1 day' * 1e20;
SELECT timestamp 'infinity' - timestamp '2024-01-01';
SELECT timestamp 'infinity' + interval '1 day', date '2024-01-01' + interval '1 day' * 3;
SELECT timestamp '294276-12-31' + interval '1 year';
SELECT interval '1 day' + 1;
-- extract, date_part and date_trunc of intervals.
SELECT extract(epoch from interval '1 day 2 hours'), extract(epoch from interval '1 year'), extract(epoch from interval '1 mon'), extract(hour from interval '26 hours');
SELECT extract(day from interval '1 mon 40 days'), extract(year from interval '26 months'), extract(minute from interval '-1 hour -5 minutes'), extract(quarter from interval '5 mons');
SELECT extract(second from interval '1.5 seconds'), extract(millisecond from interval '1.5 seconds'), extract(microseconds from interval '1.5 seconds');
SELECT date_part('month', interval '14 months'), date_part('epoch', interval '90 minutes'), date_part('decade', interval '25 years');
SELECT date_trunc('hour', interval '1 day 02:35:00'), date_trunc('quarter', interval '5 mons 3 days'), date_trunc('year', interval '1 year 11 mons'), date_trunc('millisecond', interval '1.234567 s');
SELECT extract(dow from interval '1 day');
SELECT date_trunc('week', interval '10 days');
SELECT extract(fortnight from interval '1 day');
-- age and the justify family.
SELECT age(timestamp '2024-03-05', timestamp '2000-01-31'), age(timestamp '2000-01-31', timestamp '2024-03-05'), age(timestamp '2024-02-29', timestamp '2023-02-28 12:00');
SELECT age(timestamptz '2024-03-31 00:00+00', timestamptz '2024-02-29 12:00+00'), age(date '2024-01-01', date '2023-12-31');
SELECT age(timestamp '2000-01-01') > interval '20 years';
SELECT justify_days(interval '35 days'), justify_days(interval '1 mon -35 days'), justify_hours(interval '50 hours'), justify_hours(interval '1 day -25 hours');
SELECT justify_interval(interval '1 mon -1 hour'), justify_interval(interval '-1 mon 40 days 30 hours');
SELECT make_interval(1, 2, 3, 4, 5, 6, 7.5), make_interval(), make_interval(0, 0, 0, 10);
-- Aggregates.
SELECT sum(x), avg(x), min(x), max(x), count(x) FROM (VALUES (interval '1 day'), (interval '2 hours'), (interval '1 mon'), (NULL)) v(x);
SELECT avg(x) FROM (VALUES (interval '1 mon'), (interval '1 day')) v(x);
-- Times of day.
SELECT time '10:30', time '10:30:15.25', time '24:00', time '2024-01-01 10:00', time '10:00+02', time 'allballs', time '1:2', time '10:30 pm', time '12:00 am';
SELECT time '10:00' + interval '15 hours', time '10:00' - interval '11 hours', time '23:00' + interval '3 days 2 hours', interval '3 hours' + time '10:00';
SELECT time '10:00' - time '08:30', time '08:30' - time '10:00', date '2024-01-01' + time '10:00', time '23:59' + date '2024-02-29';
SELECT extract(hour from time '10:30'), extract(minute from time '10:30'), extract(second from time '10:30:15.25'), extract(epoch from time '01:00'), date_part('hour', time '23:00');
SELECT timestamp '2024-01-01 10:20:30'::time, interval '26:00'::time, time '10:20'::interval, '10:00'::time < time '11:00';
SELECT time '25:00';
SELECT time 'abc';
SELECT extract(day from time '10:00');
-- Columns, keys and ordering.
CREATE TABLE shifts (id int PRIMARY KEY, starts time NOT NULL, length interval, note text);
INSERT INTO shifts VALUES (1, '08:00', '8 hours', 'day'), (2, '22:00', '9 hours 30 minutes', 'night'), (3, '12:00', '1 day', 'long'), (4, '06:00', '24 hours', 'same span'), (5, '00:00', NULL, 'open');
SELECT id, starts, length, starts + length AS ends FROM shifts ORDER BY length NULLS FIRST, id;
SELECT id FROM shifts WHERE length = interval '1 day' ORDER BY id;
SELECT id FROM shifts WHERE length >= '9 hours' ORDER BY id;
SELECT id FROM shifts WHERE starts BETWEEN '07:00' AND '13:00' ORDER BY starts;
-- '1 day' and '24 hours' are one group; which of them a group shows is
-- not defined, so show it justified.
SELECT justify_hours(length), count(*) FROM shifts GROUP BY length ORDER BY length;
SELECT DISTINCT justify_hours(length) FROM shifts ORDER BY 1;
CREATE INDEX shifts_length ON shifts (length);
CREATE INDEX shifts_starts ON shifts USING hash (starts);
SELECT id FROM shifts WHERE length = '24:00:00' ORDER BY id;
SELECT id FROM shifts WHERE starts = '22:00';
SELECT id, length FROM shifts WHERE length > '8 hours' ORDER BY length DESC, id;
UPDATE shifts SET length = length * 2 WHERE id = 1 RETURNING id, length;
UPDATE shifts SET starts = starts + interval '90 minutes';
SELECT id, starts FROM shifts ORDER BY id;
INSERT INTO shifts VALUES (6, '9:00', 'nonsense', 'bad');
INSERT INTO shifts VALUES (6, '26:00', '1 hour', 'bad');
CREATE TABLE spans (s interval PRIMARY KEY);
INSERT INTO spans VALUES ('1 mon');
INSERT INTO spans VALUES ('30 days');
SELECT array_agg(length ORDER BY id) FROM shifts;
SELECT ARRAY[interval '1 day', '2 hours'], ARRAY[time '10:00', '11:30'];
SELECT pg_typeof(interval '1 day'), pg_typeof(time '10:00'), pg_typeof(now() - timestamptz '2024-01-01'), pg_typeof(date '2024-01-01' + interval '1 day');
-- A window frame over a timestamp key, and generate_series with an interval step.
CREATE TABLE readings (at timestamp PRIMARY KEY, v int);
INSERT INTO readings VALUES ('2024-01-01 00:00', 1), ('2024-01-01 00:30', 2), ('2024-01-01 01:10', 3), ('2024-01-01 03:00', 4);
SELECT at, v, at - lag(at) OVER (ORDER BY at) AS gap FROM readings ORDER BY at;
SELECT at FROM readings WHERE at > timestamp '2024-01-01 03:00' - interval '2 hours 30 minutes' ORDER BY at;
SELECT at, sum(v) OVER (ORDER BY at RANGE BETWEEN interval '1 hour' PRECEDING AND CURRENT ROW) FROM readings ORDER BY at;
SELECT at, count(*) OVER (ORDER BY at DESC RANGE BETWEEN CURRENT ROW AND '2 hours' FOLLOWING) FROM readings ORDER BY at;
SELECT sum(v) OVER (ORDER BY at RANGE BETWEEN interval '-1 hour' PRECEDING AND CURRENT ROW) FROM readings;
SELECT * FROM generate_series(timestamp '2024-01-30', timestamp '2024-05-01', interval '1 month');
SELECT g FROM generate_series(timestamptz '2024-01-01 00:00+00', '2024-01-01 02:00+00', '45 minutes') g;
SELECT count(*) FROM generate_series(date '2024-01-01', date '2024-12-31', interval '1 week');
SELECT * FROM generate_series(timestamp '2024-01-03', timestamp '2024-01-01', interval '-1 day');
SELECT * FROM generate_series(timestamp '2024-01-01', timestamp '2024-01-02', interval '0');
