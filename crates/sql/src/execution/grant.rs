//! GRANT, REVOKE, OWNER TO, and the ownership checks of schema changes.
//!
//! The model is PostgreSQL's (see `privileges.rs`): an owner may do
//! anything with its object and grant any of it to others; a role holding a
//! privilege WITH GRANT OPTION may pass that privilege on, and what it
//! passed on goes when its option is revoked (with CASCADE). A superuser
//! acts as the owner. Changing or dropping an object, and creating one in
//! a schema, is checked here before the change runs.

use super::DdlOutcome;
use crate::catalog::Catalog;
use crate::error::{Error, Result};
use crate::names::{ident, object_parts, qualify};
use crate::planner::bind::Binder;
use crate::privileges::{self, denied, not_owner, Actor, ObjectKind, ObjectPrivs};
use sqlparser::ast;

/// The objects a GRANT or REVOKE names, as (kind, engine name).
fn targets(b: &Binder, objects: Option<&ast::GrantObjects>) -> Result<Vec<(ObjectKind, String)>> {
    use ast::GrantObjects as G;
    let Some(objects) = objects else {
        return Err(Error::unsupported("GRANT of a role (Centum has no role membership)"));
    };
    let mut out = Vec::new();
    match objects {
        G::Tables(names) | G::Views(names) => {
            for n in names {
                out.push(relation(b, n)?);
            }
        }
        G::Sequences(names) => {
            for n in names {
                let parts = object_parts(n)?;
                let seq = b.sequence_named(&parts).ok_or_else(|| Error::UndefinedTable(n.to_string()))?;
                out.push((ObjectKind::Sequence, seq));
            }
        }
        G::Schemas(names) => {
            for n in names {
                let s = object_parts(n)?.join(".");
                if !b.catalog.has_schema(&s) || s == "pg_catalog" {
                    return Err(Error::other("3F000", format!("schema \"{s}\" does not exist")));
                }
                out.push((ObjectKind::Schema, s));
            }
        }
        G::Function { name, .. } | G::Procedure { name, .. } => {
            let parts = object_parts(name)?;
            let n = parts.last().cloned().unwrap_or_default();
            if b.catalog.routine_source(&n).is_none() {
                return Err(Error::UndefinedFunction(n));
            }
            out.push((ObjectKind::Routine, n));
        }
        G::AllTablesInSchema { schemas } => {
            for s in in_schemas(b.catalog, schemas)? {
                let views = b.catalog.views().into_iter().map(|v| v.name);
                for t in b.catalog.db().table_names().into_iter().chain(views) {
                    if in_schema(&t, &s) && !out.contains(&(ObjectKind::Relation, t.clone())) {
                        out.push((ObjectKind::Relation, t));
                    }
                }
            }
        }
        G::AllSequencesInSchema { schemas } => {
            for s in in_schemas(b.catalog, schemas)? {
                for q in b.catalog.sequence_names() {
                    if in_schema(&q, &s) {
                        out.push((ObjectKind::Sequence, q));
                    }
                }
            }
        }
        G::AllFunctionsInSchema { schemas } => {
            for s in in_schemas(b.catalog, schemas)? {
                for r in b.catalog.routine_names() {
                    if in_schema(&r, &s) {
                        out.push((ObjectKind::Routine, r));
                    }
                }
            }
        }
        other => return Err(Error::unsupported(format!("privileges on {other}"))),
    }
    out.sort();
    out.dedup();
    Ok(out)
}

/// The relation `name` names: a table or view, else a sequence (GRANT ON
/// TABLE takes sequences too, as in PostgreSQL).
fn relation(b: &Binder, name: &ast::ObjectName) -> Result<(ObjectKind, String)> {
    let parts = object_parts(name)?;
    if let Ok(t) = b.table_name(name) {
        if b.catalog.db().table(&t).is_ok() {
            return Ok((ObjectKind::Relation, t));
        }
    }
    if let Some(v) = b.view_named(&parts) {
        return Ok((ObjectKind::Relation, v.name));
    }
    if let Some(s) = b.sequence_named(&parts) {
        return Ok((ObjectKind::Sequence, s));
    }
    Err(Error::UndefinedTable(parts.last().cloned().unwrap_or_default()))
}

fn in_schemas(catalog: &Catalog, schemas: &[ast::ObjectName]) -> Result<Vec<String>> {
    schemas
        .iter()
        .map(|n| {
            let s = object_parts(n)?.join(".");
            if catalog.has_schema(&s) {
                Ok(s)
            } else {
                Err(Error::other("3F000", format!("schema \"{s}\" does not exist")))
            }
        })
        .collect()
}

/// Whether engine name `name` is in schema `schema`.
fn in_schema(name: &str, schema: &str) -> bool {
    qualify(schema, name.rsplit('.').next().unwrap_or(name)) == name
}

/// The privilege bits of `privileges` for `kind` (0LP01 for one the kind
/// does not have; column lists are 0A000).
fn bits(privileges: &ast::Privileges, kind: ObjectKind) -> Result<u16> {
    let actions = match privileges {
        ast::Privileges::All { .. } => return Ok(kind.all()),
        ast::Privileges::Actions(a) => a,
    };
    let mut out = 0;
    for a in actions {
        let text = a.to_string();
        if text.contains('(') {
            return Err(Error::unsupported("column privileges"));
        }
        let word = text.split_whitespace().next().unwrap_or_default();
        let bit = match word.to_ascii_uppercase().as_str() {
            "TEMP" | "TEMPORARY" | "CONNECT" => 0,
            w => privileges::named(w).unwrap_or(0),
        };
        if bit & kind.all() == 0 {
            return Err(Error::other("0LP01", format!("invalid privilege type {word} for {}", kind.noun())));
        }
        out |= bit;
    }
    Ok(out)
}

/// The grantees' role names, `""` for PUBLIC (42704 for a missing role).
fn grantees(catalog: &Catalog, list: &[ast::Grantee]) -> Result<Vec<String>> {
    list.iter()
        .map(|g| {
            let name = match (&g.grantee_type, &g.name) {
                (ast::GranteesType::Public, _) => return Ok(String::new()),
                (_, Some(ast::GranteeName::ObjectName(n))) => object_parts(n)?.join("."),
                (_, other) => return Err(Error::unsupported(format!("grantee {other:?}"))),
            };
            if name.eq_ignore_ascii_case("public") && !name.starts_with('"') {
                return Ok(String::new());
            }
            if catalog.role(&name).is_none() {
                return Err(Error::UndefinedObject(format!("role \"{name}\" does not exist")));
            }
            Ok(name)
        })
        .collect()
}

/// Who grants on an object, and what of `wanted` they may grant: the owner
/// (or a superuser, acting as the owner) everything, others what they hold
/// with grant option. 42501 when they hold nothing on it at all.
fn grantor(
    actor: &Actor,
    kind: ObjectKind,
    name: &str,
    p: &ObjectPrivs,
    acl: &[privileges::AclItem],
    db_owner: &str,
    wanted: u16,
) -> Result<(String, u16)> {
    let owner = p.owner_or(db_owner);
    if actor.bypass || actor.role == owner {
        return Ok((owner.to_string(), wanted));
    }
    let (held, options) = privileges::held(acl, &actor.role);
    if held == 0 {
        return Err(denied(kind, name));
    }
    Ok((actor.role.clone(), wanted & options))
}

/// GRANT privileges ON objects TO roles [WITH GRANT OPTION].
pub(crate) fn grant(b: &Binder, g: &ast::Grant) -> Result<DdlOutcome> {
    let who = grantees(b.catalog, &g.grantees)?;
    if g.with_grant_option && who.iter().any(|w| w.is_empty()) {
        return Err(Error::other("0LP01", "grant options can only be granted to roles"));
    }
    let notices = change_acls(b, g.objects.as_ref(), &g.privileges, "granted", |acl, by, allowed| {
        for w in &who {
            privileges::grant(acl, w, by, allowed, g.with_grant_option);
        }
        Ok(())
    })?;
    Ok(DdlOutcome { tag: "GRANT".into(), notices })
}

/// REVOKE [GRANT OPTION FOR] privileges ON objects FROM roles [CASCADE].
pub(crate) fn revoke(b: &Binder, r: &ast::Revoke) -> Result<DdlOutcome> {
    let who = grantees(b.catalog, &r.grantees)?;
    let cascade = matches!(r.cascade, Some(ast::CascadeOption::Cascade));
    let notices = change_acls(b, r.objects.as_ref(), &r.privileges, "revoked", |acl, by, allowed| {
        for w in &who {
            privileges::revoke(acl, w, by, allowed, r.grant_option_for, cascade)?;
        }
        Ok(())
    })?;
    Ok(DdlOutcome { tag: "REVOKE".into(), notices })
}

/// Runs `change` on the ACL of each object named, with the grantor and
/// the privileges it may grant or revoke, and stores the result. Returns
/// the warnings for objects where it could do nothing or not all.
fn change_acls(
    b: &Binder,
    objects: Option<&ast::GrantObjects>,
    asked: &ast::Privileges,
    verb: &str,
    mut change: impl FnMut(&mut Vec<privileges::AclItem>, &str, u16) -> Result<()>,
) -> Result<Vec<String>> {
    let actor = b.actor();
    let db_owner = b.catalog.db_owner();
    let mut notices = Vec::new();
    for (kind, name) in targets(b, objects)? {
        let wanted = bits(asked, kind)?;
        let p = b.catalog.privs(kind, &name);
        let mut acl = p.effective(kind, &name, &db_owner);
        let (by, allowed) = grantor(&actor, kind, &name, &p, &acl, &db_owner, wanted)?;
        if allowed == 0 {
            notices.push(format!("no privileges could be {verb} for \"{}\"", short(&name)));
            continue;
        }
        if allowed != wanted {
            notices.push(format!("not all privileges could be {verb} for \"{}\"", short(&name)));
        }
        change(&mut acl, &by, allowed)?;
        b.catalog.set_privs(kind, &name, ObjectPrivs { owner: p.owner.clone(), acl: Some(acl) })?;
    }
    Ok(notices)
}

fn short(name: &str) -> &str {
    name.rsplit('.').next().unwrap_or(name)
}

/// `... OWNER TO role` of `kind` `name`: only a superuser may give an
/// object away (Centum has no role membership, through which PostgreSQL
/// lets owners do it); an owner may name itself. The ACL follows: the old
/// owner's entries become the new owner's.
pub(crate) fn owner_to(b: &Binder, kind: ObjectKind, name: &str, owner: &ast::Owner) -> Result<()> {
    let actor = b.actor();
    let new = match owner {
        ast::Owner::Ident(i) => ident(i),
        _ => actor.role.clone(),
    };
    if b.catalog.role(&new).is_none() {
        return Err(Error::UndefinedObject(format!("role \"{new}\" does not exist")));
    }
    let db_owner = b.catalog.db_owner();
    let p = b.catalog.privs(kind, name);
    let old = p.owner_or(&db_owner).to_string();
    if old == new {
        if !actor.bypass && actor.role != old {
            return Err(not_owner(kind, name));
        }
        return Ok(());
    }
    if !actor.bypass {
        if actor.role != old {
            return Err(not_owner(kind, name));
        }
        return Err(Error::other("42501", format!("must be able to SET ROLE \"{new}\"")));
    }
    let acl = p.acl.map(|acl| {
        let mut out: Vec<privileges::AclItem> = Vec::new();
        for mut i in acl {
            for r in [&mut i.grantee, &mut i.grantor] {
                if *r == old {
                    *r = new.clone();
                }
            }
            match out.iter_mut().find(|o| o.grantee == i.grantee && o.grantor == i.grantor) {
                Some(o) => {
                    o.privs |= i.privs;
                    o.grantable |= i.grantable;
                }
                None => out.push(i),
            }
        }
        out
    });
    let owner = (new != db_owner).then_some(new);
    b.catalog.set_privs(kind, name, ObjectPrivs { owner, acl })
}

/// Fails with 42501 unless the acting role owns `kind` `name` (a superuser
/// acts as every owner).
pub(crate) fn require_owner(b: &Binder, kind: ObjectKind, name: &str) -> Result<()> {
    let actor = b.actor();
    if actor.bypass {
        return Ok(());
    }
    let p = b.catalog.privs(kind, name);
    if p.owner_or(&b.catalog.db_owner()) == actor.role {
        Ok(())
    } else {
        Err(not_owner(kind, name))
    }
}

/// Fails with 42501 unless the acting role may create objects in the
/// schema of new object `engine_name` (CREATE on it).
pub(crate) fn require_create_in(b: &Binder, engine_name: &str) -> Result<()> {
    let actor = b.actor();
    if actor.bypass {
        return Ok(());
    }
    let schema = engine_name.rsplit_once('.').map_or("public", |(s, _)| s);
    let db_owner = b.catalog.db_owner();
    let acl = b.catalog.privs(ObjectKind::Schema, schema).effective(ObjectKind::Schema, schema, &db_owner);
    if privileges::held(&acl, &actor.role).0 & privileges::CREATE != 0 {
        Ok(())
    } else {
        Err(denied(ObjectKind::Schema, schema))
    }
}

/// Whether [`check_statement`] has anything to check in `s`: queries and
/// row changes are checked when they are planned, and need no acting
/// role worked out here.
pub(crate) fn checks(s: &ast::Statement) -> bool {
    use ast::Statement as S;
    !matches!(
        s,
        S::Query(_)
            | S::Insert(_)
            | S::Update(_)
            | S::Delete(_)
            | S::Merge(_)
            | S::Call(_)
            | S::Explain { .. }
            | S::Set(_)
            | S::ShowVariable { .. }
    )
}

/// Checks that the acting role holds `privilege` on relation `name` (one
/// that does not exist is left to the statement).
fn require_privilege(b: &Binder, name: &ast::ObjectName, privilege: u16) -> Result<()> {
    if let Ok((kind, n)) = relation(b, name) {
        let acl = b.catalog.privs(kind, &n).effective(kind, &n, &b.catalog.db_owner());
        if privileges::held(&acl, &b.actor().role).0 & privilege == 0 {
            return Err(denied(kind, &n));
        }
    }
    Ok(())
}

/// Checks that the acting role may run schema change or role statement
/// `s`: own what it changes or drops, may create in the schema it creates
/// in, hold TRUNCATE on what it truncates; only superusers manage roles
/// (a role may change its own password). Objects that do not exist are
/// left to the statement, which reports them (or skips them, IF EXISTS).
pub(crate) fn check_statement(b: &Binder, s: &ast::Statement) -> Result<()> {
    use ast::Statement as S;
    let actor = b.actor();
    if actor.bypass {
        return Ok(());
    }
    let relation_owner = |name: &ast::ObjectName| match relation(b, name) {
        Ok((kind, n)) => require_owner(b, kind, &n),
        Err(_) => Ok(()),
    };
    match s {
        S::CreateTable(ct) => require_create_in(b, &b.new_object_name(&ct.name)?),
        S::CreateView(cv) => {
            let name = b.new_object_name(&cv.name)?;
            if cv.or_replace && b.catalog.view(&name).is_some() {
                return require_owner(b, ObjectKind::Relation, &name);
            }
            require_create_in(b, &name)
        }
        S::CreateSequence { name, .. } | S::CreateType { name, .. } => {
            require_create_in(b, &b.new_object_name(name)?)
        }
        S::CreateFunction(cf) => {
            let name = object_parts(&cf.name)?.last().cloned().unwrap_or_default();
            if b.catalog.routine_source(&name).is_some() {
                return require_owner(b, ObjectKind::Routine, &name);
            }
            require_create_in(b, &name)
        }
        S::CreateSchema { .. } => {
            if actor.role == b.catalog.db_owner() {
                Ok(())
            } else {
                Err(Error::other("42501", "permission denied for database"))
            }
        }
        S::CreateIndex(ci) => relation_owner(&ci.table_name),
        S::AlterIndex { name, .. } => {
            let index = object_parts(name)?.last().cloned().unwrap_or_default();
            match b.catalog.db().index_table(&index) {
                Some(t) => require_owner(b, ObjectKind::Relation, &t.name()),
                None => Ok(()),
            }
        }
        S::AlterTable(at) => relation_owner(&at.name),
        S::Comment { object_type, object_name, .. } => match object_type {
            ast::CommentObject::Column => {
                let mut parts = object_name.0.clone();
                parts.pop();
                relation_owner(&ast::ObjectName(parts))
            }
            ast::CommentObject::Table
            | ast::CommentObject::MaterializedView
            | ast::CommentObject::View
            | ast::CommentObject::Sequence => relation_owner(object_name),
            ast::CommentObject::Schema => {
                let s = object_parts(object_name)?.join(".");
                if b.catalog.has_schema(&s) {
                    require_owner(b, ObjectKind::Schema, &s)?;
                }
                Ok(())
            }
            ast::CommentObject::Function | ast::CommentObject::Procedure => {
                let name = object_parts(object_name)?.last().cloned().unwrap_or_default();
                if b.catalog.routine_source(&name).is_some() {
                    require_owner(b, ObjectKind::Routine, &name)?;
                }
                Ok(())
            }
            _ => Ok(()),
        },
        S::Drop { object_type, names, .. } => {
            for n in names {
                match object_type {
                    ast::ObjectType::Table | ast::ObjectType::View | ast::ObjectType::MaterializedView => {
                        relation_owner(n)?
                    }
                    ast::ObjectType::Sequence => {
                        if let Some(seq) = b.sequence_named(&object_parts(n)?) {
                            require_owner(b, ObjectKind::Sequence, &seq)?;
                        }
                    }
                    ast::ObjectType::Schema => {
                        let s = object_parts(n)?.join(".");
                        if b.catalog.has_schema(&s) {
                            require_owner(b, ObjectKind::Schema, &s)?;
                        }
                    }
                    ast::ObjectType::Index => {
                        let parts = object_parts(n)?;
                        let found = b
                            .search_path
                            .iter()
                            .filter(|_| parts.len() == 1)
                            .map(|s| qualify(s, &parts[0]))
                            .chain((parts.len() > 1).then(|| parts.join(".")))
                            .find_map(|i| b.catalog.db().index_table(&i));
                        if let Some(t) = found {
                            require_owner(b, ObjectKind::Relation, &t.name())?;
                        }
                    }
                    ast::ObjectType::Role => {
                        return Err(Error::other("42501", "permission denied to drop role"));
                    }
                    _ => {}
                }
            }
            Ok(())
        }
        S::DropFunction(ast::DropFunction { func_desc, .. })
        | S::DropProcedure { proc_desc: func_desc, .. } => {
            for f in func_desc {
                let name = object_parts(&f.name)?.last().cloned().unwrap_or_default();
                if b.catalog.routine_source(&name).is_some() {
                    require_owner(b, ObjectKind::Routine, &name)?;
                }
            }
            Ok(())
        }
        S::AlterSchema(a) => {
            let s = object_parts(&a.name)?.join(".");
            if b.catalog.has_schema(&s) {
                require_owner(b, ObjectKind::Schema, &s)?;
            }
            Ok(())
        }
        S::AlterFunction(f) => {
            let name = object_parts(&f.function.name)?.last().cloned().unwrap_or_default();
            if b.catalog.routine_source(&name).is_some() {
                require_owner(b, ObjectKind::Routine, &name)?;
            }
            Ok(())
        }
        S::Truncate(t) => {
            for target in &t.table_names {
                require_privilege(b, &target.name, privileges::TRUNCATE)?;
            }
            Ok(())
        }
        S::CreateTrigger(ct) => require_privilege(b, &ct.table_name, privileges::TRIGGER),
        S::DropTrigger(dt) => match &dt.table_name {
            Some(t) => relation_owner(t),
            None => Ok(()),
        },
        S::CreateRole(_) => Err(Error::other("42501", "permission denied to create role")),
        S::AlterRole { name, operation } => {
            let own_password = ident(name) == actor.role
                && matches!(operation, ast::AlterRoleOperation::WithOptions { options }
                    if options.iter().all(|o| matches!(o, ast::RoleOption::Password(_))));
            if own_password {
                Ok(())
            } else {
                Err(Error::other("42501", format!("permission denied to alter role \"{}\"", ident(name))))
            }
        }
        _ => Ok(()),
    }
}
