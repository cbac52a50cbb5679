//! Planning one statement: the entry point from a parsed statement to a
//! [`Planned`], and the EXPLAIN text of a plan.
//!
//! Queries, INSERT, UPDATE, DELETE, MERGE, CALL and EXPLAIN are bound and
//! planned here; the data-modifying statements of a top-level WITH are put
//! in front of the statement they feed. Everything else (transaction
//! control, SET, DDL) becomes a [`Statement::Utility`] that the session
//! runs as it is.

use super::{Binder, Dictionary, Plan, Planned, Statement};
use crate::catalog::OutputColumn;
use crate::error::{Error, Result};
use centum_types::DataType;
use sqlparser::ast;
use std::sync::Arc;

/// Binds and plans one statement against `catalog` (statements the planner
/// does not plan become [`Statement::Utility`]).
pub(crate) fn plan_statement(
    catalog: &Dictionary,
    search_path: &[String],
    s: &ast::Statement,
    declared: Vec<Option<DataType>>,
) -> Result<Planned> {
    plan_statement_with(catalog, search_path, s, declared, &[])
}

/// [`plan_statement`] with relations of the caller's in scope, as CTEs
/// are: a trigger's transition tables.
pub(crate) fn plan_statement_with(
    catalog: &Dictionary,
    search_path: &[String],
    s: &ast::Statement,
    declared: Vec<Option<DataType>>,
    relations: &[(String, Plan, Vec<OutputColumn>)],
) -> Result<Planned> {
    let mut b = Binder::new(catalog, search_path, declared.clone());
    b.ctes = relations.to_vec();
    if matches!(s, ast::Statement::Insert(_) | ast::Statement::Update(_) | ast::Statement::Delete(_)) {
        // A DML statement is the top level: the queries inside it are not,
        // so a data-modifying WITH in them is refused.
        b.query_depth = 1;
    }
    let (statement, columns) = match s {
        ast::Statement::Query(q)
            if matches!(
                q.body.as_ref(),
                ast::SetExpr::Insert(_) | ast::SetExpr::Update(_) | ast::SetExpr::Delete(_)
            ) =>
        {
            b.with_dml(q)?
        }
        ast::Statement::Query(q) => {
            let (plan, cols) = b.query(q)?;
            (Statement::Query(plan), cols)
        }
        ast::Statement::Insert(i) => b.insert(i)?,
        ast::Statement::Update(u) => b.update(u)?,
        ast::Statement::Delete(d) => b.delete(d)?,
        ast::Statement::Merge(m) => (Statement::Merge(Box::new(b.merge(m)?)), vec![]),
        ast::Statement::Call(f) => {
            let (call, cols) = b.call_statement(f)?;
            (Statement::Call(Box::new(call)), cols)
        }
        ast::Statement::Explain { statement, analyze, options, .. }
            if !explain_analyzes(*analyze, options) =>
        {
            let inner = plan_statement(catalog, search_path, statement, declared)?;
            let lines = explain(&inner);
            let cols = vec![OutputColumn { name: "QUERY PLAN".into(), ty: Some(DataType::Text) }];
            return Ok(Planned {
                statement: Statement::Explain(lines),
                columns: Arc::from(cols),
                params: inner.params,
                retry: 0,
                calls_routines: false,
                needs: inner.needs,
            });
        }
        ast::Statement::ShowVariable { variable } => {
            let name = variable.iter().map(|i| i.value.to_lowercase()).collect::<Vec<_>>().join("_");
            (Statement::Utility(Box::new(s.clone())), vec![OutputColumn { name, ty: Some(DataType::Text) }])
        }
        ast::Statement::Explain { statement, .. } => {
            let inner = plan_statement(catalog, search_path, statement, declared)?;
            if let Statement::Utility(_) | Statement::Explain(_) | Statement::ExplainAnalyze(_) =
                inner.statement
            {
                return Err(Error::unsupported(format!(
                    "EXPLAIN ANALYZE of {}",
                    first_words(&statement.to_string())
                )));
            }
            let cols = vec![OutputColumn { name: "QUERY PLAN".into(), ty: Some(DataType::Text) }];
            return Ok(Planned {
                params: inner.params.clone(),
                retry: 0,
                calls_routines: false,
                needs: inner.needs.clone(),
                statement: Statement::ExplainAnalyze(Box::new(inner)),
                columns: Arc::from(cols),
            });
        }
        ast::Statement::CreateTable(ct) if ct.query.is_some() => {
            // Planned for its parameters' types; it runs as a utility
            // with their values in place (`with_parameters`).
            if let Some(q) = &ct.query {
                b.query(q)?;
            }
            (Statement::Utility(Box::new(s.clone())), vec![])
        }
        other => (Statement::Utility(Box::new(other.clone())), vec![]),
    };
    let statement = with_writes(statement, std::mem::take(&mut b.writes))?;
    let (retry, calls_routines) = routines(&statement);
    Ok(Planned {
        statement,
        columns: Arc::from(columns),
        params: b.param_types(),
        retry,
        calls_routines,
        needs: b.needs.into_inner(),
    })
}

/// Puts the data-modifying statements of a top-level WITH in front of the
/// statement: before a query's plan or an INSERT's source (`Plan::Writes`),
/// or at the start of an UPDATE or DELETE.
pub(crate) fn with_writes(statement: Statement, writes: Vec<(usize, Statement)>) -> Result<Statement> {
    if writes.is_empty() {
        return Ok(statement);
    }
    Ok(match statement {
        Statement::Query(plan) => Statement::Query(Plan::Writes { writes, input: Box::new(plan) }),
        Statement::Insert(mut ins) => {
            let source = std::mem::replace(&mut ins.source, Plan::Values { rows: vec![] });
            ins.source = Plan::Writes { writes, input: Box::new(source) };
            Statement::Insert(ins)
        }
        Statement::Update(mut up) => {
            up.writes = writes;
            Statement::Update(up)
        }
        Statement::Delete(mut del) => {
            del.writes = writes;
            Statement::Delete(del)
        }
        Statement::ViewWrite(mut w) => {
            let source = std::mem::replace(&mut w.source, Plan::Values { rows: vec![] });
            w.source = Plan::Writes { writes, input: Box::new(source) };
            Statement::ViewWrite(w)
        }
        other => other,
    })
}

/// The largest `centum.retry_on_conflict` of the routines `statement`
/// calls directly (how often a lone run of it is retried on 40001/40P01),
/// and whether it calls any.
pub(crate) fn routines(statement: &Statement) -> (u32, bool) {
    let (mut retry, mut any) = (0, false);
    let mut note = |r: u32| {
        retry = retry.max(r);
        any = true;
    };
    match statement {
        Statement::Call(c) => note(c.routine.retry),
        Statement::Query(plan) => plan.each_expr(&mut |e: &crate::planner::Expr| {
            e.walk(&mut |x| {
                if let crate::planner::Expr::Routine(r, _) = x {
                    note(r.retry);
                }
            })
        }),
        _ => {}
    }
    (retry, any)
}

pub(crate) fn explain(p: &Planned) -> Vec<String> {
    explain_with(p, &|_| String::new())
}

/// Whether an EXPLAIN runs its statement: `EXPLAIN ANALYZE`, or PostgreSQL's
/// option list with `ANALYZE` (`ANALYZE true`, `on` or `1`; `false`, `off`
/// or `0` turn it off). The other options (BUFFERS, VERBOSE, COSTS, ...)
/// change nothing here.
pub(crate) fn explain_analyzes(analyze: bool, options: &Option<Vec<ast::UtilityOption>>) -> bool {
    let on = |o: &ast::UtilityOption| match &o.arg {
        None => true,
        Some(arg) => !matches!(
            arg.to_string().trim_matches('\'').to_lowercase().as_str(),
            "false" | "off" | "0" | "no"
        ),
    };
    analyze || options.iter().flatten().any(|o| o.name.value.eq_ignore_ascii_case("analyze") && on(o))
}

/// The EXPLAIN lines of `p`, with `annotate(node)` after each operator
/// (see [`crate::planner::plan::Plan::explain_with`]).
pub(crate) fn explain_with(p: &Planned, annotate: &dyn Fn(usize) -> String) -> Vec<String> {
    let indent = |lines: Vec<String>| {
        lines
            .into_iter()
            .enumerate()
            .map(|(i, l)| if i == 0 { format!("  ->  {l}") } else { format!("      {l}") })
            .collect::<Vec<_>>()
    };
    let access = |a: &crate::planner::plan::Access| {
        let mut lines = Vec::new();
        a.explain_into(&mut lines, 0, annotate);
        lines
    };
    match &p.statement {
        Statement::Query(plan) => plan.explain_with(annotate),
        Statement::Insert(i) => {
            let mut v = vec![format!("Insert on {}", i.rules.info.table.name())];
            v.extend(indent(i.source.explain_with(annotate)));
            v
        }
        Statement::Update(u) => {
            let mut v = vec![format!("Update on {}", u.access.table.name())];
            v.extend(indent(access(&u.access)));
            v
        }
        Statement::Delete(d) => {
            let mut v = vec![format!("Delete on {}", d.access.table.name())];
            v.extend(indent(access(&d.access)));
            v
        }
        Statement::ViewWrite(w) => {
            let mut v = vec![format!("{} on {}", w.verb(), w.view)];
            v.extend(indent(w.source.explain_with(annotate)));
            v
        }
        Statement::Call(c) => vec![format!("Call {}", c.routine.signature)],
        Statement::Merge(m) => {
            let mut v = vec![format!("Merge on {}", m.target.table.name())];
            v.extend(indent(m.source.explain_with(annotate)));
            v.extend(indent(access(&m.target)));
            v
        }
        Statement::Explain(lines) => lines.clone(),
        Statement::ExplainAnalyze(inner) => explain_with(inner, annotate),
        Statement::Utility(s) => vec![first_words(&s.to_string())],
    }
}

pub(crate) fn first_words(s: &str) -> String {
    s.split_whitespace().take(2).collect::<Vec<_>>().join(" ")
}
