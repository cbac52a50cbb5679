// LISTEN/NOTIFY through node-postgres, as an event-driven worker uses them.
//
// Run by crates/server/tests/drivers.rs as `node node_pg_notify.js URL`
// with NODE_PATH pointing at an installed `pg@8`, once against Centum and
// once against PostgreSQL; the two transcripts on stdout must be equal.
// node-postgres parses NotificationResponse messages as they arrive, idle
// or mid-query, and emits them as 'notification' events.
'use strict';

const { Client } = require('pg');

async function main(url) {
  const listener = new Client({ connectionString: url, connectionTimeoutMillis: 10000 });
  const sender = new Client({ connectionString: url, connectionTimeoutMillis: 10000 });
  await listener.connect();
  await sender.connect();
  const pid = async (c) => (await c.query('SELECT pg_backend_pid() AS p')).rows[0].p;
  const who = new Map([
    [await pid(listener), 'the listener'],
    [await pid(sender), 'the sender'],
  ]);

  // Every notification the listener receives, in order; waiters are woken
  // as they arrive.
  const inbox = [];
  let wake = null;
  listener.on('notification', (n) => {
    inbox.push(n);
    if (wake) wake();
  });
  const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
  // Prints the next `expect` notifications (waiting up to 10 s for them),
  // then checks that no more arrive soon after.
  async function drain(expect) {
    const deadline = Date.now() + 10000;
    while (inbox.length < expect && Date.now() < deadline) {
      await Promise.race([new Promise((resolve) => (wake = resolve)), sleep(100)]);
    }
    await sleep(300);
    const got = inbox.splice(0);
    for (const n of got) {
      console.log(`  '${n.channel}' '${n.payload}' from ${who.get(n.processId) || 'unknown session'}`);
    }
    if (got.length !== expect) console.log(`  expected ${expect} notifications, got ${got.length}`);
    return got;
  }

  console.log('listen, then notify');
  await listener.query('LISTEN jobs');
  await listener.query('LISTEN "Mixed Case"');
  await sender.query("NOTIFY jobs, 'first'");
  await sender.query('SELECT pg_notify($1, $2)', ['jobs', 'second']);
  await sender.query("SELECT pg_notify('Mixed Case', 'quoted channel')");
  await sender.query("NOTIFY unheard, 'nobody listens'");
  await sender.query('NOTIFY jobs');
  await drain(4);

  console.log('a transaction sends at commit, in order, duplicates once');
  await sender.query('BEGIN');
  await sender.query("NOTIFY jobs, 'a'");
  await sender.query("NOTIFY jobs, 'b'");
  await sender.query("NOTIFY jobs, 'a'");
  await drain(0);
  await sender.query('COMMIT');
  await drain(2);

  console.log('a rolled-back transaction sends nothing');
  await sender.query('BEGIN');
  await sender.query("NOTIFY jobs, 'never'");
  await sender.query('ROLLBACK');
  await drain(0);

  console.log('a failed transaction sends nothing');
  await sender.query('BEGIN');
  await sender.query("NOTIFY jobs, 'never either'");
  try {
    await sender.query('SELECT 1 / 0');
  } catch (e) {
    console.log(`  ${e.code}`);
  }
  await sender.query('COMMIT');
  await drain(0);

  console.log('a session hears its own notifications');
  await listener.query("NOTIFY jobs, 'to myself'");
  await drain(1);

  console.log('a listener inside a transaction hears them when it ends');
  await listener.query('BEGIN');
  await listener.query('SELECT 1');
  await sender.query("NOTIFY jobs, 'while busy'");
  await sleep(200);
  console.log(`  before COMMIT: ${inbox.length}`);
  await listener.query('COMMIT');
  await drain(1);

  console.log('a pipeline of queries with notifications in between');
  await Promise.all([
    sender.query("SELECT pg_notify('jobs', 'p1')"),
    sender.query("SELECT pg_notify('jobs', 'p2')"),
    sender.query("SELECT pg_notify('jobs', 'p3')"),
  ]);
  await drain(3);

  console.log('errors');
  for (const sql of ["SELECT pg_notify('jobs', repeat('x', 8000))", "SELECT pg_notify('', 'no channel')"]) {
    try {
      await sender.query(sql);
      console.log('  no error');
    } catch (e) {
      console.log(`  ${e.code}`);
    }
  }

  console.log('unlisten');
  await listener.query('UNLISTEN jobs');
  await sender.query("NOTIFY jobs, 'after unlisten'");
  await sender.query("NOTIFY \"Mixed Case\", 'still listened to'");
  await drain(1);
  await listener.query('UNLISTEN *');
  await sender.query("NOTIFY \"Mixed Case\", 'after unlisten all'");
  await drain(0);

  console.log('many notifications in one transaction, all delivered in order');
  await listener.query('LISTEN bulk');
  await sender.query('BEGIN');
  for (let i = 0; i < 500; i++) await sender.query('SELECT pg_notify($1, $2)', ['bulk', String(i)]);
  await sender.query('COMMIT');
  const deadline = Date.now() + 10000;
  while (inbox.length < 500 && Date.now() < deadline) await sleep(50);
  const payloads = inbox.splice(0).map((n) => n.payload);
  const inOrder = payloads.length === 500 && payloads.every((p, i) => p === String(i));
  console.log(`  ${payloads.length} received, in order: ${inOrder}`);

  await listener.end();
  await sender.end();
  console.log('node-postgres notify: ok');
}

main(process.argv[2]).catch((e) => {
  console.error(e);
  process.exit(1);
});
