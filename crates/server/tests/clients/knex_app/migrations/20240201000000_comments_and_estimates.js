// Tasks get an estimate (filled in for the tasks already there) and
// comments; titles must be unique within a project.
'use strict';

exports.up = async function (knex) {
  await knex.schema.alterTable('tasks', (t) => {
    t.decimal('estimate', 6, 2);
    t.unique(['project_id', 'title'], { indexName: 'tasks_project_title' });
  });
  await knex('tasks').update({ estimate: knex.raw('priority * 1.5') });
  await knex.schema.createTable('comments', (t) => {
    t.bigIncrements('id');
    t.integer('task_id').notNullable().references('id').inTable('tasks').onDelete('CASCADE');
    t.integer('author_id').notNullable().references('id').inTable('users');
    t.text('body').notNullable();
    t.jsonb('meta');
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.index(['task_id', 'created_at']);
  });
};

exports.down = async function (knex) {
  await knex.schema.dropTable('comments');
  await knex.schema.alterTable('tasks', (t) => {
    t.dropUnique(['project_id', 'title'], 'tasks_project_title');
    t.dropColumn('estimate');
  });
};
