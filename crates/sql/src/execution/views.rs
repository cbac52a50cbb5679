//! Views and materialized views as schema objects: CREATE VIEW, DROP
//! VIEW, and what a change to a table does to the views that read it.
//!
//! A view is its query's text in the catalog (see
//! [`crate::catalog::ViewDef`]), with the names of its columns and the
//! relations it reads. Those relations cannot be dropped while it exists,
//! unless the drop cascades to it, as in PostgreSQL. A change to a table
//! (ALTER TABLE) is checked against every view over it, directly or
//! through other views: each must still bind to the same columns, or the
//! change fails. Renaming a table or view rewrites the query text of the
//! views that name it.
//!
//! A materialized view is also an engine table of its name, filled by
//! CREATE MATERIALIZED VIEW and REFRESH (see `Session`), which reads like
//! any table; only REFRESH may write it.

use super::DdlOutcome;
use crate::catalog::OutputColumn;
use crate::catalog::{Catalog, ViewDef};
use crate::error::{Error, Result};
use crate::names::{ident, object_parts};
use crate::planner::views::{short, written_name};
use crate::planner::Binder;
use crate::planner::Dictionary;
use sqlparser::ast;
use std::ops::ControlFlow;

/// The view CREATE [MATERIALIZED] VIEW `cv` defines, under engine name
/// `name`, with the columns its query gives.
pub(crate) fn define(b: &Binder, name: &str, cv: &ast::CreateView) -> Result<(ViewDef, Vec<OutputColumn>)> {
    if cv.temporary {
        return Err(Error::unsupported("CREATE TEMPORARY VIEW"));
    }
    let mut binder = Binder::new(b.catalog, b.search_path, vec![]);
    let (_, mut cols) = binder.query(&cv.query)?;
    if !binder.params.is_empty() {
        return Err(Error::other("42P02", "there is no parameter $1"));
    }
    if cv.columns.len() > cols.len() {
        let what = if cv.materialized { "CREATE MATERIALIZED VIEW" } else { "CREATE VIEW" };
        return Err(Error::Syntax(format!("{what} specifies too many column names")));
    }
    for (c, given) in cols.iter_mut().zip(&cv.columns) {
        c.name = ident(&given.name);
    }
    for (i, c) in cols.iter().enumerate() {
        if cols[..i].iter().any(|o| o.name == c.name) {
            return Err(Error::Duplicate {
                code: "42701",
                message: format!("column \"{}\" specified more than once", c.name),
            });
        }
    }
    let mut depends_on: Vec<String> = Vec::new();
    for r in binder.read {
        if !depends_on.contains(&r) {
            depends_on.push(r);
        }
    }
    // A view over itself (through others, replaced) would never end.
    if reaches(b.catalog, &depends_on, name) {
        return Err(Error::other(
            "42P17",
            format!("infinite recursion detected in rules for relation \"{}\"", short(name)),
        ));
    }
    let mut check_option = String::new();
    if let ast::CreateTableOptions::With(options) = &cv.options {
        for o in options {
            let ast::SqlOption::KeyValue { key, value } = o else {
                return Err(Error::unsupported(format!("view option {o}")));
            };
            let value = value.to_string().trim_matches('\'').to_lowercase();
            match ident(key).as_str() {
                "check_option" if value == "local" || value == "cascaded" => check_option = value,
                "check_option" => {
                    return Err(Error::InvalidParameter(format!(
                        "invalid value for enum option \"check_option\": {value}"
                    )))
                }
                "security_barrier" | "security_invoker" => {}
                k if k == crate::parser::NO_DATA && cv.materialized => {}
                other => {
                    return Err(Error::InvalidParameter(format!("unrecognized parameter \"{other}\"")));
                }
            }
        }
    }
    if !check_option.is_empty() {
        return Err(Error::unsupported("WITH CHECK OPTION"));
    }
    let def = ViewDef {
        name: name.to_string(),
        query: qualified(b, &cv.query).to_string(),
        columns: cols.iter().map(|c| c.name.clone()).collect(),
        search_path: b.search_path.to_vec(),
        depends_on,
        materialized: cv.materialized,
        populated: true,
        check_option,
        triggers: vec![],
    };
    Ok((def, cols))
}

/// `query` with each table and view it names written with its schema, so
/// that its text means the same under any search path (pg_dump restores
/// views with an empty one). Names of the query's CTEs stay as written.
fn qualified(b: &Binder, query: &ast::Query) -> ast::Query {
    let mut ctes = Vec::new();
    collect_ctes(query, &mut ctes);
    let mut out = query.clone();
    let _ = ast::visit_relations_mut(&mut out, |name| {
        let parts = object_parts(name).unwrap_or_default();
        if parts.len() == 1 && ctes.contains(&parts[0]) {
            return ControlFlow::<()>::Continue(());
        }
        let engine = match b.table_name(name) {
            Ok(t) if b.catalog.db().table(&t).is_ok() => Some(t),
            _ => b.view_named(&parts).map(|v| v.name),
        };
        if let Some(e) = engine {
            *name = written_name(&e);
        }
        ControlFlow::Continue(())
    });
    out
}

/// The names of every CTE in `q`, at any depth.
fn collect_ctes(q: &ast::Query, out: &mut Vec<String>) {
    struct Ctes<'a>(&'a mut Vec<String>);
    impl ast::Visitor for Ctes<'_> {
        type Break = ();
        fn pre_visit_query(&mut self, q: &ast::Query) -> ControlFlow<()> {
            if let Some(w) = &q.with {
                self.0.extend(w.cte_tables.iter().map(|c| ident(&c.alias.name)));
            }
            ControlFlow::Continue(())
        }
    }
    let _ = ast::Visit::visit(q, &mut Ctes(out));
}

/// Whether CREATE MATERIALIZED VIEW `cv` said WITH NO DATA.
pub(crate) fn no_data(cv: &ast::CreateView) -> bool {
    matches!(&cv.options, ast::CreateTableOptions::With(o) if o.iter().any(|o| matches!(o,
        ast::SqlOption::KeyValue { key, .. } if ident(key) == crate::parser::NO_DATA)))
}

/// CREATE [OR REPLACE] VIEW.
pub(crate) fn create(b: &Binder, cv: &ast::CreateView) -> Result<DdlOutcome> {
    let name = b.new_object_name(&cv.name)?;
    let existing = b.catalog.view(&name);
    if existing.is_none() && relation_exists(b.catalog, &name)
        || existing.as_ref().is_some_and(|v| v.materialized)
    {
        if cv.or_replace {
            return Err(not_a("view", &name, relation_kind(b.catalog, &name)));
        }
        return Err(already_exists(&name));
    }
    let (mut def, cols) = define(b, &name, cv)?;
    if let Some(old) = existing {
        // A replaced view keeps its triggers, as it keeps its grants.
        def.triggers = old.triggers.clone();
        if !cv.or_replace {
            return Err(already_exists(&name));
        }
        let mut binder = Binder::new(b.catalog, &old.search_path, vec![]);
        let (_, old_cols) = binder.view_query(&old)?;
        if cols.len() < old_cols.len() {
            return Err(Error::other("42P16", "cannot drop columns from view"));
        }
        for (o, n) in old_cols.iter().zip(&cols) {
            if o.name != n.name {
                return Err(Error::other(
                    "42P16",
                    format!("cannot change name of view column \"{}\" to \"{}\"", o.name, n.name),
                ));
            }
            if type_name(o) != type_name(n) {
                return Err(Error::Raised {
                    code: "42P16",
                    message: format!(
                        "cannot change data type of view column \"{}\" from {} to {}",
                        o.name,
                        type_name(o),
                        type_name(n)
                    ),
                    detail: None,
                    hint: None,
                });
            }
        }
    }
    b.catalog.put_view(def)?;
    Ok(DdlOutcome { tag: "CREATE VIEW".into(), notices: vec![] })
}

/// DROP VIEW / DROP MATERIALIZED VIEW.
pub(crate) fn drop(
    b: &Binder,
    names: &[ast::ObjectName],
    if_exists: bool,
    cascade: bool,
    materialized: bool,
) -> Result<DdlOutcome> {
    let what = if materialized { "materialized view" } else { "view" };
    let mut notices = Vec::new();
    for n in names {
        let parts = object_parts(n)?;
        let def = b.view_named(&parts).filter(|v| v.materialized == materialized);
        let Some(def) = def else {
            let engine = b.table_name(n).or_else(|_| b.new_object_name(n))?;
            if let Some(kind) = relation_kind(b.catalog, &engine) {
                return Err(not_a(what, &engine, Some(kind)));
            }
            if if_exists {
                notices.push(format!(
                    "{what} \"{}\" does not exist, skipping",
                    parts.last().cloned().unwrap_or_default()
                ));
                continue;
            }
            let short_name = parts.last().cloned().unwrap_or_default();
            return Err(Error::other("42P01", format!("{what} \"{short_name}\" does not exist")));
        };
        drop_dependents(b, &def.name, &format!("{what} {}", short(&def.name)), cascade, &mut notices)?;
        drop_one(b, &def)?;
    }
    let tag = if materialized { "DROP MATERIALIZED VIEW" } else { "DROP VIEW" };
    Ok(DdlOutcome { tag: tag.into(), notices })
}

/// Removes view `def` (and a materialized view's table).
fn drop_one(b: &Binder, def: &ViewDef) -> Result<()> {
    b.catalog.drop_view(&def.name)?;
    if def.materialized {
        b.catalog.db().drop_table(&def.name)?;
        b.catalog.invalidate();
    }
    Ok(())
}

/// The views that read `name`, directly or through each other, each
/// after every view it reads among them.
pub(crate) fn dependents(catalog: &Catalog, name: &str) -> Vec<ViewDef> {
    let views = catalog.views();
    let mut out: Vec<ViewDef> = Vec::new();
    let mut frontier = vec![name.to_string()];
    // Views never read each other in a circle (CREATE refuses it, 42P17);
    // the bound keeps a damaged catalog from looping for ever.
    let mut steps = views.len() * views.len() + 1;
    while let Some(n) = frontier.pop() {
        steps = match steps.checked_sub(1) {
            Some(s) => s,
            None => break,
        };
        for v in views.iter().filter(|v| v.depends_on.contains(&n)) {
            out.retain(|o| o.name != v.name);
            out.push(v.clone());
            frontier.push(v.name.clone());
        }
    }
    out
}

/// Whether a view among `names` reads `target`, directly or through
/// other views.
fn reaches(catalog: &Catalog, names: &[String], target: &str) -> bool {
    let above = dependents(catalog, target);
    names.iter().any(|n| n == target || above.iter().any(|d| &d.name == n))
}

/// Before `what` (e.g. "table t") named `name` is dropped: the views that
/// read it are dropped too with CASCADE, and make the drop fail (2BP01)
/// without.
pub(crate) fn drop_dependents(
    b: &Binder,
    name: &str,
    what: &str,
    cascade: bool,
    notices: &mut Vec<String>,
) -> Result<()> {
    let deps = dependents(b.catalog, name);
    if deps.is_empty() {
        return Ok(());
    }
    if !cascade {
        let mut detail = Vec::new();
        for d in &deps {
            for on in &d.depends_on {
                if on == name || deps.iter().any(|o| &o.name == on) {
                    let on_what = if on == name { what.to_string() } else { describe(b.catalog, on) };
                    detail.push(format!("{} depends on {on_what}", describe(b.catalog, &d.name)));
                }
            }
        }
        return Err(Error::Raised {
            code: "2BP01",
            message: format!("cannot drop {what} because other objects depend on it"),
            detail: Some(detail.join("\n")),
            hint: Some("Use DROP ... CASCADE to drop the dependent objects too.".into()),
        });
    }
    for d in deps.iter().rev() {
        notices.push(format!("drop cascades to {}", describe(b.catalog, &d.name)));
    }
    for d in deps.iter().rev() {
        drop_one(b, d)?;
    }
    Ok(())
}

/// "view v" or "materialized view m".
fn describe(catalog: &Catalog, name: &str) -> String {
    match catalog.view(name) {
        Some(v) if v.materialized => format!("materialized view {}", short(name)),
        _ => format!("view {}", short(name)),
    }
}

/// The view that ALTER TABLE / ALTER VIEW `at` names, if it names one.
pub(crate) fn altered_view(b: &Binder, at: &ast::AlterTable) -> Result<Option<ViewDef>> {
    let parts = object_parts(&at.name)?;
    Ok(match b.table_name(&at.name).ok().filter(|t| b.catalog.db().table(t).is_ok()) {
        Some(t) => b.catalog.view(&t),
        None => b.view_named(&parts),
    })
}

/// The views over `table` with their columns as they bind before an ALTER
/// TABLE changes it (`None`: a view that does not bind now, which cannot
/// be read either, so it is not what holds the change back).
pub(crate) fn dependents_before(b: &Binder, table: &str) -> Vec<(ViewDef, Option<Vec<OutputColumn>>)> {
    dependents(b.catalog, table)
        .into_iter()
        .map(|d| {
            let columns = bind(b.catalog, &d).ok();
            (d, columns)
        })
        .collect()
}

/// Keeps the views over `table` whole after ALTER TABLE `at` changed it: a
/// change that leaves one reading a column that is gone or changed fails
/// (or, dropping columns with CASCADE, drops the view), and a rename is
/// written into the views that name the table.
pub(crate) fn after_alter(
    b: &Binder,
    table: &str,
    at: &ast::AlterTable,
    deps: &[(ViewDef, Option<Vec<OutputColumn>>)],
    out: &mut DdlOutcome,
) -> Result<()> {
    for op in &at.operations {
        if let ast::AlterTableOperation::RenameTable { table_name } = op {
            let (ast::RenameTableNameKind::To(to) | ast::RenameTableNameKind::As(to)) = table_name;
            renamed(b, table, &b.new_object_name(to)?)?;
        }
    }
    for (d, cols) in deps {
        let (Some(now), Some(cols)) = (b.catalog.view(&d.name), cols) else { continue };
        let same = bind(b.catalog, &now).is_ok_and(|c| {
            c.len() == cols.len()
                && c.iter().zip(cols).all(|(x, y)| x.name == y.name && type_name(x) == type_name(y))
        });
        if same {
            continue;
        }
        let view = describe(b.catalog, &d.name);
        let t = short(table);
        let mut err = Error::Raised {
            code: "0A000",
            message: format!("cannot alter table \"{t}\" because {view} depends on it"),
            detail: None,
            hint: None,
        };
        for op in &at.operations {
            match op {
                ast::AlterTableOperation::DropColumn {
                    drop_behavior: Some(ast::DropBehavior::Cascade),
                    ..
                } => {
                    drop_dependents(b, &d.name, &view, true, &mut out.notices)?;
                    out.notices.push(format!("drop cascades to {view}"));
                    drop_one(b, d)?;
                    break;
                }
                ast::AlterTableOperation::DropColumn { column_names, .. } => {
                    let c = column_names.first().map(ident).unwrap_or_default();
                    err = Error::Raised {
                        code: "2BP01",
                        message: format!(
                            "cannot drop column {c} of table {t} because other objects depend on it"
                        ),
                        detail: Some(format!("{view} depends on column {c} of table {t}")),
                        hint: Some("Use DROP ... CASCADE to drop the dependent objects too.".into()),
                    };
                }
                ast::AlterTableOperation::AlterColumn {
                    column_name,
                    op: ast::AlterColumnOperation::SetDataType { .. },
                } => {
                    err = Error::Raised {
                        code: "0A000",
                        message: "cannot alter type of a column used by a view or rule".into(),
                        detail: Some(format!(
                            "rule _RETURN on {view} depends on column \"{}\"",
                            ident(column_name)
                        )),
                        hint: None,
                    };
                }
                _ => {}
            }
        }
        if b.catalog.view(&d.name).is_some() {
            return Err(err);
        }
    }
    Ok(())
}

/// ALTER TABLE / ALTER VIEW of a view: RENAME TO and OWNER TO.
pub(crate) fn alter_view(b: &Binder, v: &ViewDef, at: &ast::AlterTable) -> Result<DdlOutcome> {
    let kind = if v.materialized { "ALTER MATERIALIZED VIEW" } else { "ALTER VIEW" };
    for op in &at.operations {
        match op {
            ast::AlterTableOperation::RenameTable { table_name } => {
                let (ast::RenameTableNameKind::To(to) | ast::RenameTableNameKind::As(to)) = table_name;
                let new = b.new_object_name(to)?;
                if relation_exists(b.catalog, &new) {
                    return Err(already_exists(&new));
                }
                if v.materialized {
                    b.catalog.db().rename_table(&v.name, &new)?;
                    b.catalog.invalidate();
                }
                let rel = crate::privileges::ObjectKind::Relation;
                let privs = b.catalog.privs(rel, &v.name);
                let comment = b.catalog.global_comments().remove(&(rel, v.name.clone()));
                b.catalog.put_view(ViewDef { name: new.clone(), ..v.clone() })?;
                b.catalog.drop_view(&v.name)?;
                if !v.materialized && !privs.is_default() {
                    b.catalog.set_privs(rel, &new, privs)?;
                }
                if comment.is_some() {
                    b.catalog.set_comment(rel, &new, comment)?;
                }
                renamed(b, &v.name, &new)?;
            }
            ast::AlterTableOperation::OwnerTo { new_owner } => {
                super::grant::owner_to(b, crate::privileges::ObjectKind::Relation, &v.name, new_owner)?
            }
            // A view's triggers are always enabled.
            ast::AlterTableOperation::EnableTrigger { .. }
            | ast::AlterTableOperation::DisableTrigger { .. } => {
                let action = if matches!(op, ast::AlterTableOperation::EnableTrigger { .. }) {
                    "ENABLE TRIGGER"
                } else {
                    "DISABLE TRIGGER"
                };
                let what = if v.materialized { "materialized views" } else { "views" };
                return Err(Error::other(
                    "42809",
                    format!(
                        "ALTER action {action} cannot be performed on relation \"{}\"\nDETAIL:  This operation is not supported for {what}.",
                        short(&v.name)
                    ),
                ));
            }
            other => {
                return Err(Error::unsupported(format!("{kind} {other}")));
            }
        }
    }
    Ok(DdlOutcome { tag: kind.into(), notices: vec![] })
}

/// After relation `old` became `new`: the views that read it name it so.
fn renamed(b: &Binder, old: &str, new: &str) -> Result<()> {
    for v in b.catalog.views() {
        if !v.depends_on.iter().any(|d| d == old) {
            continue;
        }
        let mut query = crate::planner::views::parse_query(&v.query)?;
        let resolver = Binder::new(b.catalog, &v.search_path, vec![]);
        let was = |name: &ast::ObjectName| {
            object_parts(name).ok().is_some_and(|parts| match parts.as_slice() {
                [t] => v.search_path.iter().any(|s| crate::names::qualify(s, t) == old),
                _ => resolver.new_object_name(name).is_ok_and(|n| n == old),
            })
        };
        let to = written_name(new);
        let _ = ast::visit_relations_mut(&mut query, |name| {
            if was(name) {
                *name = to.clone();
            }
            ControlFlow::<()>::Continue(())
        });
        let depends_on =
            v.depends_on.iter().map(|d| if d == old { new.to_string() } else { d.clone() }).collect();
        b.catalog.put_view(ViewDef { query: query.to_string(), depends_on, ..v })?;
    }
    Ok(())
}

/// View `def`'s columns as it binds now.
fn bind(catalog: &Dictionary, def: &ViewDef) -> Result<Vec<OutputColumn>> {
    let mut binder = Binder::new(catalog, &def.search_path, vec![]);
    binder.view_query(def).map(|(_, cols)| cols)
}

fn type_name(c: &OutputColumn) -> String {
    c.ty.as_ref().map_or("text".into(), |t| t.sql_name())
}

/// What `name` is if it is a relation other than a view: "table",
/// "sequence".
fn relation_kind(catalog: &Catalog, name: &str) -> Option<&'static str> {
    match catalog.view(name) {
        Some(v) if v.materialized => Some("materialized view"),
        Some(_) => Some("view"),
        None if catalog.db().table(name).is_ok() => Some("table"),
        None if catalog.has_sequence(name) => Some("sequence"),
        None => None,
    }
}

/// Whether a table, view or sequence is named `name`.
pub(crate) fn relation_exists(catalog: &Catalog, name: &str) -> bool {
    relation_kind(catalog, name).is_some()
}

fn already_exists(name: &str) -> Error {
    Error::Duplicate { code: "42P07", message: format!("relation \"{}\" already exists", short(name)) }
}

/// 42809: `name`, a `kind`, is not a `what`, with PostgreSQL's hint.
pub(crate) fn not_a(what: &str, name: &str, kind: Option<&str>) -> Error {
    let hint = match kind {
        Some("table") => Some("Use DROP TABLE to remove a table."),
        Some("view") => Some("Use DROP VIEW to remove a view."),
        Some("materialized view") => Some("Use DROP MATERIALIZED VIEW to remove a materialized view."),
        Some("sequence") => Some("Use DROP SEQUENCE to remove a sequence."),
        _ => None,
    };
    Error::Raised {
        code: "42809",
        message: format!("\"{}\" is not a {what}", short(name)),
        detail: None,
        hint: hint.map(str::to_string),
    }
}
