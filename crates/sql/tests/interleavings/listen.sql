-- pg_listening_channels(): the channels a session listens on, changed by
-- LISTEN and UNLISTEN when their transaction commits, and by no other
-- session's. (Centum lists them in name order, PostgreSQL in the order
-- they were first listened on: the queries sort.)
SESSION a;
SELECT * FROM pg_listening_channels();
LISTEN beta;
LISTEN alpha;
SELECT pg_listening_channels() AS c ORDER BY c;
BEGIN;
LISTEN gamma;
SELECT count(*) FROM pg_listening_channels();
ROLLBACK;
SELECT c FROM pg_listening_channels() AS c ORDER BY 1;
SESSION b;
SELECT count(*) FROM pg_listening_channels();
LISTEN gamma;
SELECT * FROM pg_listening_channels();
SESSION a;
UNLISTEN alpha;
SELECT * FROM pg_listening_channels();
SELECT upper(ch) FROM pg_listening_channels() ch;
UNLISTEN *;
SELECT count(*) FROM pg_listening_channels();
