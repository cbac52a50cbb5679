//! Publications: which tables' changes a `pgoutput` stream carries, as
//! PostgreSQL's CREATE, ALTER and DROP PUBLICATION declare them.
//!
//! ```text
//!  CREATE PUBLICATION p FOR TABLE a, b | FOR ALL TABLES [WITH (publish = '...')]
//!  ALTER PUBLICATION p ADD | SET | DROP TABLE ... | SET (publish = '...')
//!                      | RENAME TO q | OWNER TO r
//!  DROP PUBLICATION [IF EXISTS] p [, ...] [CASCADE | RESTRICT]
//!      ── checked here ── Catalog (globals, durable with the schema)
//!      ── read by pg_publication, pg_publication_rel, pg_publication_tables
//!         and by the pgoutput decoder (`replication`)
//! ```
//!
//! sqlparser does not read these statements; they reach the session as a
//! PRAGMA carrying their text (see `parser`), which is read word by word
//! here. SCHEMA_ONLY tables are never logged, so, like PostgreSQL's
//! unlogged tables, they cannot be published; FOR ALL TABLES leaves them
//! out.

use crate::catalog::{
    Catalog, PublicationDef, PUBLISH_DELETE, PUBLISH_INSERT, PUBLISH_TRUNCATE, PUBLISH_UPDATE,
};
use crate::error::{Error, Result};
use crate::planner::Binder;
use centum_engine::Durability;

/// The words of a statement, read front to back.
struct Words {
    words: Vec<String>,
    at: usize,
}

impl Words {
    fn peek(&self) -> Option<&str> {
        self.words.get(self.at).map(String::as_str)
    }

    fn is(&self, w: &str) -> bool {
        self.peek().is_some_and(|x| x.eq_ignore_ascii_case(w))
    }

    /// Takes the next word if it is `w`.
    fn eat(&mut self, w: &str) -> bool {
        let yes = self.is(w);
        if yes {
            self.at += 1;
        }
        yes
    }

    fn expect(&mut self, w: &str) -> Result<()> {
        if self.eat(w) {
            Ok(())
        } else {
            Err(self.syntax())
        }
    }

    fn syntax(&self) -> Error {
        match self.peek() {
            Some(w) => Error::Syntax(format!("syntax error at or near \"{w}\"")),
            None => Error::Syntax("syntax error at end of input".into()),
        }
    }

    /// A possibly qualified name, as its parts.
    fn name(&mut self) -> Result<Vec<String>> {
        let mut text = String::new();
        loop {
            let Some(w) = self.peek() else { return Err(self.syntax()) };
            if !(w.starts_with('"') || w.chars().next().is_some_and(|c| c.is_alphabetic() || c == '_')) {
                return Err(self.syntax());
            }
            text.push_str(w);
            self.at += 1;
            if self.peek() != Some(".") {
                break;
            }
            text.push('.');
            self.at += 1;
        }
        crate::names::object_parts(&crate::parser::object_name(&text)?)
    }

    /// One name, unqualified.
    fn simple_name(&mut self) -> Result<String> {
        let parts = self.name()?;
        match <[String; 1]>::try_from(parts) {
            Ok([n]) => Ok(n),
            Err(_) => Err(Error::Syntax("a publication name has no schema".into())),
        }
    }

    fn done(&self) -> Result<()> {
        if self.at == self.words.len() {
            Ok(())
        } else {
            Err(self.syntax())
        }
    }
}

/// Runs CREATE, ALTER or DROP PUBLICATION `text`; returns the command tag
/// and notices.
pub(crate) fn run(b: &Binder, text: &str) -> Result<(String, Vec<String>)> {
    let mut w = Words { words: crate::parser::words(text)?, at: 0 };
    w.words.retain(|x| x != ";");
    if w.eat("create") {
        w.expect("publication")?;
        create(b, &mut w).map(|()| ("CREATE PUBLICATION".into(), vec![]))
    } else if w.eat("alter") {
        w.expect("publication")?;
        alter(b, &mut w).map(|()| ("ALTER PUBLICATION".into(), vec![]))
    } else {
        w.expect("drop")?;
        w.expect("publication")?;
        drop(b, &mut w).map(|n| ("DROP PUBLICATION".into(), n))
    }
}

fn missing(name: &str) -> Error {
    Error::UndefinedObject(format!("publication \"{name}\" does not exist"))
}

fn create(b: &Binder, w: &mut Words) -> Result<()> {
    let name = w.simple_name()?;
    let mut def = PublicationDef {
        name: name.clone(),
        all_tables: false,
        tables: vec![],
        publish: PUBLISH_INSERT | PUBLISH_UPDATE | PUBLISH_DELETE | PUBLISH_TRUNCATE,
        owner: owner_now(b),
    };
    if w.eat("for") {
        if w.eat("all") {
            w.expect("tables")?;
            if !b.actor().bypass {
                return Err(Error::other("42501", "must be superuser to create FOR ALL TABLES publication"));
            }
            def.all_tables = true;
        } else {
            def.tables = table_list(b, w)?;
        }
    }
    if w.eat("with") {
        def.publish = options(w, def.publish)?;
    }
    w.done()?;
    if b.catalog.publication(&name).is_some() {
        return Err(Error::Duplicate {
            code: "42710",
            message: format!("publication \"{name}\" already exists"),
        });
    }
    b.catalog.put_publication(def, None)
}

fn alter(b: &Binder, w: &mut Words) -> Result<()> {
    let name = w.simple_name()?;
    let mut def = b.catalog.publication(&name).ok_or_else(|| missing(&name))?;
    require_owner(b, &def)?;
    let mut renamed = None;
    let set_table = w.is("set") && w.words.get(w.at + 1).is_some_and(|x| x.eq_ignore_ascii_case("table"));
    if set_table || w.is("add") {
        w.at += 1;
        let set = set_table;
        w.expect("table")?;
        for_all_tables_refuses(&def)?;
        let tables = table_list(b, w)?;
        if set {
            def.tables = tables;
        } else {
            for t in tables {
                if def.tables.contains(&t) {
                    return Err(Error::Duplicate {
                        code: "42710",
                        message: format!(
                            "relation \"{}\" is already member of publication \"{name}\"",
                            crate::system::snapshot::split_name(&t).1
                        ),
                    });
                }
                def.tables.push(t);
            }
        }
    } else if w.eat("drop") {
        w.expect("table")?;
        for_all_tables_refuses(&def)?;
        for t in table_names(b, w)? {
            let Some(at) = def.tables.iter().position(|x| *x == t) else {
                return Err(Error::UndefinedObject(format!(
                    "relation \"{}\" is not part of the publication",
                    crate::system::snapshot::split_name(&t).1
                )));
            };
            def.tables.remove(at);
        }
    } else if w.eat("set") {
        def.publish = options(w, def.publish)?;
    } else if w.eat("rename") {
        w.expect("to")?;
        let to = w.simple_name()?;
        if b.catalog.publication(&to).is_some() {
            return Err(Error::Duplicate {
                code: "42710",
                message: format!("publication \"{to}\" already exists"),
            });
        }
        def.name = to;
        renamed = Some(name.clone());
    } else if w.eat("owner") {
        w.expect("to")?;
        let role = w.simple_name()?;
        if b.catalog.role(&role).is_none() && role != b.catalog.db_owner() {
            return Err(Error::UndefinedObject(format!("role \"{role}\" does not exist")));
        }
        def.owner = role;
    } else {
        return Err(w.syntax());
    }
    w.done()?;
    b.catalog.put_publication(def, Some(renamed.as_deref().unwrap_or(&name)))
}

fn drop(b: &Binder, w: &mut Words) -> Result<Vec<String>> {
    let if_exists = w.eat("if");
    if if_exists {
        w.expect("exists")?;
    }
    let mut names = vec![w.simple_name()?];
    while w.eat(",") {
        names.push(w.simple_name()?);
    }
    if !w.eat("cascade") {
        w.eat("restrict");
    }
    w.done()?;
    let mut notices = Vec::new();
    for name in &names {
        match b.catalog.publication(name) {
            Some(def) => require_owner(b, &def)?,
            None if if_exists => notices.push(format!("publication \"{name}\" does not exist, skipping")),
            None => return Err(missing(name)),
        }
    }
    for name in &names {
        b.catalog.drop_publication(name)?;
    }
    Ok(notices)
}

fn owner_now(b: &Binder) -> String {
    let actor = b.actor();
    if actor.role.is_empty() {
        b.catalog.db_owner()
    } else {
        actor.role
    }
}

fn require_owner(b: &Binder, def: &PublicationDef) -> Result<()> {
    let actor = b.actor();
    if actor.bypass || actor.role == def.owner {
        Ok(())
    } else {
        Err(Error::other("42501", format!("must be owner of publication {}", def.name)))
    }
}

fn for_all_tables_refuses(def: &PublicationDef) -> Result<()> {
    if def.all_tables {
        return Err(Error::Raised {
            code: "55000",
            message: format!("publication \"{}\" is defined as FOR ALL TABLES", def.name),
            detail: Some("Tables cannot be added to or dropped from FOR ALL TABLES publications.".into()),
            hint: None,
        });
    }
    Ok(())
}

/// `[TABLE] [ONLY] t [*] [, ...]`: engine names of existing tables (a
/// name may repeat).
fn table_names(b: &Binder, w: &mut Words) -> Result<Vec<String>> {
    let mut out = Vec::new();
    loop {
        w.eat("table");
        if w.is("tables") {
            return Err(Error::unsupported("FOR TABLES IN SCHEMA"));
        }
        w.eat("only");
        let parts = w.name()?;
        w.eat("*");
        if w.is("(") {
            return Err(Error::unsupported("column lists in publications"));
        }
        if w.is("where") {
            return Err(Error::unsupported("row filters in publications"));
        }
        let name = ast_name(&parts);
        let engine = match b.table_name(&name) {
            Ok(engine) => engine,
            Err(e) => match b.view_named(&parts) {
                Some(_) => return Err(refuse(parts.last().map_or("", String::as_str), "22023", "views")),
                None => return Err(e),
            },
        };
        if !out.contains(&engine) {
            out.push(engine);
        }
        if !w.eat(",") {
            return Ok(out);
        }
    }
}

fn ast_name(parts: &[String]) -> sqlparser::ast::ObjectName {
    sqlparser::ast::ObjectName::from(
        parts.iter().map(|p| sqlparser::ast::Ident::with_quote('"', p)).collect::<Vec<_>>(),
    )
}

/// The tables of a FOR TABLE / ADD / SET TABLE list, each checked to be
/// one a publication may carry.
fn table_list(b: &Binder, w: &mut Words) -> Result<Vec<String>> {
    let tables = table_names(b, w)?;
    for t in &tables {
        let short = crate::system::snapshot::split_name(t).1;
        if b.catalog.view(t).is_some() {
            return Err(refuse(&short, "22023", "materialized views"));
        }
        let info = b.catalog.table(t)?;
        if info.table.def().durability == Durability::SchemaOnly {
            return Err(refuse(&short, "22023", "unlogged tables"));
        }
        crate::execution::grant::require_owner(b, crate::privileges::ObjectKind::Relation, t)?;
    }
    Ok(tables)
}

/// Why relation `name` cannot be published.
fn refuse(name: &str, code: &'static str, what: &str) -> Error {
    Error::Raised {
        code,
        message: format!("cannot add relation \"{name}\" to publication"),
        detail: Some(format!("This operation is not supported for {what}.")),
        hint: None,
    }
}

/// `WITH (publish = '...', publish_via_partition_root = ...)`: the publish
/// bits.
fn options(w: &mut Words, mut publish: u8) -> Result<u8> {
    w.expect("(")?;
    loop {
        let key = w.peek().ok_or_else(|| w.syntax())?.to_lowercase();
        w.at += 1;
        let value = if w.eat("=") {
            let v = w.peek().ok_or_else(|| w.syntax())?.to_string();
            w.at += 1;
            Some(v.trim_matches('\'').to_string())
        } else {
            None
        };
        match key.as_str() {
            "publish" => {
                publish = 0;
                for part in value.unwrap_or_default().split(',').map(str::trim).filter(|p| !p.is_empty()) {
                    publish |= match part {
                        "insert" => PUBLISH_INSERT,
                        "update" => PUBLISH_UPDATE,
                        "delete" => PUBLISH_DELETE,
                        "truncate" => PUBLISH_TRUNCATE,
                        other => {
                            return Err(Error::Syntax(format!("unrecognized \"publish\" value: \"{other}\"")))
                        }
                    };
                }
            }
            // No table is partitioned: without effect.
            "publish_via_partition_root" => {}
            other => {
                return Err(Error::Syntax(format!("unrecognized publication parameter: \"{other}\"")));
            }
        }
        if w.eat(")") {
            return Ok(publish);
        }
        w.expect(",")?;
    }
}

/// Refuses an UPDATE or DELETE (`action`: [`PUBLISH_UPDATE`] or
/// [`PUBLISH_DELETE`]) of a table without a primary key that a
/// publication carries those changes of: its subscribers could not tell
/// which row changed (PostgreSQL's rule for a table without a replica
/// identity).
pub(crate) fn check_replica_identity(
    catalog: &Catalog,
    info: &crate::catalog::TableInfo,
    action: u8,
) -> Result<()> {
    if info.meta.primary_key.is_some() {
        return Ok(());
    }
    let name = info.table.name();
    if catalog.publish_bits(&name, |_| true) & action == 0 {
        return Ok(());
    }
    let (verb, noun, gerund) = if action == PUBLISH_UPDATE {
        ("update", "updates", "updating")
    } else {
        ("delete from", "deletes", "deleting from")
    };
    Err(Error::Raised {
        code: "55000",
        message: format!(
            "cannot {verb} table \"{}\" because it does not have a replica identity and publishes {noun}",
            crate::system::snapshot::split_name(&name).1
        ),
        detail: None,
        hint: Some(format!("To enable {gerund} the table, give it a primary key.")),
    })
}

/// The publications named `names` (42704 for one that does not exist).
pub fn named(catalog: &Catalog, names: &[String]) -> Result<Vec<PublicationDef>> {
    names.iter().map(|n| catalog.publication(n).ok_or_else(|| missing(n))).collect()
}

/// The tables publication `def` carries now, in order: its list, or every
/// SCHEMA_AND_DATA table.
pub fn tables_of(catalog: &Catalog, def: &PublicationDef) -> Vec<String> {
    let db = catalog.db();
    if def.all_tables {
        let materialized: std::collections::HashSet<String> =
            catalog.views().into_iter().map(|v| v.name).collect();
        let mut all: Vec<String> = db
            .table_names()
            .into_iter()
            .filter(|t| {
                !t.ends_with("$rewrite")
                    && !materialized.contains(t)
                    && db.table(t).is_ok_and(|t| t.def().durability != Durability::SchemaOnly)
            })
            .collect();
        all.sort();
        all
    } else {
        def.tables.iter().filter(|t| db.table(t).is_ok()).cloned().collect()
    }
}
