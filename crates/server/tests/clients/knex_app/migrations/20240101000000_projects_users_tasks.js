// Projects, their users and tasks: foreign keys (ON DELETE CASCADE and
// SET NULL), unique columns, a check constraint from enu(), defaults and
// a two-column index.
'use strict';

exports.up = async function (knex) {
  await knex.schema.createTable('users', (t) => {
    t.increments('id');
    t.string('email', 120).notNullable().unique();
    t.string('name', 100).notNullable();
    t.boolean('admin').notNullable().defaultTo(false);
  });
  await knex.schema.createTable('projects', (t) => {
    t.increments('id');
    t.string('name', 100).notNullable().unique();
    t.integer('owner_id').notNullable().references('id').inTable('users');
    t.timestamps(true, true);
  });
  await knex.schema.createTable('tasks', (t) => {
    t.increments('id');
    t.integer('project_id').notNullable().references('id').inTable('projects').onDelete('CASCADE');
    t.integer('assignee_id').references('id').inTable('users').onDelete('SET NULL');
    t.string('title', 200).notNullable();
    t.enu('status', ['todo', 'doing', 'done']).notNullable().defaultTo('todo');
    t.integer('priority').notNullable().defaultTo(0);
    t.date('due');
    t.index(['project_id', 'status'], 'tasks_project_status');
    t.index('assignee_id');
  });
};

exports.down = async function (knex) {
  await knex.schema.dropTable('tasks');
  await knex.schema.dropTable('projects');
  await knex.schema.dropTable('users');
};
