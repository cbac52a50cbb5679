// A small task tracker on knex (with node-postgres underneath).
//
// Run by crates/server/tests/drivers.rs as `node app.js URL`, with
// NODE_PATH pointing at installed `knex@3` and `pg@8`, against Centum and
// against PostgreSQL (each on a fresh database); the two transcripts this
// prints on stdout must be equal.
//
// knex's migrations (migrations/: tables with foreign keys, ON DELETE
// CASCADE and SET NULL, unique columns, a check constraint, defaults,
// single- and multi-column indexes; then a column added and filled, a
// unique constraint, a jsonb column) run in a transaction each batch, under
// knex's lock table (SELECT .. FOR UPDATE). The app inserts with RETURNING,
// joins, aggregates, updates and deletes; nests transactions
// (trx.transaction() is a SAVEPOINT: one released, one rolled back by an
// error, one failing on a unique violation), rolls back a whole
// transaction; reads its columns back from information_schema
// (hasTable, hasColumn, columnInfo); and migrates down and up again.
// Setting CENTUM_SQL_ECHO=1 logs every statement to stderr.
'use strict';

process.env.TZ = 'UTC';
const path = require('path');
const knexFactory = require('knex');

function out(...parts) {
  console.log(parts.map((p) => (typeof p === 'string' ? p : JSON.stringify(p))).join(' '));
}

async function sqlstate(what, fn) {
  try {
    await fn();
    out(what, 'succeeded');
  } catch (e) {
    // The error's fields, not its message (whose wording may differ).
    out(what, 'failed:', e.code || e.message, e.schema, e.table, e.constraint);
  }
}

async function schema(knex) {
  const tables = {};
  for (const t of ['users', 'projects', 'tasks', 'comments']) {
    tables[t] = await knex.schema.hasTable(t);
  }
  out('  tables', tables);
  out('  tasks.estimate', await knex.schema.hasColumn('tasks', 'estimate'));
  const info = await knex('tasks').columnInfo();
  for (const c of Object.keys(info).sort()) {
    out('  tasks column', c, info[c]);
  }
  const migrations = await knex('knex_migrations').select('name', 'batch').orderBy('id');
  out('  migrations', migrations.map((m) => [m.name, m.batch]));
}

async function main(url) {
  const knex = knexFactory({
    client: 'pg',
    connection: url,
    pool: { min: 0, max: 2 },
    migrations: { directory: path.join(__dirname, 'migrations'), loadExtensions: ['.js'] },
  });
  if (process.env.CENTUM_SQL_ECHO) {
    knex.on('query', (q) => console.error(q.sql, JSON.stringify(q.bindings || [])));
  }
  try {
    await scenario(knex);
  } finally {
    await knex.destroy();
  }
  out('knex scenario: ok');
}

async function scenario(knex) {
  // The first migration alone, then rows, then the second migration
  // (which fills in a new column for the rows there).
  const [batch, files] = await knex.migrate.up();
  out('migrate.up', batch, files);
  out('currentVersion', await knex.migrate.currentVersion());
  await schema(knex);

  // Inserts with RETURNING, several rows to a statement.
  const users = await knex('users')
    .insert([
      { email: 'ann@example.com', name: 'Ann', admin: true },
      { email: 'bob@example.com', name: 'Bob' },
      { email: 'cy@example.com', name: 'Cy' },
    ])
    .returning(['id', 'email', 'admin']);
  out('users', users);
  const [ann, bob, cy] = users.map((u) => u.id);
  const projects = await knex('projects')
    .insert([
      { name: 'website', owner_id: ann },
      { name: 'mobile', owner_id: bob },
      { name: 'empty', owner_id: ann },
    ])
    .returning('id');
  out('projects', projects);
  const [web, mobile] = projects.map((p) => p.id);
  const tasks = await knex('tasks')
    .insert([
      { project_id: web, assignee_id: ann, title: 'design', status: 'done', priority: 2, due: '2024-03-01' },
      { project_id: web, assignee_id: bob, title: 'build', status: 'doing', priority: 3, due: '2024-04-01' },
      { project_id: web, title: 'launch', priority: 1 },
      { project_id: mobile, assignee_id: cy, title: 'prototype', priority: 2, due: '2024-03-15' },
      { project_id: mobile, assignee_id: bob, title: 'build', status: 'doing' },
    ])
    .returning(['id', 'status']);
  out('tasks', tasks);
  const [batch2, files2] = await knex.migrate.latest();
  out('migrate.latest', batch2, files2);
  out('currentVersion', await knex.migrate.currentVersion());
  await schema(knex);
  out('estimates', await knex('tasks').select('title', 'estimate').orderBy('id'));
  await sqlstate('a status outside the enum', () =>
    knex('tasks').insert({ project_id: web, title: 'oops', status: 'lost' }));
  await sqlstate('a task of no project', () => knex('tasks').insert({ project_id: 999, title: 'orphan' }));
  await sqlstate('the same title twice in a project', () =>
    knex('tasks').insert({ project_id: web, title: 'design' }));
  const comments = await knex('comments')
    .insert([
      { task_id: tasks[0].id, author_id: bob, body: 'looks good', meta: { likes: 2, tags: ['ui'] } },
      { task_id: tasks[1].id, author_id: ann, body: 'when?' },
      { task_id: tasks[1].id, author_id: bob, body: 'soon', meta: { likes: 0 } },
    ])
    .returning('id');
  out('comments', comments);

  // Joins and aggregates.
  out('join', await knex('tasks as t')
    .join('projects as p', 'p.id', 't.project_id')
    .leftJoin('users as u', 'u.id', 't.assignee_id')
    .select('p.name as project', 't.title', 'u.name as assignee', 't.status', 't.due')
    .orderBy([{ column: 'p.name' }, { column: 't.priority', order: 'desc' }, { column: 't.id' }]));
  out('per project', await knex('projects as p')
    .leftJoin('tasks as t', 't.project_id', 'p.id')
    .select('p.name')
    .count('t.id as tasks')
    .sum({ priority: 't.priority' })
    .max({ latest: 't.due' })
    .groupBy('p.name')
    .orderBy('p.name'));
  out('busy users', await knex('users')
    .select('name')
    .whereIn('id', knex('tasks').select('assignee_id').where('status', 'doing'))
    .orderBy('name'));
  out('users without tasks', await knex('users as u')
    .select('u.name')
    .whereNotExists(knex('tasks').whereRaw('tasks.assignee_id = u.id'))
    .orderBy('u.name'));
  out('commented', await knex('comments as c')
    .join('tasks as t', 't.id', 'c.task_id')
    .join('users as u', 'u.id', 'c.author_id')
    .select('t.title', 'u.name', 'c.body', 'c.meta')
    .whereRaw("coalesce((c.meta->>'likes')::int, 0) >= ?", [0])
    .orderBy('c.id'));
  out('having', await knex('tasks')
    .select('assignee_id')
    .count('* as n')
    .whereNotNull('assignee_id')
    .groupBy('assignee_id')
    .havingRaw('count(*) > ?', [1])
    .orderBy('assignee_id'));
  out('raw', (await knex.raw('SELECT ?::int + ?::int AS sum, ?::text AS t, upper(?) AS u', [2, 3, "it's", 'x'])).rows);
  out('paged', await knex('tasks').select('title').orderBy('id').limit(2).offset(1));
  out('distinct', await knex('tasks').distinct('status').orderBy('status'));
  out('first', await knex('users').where({ email: 'bob@example.com' }).first('id', 'name'));

  // Updates.
  // (RETURNING comes in no particular order.)
  const updated = await knex('tasks')
    .where({ status: 'doing' })
    .update({ status: 'done', priority: knex.raw('priority + 10') })
    .returning(['id', 'status', 'priority']);
  out('update returning', updated.sort((x, y) => x.id - y.id));
  out('increment', await knex('tasks').where('title', 'launch').increment('priority', 5));
  out('decrement', await knex('tasks').where('project_id', mobile).decrement('priority', 1));
  out('update count', await knex('users').whereIn('id', [bob, cy]).update({ admin: true }));
  out('after updates', await knex('tasks').select('id', 'status', 'priority').orderBy('id'));

  // Transactions: savepoints inside, then a failed transaction.
  await knex.transaction(async (trx) => {
    await trx('tasks').insert({ project_id: mobile, title: 'test', priority: 4 });
    await trx.transaction(async (inner) => {
      await inner('tasks').insert({ project_id: mobile, title: 'release' });
    });
    await trx
      .transaction(async (inner) => {
        await inner('tasks').insert({ project_id: mobile, title: 'dropped' });
        throw new Error('changed our mind');
      })
      .catch((e) => out('inner transaction rolled back:', e.message));
    await trx
      .transaction(async (inner) => {
        await inner('users').insert({ email: 'ann@example.com', name: 'Ann again' });
      })
      .catch((e) => out('inner transaction failed:', e.code, e.constraint));
    out('inside', await trx('tasks').where('project_id', mobile).orderBy('id').pluck('title'));
  });
  out('after commit', await knex('tasks').where('project_id', mobile).orderBy('id').pluck('title'));
  await knex
    .transaction(async (trx) => {
      await trx('tasks').where('project_id', web).del();
      await trx('users').insert({ email: 'dan@example.com', name: 'Dan' });
      out('inside doomed', await trx('tasks').count('* as n').first());
      throw new Error('all of it');
    })
    .catch((e) => out('transaction rolled back:', e.message));
  out('after rollback', await knex('tasks').count('* as n').first(), await knex('users').orderBy('id').pluck('name'));
  // A transaction with an explicit rollback and a savepoint released
  // inside it; the sequence keeps the ids it handed out.
  const trx = await knex.transaction();
  await trx('users').insert({ email: 'eve@example.com', name: 'Eve' });
  await trx.rollback();
  out('explicit rollback', await knex('users').where('name', 'Eve').count('* as n').first());
  out('next user id', await knex('users').insert({ email: 'fay@example.com', name: 'Fay' }).returning('id'));

  // Deletes: ON DELETE SET NULL and CASCADE.
  out('delete user', await knex('users').where('id', cy).del());
  out('unassigned', await knex('tasks').whereNull('assignee_id').orderBy('id').pluck('title'));
  await sqlstate('delete a project owner', () => knex('users').where('id', bob).del());
  out('delete project', await knex('projects').where('id', web).del().returning('name'));
  out('left', await knex('tasks').count('* as tasks').first(), await knex('comments').count('* as comments').first());

  // Down one batch and up again.
  const [rolledBack, downFiles] = await knex.migrate.rollback();
  out('migrate.rollback', rolledBack, downFiles);
  out('currentVersion', await knex.migrate.currentVersion());
  await schema(knex);
  out('tasks at the first migration', await knex('tasks').select('id', 'title', 'priority').orderBy('id'));
  const [again, upFiles] = await knex.migrate.latest();
  out('migrate.latest', again, upFiles);
  await schema(knex);
  out('estimates', await knex('tasks').select('title', 'estimate').orderBy('id'));
  const [, list] = await knex.migrate.list();
  out('pending', list);
  const [, allDown] = await knex.migrate.rollback(undefined, true);
  out('migrate.rollback all', allDown);
  out('currentVersion', await knex.migrate.currentVersion());
  await schema(knex).catch((e) => out('  no tasks table:', e.code));
}

const url = process.argv[2];
if (!url) {
  console.error('usage: node app.js URL');
  process.exit(2);
}
main(url).catch((e) => {
  console.error(e);
  process.exit(1);
});
