//! Views in statements.
//!
//! A view named in FROM is its query, bound afresh where it is read, as a
//! subquery in FROM would be: with the search path it was created under,
//! and none of the reading statement's CTEs or outer rows. Its columns are
//! the ones it had when it was created (names and number): a `*` in its
//! query does not grow when its table does.
//!
//! A simple view (one table or simple view in FROM; no WITH, DISTINCT,
//! GROUP BY, HAVING, LIMIT, OFFSET, set operations, aggregates, window or
//! set-returning functions) takes INSERT, UPDATE and DELETE, as in
//! PostgreSQL: the statement is rewritten into one on the view's table,
//! its columns replaced by the expressions the view gives them, and the
//! view's WHERE added to the rows an UPDATE or DELETE may touch. Only
//! columns that are plain columns of the table can be written.

use super::bind::{has_aggregate, Binder};
use super::plan::Plan;
use super::{Dictionary, Expr};
use crate::catalog::OutputColumn;
use crate::catalog::ViewDef;
use crate::error::{Error, Result};
use crate::names::{ident, object_parts, qualify};
use crate::privileges::ObjectKind;
use crate::system::snapshot::{Snapshot, ViewShapes};
use sqlparser::ast;
use std::ops::ControlFlow;

impl Binder<'_> {
    /// The view or materialized view `parts` names (`[name]` looked up
    /// through the search path, or `[schema, name]`).
    pub(crate) fn view_named(&self, parts: &[String]) -> Option<ViewDef> {
        match parts {
            [t] => self.search_path.iter().find_map(|s| self.catalog.view_if_any(&qualify(s, t))),
            [s, t] | [_, s, t] => self.catalog.view_if_any(&qualify(s, t)),
            _ => None,
        }
    }

    /// View `def`'s rows: its query's plan, cut to the view's columns, and
    /// the columns under the view's names.
    pub(crate) fn view_query(&mut self, def: &ViewDef) -> Result<(Plan, Vec<OutputColumn>)> {
        crate::stack::check("views nested too deeply")?;
        let query = parse_query(&def.query)?;
        let mut inner = Binder::new(self.catalog, &def.search_path, vec![]);
        let (mut plan, mut cols) = inner.query(&query)?;
        // What a view reads is checked against the view's owner (and what
        // a view under it reads, against that view's owner).
        let owner = self.owner_of(ObjectKind::Relation, &def.name);
        self.need_as(&owner, inner.needs.into_inner());
        if def.columns.len() < cols.len() {
            let keep = def.columns.len();
            plan = Plan::Project { input: Box::new(plan), exprs: (0..keep).map(Expr::Column).collect() };
            cols.truncate(keep);
        }
        for (c, n) in cols.iter_mut().zip(&def.columns) {
            c.name = n.clone();
        }
        Ok((plan, cols))
    }

    /// Whether a write to `name` goes to a view: `None` for a table; for
    /// a simple view, what to write instead. Writing to a materialized view
    /// fails (42809), and so does writing to a view that is not simple.
    pub(crate) fn view_target(&self, name: &ast::ObjectName, action: Action) -> Result<Option<Simple>> {
        if !self.catalog.has_views() {
            return Ok(None);
        }
        let parts = object_parts(name)?;
        if let Some(table) = self.table_name(name).ok().filter(|t| self.catalog.db().table(t).is_ok()) {
            if let Some(v) = self.catalog.view(&table).filter(|v| v.materialized) {
                if !writing_materialized() {
                    return Err(Error::other(
                        "42809",
                        format!("cannot change materialized view \"{}\"", short(&v.name)),
                    ));
                }
            }
            return Ok(None);
        }
        let Some(def) = self.view_named(&parts).filter(|v| !v.materialized) else { return Ok(None) };
        self.need(ObjectKind::Relation, &def.name, action.privilege(), false);
        simple(self, &def, action).map(|mut s| {
            s.engine = def.name.clone();
            Some(s)
        })
    }
}

/// What a statement does to a view.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Action {
    Insert,
    Update,
    Delete,
}

impl Action {
    /// The privilege the action needs on the view.
    fn privilege(self) -> u16 {
        match self {
            Action::Insert => crate::privileges::INSERT,
            Action::Update => crate::privileges::UPDATE | crate::privileges::SELECT,
            Action::Delete => crate::privileges::DELETE | crate::privileges::SELECT,
        }
    }

    fn verb(self) -> &'static str {
        match self {
            Action::Insert => "insert into",
            Action::Update => "update",
            Action::Delete => "delete from",
        }
    }

    fn hint(self) -> &'static str {
        match self {
            Action::Insert => "To enable inserting into the view, provide an INSTEAD OF INSERT trigger or an unconditional ON INSERT DO INSTEAD rule.",
            Action::Update => "To enable updating the view, provide an INSTEAD OF UPDATE trigger or an unconditional ON UPDATE DO INSTEAD rule.",
            Action::Delete => "To enable deleting from the view, provide an INSTEAD OF DELETE trigger or an unconditional ON DELETE DO INSTEAD rule.",
        }
    }
}

/// A simple view, as a write to it becomes a write to its relation.
pub(crate) struct Simple {
    /// The view's name (short).
    view: String,
    /// The view's engine name.
    pub(crate) engine: String,
    /// The relation under it, schema-qualified.
    relation: ast::ObjectName,
    /// The relation's alias in the view's query.
    alias: Option<ast::TableAlias>,
    /// Per view column: its name, the expression the view gives it, and
    /// the relation's column when it is a plain one.
    columns: Vec<(String, ast::Expr, Option<String>)>,
    /// The view's WHERE.
    selection: Option<ast::Expr>,
}

impl ViewShapes for Dictionary {
    fn shape(&self, def: &ViewDef) -> (Vec<OutputColumn>, Option<Vec<bool>>) {
        let mut binder = Binder::new(self, &def.search_path, vec![]);
        let columns = binder.view_query(def).map(|(_, c)| c).unwrap_or_default();
        let writable = (!def.materialized)
            .then(|| simple(&Binder::new(self, &def.search_path, vec![]), def, Action::Update).ok())
            .flatten()
            .map(|s| s.columns.iter().map(|(_, _, plain)| plain.is_some()).collect());
        (columns, writable)
    }
}

impl Dictionary {
    /// The catalog as one statement sees it, with every object's OID.
    pub(crate) fn snapshot(&self) -> Result<Snapshot> {
        Snapshot::take(self, self)
    }
}

/// Whether `def` is simple, and how its columns map to its relation's.
fn simple(b: &Binder, def: &ViewDef, action: Action) -> Result<Simple> {
    let view = short(&def.name);
    let refuse = |detail: &str| Error::Raised {
        code: "55000",
        message: format!("cannot {} view \"{view}\"", action.verb()),
        detail: Some(detail.to_string()),
        hint: Some(action.hint().to_string()),
    };
    let q = parse_query(&def.query)?;
    if q.with.is_some() {
        return Err(refuse("Views containing WITH are not automatically updatable."));
    }
    if q.limit_clause.is_some() || q.fetch.is_some() {
        return Err(refuse("Views containing LIMIT or OFFSET are not automatically updatable."));
    }
    let ast::SetExpr::Select(sel) = q.body.as_ref() else {
        return Err(refuse("Views containing UNION, INTERSECT, or EXCEPT are not automatically updatable."));
    };
    if let Some(clause) = combining_clause(sel) {
        return Err(refuse(&format!("Views containing {clause} are not automatically updatable.")));
    }
    let Some((name, alias)) = single_relation(sel) else {
        return Err(refuse(
            "Views that do not select from a single table or view are not automatically updatable.",
        ));
    };
    let inner = Binder::new(b.catalog, &def.search_path, vec![]);
    let parts = object_parts(name)?;
    let engine =
        match inner.table_name(name) {
            Ok(t) if b.catalog.db().table(&t).is_ok() => t,
            _ => match inner.view_named(&parts) {
                Some(v) => v.name,
                None => return Err(refuse(
                    "Views that do not select from a single table or view are not automatically updatable.",
                )),
            },
        };
    let rel_name =
        alias.as_ref().map(|a| ident(&a.name)).unwrap_or_else(|| parts.last().cloned().unwrap_or_default());
    // The relation's columns, for `*`.
    let rel_columns: Vec<String> = match b.catalog.table(&engine) {
        Ok(info) => info
            .table
            .columns()
            .iter()
            .filter(|c| !crate::catalog::is_hidden_column(&c.name))
            .map(|c| c.name.clone())
            .collect(),
        Err(_) => {
            let v = b.catalog.view(&engine).ok_or_else(|| Error::UndefinedTable(engine.clone()))?;
            let mut nb = Binder::new(b.catalog, &v.search_path, vec![]);
            nb.view_query(&v)?.1.into_iter().map(|c| c.name).collect()
        }
    };
    let mut columns = Vec::new();
    for item in &sel.projection {
        match item {
            ast::SelectItem::UnnamedExpr(e) | ast::SelectItem::ExprWithAlias { expr: e, .. } => {
                if has_aggregate(e) {
                    return Err(refuse(
                        "Views that return aggregate functions are not automatically updatable.",
                    ));
                }
                if has_window(e) {
                    return Err(refuse(
                        "Views that return window functions are not automatically updatable.",
                    ));
                }
                columns.push((String::new(), e.clone(), plain_column(e, &rel_name)));
            }
            other @ ast::SelectItem::ExprWithAliases { .. } => {
                return Err(Error::unsupported(format!("select item {other}")));
            }
            ast::SelectItem::Wildcard(_) | ast::SelectItem::QualifiedWildcard(..) => {
                for c in &rel_columns {
                    let e = ast::Expr::CompoundIdentifier(vec![quoted(&rel_name), quoted(c)]);
                    columns.push((String::new(), e, Some(c.clone())));
                }
            }
        }
    }
    columns.truncate(def.columns.len());
    for (c, n) in columns.iter_mut().zip(&def.columns) {
        c.0 = n.clone();
    }
    if action != Action::Delete && columns.iter().all(|c| c.2.is_none()) {
        return Err(refuse("Views that have no updatable columns are not automatically updatable."));
    }
    Ok(Simple {
        view,
        engine: String::new(),
        relation: written_name(&engine),
        alias: alias.clone(),
        columns,
        selection: sel.selection.clone(),
    })
}

impl Simple {
    /// INSERT into the view as INSERT into its relation.
    pub(crate) fn insert(&self, ins: &ast::Insert) -> Result<ast::Insert> {
        if ins.on.is_some() {
            return Err(Error::unsupported("INSERT ... ON CONFLICT on a view"));
        }
        let targets: Vec<String> = if ins.columns.is_empty() {
            self.columns.iter().map(|c| c.0.clone()).collect()
        } else {
            ins.columns.iter().map(|c| object_parts(c).map(|p| p.join("."))).collect::<Result<_>>()?
        };
        let mut columns = Vec::new();
        for t in &targets {
            columns.push(ast::ObjectName(vec![ast::ObjectNamePart::Identifier(quoted(
                &self.writable(t, "insert into")?,
            ))]));
        }
        let mut out = ins.clone();
        out.table = ast::TableObject::TableName(self.relation.clone());
        // An alias other than the OVERRIDING SYSTEM VALUE mark names the view.
        let alias = match &ins.table_alias {
            Some(a) if a.alias.value != crate::parser::OVERRIDING_SYSTEM_VALUE => {
                out.table_alias = None;
                ident(&a.alias)
            }
            _ => self.view.clone(),
        };
        out.columns = columns;
        out.returning = self.returning(ins.returning.as_deref(), &alias);
        Ok(out)
    }

    /// UPDATE of the view as UPDATE of its relation.
    pub(crate) fn update(&self, up: &ast::Update, alias: &str) -> Result<ast::Update> {
        let mut out = up.clone();
        out.table = self.target();
        for a in &mut out.assignments {
            let ast::AssignmentTarget::ColumnName(name) = &a.target else {
                return Err(Error::unsupported("assigning a tuple of view columns"));
            };
            let col = object_parts(name)?.last().cloned().unwrap_or_default();
            a.target =
                ast::AssignmentTarget::ColumnName(ast::ObjectName(vec![ast::ObjectNamePart::Identifier(
                    quoted(&self.writable(&col, "update")?),
                )]));
            self.substitute(&mut a.value, alias);
        }
        out.selection = self.condition(up.selection.as_ref(), alias);
        out.returning = self.returning(up.returning.as_deref(), alias);
        Ok(out)
    }

    /// DELETE from the view as DELETE from its relation.
    pub(crate) fn delete(&self, del: &ast::Delete, alias: &str) -> Result<ast::Delete> {
        let mut out = del.clone();
        out.from = ast::FromTable::WithFromKeyword(vec![self.target()]);
        out.selection = self.condition(del.selection.as_ref(), alias);
        out.returning = self.returning(del.returning.as_deref(), alias);
        Ok(out)
    }

    /// The relation, under the alias the view's query gives it.
    fn target(&self) -> ast::TableWithJoins {
        ast::TableWithJoins {
            relation: ast::TableFactor::Table {
                name: self.relation.clone(),
                alias: self.alias.clone(),
                args: None,
                with_hints: vec![],
                version: None,
                with_ordinality: false,
                partitions: vec![],
                json_path: None,
                sample: None,
                index_hints: vec![],
            },
            joins: vec![],
        }
    }

    /// The relation's column under view column `name`, or why it cannot
    /// be written.
    fn writable(&self, name: &str, verb: &str) -> Result<String> {
        let Some(c) = self.columns.iter().find(|c| c.0 == name) else {
            return Err(Error::UndefinedColumn(format!("\"{name}\" of relation \"{}\"", self.view)));
        };
        c.2.clone().ok_or_else(|| Error::Raised {
            code: "0A000",
            message: format!("cannot {verb} column \"{name}\" of view \"{}\"", self.view),
            detail: Some(
                "View columns that are not columns of their base relation are not updatable.".into(),
            ),
            hint: None,
        })
    }

    /// The view's WHERE and the statement's, over the relation.
    fn condition(&self, theirs: Option<&ast::Expr>, alias: &str) -> Option<ast::Expr> {
        let theirs = theirs.cloned().map(|mut e| {
            self.substitute(&mut e, alias);
            e
        });
        match (self.selection.clone(), theirs) {
            (Some(a), Some(b)) => Some(ast::Expr::BinaryOp {
                left: Box::new(ast::Expr::Nested(Box::new(a))),
                op: ast::BinaryOperator::And,
                right: Box::new(ast::Expr::Nested(Box::new(b))),
            }),
            (a, b) => a.or(b),
        }
    }

    /// RETURNING over the view's columns, over the relation.
    fn returning(&self, items: Option<&[ast::SelectItem]>, alias: &str) -> Option<Vec<ast::SelectItem>> {
        let items = items?;
        let mut out = Vec::new();
        for item in items {
            match item {
                ast::SelectItem::Wildcard(_) | ast::SelectItem::QualifiedWildcard(..) => {
                    for (name, e, _) in &self.columns {
                        out.push(ast::SelectItem::ExprWithAlias { expr: e.clone(), alias: quoted(name) });
                    }
                }
                ast::SelectItem::UnnamedExpr(e) => {
                    let mut e2 = e.clone();
                    self.substitute(&mut e2, alias);
                    // The column keeps the name it has over the view.
                    match e {
                        ast::Expr::Identifier(id) => {
                            out.push(ast::SelectItem::ExprWithAlias { expr: e2, alias: id.clone() })
                        }
                        ast::Expr::CompoundIdentifier(ids) if ids.len() == 2 => {
                            out.push(ast::SelectItem::ExprWithAlias { expr: e2, alias: ids[1].clone() })
                        }
                        _ => out.push(ast::SelectItem::UnnamedExpr(e2)),
                    }
                }
                ast::SelectItem::ExprWithAlias { expr, alias: a } => {
                    let mut e2 = expr.clone();
                    self.substitute(&mut e2, alias);
                    out.push(ast::SelectItem::ExprWithAlias { expr: e2, alias: a.clone() });
                }
                other => out.push(other.clone()),
            }
        }
        Some(out)
    }

    /// `e` with each reference to a view column (bare, or qualified by
    /// `alias`, the view's name in the statement) replaced by what the
    /// view gives that column.
    fn substitute(&self, e: &mut ast::Expr, alias: &str) {
        let _ = ast::visit_expressions_mut(e, |x| {
            let name = match x {
                ast::Expr::Identifier(id) => Some(ident(id)),
                ast::Expr::CompoundIdentifier(ids) if ids.len() == 2 && ident(&ids[0]) == alias => {
                    Some(ident(&ids[1]))
                }
                _ => None,
            };
            if let Some((_, with, _)) = name.and_then(|n| self.columns.iter().find(|c| c.0 == n)) {
                *x = ast::Expr::Nested(Box::new(with.clone()));
            }
            ControlFlow::<()>::Continue(())
        });
    }
}

/// The first of DISTINCT, GROUP BY and HAVING that `sel` has: a clause
/// that makes its rows other than rows of its FROM, so that neither a
/// write through a view nor a row lock can reach the rows under them.
pub(crate) fn combining_clause(sel: &ast::Select) -> Option<&'static str> {
    if sel.distinct.is_some() {
        Some("DISTINCT")
    } else if !matches!(&sel.group_by, ast::GroupByExpr::Expressions(e, _) if e.is_empty()) {
        Some("GROUP BY")
    } else if sel.having.is_some() {
        Some("HAVING")
    } else {
        None
    }
}

/// The one table or view `sel` reads, with its alias, if its FROM is just
/// that.
pub(crate) fn single_relation(sel: &ast::Select) -> Option<(&ast::ObjectName, &Option<ast::TableAlias>)> {
    match sel.from.as_slice() {
        [ast::TableWithJoins { relation: ast::TableFactor::Table { name, alias, args: None, .. }, joins }]
            if joins.is_empty() =>
        {
            Some((name, alias))
        }
        _ => None,
    }
}

/// The relation's column that `e` is, when it is a plain column of
/// relation `rel` (bare, or qualified by its name).
fn plain_column(e: &ast::Expr, rel: &str) -> Option<String> {
    match e {
        ast::Expr::Identifier(id) => Some(ident(id)),
        ast::Expr::CompoundIdentifier(ids) if ids.len() == 2 && ident(&ids[0]) == rel => Some(ident(&ids[1])),
        ast::Expr::Nested(inner) => plain_column(inner, rel),
        _ => None,
    }
}

/// Whether `e` calls a window function.
fn has_window(e: &ast::Expr) -> bool {
    let found = ast::visit_expressions(e, |x| match x {
        ast::Expr::Function(f) if f.over.is_some() => ControlFlow::Break(()),
        _ => ControlFlow::Continue(()),
    });
    found.is_break()
}

/// An identifier as written with quotes (so that it keeps its case).
fn quoted(name: &str) -> ast::Ident {
    ast::Ident::with_quote('"', name)
}

/// Engine name `engine` written schema-qualified.
pub(crate) fn written_name(engine: &str) -> ast::ObjectName {
    let (schema, name) = crate::system::snapshot::split_name(engine);
    ast::ObjectName(vec![
        ast::ObjectNamePart::Identifier(quoted(&schema)),
        ast::ObjectNamePart::Identifier(quoted(&name)),
    ])
}

/// A view's name without the schema its engine name may carry.
pub(crate) fn short(engine: &str) -> String {
    crate::system::snapshot::split_name(engine).1
}

/// A view's stored query text, parsed.
pub(crate) fn parse_query(text: &str) -> Result<ast::Query> {
    match crate::parser::parse(text)?.pop() {
        Some(ast::Statement::Query(q)) => Ok(*q),
        _ => Err(Error::other("XX000", format!("view query is not a query: {text}"))),
    }
}

thread_local! {
    /// Set while REFRESH MATERIALIZED VIEW writes a materialized view's
    /// rows, which no other statement may.
    static WRITING_MATERIALIZED: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

fn writing_materialized() -> bool {
    WRITING_MATERIALIZED.with(|w| w.get())
}

/// Runs `f` with writes to materialized views allowed (REFRESH).
pub(crate) fn refreshing<T>(f: impl FnOnce() -> T) -> T {
    struct Reset(bool);
    impl Drop for Reset {
        fn drop(&mut self) {
            WRITING_MATERIALIZED.with(|w| w.set(self.0));
        }
    }
    let _reset = Reset(WRITING_MATERIALIZED.with(|w| w.replace(true)));
    f()
}
