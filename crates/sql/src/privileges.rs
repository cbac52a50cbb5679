//! Privileges: who owns each object, and what other roles may do with it.
//!
//! Every table, view, sequence, schema and routine has an owner and an
//! access control list (ACL) in PostgreSQL's model. An object that nobody
//! has granted or revoked anything on keeps its kind's default ACL (the
//! owner may do everything; everyone may execute a routine and use the
//! `public` schema), and stores none. An object whose owner is the
//! database owner (the first superuser role) stores no owner either, so a
//! catalog made before owners existed reads as owned by the database
//! owner, as it always was.
//!
//! Where it is kept: a table's or materialized view's owner and ACL are in
//! its SQL facts (`catalog.rs`, table meta "CSQ3"), so they live and die
//! with the table, through rewrites and renames; those of views,
//! sequences, schemas and routines are in the database's globals ("CSG5"),
//! changed in the same write as the object itself.
//!
//! How it is checked: the binder notes each object a statement uses and
//! what it does with it ([`Need`]); the session checks the notes against
//! its current role once the statement is planned. A plan is kept only for
//! the role and the catalog version it was checked for, so a GRANT, a
//! REVOKE or SET ROLE makes the next execution plan and check again, and a
//! prepared statement run a million times pays for the check once.
//! Objects a view reads are checked against the view's owner, and
//! statements inside a routine against the routine's owner (compiled
//! routines run with their owner's rights, as natively compiled modules
//! run `EXECUTE AS OWNER`). Superusers pass every check; so does an
//! embedded session whose user is not a role (the program that opened the
//! database).

use crate::error::{Error, Result};

/// The kinds of object that carry privileges.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum ObjectKind {
    /// A table, view or materialized view.
    Relation,
    /// A sequence.
    Sequence,
    /// A schema.
    Schema,
    /// A function or procedure.
    Routine,
}

impl ObjectKind {
    /// The stored byte.
    pub(crate) fn byte(self) -> u8 {
        match self {
            ObjectKind::Relation => 0,
            ObjectKind::Sequence => 1,
            ObjectKind::Schema => 2,
            ObjectKind::Routine => 3,
        }
    }

    /// The kind of a stored byte.
    pub(crate) fn from_byte(b: u8) -> Option<ObjectKind> {
        Some(match b {
            0 => ObjectKind::Relation,
            1 => ObjectKind::Sequence,
            2 => ObjectKind::Schema,
            3 => ObjectKind::Routine,
            _ => return None,
        })
    }

    /// Every privilege the kind has (what `ALL` grants).
    pub fn all(self) -> u16 {
        match self {
            ObjectKind::Relation => INSERT | SELECT | UPDATE | DELETE | TRUNCATE | REFERENCES | TRIGGER,
            ObjectKind::Sequence => SELECT | UPDATE | USAGE,
            ObjectKind::Schema => USAGE | CREATE,
            ObjectKind::Routine => EXECUTE,
        }
    }

    /// The word in messages ("permission denied for table t").
    pub fn noun(self) -> &'static str {
        match self {
            ObjectKind::Relation => "table",
            ObjectKind::Sequence => "sequence",
            ObjectKind::Schema => "schema",
            ObjectKind::Routine => "function",
        }
    }
}

/// INSERT (`a` in an ACL's text).
pub const INSERT: u16 = 1 << 0;
/// SELECT (`r`).
pub const SELECT: u16 = 1 << 1;
/// UPDATE (`w`).
pub const UPDATE: u16 = 1 << 2;
/// DELETE (`d`).
pub const DELETE: u16 = 1 << 3;
/// TRUNCATE (`D`).
pub const TRUNCATE: u16 = 1 << 4;
/// REFERENCES (`x`).
pub const REFERENCES: u16 = 1 << 5;
/// TRIGGER (`t`).
pub const TRIGGER: u16 = 1 << 6;
/// EXECUTE (`X`).
pub const EXECUTE: u16 = 1 << 7;
/// USAGE (`U`).
pub const USAGE: u16 = 1 << 8;
/// CREATE (`C`).
pub const CREATE: u16 = 1 << 9;

/// The privileges in PostgreSQL's order, with their letters and names.
const NAMES: [(u16, char, &str); 10] = [
    (INSERT, 'a', "INSERT"),
    (SELECT, 'r', "SELECT"),
    (UPDATE, 'w', "UPDATE"),
    (DELETE, 'd', "DELETE"),
    (TRUNCATE, 'D', "TRUNCATE"),
    (REFERENCES, 'x', "REFERENCES"),
    (TRIGGER, 't', "TRIGGER"),
    (EXECUTE, 'X', "EXECUTE"),
    (USAGE, 'U', "USAGE"),
    (CREATE, 'C', "CREATE"),
];

/// The privilege named `word` (`SELECT`, ...), if there is one.
pub fn named(word: &str) -> Option<u16> {
    NAMES.iter().find(|(_, _, n)| n.eq_ignore_ascii_case(word)).map(|(b, _, _)| *b)
}

/// One entry of an ACL: what `grantor` granted `grantee`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AclItem {
    /// The role granted to; empty for PUBLIC (every role).
    pub grantee: String,
    /// The privileges held.
    pub privs: u16,
    /// Those of them the grantee may grant on.
    pub grantable: u16,
    /// The role that granted them.
    pub grantor: String,
}

impl AclItem {
    /// PostgreSQL's text form: `grantee=letters/grantor`, a `*` after each
    /// privilege held with grant option, no grantee for PUBLIC.
    pub fn text(&self) -> String {
        let mut s = quote_role(&self.grantee);
        s.push('=');
        for (b, c, _) in NAMES {
            if self.privs & b != 0 {
                s.push(c);
                if self.grantable & b != 0 {
                    s.push('*');
                }
            }
        }
        s.push('/');
        s.push_str(&quote_role(&self.grantor));
        s
    }
}

/// A role name as an ACL's text writes it: quoted where it is not plain.
fn quote_role(name: &str) -> String {
    let plain = name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    if plain {
        name.to_string()
    } else {
        format!("\"{}\"", name.replace('"', "\"\""))
    }
}

/// An ACL as PostgreSQL's `aclitem[]` text: `{item,item}`.
pub fn acl_text(acl: &[AclItem]) -> String {
    let items: Vec<String> = acl
        .iter()
        .map(|i| {
            let t = i.text();
            if t.contains([',', '"', '{', '}', ' ', '\\']) {
                format!("\"{}\"", t.replace('\\', "\\\\").replace('"', "\\\""))
            } else {
                t
            }
        })
        .collect();
    format!("{{{}}}", items.join(","))
}

/// An object's owner and, once anything was granted or revoked on it, its
/// ACL. `None` in either place means the default: the database owner, and
/// the kind's default ACL.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ObjectPrivs {
    /// The owning role; `None`: the database owner.
    pub owner: Option<String>,
    /// The ACL; `None`: the kind's default for the owner.
    pub acl: Option<Vec<AclItem>>,
}

impl ObjectPrivs {
    /// Whether this is all defaults (nothing needs to be stored).
    pub fn is_default(&self) -> bool {
        self.owner.is_none() && self.acl.is_none()
    }

    /// The owner, `db_owner` standing for `None`.
    pub fn owner_or<'a>(&'a self, db_owner: &'a str) -> &'a str {
        self.owner.as_deref().unwrap_or(db_owner)
    }

    /// The ACL in force: the stored one, or the kind's default.
    pub fn effective(&self, kind: ObjectKind, name: &str, db_owner: &str) -> Vec<AclItem> {
        match &self.acl {
            Some(acl) => acl.clone(),
            None => default_acl(kind, name, self.owner_or(db_owner)),
        }
    }
}

/// The ACL an object of `kind` named `name` has until something is granted
/// or revoked on it, as PostgreSQL 15's `acldefault`: the owner holds
/// every privilege; every role may execute routines and use the `public`
/// schema.
pub fn default_acl(kind: ObjectKind, name: &str, owner: &str) -> Vec<AclItem> {
    // No owner (no superuser role exists): nobody holds the owner's entry.
    let own = (!owner.is_empty()).then(|| AclItem {
        grantee: owner.into(),
        privs: kind.all(),
        grantable: 0,
        grantor: owner.into(),
    });
    let public = |privs| AclItem { grantee: String::new(), privs, grantable: 0, grantor: owner.into() };
    match kind {
        ObjectKind::Routine => std::iter::once(public(EXECUTE)).chain(own).collect(),
        ObjectKind::Schema if name == "public" => own.into_iter().chain([public(USAGE)]).collect(),
        _ => own.into_iter().collect(),
    }
}

/// What `role` holds on an object whose effective ACL is `acl`: its own
/// entries and PUBLIC's, and the grant options among them.
pub fn held(acl: &[AclItem], role: &str) -> (u16, u16) {
    acl.iter()
        .filter(|i| i.grantee.is_empty() || i.grantee == role)
        .fold((0, 0), |(p, g), i| (p | i.privs, g | i.grantable))
}

/// Adds `privs` (with grant option where `grantable`) for `grantee` as
/// granted by `grantor`, merging into that pair's entry.
pub fn grant(acl: &mut Vec<AclItem>, grantee: &str, grantor: &str, privs: u16, grantable: bool) {
    let g = if grantable { privs } else { 0 };
    match acl.iter_mut().find(|i| i.grantee == grantee && i.grantor == grantor) {
        Some(i) => {
            i.privs |= privs;
            i.grantable |= g;
        }
        None => acl.push(AclItem { grantee: grantee.into(), privs, grantable: g, grantor: grantor.into() }),
    }
}

/// Takes `privs` (or, with `only_grant_option`, just the right to grant
/// them) from `grantee` as granted by `grantor`; entries left empty go.
/// Privileges the grantee passed on with its grant option go too when
/// `cascade`; without it, 2BP01 if there are any, and `acl` is unchanged.
pub fn revoke(
    acl: &mut Vec<AclItem>,
    grantee: &str,
    grantor: &str,
    privs: u16,
    only_grant_option: bool,
    cascade: bool,
) -> Result<()> {
    let mut changed = acl.clone();
    // (grantee, grantor, privileges, only the grant option): the asked
    // revocation, then what its grantee passed on.
    let mut work = vec![(grantee.to_string(), grantor.to_string(), privs, only_grant_option)];
    while let Some((grantee, grantor, privs, only_option)) = work.pop() {
        let Some(i) = changed.iter_mut().find(|i| i.grantee == grantee && i.grantor == grantor) else {
            continue;
        };
        let lost_option = i.grantable & privs;
        i.grantable &= !privs;
        if !only_option {
            i.privs &= !privs;
        }
        changed.retain(|i| i.privs != 0);
        if lost_option == 0 || grantee.is_empty() {
            continue;
        }
        let (still, options) = held(&changed, &grantee);
        let gone = lost_option & !(options & still);
        for d in &changed {
            if d.grantor == grantee && d.grantee != grantee && d.privs & gone != 0 {
                if !cascade {
                    return Err(Error::other("2BP01", "dependent privileges exist"));
                }
                work.push((d.grantee.clone(), grantee.clone(), gone, false));
            }
        }
    }
    *acl = changed;
    Ok(())
}

/// What a statement does with one object: `privs` on `kind` `name`, all of
/// them (or, with `any`, one of them), checked against the session's role
/// or, where `role` is set, against that role (a view's or routine's
/// owner).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Need {
    /// The object's kind.
    pub kind: ObjectKind,
    /// Its engine name.
    pub name: String,
    /// The privileges needed.
    pub privs: u16,
    /// One of `privs` is enough (nextval: USAGE or UPDATE).
    pub any: bool,
    /// Whose privileges count; `None`: the session's current role.
    pub role: Option<String>,
}

/// Who runs a schema change: the current role, and whether it passes
/// every check (a superuser, or an embedded session's non-role user).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Actor {
    /// The current role's name.
    pub role: String,
    /// It passes every check.
    pub bypass: bool,
}

/// The 42501 error for `need`.
pub fn denied(kind: ObjectKind, name: &str) -> Error {
    let name = name.rsplit('.').next().unwrap_or(name);
    Error::other("42501", format!("permission denied for {} {name}", kind.noun()))
}

/// The 42501 error for `kind` `name` in `catalog`, naming a view as one,
/// as PostgreSQL does (views are relations like tables).
pub(crate) fn denied_in(catalog: &crate::catalog::Catalog, kind: ObjectKind, name: &str) -> Error {
    let view = kind == ObjectKind::Relation && catalog.view_if_any(name).is_some_and(|v| !v.materialized);
    if view {
        let name = name.rsplit('.').next().unwrap_or(name);
        return Error::other("42501", format!("permission denied for view {name}"));
    }
    denied(kind, name)
}

/// The 42501 error of a change only the owner may make.
pub fn not_owner(kind: ObjectKind, name: &str) -> Error {
    let name = name.rsplit('.').next().unwrap_or(name);
    Error::other("42501", format!("must be owner of {} {name}", kind.noun()))
}

/// Fails with 42501 unless `role` (which passes every check when
/// `bypasses`) holds what `needs` ask, or, for those noted for a view's or
/// routine's owner, that owner does.
pub(crate) fn check_needs(
    catalog: &crate::catalog::Catalog,
    needs: &[Need],
    role: &str,
    bypasses: bool,
) -> Result<()> {
    if needs.is_empty() {
        return Ok(());
    }
    let mut db_owner = None;
    for n in needs {
        let who = match &n.role {
            Some(owner) if catalog.bypasses(owner, true) => continue,
            Some(owner) => owner.as_str(),
            None if bypasses => continue,
            None => role,
        };
        let db_owner = db_owner.get_or_insert_with(|| catalog.db_owner());
        let acl = catalog.privs(n.kind, &n.name).effective(n.kind, &n.name, db_owner);
        let (held, _) = held(&acl, who);
        let ok = if n.any { held & n.privs != 0 } else { held & n.privs == n.privs };
        if !ok {
            return Err(denied_in(catalog, n.kind, &n.name));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_matches_postgres() {
        let acl = default_acl(ObjectKind::Routine, "f", "alice");
        assert_eq!(acl_text(&acl), "{=X/alice,alice=X/alice}");
        let mut acl = default_acl(ObjectKind::Relation, "t", "alice");
        grant(&mut acl, "bob", "alice", SELECT | UPDATE, true);
        grant(&mut acl, "", "alice", SELECT, false);
        assert_eq!(acl_text(&acl), "{alice=arwdDxt/alice,bob=r*w*/alice,=r/alice}");
        assert_eq!(acl_text(&default_acl(ObjectKind::Schema, "public", "o")), "{o=UC/o,=U/o}");
        assert_eq!(
            AclItem { grantee: "a b".into(), privs: USAGE, grantable: 0, grantor: "o".into() }.text(),
            "\"a b\"=U/o"
        );
    }

    #[test]
    fn revoke_cascades_to_what_was_passed_on() {
        let mut acl = default_acl(ObjectKind::Relation, "t", "o");
        grant(&mut acl, "a", "o", SELECT, true);
        grant(&mut acl, "b", "a", SELECT, false);
        assert_eq!(held(&acl, "b").0, SELECT);
        assert!(revoke(&mut acl, "a", "o", SELECT, false, false).is_err());
        revoke(&mut acl, "a", "o", SELECT, false, true).unwrap();
        assert_eq!(held(&acl, "a").0, 0);
        assert_eq!(held(&acl, "b").0, 0);
        assert_eq!(acl_text(&acl), "{o=arwdDxt/o}");
    }
}
