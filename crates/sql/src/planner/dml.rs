//! INSERT, UPDATE and DELETE: what to write, and every constraint to check
//! on the way.
//!
//! A row is completed in a fixed order: explicit values, then defaults
//! (including sequences for serial and identity columns), then generated
//! columns computed from the completed row; CHECK constraints and foreign
//! keys are then checked on the final row, and NOT NULL and uniqueness by
//! the engine as it writes.

use super::access;
use super::bind::{Binder, Ctx, Scope};
use super::expr::Expr;
use super::plan::{Access, AccessPath, Plan};
use super::views::Action;
use super::Statement;
use crate::catalog::OutputColumn;
use crate::catalog::{RefAction, TableInfo};
use crate::error::{Error, Result};
use crate::names::{ident, object_parts};
use crate::privileges::{ObjectKind, DELETE, INSERT, SELECT, UPDATE};
use centum_engine::{IndexKind, Table};
use centum_types::{DataType, Value};
use sqlparser::ast;
use std::sync::Arc;

/// A foreign key to check on written rows.
#[derive(Clone, Debug)]
pub struct FkCheck {
    /// Constraint name.
    pub name: String,
    /// Referencing columns.
    pub columns: Vec<usize>,
    /// The referenced table.
    pub ref_table: Arc<Table>,
    /// A unique index over the referenced columns.
    pub ref_index: String,
}

/// What every written row of a table must satisfy.
#[derive(Clone, Debug)]
pub struct RowRules {
    /// Table facts (name, foreign keys pointing here).
    pub info: Arc<TableInfo>,
    /// Generated columns: (column, expression over the row).
    pub generated: Vec<(usize, Expr)>,
    /// CHECK constraints: (name, condition over the row).
    pub checks: Vec<(String, Expr)>,
    /// Foreign keys of this table.
    pub fks: Vec<FkCheck>,
    /// The table's enabled triggers, compiled (`None`: it has none).
    pub triggers: Option<Arc<super::triggers::TableTriggers>>,
}

/// ON CONFLICT.
#[derive(Clone, Debug)]
pub enum OnConflict {
    /// DO NOTHING: skip rows whose key exists in `index` (any unique
    /// index when `None`).
    Nothing(Option<String>),
    /// DO UPDATE SET: assignments over `existing ++ excluded`.
    Update {
        /// The arbiter index.
        index: String,
        /// (column, expression).
        assignments: Vec<(usize, Expr)>,
        /// WHERE over `existing ++ excluded`.
        filter: Option<Expr>,
    },
}

/// A planned INSERT.
#[derive(Clone, Debug)]
pub struct Insert {
    /// The rows to insert, `targets.len()` columns wide.
    pub source: Plan,
    /// Table column of each source column.
    pub targets: Vec<usize>,
    /// Per table column: its default when not targeted (`None`: NULL).
    pub defaults: Vec<Option<Expr>>,
    /// Constraints.
    pub rules: RowRules,
    /// ON CONFLICT.
    pub on_conflict: Option<OnConflict>,
    /// RETURNING expressions over the inserted row.
    pub returning: Option<Vec<Expr>>,
}

/// A planned UPDATE.
#[derive(Clone, Debug)]
pub struct Update {
    /// The rows to change.
    pub access: Access,
    /// The whole WHERE condition, re-checked on a row a concurrent
    /// transaction changed first (READ COMMITTED).
    pub recheck: Option<Expr>,
    /// (column, new value over the old row).
    pub assignments: Vec<(usize, Expr)>,
    /// Constraints.
    pub rules: RowRules,
    /// RETURNING over the new row (and the joined row of FROM).
    pub returning: Option<Vec<Expr>>,
    /// UPDATE ... FROM: the row of the other tables each target row joins.
    pub from: Option<Joined>,
    /// Data-modifying statements of its WITH, run first (see `Plan::Writes`).
    pub writes: Vec<(usize, super::Statement)>,
}

/// The other tables of UPDATE ... FROM or DELETE ... USING, joined and
/// filtered by the WHERE, with the target's row as the outer row: the
/// target row is changed if this gives a row, and with the first one (as
/// in PostgreSQL, which row is unspecified when several join).
#[derive(Clone, Debug)]
pub struct Joined {
    /// Runs with the target's current row as its outer row.
    pub plan: Plan,
}

/// A planned DELETE.
#[derive(Clone, Debug)]
pub struct Delete {
    /// The rows to delete.
    pub access: Access,
    /// The whole WHERE condition, re-checked on a row a concurrent
    /// transaction changed first (READ COMMITTED).
    pub recheck: Option<Expr>,
    /// Table facts (foreign keys pointing here).
    pub info: Arc<TableInfo>,
    /// RETURNING over the deleted row (and the joined row of USING).
    pub returning: Option<Vec<Expr>>,
    /// DELETE ... USING: the rows of the other tables a target row needs.
    pub using: Option<Joined>,
    /// The table's enabled triggers, compiled (`None`: it has none).
    pub triggers: Option<Arc<super::triggers::TableTriggers>>,
    /// Data-modifying statements of its WITH, run first (see `Plan::Writes`).
    pub writes: Vec<(usize, super::Statement)>,
}

impl<'a> Binder<'a> {
    fn table_scope(&self, info: &TableInfo, alias: &str) -> (Scope, Vec<OutputColumn>) {
        let cols = OutputColumn::of_table(info.table.columns());
        (Scope::of(alias, &cols), cols)
    }

    /// Binds the rules every row written to `info` must meet.
    pub(crate) fn row_rules(&mut self, info: Arc<TableInfo>) -> Result<RowRules> {
        let name = info.table.name();
        let (scope, _) = self.table_scope(&info, &name);
        let ctx = Ctx::plain(&scope);
        let mut generated = Vec::new();
        for (i, c) in info.meta.columns.iter().enumerate() {
            if let Some(g) = &c.generated {
                let e = parse_expr(g)?;
                generated.push((i, self.expr(&e, &ctx)?.0));
            }
        }
        // Index keys last, as they may read generated columns.
        let columns = info.table.columns();
        generated.sort_by_key(|(i, _)| crate::catalog::is_hidden_column(&columns[*i].name));
        let mut checks = Vec::new();
        for c in &info.meta.checks {
            let e = parse_expr(&c.expr)?;
            checks.push((c.name.clone(), self.expr(&e, &ctx)?.0));
        }
        let mut fks = Vec::new();
        for fk in &info.meta.foreign_keys {
            let parent = self.catalog.table(&fk.ref_table)?;
            let ref_index = referenced_index(&parent.table, fk)?;
            fks.push(FkCheck {
                name: fk.name.clone(),
                columns: fk.columns.clone(),
                ref_table: parent.table.clone(),
                ref_index,
            });
        }
        let triggers = super::triggers::compile(self.catalog, &info)?;
        Ok(RowRules { info, generated, checks, fks, triggers })
    }

    /// The default of column `i` of `info`, bound.
    pub(crate) fn column_default(&mut self, info: &TableInfo, i: usize) -> Result<Option<Expr>> {
        match info.meta.columns.get(i).and_then(|c| c.default.as_ref()) {
            Some(text) => {
                let e = parse_expr(text)?;
                let empty = Scope::default();
                let t = self.expr(&e, &Ctx::plain(&empty))?;
                let ty = Some(info.table.columns()[i].ty.clone());
                Ok(Some(self.coerce_untyped(t, &ty)?.0))
            }
            None => Ok(None),
        }
    }

    /// Binds INSERT.
    pub fn insert(&mut self, ins: &ast::Insert) -> Result<(Statement, Vec<OutputColumn>)> {
        let ast::TableObject::TableName(name) = &ins.table else {
            return Err(Error::unsupported("INSERT into a table function"));
        };
        if let Some((def, triggers)) = self.instead_of(name, crate::triggers::INSERT)? {
            let (w, cols) = self.insert_instead(ins, &def, triggers)?;
            return Ok((Statement::ViewWrite(Box::new(w)), cols));
        }
        if let Some(view) = self.view_target(name, Action::Insert)? {
            let rewritten = view.insert(ins)?;
            return self.as_view_owner(&view.engine, |b| b.insert(&rewritten));
        }
        let table_name = self.table_name(name)?;
        let info = self.catalog.table(&table_name)?;
        self.need(ObjectKind::Relation, &table_name, INSERT, false);
        if ins.returning.is_some() {
            self.need(ObjectKind::Relation, &table_name, SELECT, false);
        }
        if let Some(ast::OnInsert::OnConflict(c)) = &ins.on {
            if let ast::OnConflictAction::DoUpdate(u) = &c.action {
                self.need(ObjectKind::Relation, &table_name, UPDATE, false);
                if u.selection.is_some() {
                    self.need(ObjectKind::Relation, &table_name, SELECT, false);
                }
            }
        }
        let columns: Vec<(String, Option<DataType>)> =
            info.table.columns().iter().map(|c| (c.name.clone(), Some(c.ty.clone()))).collect();
        let targets = insert_targets(&ins.columns, &columns, &info.table.name())?;
        let mut defaults = Vec::with_capacity(columns.len());
        for i in 0..columns.len() {
            defaults.push(self.column_default(&info, i)?);
        }
        // Generated columns, and identity columns GENERATED ALWAYS (unless
        // OVERRIDING SYSTEM VALUE), take no explicit value.
        let overriding =
            ins.table_alias.as_ref().is_some_and(|a| a.alias.value == crate::parser::OVERRIDING_SYSTEM_VALUE);
        let generated_cols: Vec<usize> = info
            .meta
            .columns
            .iter()
            .enumerate()
            .filter(|(_, c)| c.generated.is_some() || (c.identity_always == Some(true) && !overriding))
            .map(|(i, _)| i)
            .collect();
        let (source, width) =
            self.insert_source(ins.source.as_deref(), &targets, &columns, &defaults, &generated_cols)?;
        let targets: Vec<usize> = targets[..width].to_vec();
        let rules = self.row_rules(info.clone())?;
        let events = match &ins.on {
            Some(ast::OnInsert::OnConflict(c)) if matches!(c.action, ast::OnConflictAction::DoUpdate(_)) => {
                crate::triggers::INSERT | crate::triggers::UPDATE
            }
            _ => crate::triggers::INSERT,
        };
        self.need_triggers(rules.triggers.as_deref(), events);
        self.need_actions(&info, events)?;
        let (scope, _) = self.table_scope(
            &info,
            &ins.table_alias
                .as_ref()
                .filter(|_| !overriding)
                .map(|a| ident(&a.alias))
                .unwrap_or(info.table.name()),
        );
        let on_conflict = match &ins.on {
            None => None,
            Some(ast::OnInsert::OnConflict(oc)) => Some(self.on_conflict(oc, &info, &scope)?),
            Some(_) => return Err(Error::unsupported("ON DUPLICATE KEY")),
        };
        let (returning, cols) = self.returning(ins.returning.as_deref(), &scope)?;
        let insert = Insert { source, targets, defaults, rules, on_conflict, returning };
        Ok((Statement::Insert(Box::new(insert)), cols))
    }

    /// Notes what the triggers need that the foreign keys' ON DELETE and
    /// ON UPDATE actions fire when rows of `info`'s table are deleted or
    /// updated (`events`), on every table the actions reach. PostgreSQL
    /// runs an action as the referencing table's owner, so that is whose
    /// privileges its BEFORE triggers' statements need.
    fn need_actions(&mut self, info: &TableInfo, events: u8) -> Result<()> {
        use crate::triggers::{DELETE, UPDATE};
        let mut todo: Vec<(Arc<TableInfo>, u8)> = Vec::new();
        let mut seen: Vec<(String, u8)> = Vec::new();
        let mut reach =
            |parent: &TableInfo, events: u8, todo: &mut Vec<(Arc<TableInfo>, u8)>| -> Result<()> {
                for (child, fk) in &parent.referenced_by {
                    let mut fired = 0;
                    if events & DELETE != 0 {
                        fired |= match fk.on_delete {
                            RefAction::Restrict => 0,
                            RefAction::Cascade => DELETE,
                            RefAction::SetNull | RefAction::SetDefault => UPDATE,
                        };
                    }
                    if events & UPDATE != 0 && fk.on_update != RefAction::Restrict {
                        fired |= UPDATE;
                    }
                    for event in [DELETE, UPDATE].into_iter().filter(|e| fired & e != 0) {
                        if !seen.contains(&(child.clone(), event)) {
                            seen.push((child.clone(), event));
                            todo.push((self.catalog.table(child)?, event));
                        }
                    }
                }
                Ok(())
            };
        reach(info, events, &mut todo)?;
        while let Some((child, event)) = todo.pop() {
            reach(&child, event, &mut todo)?;
            let Some(triggers) = super::triggers::compile(self.catalog, &child)? else { continue };
            let owner = self.owner_of(ObjectKind::Relation, &child.table.name());
            for t in triggers.list.iter().filter(|t| t.def.fires_on(event)) {
                // The action's BEFORE triggers run inside it; its AFTER
                // triggers wait for the end of the statement, and run as
                // the statement's role.
                if t.def.timing == crate::triggers::Timing::Before {
                    let acting = self.acting_as.replace(owner.clone());
                    self.need_body(&t.program);
                    self.acting_as = acting;
                } else {
                    self.need_body(&t.program);
                }
            }
        }
        Ok(())
    }

    /// The rows INSERT's `source` gives for `targets`, columns of a
    /// relation with `columns`: a DEFAULT in VALUES is the column's default
    /// in `defaults` (NULL where none), and `generated` columns take no
    /// other value. Returns the plan and how many targets it fills.
    pub(crate) fn insert_source(
        &mut self,
        source: Option<&ast::Query>,
        targets: &[usize],
        columns: &[(String, Option<DataType>)],
        defaults: &[Option<Expr>],
        generated: &[usize],
    ) -> Result<(Plan, usize)> {
        let refuse = |c: usize| {
            Err(Error::other(
                "428C9",
                format!("cannot insert a non-DEFAULT value into column \"{}\"", columns[c].0),
            ))
        };
        Ok(match source {
            None => (Plan::Values { rows: vec![vec![]] }, 0),
            Some(q) => match (q.body.as_ref(), &q.with, &q.order_by, &q.limit_clause) {
                (ast::SetExpr::Values(v), None, None, None) => {
                    let mut rows = Vec::with_capacity(v.rows.len());
                    let empty = Scope::default();
                    let ctx = Ctx::plain(&empty);
                    let width = v.rows.first().map_or(0, |r| r.len());
                    for r in &v.rows {
                        if r.len() > targets.len() {
                            return Err(Error::Syntax(
                                "INSERT has more expressions than target columns".into(),
                            ));
                        }
                        if r.len() != width {
                            return Err(Error::Syntax("VALUES lists must all be the same length".into()));
                        }
                        let mut row = Vec::with_capacity(r.len());
                        for (j, e) in r.iter().enumerate() {
                            let col = targets[j];
                            if is_default_keyword(e) {
                                row.push(defaults[col].clone().unwrap_or(Expr::Literal(Value::Null)));
                                continue;
                            }
                            if generated.contains(&col) {
                                return refuse(col);
                            }
                            let t = self.expr(e, &ctx)?;
                            row.push(self.coerce_untyped(t, &columns[col].1)?.0);
                        }
                        rows.push(row);
                    }
                    (Plan::Values { rows }, width)
                }
                _ => {
                    let (plan, cols) = self.query(q)?;
                    if cols.len() > targets.len() {
                        return Err(Error::Syntax("INSERT has more expressions than target columns".into()));
                    }
                    if let Some(&c) = targets[..cols.len()].iter().find(|c| generated.contains(c)) {
                        return refuse(c);
                    }
                    (plan, cols.len())
                }
            },
        })
    }

    fn on_conflict(&mut self, oc: &ast::OnConflict, info: &TableInfo, scope: &Scope) -> Result<OnConflict> {
        let index = match &oc.conflict_target {
            None => None,
            Some(ast::ConflictTarget::Columns(cols)) => {
                let names: Vec<String> = cols.iter().map(ident).collect();
                Some(unique_index_on(&info.table, &names).ok_or_else(|| {
                    Error::other(
                        "42P10",
                        "there is no unique or exclusion constraint matching the ON CONFLICT specification",
                    )
                })?)
            }
            Some(ast::ConflictTarget::OnConstraint(n)) => {
                let n = object_parts(n)?.join(".");
                info.table.index(&n).map_err(|_| {
                    Error::UndefinedObject(format!(
                        "constraint \"{n}\" for table \"{}\" does not exist",
                        info.table.name()
                    ))
                })?;
                Some(n)
            }
        };
        match &oc.action {
            ast::OnConflictAction::DoNothing => Ok(OnConflict::Nothing(index)),
            ast::OnConflictAction::DoUpdate(du) => {
                let Some(index) = index else {
                    return Err(Error::Syntax(
                        "ON CONFLICT DO UPDATE requires inference specification or constraint name".into(),
                    ));
                };
                let mut excluded = Scope::default();
                for c in &scope.cols {
                    excluded.cols.push(super::bind::ScopeCol { rel: Some("excluded".into()), ..c.clone() });
                }
                let both = scope.concat(&excluded);
                let ctx = Ctx::plain(&both);
                let assignments = self.assignments(&du.assignments, info, &ctx)?;
                let filter = du.selection.as_ref().map(|w| self.expr(w, &ctx).map(|t| t.0)).transpose()?;
                Ok(OnConflict::Update { index, assignments, filter })
            }
        }
    }

    /// The SET list of an UPDATE (or ON CONFLICT DO UPDATE) of `table`:
    /// (column, new value over the old row).
    fn assignments(
        &mut self,
        list: &[ast::Assignment],
        info: &TableInfo,
        ctx: &Ctx,
    ) -> Result<Vec<(usize, Expr)>> {
        let columns: Vec<(String, Option<DataType>)> =
            info.table.columns().iter().map(|c| (c.name.clone(), Some(c.ty.clone()))).collect();
        self.set_list(list, &columns, &info.table.name(), Some(info), ctx)
    }

    /// A SET list over a relation with `columns`: those of `table`, where
    /// DEFAULT is a column's default and generated columns take no other
    /// value; or those of a view, where DEFAULT is NULL.
    pub(crate) fn set_list(
        &mut self,
        list: &[ast::Assignment],
        columns: &[(String, Option<DataType>)],
        relation: &str,
        table: Option<&TableInfo>,
        ctx: &Ctx,
    ) -> Result<Vec<(usize, Expr)>> {
        let mut out: Vec<(usize, Expr)> = Vec::new();
        for a in list {
            let names: Vec<String> = match &a.target {
                ast::AssignmentTarget::ColumnName(n) => {
                    vec![object_parts(n)?.last().cloned().unwrap_or_default()]
                }
                ast::AssignmentTarget::Tuple(ns) => ns
                    .iter()
                    .map(|n| Ok(object_parts(n)?.last().cloned().unwrap_or_default()))
                    .collect::<Result<_>>()?,
            };
            let values: Vec<&ast::Expr> = match (&a.value, names.len()) {
                (v, 1) => vec![v],
                (ast::Expr::Tuple(vs), n) if vs.len() == n => vs.iter().collect(),
                _ => return Err(Error::Syntax("number of columns does not match number of values".into())),
            };
            for (n, v) in names.iter().zip(values) {
                let i = columns
                    .iter()
                    .position(|(name, _)| name == n)
                    .ok_or_else(|| Error::UndefinedColumn(format!("\"{n}\" of relation \"{relation}\"")))?;
                if out.iter().any(|(c, _)| *c == i) {
                    return Err(Error::other(
                        "42601",
                        format!("multiple assignments to same column \"{n}\""),
                    ));
                }
                if table
                    .and_then(|info| info.meta.columns.get(i))
                    .is_some_and(|c| c.generated.is_some() || c.identity_always == Some(true))
                    && !is_default_keyword(v)
                {
                    return Err(Error::other(
                        "428C9",
                        format!("column \"{n}\" can only be updated to DEFAULT"),
                    ));
                }
                let e = match table {
                    Some(info) if is_default_keyword(v) => {
                        self.column_default(info, i)?.unwrap_or(Expr::Literal(Value::Null))
                    }
                    None if is_default_keyword(v) => Expr::Literal(Value::Null),
                    _ => {
                        let t = self.expr(v, ctx)?;
                        self.coerce_untyped(t, &columns[i].1)?.0
                    }
                };
                out.push((i, e));
            }
        }
        Ok(out)
    }

    pub(crate) fn returning(
        &mut self,
        items: Option<&[ast::SelectItem]>,
        scope: &Scope,
    ) -> Result<(Option<Vec<Expr>>, Vec<OutputColumn>)> {
        let Some(items) = items else { return Ok((None, vec![])) };
        let ctx = Ctx::plain(scope);
        let mut exprs = Vec::new();
        let mut cols = Vec::new();
        for item in items {
            match item {
                ast::SelectItem::Wildcard(_) | ast::SelectItem::QualifiedWildcard(..) => {
                    for (i, c) in scope.cols.iter().enumerate().filter(|(_, c)| !c.hidden) {
                        exprs.push(Expr::Column(i));
                        cols.push(OutputColumn { name: c.name.clone(), ty: c.ty.clone() });
                    }
                }
                ast::SelectItem::UnnamedExpr(e) => {
                    let (x, ty) = self.expr(e, &ctx)?;
                    let name = match e {
                        ast::Expr::Identifier(id) => ident(id),
                        ast::Expr::CompoundIdentifier(ids) => ids.last().map(ident).unwrap_or_default(),
                        ast::Expr::Function(f) => crate::names::function_name(f)?,
                        _ => "?column?".into(),
                    };
                    exprs.push(x);
                    cols.push(OutputColumn { name, ty: ty.or(Some(DataType::Text)) });
                }
                ast::SelectItem::ExprWithAlias { expr, alias } => {
                    let (x, ty) = self.expr(expr, &ctx)?;
                    exprs.push(x);
                    cols.push(OutputColumn { name: ident(alias), ty: ty.or(Some(DataType::Text)) });
                }
                _ => return Err(Error::unsupported("this RETURNING item")),
            }
        }
        Ok((Some(exprs), cols))
    }

    /// The rows of `table` matching `selection`, through the best path.
    fn target_rows(
        &mut self,
        name: &ast::ObjectName,
        alias: &str,
        selection: Option<&ast::Expr>,
    ) -> Result<(Arc<TableInfo>, Access, Option<Expr>, Scope)> {
        let table_name = self.table_name(name)?;
        let info = self.catalog.table(&table_name)?;
        let (scope, _) = self.table_scope(&info, alias);
        let mut conds = Vec::new();
        let mut recheck = None;
        if let Some(w) = selection {
            let t = self.expr(w, &Ctx::plain(&scope))?;
            let pred = self.coerce_untyped(t, &Some(DataType::Boolean))?.0;
            recheck = Some(pred.clone());
            for p in pred.conjuncts() {
                conds.push((p, String::new()));
            }
        }
        let base = Access {
            keys: self.hidden_keys(&info)?,
            table: info.table.clone(),
            alias: alias.to_string(),
            path: AccessPath::Scan,
            filter: None,
            bound_check: None,
            cond_text: String::new(),
            filter_text: String::new(),
            columns: None,
            consumer_columns: None,
        };
        let (mut access, _) = access::choose(base, conds, None)?;
        if let Some(w) = selection {
            if access.cond_text.is_empty() && !matches!(access.path, AccessPath::Scan) {
                access.cond_text = w.to_string();
            } else if access.filter.is_some() {
                access.filter_text = w.to_string();
            }
        }
        Ok((info, access, recheck, scope))
    }

    /// Binds UPDATE.
    pub fn update(&mut self, up: &ast::Update) -> Result<(Statement, Vec<OutputColumn>)> {
        let (name, alias) = single_table(&up.table)?;
        let alias = alias
            .unwrap_or_else(|| object_parts(&name).ok().and_then(|p| p.last().cloned()).unwrap_or_default());
        let from = update_from(up);
        if let Some((def, triggers)) = self.instead_of(&name, crate::triggers::UPDATE)? {
            let (w, cols) = self.update_instead(up, &alias, &def, triggers)?;
            return Ok((Statement::ViewWrite(Box::new(w)), cols));
        }
        if let Some(view) = self.view_target(&name, Action::Update)? {
            if from.is_some() {
                return Err(Error::unsupported("UPDATE ... FROM on a view"));
            }
            let rewritten = view.update(up, &alias)?;
            return self.as_view_owner(&view.engine, |b| b.update(&rewritten));
        }
        let target = self.table_name(&name)?;
        self.need(ObjectKind::Relation, &target, UPDATE, false);
        let reads = up.selection.is_some()
            || up.returning.is_some()
            || from.is_some()
            || up.assignments.iter().any(|a| reads_columns(&a.value));
        if reads {
            self.need(ObjectKind::Relation, &target, SELECT, false);
        }
        let (info, access, recheck, scope, from) =
            self.joined_targets(&name, &alias, from, up.selection.as_ref())?;
        crate::publications::check_replica_identity(self.catalog, &info, crate::catalog::PUBLISH_UPDATE)?;
        let assignments = self.assignments(&up.assignments, &info, &Ctx::plain(&scope))?;
        let rules = self.row_rules(info.clone())?;
        self.need_triggers(rules.triggers.as_deref(), crate::triggers::UPDATE);
        self.need_actions(&info, crate::triggers::UPDATE)?;
        let (returning, cols) = self.returning(up.returning.as_deref(), &scope)?;
        let update = Update { access, recheck, assignments, rules, returning, from, writes: vec![] };
        Ok((Statement::Update(Box::new(update)), cols))
    }

    /// The target rows of an UPDATE or DELETE, joined to the tables of its
    /// FROM or USING `items` if it has them: [`Binder::target_rows`] for
    /// the part of the WHERE that reads the target alone, the scope of the
    /// target's row followed by the joined one's, and the join.
    #[allow(clippy::type_complexity)]
    fn joined_targets(
        &mut self,
        name: &ast::ObjectName,
        alias: &str,
        items: Option<&[ast::TableWithJoins]>,
        selection: Option<&ast::Expr>,
    ) -> Result<(Arc<TableInfo>, Access, Option<Expr>, Scope, Option<Joined>)> {
        let Some(items) = items else {
            let (info, access, recheck, scope) = self.target_rows(name, alias, selection)?;
            return Ok((info, access, recheck, scope, None));
        };
        let (own, joined, other) = self.join_target(name, alias, items, selection)?;
        let (info, access, recheck, scope) = self.target_rows(name, alias, own.as_ref())?;
        Ok((info, access, recheck, scope.concat(&other), Some(joined)))
    }

    /// UPDATE ... FROM `items` / DELETE ... USING `items` on table `name`
    /// (alias `alias`): the part of `selection` that reads the target
    /// alone (to pick its rows by), the joined other tables, and their
    /// scope.
    fn join_target(
        &mut self,
        name: &ast::ObjectName,
        alias: &str,
        items: &[ast::TableWithJoins],
        selection: Option<&ast::Expr>,
    ) -> Result<(Option<ast::Expr>, Joined, Scope)> {
        let info = self.catalog.table(&self.table_name(name)?)?;
        let (target, _) = self.table_scope(&info, alias);
        self.join_rows(target, items, selection)
    }

    /// UPDATE ... FROM `items` / DELETE ... USING `items` on a relation
    /// whose row has scope `target`: as [`Binder::join_target`].
    pub(crate) fn join_rows(
        &mut self,
        target: Scope,
        items: &[ast::TableWithJoins],
        selection: Option<&ast::Expr>,
    ) -> Result<(Option<ast::Expr>, Joined, Scope)> {
        if self.outer_width() != 0 {
            return Err(Error::unsupported("UPDATE ... FROM or DELETE ... USING inside a subquery"));
        }
        self.outer.push(target.clone());
        let joined = self.joined(items, selection);
        self.outer.pop();
        let (plan, scope) = joined?;
        let mut own: Option<ast::Expr> = None;
        for c in selection.map(split_and).unwrap_or_default() {
            if self.expr(c, &Ctx::plain(&target)).is_ok() {
                own = Some(match own {
                    None => c.clone(),
                    Some(a) => ast::Expr::BinaryOp {
                        left: Box::new(a),
                        op: ast::BinaryOperator::And,
                        right: Box::new(c.clone()),
                    },
                });
            }
        }
        Ok((own, Joined { plan }, scope))
    }

    /// Binds DELETE.
    pub fn delete(&mut self, del: &ast::Delete) -> Result<(Statement, Vec<OutputColumn>)> {
        let from = match &del.from {
            ast::FromTable::WithFromKeyword(f) | ast::FromTable::WithoutKeyword(f) => f,
        };
        let [twj] = from.as_slice() else {
            return Err(Error::unsupported("DELETE from several tables"));
        };
        let (name, alias) = single_table(twj)?;
        let alias = alias
            .unwrap_or_else(|| object_parts(&name).ok().and_then(|p| p.last().cloned()).unwrap_or_default());
        if let Some((def, triggers)) = self.instead_of(&name, crate::triggers::DELETE)? {
            let (w, cols) = self.delete_instead(del, &alias, &def, triggers)?;
            return Ok((Statement::ViewWrite(Box::new(w)), cols));
        }
        if let Some(view) = self.view_target(&name, Action::Delete)? {
            if del.using.is_some() {
                return Err(Error::unsupported("DELETE ... USING on a view"));
            }
            let rewritten = view.delete(del, &alias)?;
            return self.as_view_owner(&view.engine, |b| b.delete(&rewritten));
        }
        let target = self.table_name(&name)?;
        self.need(ObjectKind::Relation, &target, DELETE, false);
        if del.selection.is_some() || del.returning.is_some() || del.using.is_some() {
            self.need(ObjectKind::Relation, &target, SELECT, false);
        }
        let (info, access, recheck, scope, using) =
            self.joined_targets(&name, &alias, del.using.as_deref(), del.selection.as_ref())?;
        crate::publications::check_replica_identity(self.catalog, &info, crate::catalog::PUBLISH_DELETE)?;
        let (returning, cols) = self.returning(del.returning.as_deref(), &scope)?;
        let triggers = super::triggers::compile(self.catalog, &info)?;
        self.need_triggers(triggers.as_deref(), crate::triggers::DELETE);
        self.need_actions(&info, crate::triggers::DELETE)?;
        let delete = Delete { access, recheck, info, returning, using, triggers, writes: vec![] };
        Ok((Statement::Delete(Box::new(delete)), cols))
    }
}

/// The columns an INSERT's column list names, as positions in `columns`
/// (all of them, in order, without a list).
pub(crate) fn insert_targets(
    list: &[ast::ObjectName],
    columns: &[(String, Option<DataType>)],
    relation: &str,
) -> Result<Vec<usize>> {
    if list.is_empty() {
        // Every column but an index's hidden key columns.
        return Ok((0..columns.len())
            .filter(|&i| !crate::catalog::is_hidden_column(&columns[i].0))
            .collect());
    }
    let mut t = Vec::new();
    for c in list {
        let n = object_parts(c)?.join(".");
        let i = columns
            .iter()
            .position(|(name, _)| *name == n)
            .ok_or_else(|| Error::UndefinedColumn(format!("\"{n}\" of relation \"{relation}\"")))?;
        if t.contains(&i) {
            return Err(Error::other("42701", format!("column \"{n}\" specified more than once")));
        }
        t.push(i);
    }
    Ok(t)
}

/// The tables of UPDATE ... FROM, wherever the statement wrote them.
pub(crate) fn update_from(up: &ast::Update) -> Option<&[ast::TableWithJoins]> {
    match &up.from {
        Some(ast::UpdateTableFromKind::AfterSet(items) | ast::UpdateTableFromKind::BeforeSet(items)) => {
            Some(items.as_slice())
        }
        None => None,
    }
}

/// The conjuncts of `e` (its top-level ANDs).
fn split_and(e: &ast::Expr) -> Vec<&ast::Expr> {
    match e {
        ast::Expr::BinaryOp { left, op: ast::BinaryOperator::And, right } => {
            let mut v = split_and(left);
            v.extend(split_and(right));
            v
        }
        ast::Expr::Nested(inner) => match inner.as_ref() {
            ast::Expr::BinaryOp { op: ast::BinaryOperator::And, .. } => split_and(inner),
            _ => vec![e],
        },
        _ => vec![e],
    }
}

fn single_table(twj: &ast::TableWithJoins) -> Result<(ast::ObjectName, Option<String>)> {
    if !twj.joins.is_empty() {
        return Err(Error::unsupported("joins in UPDATE/DELETE targets"));
    }
    match &twj.relation {
        ast::TableFactor::Table { name, alias, .. } => {
            Ok((name.clone(), alias.as_ref().map(|a| ident(&a.name))))
        }
        other => Err(Error::unsupported(format!("target {other}"))),
    }
}

/// The unique index of `parent` that foreign key `fk` refers through.
pub(crate) fn referenced_index(parent: &Table, fk: &crate::catalog::ForeignKey) -> Result<String> {
    unique_index_on(parent, &fk.ref_columns).ok_or_else(|| {
        Error::other(
            "42830",
            format!(
                "there is no unique constraint matching given keys for referenced table \"{}\"",
                fk.ref_table
            ),
        )
    })
}

/// A unique index of `table` whose key is exactly `columns` (any order).
pub(crate) fn unique_index_on(table: &Table, columns: &[String]) -> Option<String> {
    let mut want: Vec<&String> = columns.iter().collect();
    want.sort();
    table
        .def()
        .indexes
        .into_iter()
        .filter(|ix| ix.unique)
        .find(|ix| {
            let mut have: Vec<&String> = ix.columns.iter().collect();
            have.sort();
            have == want
        })
        .map(|ix| ix.name)
}

/// An index of `table` whose leading key columns are exactly `columns`,
/// usable to find referencing rows: (name, whether it is a hash index over
/// exactly these columns).
pub(crate) fn index_leading(table: &Table, columns: &[String]) -> Option<String> {
    table
        .def()
        .indexes
        .into_iter()
        .find(|ix| match ix.kind {
            IndexKind::Hash { .. } => ix.columns == columns,
            IndexKind::Range => ix.columns.len() == columns.len() && ix.columns == columns,
        })
        .map(|ix| ix.name)
}

pub(crate) fn is_default_keyword(e: &ast::Expr) -> bool {
    matches!(e, ast::Expr::Identifier(id) if id.quote_style.is_none() && id.value.eq_ignore_ascii_case("default"))
}

/// Parses a stored expression (a default, a CHECK).
pub(crate) fn parse_expr(text: &str) -> Result<ast::Expr> {
    crate::parser::parse_expression(text)
}

#[allow(dead_code)]
fn _refs(_: RefAction) {}

/// What a MERGE clause does.
#[derive(Clone, Debug)]
pub enum MergeAction {
    /// UPDATE SET: (column, expression over `target ++ source`).
    Update(Vec<(usize, Expr)>),
    /// DELETE.
    Delete,
    /// INSERT: (column, expression over `target ++ source`, target NULL).
    Insert(Vec<(usize, Expr)>),
    /// DO NOTHING.
    Nothing,
}

/// One WHEN clause of a MERGE.
#[derive(Clone, Debug)]
pub struct MergeClause {
    /// WHEN MATCHED (else NOT MATCHED).
    pub matched: bool,
    /// AND condition over `target ++ source`.
    pub predicate: Option<Expr>,
    /// THEN ...
    pub action: MergeAction,
}

/// A planned MERGE.
#[derive(Clone, Debug)]
pub struct Merge {
    /// The source rows.
    pub source: Plan,
    /// The target rows matching one source row (the source row is the
    /// outer row).
    pub target: Access,
    /// Clauses in order; the first whose kind and predicate fit acts.
    pub clauses: Vec<MergeClause>,
    /// Per target column: its default for inserted rows.
    pub defaults: Vec<Option<Expr>>,
    /// Constraints of the target.
    pub rules: RowRules,
}

impl<'a> Binder<'a> {
    /// Binds MERGE.
    pub fn merge(&mut self, m: &ast::Merge) -> Result<Merge> {
        let ast::TableFactor::Table { name, alias, .. } = &m.table else {
            return Err(Error::unsupported("MERGE into this target"));
        };
        if self.view_target(name, Action::Insert).map_or(true, |v| v.is_some()) {
            return Err(Error::Raised {
                code: "42809",
                message: format!("cannot execute MERGE on relation \"{name}\""),
                detail: Some("This operation is not supported for views.".into()),
                hint: None,
            });
        }
        let table_name = self.table_name(name)?;
        let info = self.catalog.table(&table_name)?;
        self.need(ObjectKind::Relation, &table_name, SELECT, false);
        for clause in &m.clauses {
            let privilege = match &clause.action {
                ast::MergeAction::Insert(_) => INSERT,
                ast::MergeAction::Update(_) => UPDATE,
                ast::MergeAction::Delete { .. } => DELETE,
                _ => continue,
            };
            self.need(ObjectKind::Relation, &table_name, privilege, false);
        }
        let alias = alias.as_ref().map(|a| ident(&a.name)).unwrap_or_else(|| info.table.name());
        let (tscope, _) = self.table_scope(&info, &alias);
        let (source, sscope) = self.merge_source(&m.source)?;
        let tw = tscope.cols.len();
        let both = tscope.concat(&sscope);
        let ctx = Ctx::plain(&both);
        let t = self.expr(&m.on, &ctx)?;
        let on = self.coerce_untyped(t, &Some(DataType::Boolean))?.0;
        // Target conditions: source columns become outer columns.
        let conds: Vec<(Expr, String)> = on
            .conjuncts()
            .into_iter()
            .map(|c| {
                let c = c.map(&mut |x| match x {
                    Expr::Column(i) if i >= tw => Expr::Outer(i - tw),
                    x => x,
                });
                (c, String::new())
            })
            .collect();
        let base = Access {
            keys: self.hidden_keys(&info)?,
            table: info.table.clone(),
            alias: alias.clone(),
            path: AccessPath::Scan,
            filter: None,
            bound_check: None,
            cond_text: String::new(),
            filter_text: String::new(),
            columns: None,
            consumer_columns: None,
        };
        let (mut target, _) = access::choose(base, conds, None)?;
        if !matches!(target.path, AccessPath::Scan) {
            target.cond_text = format!("({})", m.on);
        } else if target.filter.is_some() {
            target.filter_text = format!("({})", m.on);
        }
        let mut clauses = Vec::new();
        for c in &m.clauses {
            let matched = match c.clause_kind {
                ast::MergeClauseKind::Matched => true,
                ast::MergeClauseKind::NotMatched | ast::MergeClauseKind::NotMatchedByTarget => false,
                ast::MergeClauseKind::NotMatchedBySource => {
                    return Err(Error::unsupported("WHEN NOT MATCHED BY SOURCE"))
                }
            };
            let predicate = c
                .predicate
                .as_ref()
                .map(|p| {
                    let t = self.expr(p, &ctx)?;
                    Ok::<_, Error>(self.coerce_untyped(t, &Some(DataType::Boolean))?.0)
                })
                .transpose()?;
            let action = match (&c.action, matched) {
                (ast::MergeAction::Update(u), true) => match &u.kind {
                    ast::MergeUpdateKind::Set(list) => {
                        MergeAction::Update(self.assignments(list, &info, &ctx)?)
                    }
                    ast::MergeUpdateKind::Wildcard => return Err(Error::unsupported("UPDATE SET *")),
                },
                (ast::MergeAction::Delete { .. }, true) => MergeAction::Delete,
                (ast::MergeAction::Insert(ins), false) => {
                    let columns = info.table.columns();
                    let targets: Vec<usize> = if ins.columns.is_empty() {
                        (0..columns.len())
                            .filter(|&i| !crate::catalog::is_hidden_column(&columns[i].name))
                            .collect()
                    } else {
                        ins.columns
                            .iter()
                            .map(|c| {
                                let n = object_parts(c)?.join(".");
                                info.table.column_index(&n).map_err(|_| {
                                    Error::UndefinedColumn(format!(
                                        "\"{n}\" of relation \"{}\"",
                                        info.table.name()
                                    ))
                                })
                            })
                            .collect::<Result<_>>()?
                    };
                    let ast::MergeInsertKind::Values(v) = &ins.kind else {
                        return Err(Error::unsupported("INSERT ROW"));
                    };
                    let [row] = v.rows.as_slice() else {
                        return Err(Error::Syntax("MERGE INSERT takes one VALUES row".into()));
                    };
                    if row.len() != targets.len() {
                        return Err(Error::Syntax("INSERT has more expressions than target columns".into()));
                    }
                    let mut values = Vec::new();
                    for (e, &c) in row.iter().zip(&targets) {
                        let x = if is_default_keyword(e) {
                            self.column_default(&info, c)?.unwrap_or(Expr::Literal(Value::Null))
                        } else {
                            let t = self.expr(e, &ctx)?;
                            self.coerce_untyped(t, &Some(columns[c].ty.clone()))?.0
                        };
                        values.push((c, x));
                    }
                    MergeAction::Insert(values)
                }
                (ast::MergeAction::DoNothing { .. }, _) => MergeAction::Nothing,
                _ => {
                    return Err(Error::Syntax(format!(
                        "this action is not allowed in a WHEN {}MATCHED clause",
                        if matched { "" } else { "NOT " }
                    )))
                }
            };
            clauses.push(MergeClause { matched, predicate, action });
        }
        let ncols = info.table.columns().len();
        let mut defaults = Vec::with_capacity(ncols);
        for i in 0..ncols {
            defaults.push(self.column_default(&info, i)?);
        }
        let rules = self.row_rules(info)?;
        let all = crate::triggers::INSERT | crate::triggers::UPDATE | crate::triggers::DELETE;
        self.need_triggers(rules.triggers.as_deref(), all);
        self.need_actions(&rules.info, all)?;
        Ok(Merge { source, target, clauses, defaults, rules })
    }

    fn merge_source(&mut self, f: &ast::TableFactor) -> Result<(Plan, Scope)> {
        let q = ast::Query {
            with: None,
            body: Box::new(ast::SetExpr::Select(Box::new(ast::Select {
                select_token: ast::helpers::attached_token::AttachedToken::empty(),
                optimizer_hints: vec![],
                distinct: None,
                select_modifiers: None,
                top: None,
                top_before_distinct: false,
                projection: vec![ast::SelectItem::Wildcard(ast::WildcardAdditionalOptions::default())],
                exclude: None,
                into: None,
                from: vec![ast::TableWithJoins { relation: f.clone(), joins: vec![] }],
                lateral_views: vec![],
                prewhere: None,
                selection: None,
                connect_by: vec![],
                group_by: ast::GroupByExpr::Expressions(vec![], vec![]),
                cluster_by: vec![],
                distribute_by: vec![],
                sort_by: vec![],
                having: None,
                named_window: vec![],
                qualify: None,
                window_before_qualify: false,
                value_table_mode: None,
                flavor: ast::SelectFlavor::Standard,
            }))),
            order_by: None,
            limit_clause: None,
            fetch: None,
            locks: vec![],
            for_clause: None,
            settings: None,
            format_clause: None,
            pipe_operators: vec![],
        };
        let (plan, cols) = self.query(&q)?;
        let rel = match f {
            ast::TableFactor::Table { name, alias, .. } => {
                alias.as_ref().map(|a| ident(&a.name)).unwrap_or_else(|| {
                    object_parts(name).ok().and_then(|p| p.last().cloned()).unwrap_or_default()
                })
            }
            ast::TableFactor::Derived { alias: Some(a), .. } => ident(&a.name),
            _ => return Err(Error::unsupported("this MERGE source")),
        };
        Ok((plan, Scope::of(&rel, &cols)))
    }
}

/// Whether an UPDATE's SET value reads a column (and so needs SELECT, as
/// in PostgreSQL): any name in it that is not inside a subquery, whose own
/// FROM is checked for itself.
pub(crate) fn reads_columns(e: &ast::Expr) -> bool {
    let mut found = false;
    let _ = ast::visit_expressions(e, |x| {
        if matches!(x, ast::Expr::Identifier(_) | ast::Expr::CompoundIdentifier(_)) {
            found = true;
            return std::ops::ControlFlow::Break(());
        }
        std::ops::ControlFlow::Continue(())
    });
    found
}
