-- Settings: SET, SET LOCAL, RESET, set_config() and current_setting(),
-- taken back with the block that made them, as in PostgreSQL.
SET statement_timeout = 0;
SET search_path = public;
SHOW statement_timeout;
SET statement_timeout = 5000;
SHOW statement_timeout;
SELECT current_setting('statement_timeout'), current_setting('server_version_num')::int >= 150000 AS fifteen;
SELECT current_setting('no_such_setting');
SELECT current_setting('no_such_setting', true) IS NULL AS missing;
-- A custom setting, as applications keep per-session context.
SELECT set_config('myapp.tenant', '42', false);
SELECT current_setting('myapp.tenant');
SHOW myapp.tenant;
-- set_config and current_setting in one statement.
SELECT set_config('myapp.user', 'ann', false), current_setting('myapp.user');
-- A block that rolls back takes its SETs back.
BEGIN;
SET statement_timeout = '1min';
SELECT set_config('myapp.tenant', '7', false);
SHOW statement_timeout;
ROLLBACK;
SHOW statement_timeout;
SELECT current_setting('myapp.tenant');
-- SET LOCAL lasts until the block ends; a plain SET in the block stays.
BEGIN;
SET LOCAL statement_timeout = '2s';
SET lock_timeout = '3s';
SELECT set_config('myapp.tenant', '8', true);
SELECT set_config('myapp.fresh', 'new', true);
SELECT current_setting('statement_timeout'), current_setting('lock_timeout'), current_setting('myapp.tenant');
COMMIT;
SELECT current_setting('statement_timeout'), current_setting('lock_timeout'), current_setting('myapp.tenant');
-- A custom setting first defined by SET LOCAL stays defined, empty.
SELECT current_setting('myapp.fresh') = '' AS empty;
-- A SET after a SET LOCAL of the same name is what COMMIT keeps.
BEGIN;
SET LOCAL lock_timeout = '4s';
SET lock_timeout = '6s';
COMMIT;
SHOW lock_timeout;
-- ROLLBACK TO a savepoint takes back what was set after it.
BEGIN;
SET lock_timeout = '10s';
SAVEPOINT a;
SET lock_timeout = '20s';
SET LOCAL statement_timeout = '9s';
ROLLBACK TO a;
SHOW lock_timeout;
SHOW statement_timeout;
SAVEPOINT b;
SET search_path = nowhere, public;
ROLLBACK TO b;
SHOW search_path;
COMMIT;
SHOW lock_timeout;
-- A failed statement's set_config does not happen.
SELECT set_config('myapp.tenant', '99', false), 1 / 0;
SELECT current_setting('myapp.tenant');
-- Bad values and fixed settings.
SELECT set_config('statement_timeout', 'soon', false);
SET server_version_num = 1;
SELECT set_config('server_version', '9', false);
-- pg_settings shows the session's values.
SELECT name, setting FROM pg_settings WHERE name IN ('lock_timeout', 'search_path', 'server_encoding') ORDER BY name;
SELECT unit FROM pg_settings WHERE name = 'statement_timeout';
RESET lock_timeout;
SHOW lock_timeout;
-- Tables have one access method, heap, as pg_am lists it.
SHOW default_table_access_method;
SET default_table_access_method = 'columnar';
SET default_table_access_method = heap;
SELECT amname FROM pg_am WHERE amname = current_setting('default_table_access_method');
