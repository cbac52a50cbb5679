// node-postgres against a running `centum serve`: CRUD, transactions, errors.
//
// Run by crates/server/tests/drivers.rs as `node node_pg_crud.js URL` with
// NODE_PATH pointing at an installed `pg@8`. node-postgres has its own
// protocol code: a parameterized query is an unnamed Parse, Bind (text
// parameters), Describe, Execute and Sync sent in one write; a query with
// a `name` is parsed once and reused. Exits non-zero on any mismatch.
'use strict';

const assert = require('assert').strict;
const { Client } = require('pg');

async function expectError(sqlstate, what, fn) {
  try {
    await fn();
  } catch (e) {
    assert.equal(e.code, sqlstate, `${what}: ${e.message}`);
    return e;
  }
  throw new Error(`${what}: no error, expected SQLSTATE ${sqlstate}`);
}

async function main(url) {
  const conn = new Client({ connectionString: url, connectionTimeoutMillis: 10000 });
  const other = new Client({ connectionString: url, connectionTimeoutMillis: 10000 });
  await conn.connect();
  await other.connect();

  await conn.query(
    'CREATE TABLE orders (id int4 PRIMARY KEY, customer text NOT NULL, total numeric(10,2), ' +
      'qty int8, paid bool, placed timestamptz)'
  );

  const placed = new Date(Date.UTC(2024, 0, 2, 3, 4, 5, 123));
  let r = await conn.query(
    'INSERT INTO orders (id, customer, total, qty, paid, placed) VALUES ($1, $2, $3, $4, $5, $6)',
    [1, 'zoë', '19.99', 3, true, placed]
  );
  assert.equal(r.rowCount, 1);
  r = await conn.query('INSERT INTO orders (id, customer, total, qty, paid, placed) VALUES ($1, $2, $3, $4, $5, $6)', [
    2,
    'yann',
    null,
    null,
    null,
    null,
  ]);
  assert.equal(r.rowCount, 1);

  r = await conn.query('SELECT id, customer, total, qty, paid, placed FROM orders WHERE id = $1', [1]);
  assert.equal(r.rows.length, 1);
  const row = r.rows[0];
  assert.equal(row.id, 1);
  assert.equal(row.customer, 'zoë');
  assert.equal(row.total, '19.99'); // numeric and int8 come back as strings
  assert.equal(row.qty, '3');
  assert.equal(row.paid, true);
  assert.equal(row.placed.getTime(), placed.getTime());
  assert.deepEqual(
    r.fields.map((f) => f.name),
    ['id', 'customer', 'total', 'qty', 'paid', 'placed']
  );

  r = await conn.query('SELECT total, qty, paid, placed FROM orders WHERE id = $1', [2]);
  assert.deepEqual(r.rows[0], { total: null, qty: null, paid: null, placed: null });

  r = await conn.query('UPDATE orders SET qty = qty + $1, customer = $2 WHERE id = $3', [4, 'zoe', 1]);
  assert.equal(r.rowCount, 1);
  r = await conn.query('SELECT qty, customer FROM orders WHERE id = 1');
  assert.deepEqual(r.rows[0], { qty: '7', customer: 'zoe' });
  r = await conn.query('DELETE FROM orders WHERE id = $1', [2]);
  assert.equal(r.rowCount, 1);

  // Named (prepared once) statements, reused.
  for (let i = 0; i < 5; i++) {
    r = await conn.query({ name: 'double', text: 'SELECT $1::int4 * 2 AS d', values: [i] });
    assert.equal(r.rows[0].d, 2 * i);
  }

  const count = async (c) => Number((await c.query('SELECT count(*) AS n FROM orders')).rows[0].n);

  // A committed and a rolled-back transaction.
  await conn.query('BEGIN');
  await conn.query('INSERT INTO orders (id, customer) VALUES ($1, $2)', [10, 'ten']);
  assert.equal(await count(other), 1, 'uncommitted rows are invisible');
  await conn.query('COMMIT');
  assert.equal(await count(other), 2);

  await conn.query('BEGIN');
  await conn.query('INSERT INTO orders (id, customer) VALUES ($1, $2)', [11, 'eleven']);
  await conn.query('DELETE FROM orders WHERE id = $1', [10]);
  assert.equal(await count(conn), 2);
  await conn.query('ROLLBACK');
  assert.equal(await count(conn), 2);
  assert.equal(await count(other), 2);

  // Errors: SQLSTATEs, the failed block, and the connection going on.
  await expectError('23505', 'duplicate key', () =>
    conn.query('INSERT INTO orders (id, customer) VALUES ($1, $2)', [1, 'dup'])
  );
  assert.equal(await count(conn), 2);
  await conn.query('BEGIN');
  await expectError('23505', 'duplicate key in a block', () =>
    conn.query('INSERT INTO orders (id, customer) VALUES ($1, $2)', [10, 'dup'])
  );
  await expectError('25P02', 'failed block', () => conn.query('SELECT 1'));
  await conn.query('ROLLBACK');
  await expectError('42P01', 'missing table', () => conn.query('SELECT * FROM nope WHERE x = $1', [1]));
  await expectError('22012', 'division by zero', () => conn.query('SELECT 1 / $1::int4', [0]));
  await expectError('23502', 'not null', () => conn.query('INSERT INTO orders (id) VALUES ($1)', [50]));
  assert.equal(await count(conn), 2);

  // Simple protocol (no parameters): several statements in one message.
  r = await conn.query("INSERT INTO orders (id, customer) VALUES (20, 'x'); SELECT count(*)::int4 AS n FROM orders");
  assert.ok(Array.isArray(r), 'two results');
  assert.equal(r[0].rowCount, 1);
  assert.equal(r[1].rows[0].n, 3);

  await conn.end();
  await other.end();
  console.log('node-postgres scenario: ok');
}

main(process.argv[2]).catch((e) => {
  console.error(e);
  process.exit(1);
});
