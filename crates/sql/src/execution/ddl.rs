//! DDL: tables, indexes, constraints, sequences and schemas.
//!
//! Definitions go to the engine (columns, NOT NULL, indexes, durability)
//! and to the SQL catalog (defaults, CHECK, FOREIGN KEY, identity, generated
//! columns), each written durably. Constraint indexes are range indexes
//! (B+trees) unless the table's `bucket_count` option asks for hash
//! indexes, or an index built first is attached with `USING INDEX`.

use crate::catalog::OutputColumn;
use crate::catalog::{Check, ColumnMeta, ForeignKey, RefAction, SequenceDef, TableMeta};
use crate::error::{Error, Result};
use crate::execution::triggers::Firing;
use crate::execution::DdlOutcome;
use crate::names::{data_type, ident, object_parts};
use crate::planner::bind::{Binder, Ctx, Scope};
use crate::privileges::{Need, ObjectKind};
use centum_engine::{Durability, IndexDef, IndexKind, Isolation, TableDef};
use centum_types::DataType;
use sqlparser::ast;

/// Smallest bucket count for a hash index built without one.
const MIN_BUCKETS: u64 = 1 << 10;

fn done(tag: &str) -> DdlOutcome {
    DdlOutcome { tag: tag.into(), notices: vec![] }
}

fn serial_kind(t: &ast::DataType) -> Option<DataType> {
    let ast::DataType::Custom(name, _) = t else { return None };
    let n = name.to_string().to_lowercase();
    match n.as_str() {
        "serial" | "serial4" => Some(DataType::Integer),
        "bigserial" | "serial8" => Some(DataType::BigInt),
        "smallserial" | "serial2" => Some(DataType::SmallInt),
        _ => None,
    }
}

fn index_columns(cols: &[ast::IndexColumn]) -> Result<(Vec<String>, Vec<bool>)> {
    let mut names = Vec::new();
    let mut desc = Vec::new();
    for c in cols {
        match &c.column.expr {
            ast::Expr::Identifier(id) => names.push(ident(id)),
            other => return Err(Error::unsupported(format!("an index on expression {other}"))),
        }
        desc.push(matches!(c.column.options.sort, Some(ast::OrderBySort::Desc)));
    }
    Ok((names, desc))
}

fn short(t: &str) -> &str {
    t.rsplit('.').next().unwrap_or(t)
}

struct Builder {
    table: String,
    def: TableDef,
    meta: TableMeta,
    sequences: Vec<(String, SequenceDef)>,
    buckets: Option<u64>,
    notices: Vec<String>,
}

impl Builder {
    /// Adds a column; returns its constraints, to add once every column is
    /// known.
    fn column<'c>(
        &mut self,
        b: &Binder,
        c: &'c ast::ColumnDef,
    ) -> Result<Vec<(String, &'c ast::ColumnOption, Option<&'c ast::Ident>)>> {
        let name = self.table.clone();
        let cname = ident(&c.name);
        if self.def.columns.iter().any(|x| x.name == cname) {
            return Err(Error::other("42701", format!("column \"{cname}\" specified more than once")));
        }
        let mut constraints = Vec::new();
        let mut meta = ColumnMeta::default();
        let (ty, serial) = match serial_kind(&c.data_type) {
            Some(t) => (t, true),
            None => (b.data_type(&c.data_type)?, false),
        };
        let mut nullable = !serial;
        if serial {
            let seq = format!("{name}_{cname}_seq");
            meta.default = Some(format!("nextval('{seq}')"));
            self.sequences.push((seq, seq_def(&ty, &[])?));
        }
        for opt in &c.options {
            match &opt.option {
                ast::ColumnOption::Null => nullable = true,
                ast::ColumnOption::NotNull => nullable = false,
                ast::ColumnOption::Default(e) => meta.default = Some(e.to_string()),
                ast::ColumnOption::Generated { generated_as, sequence_options, generation_expr, .. } => {
                    match generation_expr {
                        Some(e) => meta.generated = Some(e.to_string()),
                        None => {
                            let seq = format!("{name}_{cname}_seq");
                            meta.default = Some(format!("nextval('{seq}')"));
                            meta.identity_always = Some(matches!(generated_as, ast::GeneratedAs::Always));
                            self.sequences
                                .push((seq, seq_def(&ty, sequence_options.as_deref().unwrap_or(&[]))?));
                            nullable = false;
                        }
                    }
                }
                o @ (ast::ColumnOption::PrimaryKey(_)
                | ast::ColumnOption::Unique(_)
                | ast::ColumnOption::Check(_)
                | ast::ColumnOption::ForeignKey(_)) => {
                    constraints.push((cname.clone(), o, opt.name.as_ref()));
                    if matches!(o, ast::ColumnOption::PrimaryKey(_)) {
                        nullable = false;
                    }
                }
                other => return Err(Error::unsupported(format!("column option {other}"))),
            }
        }
        self.def.columns.push(centum_engine::Column { name: cname, ty, nullable });
        self.meta.columns.push(meta);
        Ok(constraints)
    }

    /// Adds a constraint written on a column.
    fn column_constraint(
        &mut self,
        b: &Binder,
        col: &str,
        opt: &ast::ColumnOption,
        name: Option<&ast::Ident>,
    ) -> Result<()> {
        match opt {
            ast::ColumnOption::PrimaryKey(_) => {
                self.constraint_index(name.map(ident), vec![col.to_string()], vec![false], true)
            }
            ast::ColumnOption::Unique(_) => {
                self.constraint_index(name.map(ident), vec![col.to_string()], vec![false], false)
            }
            ast::ColumnOption::Check(ch) => {
                self.check(name.or(ch.name.as_ref()), &ch.expr, Some(col));
                Ok(())
            }
            ast::ColumnOption::ForeignKey(fk) => self.foreign_key(b, fk, vec![col.to_string()]),
            _ => Ok(()),
        }
    }

    fn constraint_index(
        &mut self,
        name: Option<String>,
        cols: Vec<String>,
        desc: Vec<bool>,
        primary: bool,
    ) -> Result<()> {
        let base = short(&self.table).to_string();
        let name = name.unwrap_or_else(|| {
            if primary {
                format!("{base}_pkey")
            } else {
                format!("{base}_{}_key", cols.join("_"))
            }
        });
        for c in &cols {
            if !self.def.columns.iter().any(|x| &x.name == c) {
                return Err(Error::UndefinedColumn(format!("\"{c}\" named in key does not exist")));
            }
        }
        if primary {
            if self.meta.primary_key.is_some() {
                return Err(Error::other(
                    "42P16",
                    format!("multiple primary keys for table \"{}\" are not allowed", self.table),
                ));
            }
            for c in &cols {
                if let Some(col) = self.def.columns.iter_mut().find(|x| &x.name == c) {
                    col.nullable = false;
                }
            }
            self.meta.primary_key = Some(name.clone());
        } else {
            self.meta.unique.push(name.clone());
        }
        let cols_ref: Vec<&str> = cols.iter().map(|s| s.as_str()).collect();
        let ix = match self.buckets {
            Some(b) => IndexDef::hash(&name, &cols_ref, b),
            None => IndexDef::range(&name, &cols_ref).descending(&desc),
        };
        self.def.indexes.push(ix.unique());
        Ok(())
    }

    /// Runs `f` with the key's `WITH (bucket_count = n)` (see
    /// `parser::KEY_BUCKETS`), if it has one: its index is then a hash
    /// index of that many buckets.
    fn with_key_buckets(
        &mut self,
        options: &[ast::IndexOption],
        f: impl FnOnce(&mut Builder) -> Result<()>,
    ) -> Result<()> {
        let buckets = options.iter().find_map(|o| match o {
            ast::IndexOption::Comment(c) => c.strip_prefix(crate::parser::KEY_BUCKETS),
            _ => None,
        });
        let Some(n) = buckets else { return f(self) };
        let n = bucket_count(n)?;
        let outer = self.buckets.replace(n);
        let r = f(self);
        self.buckets = outer;
        r
    }

    fn foreign_key(&mut self, b: &Binder, fk: &ast::ForeignKeyConstraint, cols: Vec<String>) -> Result<()> {
        let ref_table = b.table_name(&fk.foreign_table).or_else(|e| {
            // A table may reference itself.
            let n = b.new_object_name(&fk.foreign_table)?;
            if n == self.table {
                Ok(n)
            } else {
                Err(e)
            }
        })?;
        let mut ref_columns: Vec<String> = fk.referred_columns.iter().map(ident).collect();
        if ref_columns.is_empty() {
            // The referenced table's primary key.
            let pk = if ref_table == self.table {
                self.meta
                    .primary_key
                    .clone()
                    .and_then(|n| self.def.indexes.iter().find(|i| i.name == n).map(|i| i.columns.clone()))
            } else {
                let info = b.catalog.table(&ref_table)?;
                info.meta.primary_key.clone().and_then(|n| {
                    info.table.def().indexes.into_iter().find(|i| i.name == n).map(|i| i.columns)
                })
            };
            ref_columns = pk.ok_or_else(|| {
                Error::other("42830", format!("there is no primary key for referenced table \"{ref_table}\""))
            })?;
        }
        if ref_columns.len() != cols.len() {
            return Err(Error::other(
                "42830",
                "number of referencing and referenced columns for foreign key disagree",
            ));
        }
        let mut positions = Vec::new();
        for c in &cols {
            let p = self.def.columns.iter().position(|x| &x.name == c).ok_or_else(|| {
                Error::UndefinedColumn(format!("\"{c}\" referenced in foreign key constraint does not exist"))
            })?;
            positions.push(p);
        }
        let action = |a: &Option<ast::ReferentialAction>| match a {
            Some(ast::ReferentialAction::Cascade) => RefAction::Cascade,
            Some(ast::ReferentialAction::SetNull) => RefAction::SetNull,
            Some(ast::ReferentialAction::SetDefault) => RefAction::SetDefault,
            _ => RefAction::Restrict,
        };
        let name = fk
            .name
            .as_ref()
            .map(ident)
            .unwrap_or_else(|| format!("{}_{}_fkey", short(&self.table), cols.join("_")));
        self.meta.foreign_keys.push(ForeignKey {
            name,
            columns: positions,
            ref_table,
            ref_columns,
            on_delete: action(&fk.on_delete),
            on_update: action(&fk.on_update),
        });
        Ok(())
    }

    fn check(&mut self, name: Option<&ast::Ident>, expr: &ast::Expr, column: Option<&str>) {
        let name = name.map(ident).unwrap_or_else(|| match column {
            Some(c) => format!("{}_{c}_check", short(&self.table)),
            None => format!(
                "{}_check{}",
                short(&self.table),
                if self.meta.checks.is_empty() {
                    String::new()
                } else {
                    (self.meta.checks.len() + 1).to_string()
                }
            ),
        });
        // Stored without the parentheses around it, so that a CHECK
        // read back from pg_get_constraintdef (`CHECK ((n >= 0))`) and
        // created again is stored the same.
        let mut bare = expr;
        while let ast::Expr::Nested(inner) = bare {
            bare = inner;
        }
        self.meta.checks.push(Check { name, expr: bare.to_string() });
    }

    fn table_constraint(&mut self, b: &Binder, c: &ast::TableConstraint) -> Result<()> {
        match c {
            ast::TableConstraint::PrimaryKeyUsingIndex(u) | ast::TableConstraint::UniqueUsingIndex(u) => {
                // An index built first (any kind, e.g. USING hash WITH
                // (bucket_count = n)) becomes the constraint.
                let primary = matches!(c, ast::TableConstraint::PrimaryKeyUsingIndex(_));
                let name = ident(&u.index_name);
                let Some(ix) = self.def.indexes.iter().find(|i| i.name == name) else {
                    return Err(Error::UndefinedObject(format!("index \"{name}\" does not exist")));
                };
                if !ix.unique {
                    return Err(Error::other("42809", format!("\"{name}\" is not a unique index")));
                }
                if self.meta.primary_key.as_ref() == Some(&name) || self.meta.unique.contains(&name) {
                    return Err(Error::other(
                        "55000",
                        format!("index \"{name}\" is already associated with a constraint"),
                    ));
                }
                if primary {
                    if self.meta.primary_key.is_some() {
                        return Err(Error::other(
                            "42P16",
                            format!("multiple primary keys for table \"{}\" are not allowed", self.table),
                        ));
                    }
                    for c in ix.columns.clone() {
                        if let Some(pos) = self.def.columns.iter().position(|x| x.name == c && x.nullable) {
                            if !self.meta.not_null.contains(&pos) {
                                self.meta.not_null.push(pos);
                            }
                        }
                    }
                    self.meta.primary_key = Some(name);
                } else if !self.meta.unique.contains(&name) {
                    self.meta.unique.push(name);
                }
                Ok(())
            }
            ast::TableConstraint::PrimaryKey(pk) => {
                let (cols, desc) = index_columns(&pk.columns)?;
                self.with_key_buckets(&pk.index_options, |bl| {
                    bl.constraint_index(pk.name.as_ref().map(ident), cols, desc, true)
                })
            }
            ast::TableConstraint::Unique(u) => {
                let (cols, desc) = index_columns(&u.columns)?;
                self.with_key_buckets(&u.index_options, |bl| {
                    bl.constraint_index(u.name.as_ref().map(ident), cols, desc, false)
                })
            }
            ast::TableConstraint::Check(ch) => {
                self.check(ch.name.as_ref(), &ch.expr, None);
                Ok(())
            }
            ast::TableConstraint::ForeignKey(fk) => {
                let cols = fk.columns.iter().map(ident).collect();
                self.foreign_key(b, fk, cols)
            }
            other => Err(Error::unsupported(format!("constraint {other}"))),
        }
    }
}

/// CREATE TABLE.
pub(crate) fn create_table(b: &Binder, ct: &ast::CreateTable) -> Result<DdlOutcome> {
    if ct.query.is_some() {
        return Err(Error::unsupported("CREATE TABLE AS"));
    }
    let name = b.new_object_name(&ct.name)?;
    if b.catalog.db().table(&name).is_ok() {
        if ct.if_not_exists {
            return Ok(DdlOutcome {
                tag: "CREATE TABLE".into(),
                notices: vec![format!("relation \"{name}\" already exists, skipping")],
            });
        }
        return Err(Error::Duplicate {
            code: "42P07",
            message: format!("relation \"{name}\" already exists"),
        });
    }
    let mut bl = Builder {
        table: name.clone(),
        def: TableDef::new(&name),
        meta: TableMeta::default(),
        sequences: vec![],
        buckets: None,
        notices: vec![],
    };
    if ct.unlogged || ct.temporary {
        bl.def.durability = Durability::SchemaOnly;
    }
    if let ast::CreateTableOptions::With(opts) | ast::CreateTableOptions::Options(opts) = &ct.table_options {
        for o in opts {
            let ast::SqlOption::KeyValue { key, value } = o else { continue };
            let k = ident(key);
            let v = value.to_string().trim_matches('\'').to_lowercase();
            match k.as_str() {
                "durability" => {
                    bl.def.durability = match v.as_str() {
                        "schema_and_data" => Durability::SchemaAndData,
                        "schema_only" => Durability::SchemaOnly,
                        _ => {
                            return Err(Error::InvalidParameter(format!(
                                "invalid value for parameter \"durability\": \"{v}\""
                            )))
                        }
                    }
                }
                "memory_optimized" => {}
                "bucket_count" => bl.buckets = Some(bucket_count(&v)?),
                "memory_limit" => bl.meta.memory_limit = memory_limit(&v)?,
                other => bl
                    .notices
                    .push(format!("storage parameter \"{other}\" is ignored: tables are memory-optimized")),
            }
        }
    }
    let mut column_constraints = Vec::new();
    for c in &ct.columns {
        column_constraints.extend(bl.column(b, c)?);
    }
    for (col, opt, cname) in column_constraints {
        bl.column_constraint(b, &col, opt, cname)?;
    }
    for c in &ct.constraints {
        bl.table_constraint(b, c)?;
    }
    validate_expressions(b, &mut bl)?;
    // The sequences of serial and identity columns come first; if the
    // table then cannot be made (a bucket array over the memory limit, a
    // failed log write), they go again, or the next CREATE TABLE of the
    // name would find them (42P07).
    let mut made: Vec<&String> = Vec::new();
    let undo = |made: &[&String]| {
        for seq in made {
            let _ = b.catalog.drop_sequence(seq, true);
        }
    };
    for (seq, def) in &bl.sequences {
        if let Err(e) = b.catalog.create_sequence(seq, def.clone(), false) {
            undo(&made);
            return Err(e);
        }
        made.push(seq);
    }
    let def = bl.def.clone().extra(crate::catalog::encode_table_meta(&bl.meta));
    if let Err(e) = b.catalog.db().create_table(def) {
        undo(&made);
        return Err(e.into());
    }
    b.catalog.invalidate();
    let notices = bl.notices;
    Ok(DdlOutcome { tag: "CREATE TABLE".into(), notices })
}

/// Binds defaults, CHECK and generated expressions once, so a bad one is
/// refused at CREATE time.
fn validate_expressions(b: &Binder, bl: &mut Builder) -> Result<()> {
    for c in bl.meta.columns.iter_mut() {
        if let Some(canonical) = c.default.as_deref().and_then(|d| canonical_default(b, d)) {
            c.default = Some(canonical);
        }
    }
    let cols = OutputColumn::of_table(&bl.def.columns);
    let scope = Scope::of(short(&bl.table), &cols);
    let mut binder = Binder::new(b.catalog, b.search_path, vec![]);
    let seqs: Vec<&String> = bl.sequences.iter().map(|(s, _)| s).collect();
    for (i, c) in bl.meta.columns.iter().enumerate() {
        if let Some(d) = &c.default {
            if seqs.iter().any(|s| d.contains(s.as_str())) {
                continue;
            }
            let e = crate::planner::dml::parse_expr(d)?;
            let t = binder.expr(&e, &Ctx::plain(&Scope::default()))?;
            binder.coerce_untyped(t, &Some(bl.def.columns[i].ty.clone()))?;
        }
        if let Some(g) = &c.generated {
            binder.expr(&crate::planner::dml::parse_expr(g)?, &Ctx::plain(&scope))?;
        }
    }
    for ch in &bl.meta.checks {
        binder.expr(&crate::planner::dml::parse_expr(&ch.expr)?, &Ctx::plain(&scope))?;
    }
    Ok(())
}

fn seq_def(ty: &DataType, opts: &[ast::SequenceOptions]) -> Result<SequenceDef> {
    let max = match ty {
        DataType::SmallInt => i16::MAX as i64,
        DataType::Integer => i32::MAX as i64,
        _ => i64::MAX,
    };
    let mut d = SequenceDef { increment: 1, min: 1, max, start: 1, cycle: false, reserved: None };
    let num = |e: &ast::Expr| -> Result<i64> {
        let s = e.to_string().replace(' ', "");
        s.parse().map_err(|_| Error::InvalidParameter(format!("invalid sequence option value {s}")))
    };
    let mut start_given = false;
    for o in opts {
        match o {
            ast::SequenceOptions::IncrementBy(e, _) => d.increment = num(e)?,
            ast::SequenceOptions::MinValue(Some(e)) => d.min = num(e)?,
            ast::SequenceOptions::MaxValue(Some(e)) => d.max = num(e)?,
            ast::SequenceOptions::StartWith(e, _) => {
                d.start = num(e)?;
                start_given = true;
            }
            // sqlparser says `Cycle(true)` for NO CYCLE.
            ast::SequenceOptions::Cycle(no) => d.cycle = !*no,
            _ => {}
        }
    }
    if d.increment == 0 {
        return Err(Error::InvalidParameter("INCREMENT must not be zero".into()));
    }
    if d.increment < 0 && !opts.iter().any(|o| matches!(o, ast::SequenceOptions::MaxValue(Some(_)))) {
        d.max = -1;
        if !opts.iter().any(|o| matches!(o, ast::SequenceOptions::MinValue(Some(_)))) {
            d.min = match ty {
                DataType::SmallInt => i16::MIN as i64,
                DataType::Integer => i32::MIN as i64,
                _ => i64::MIN,
            };
        }
    }
    if !start_given {
        d.start = if d.increment > 0 { d.min } else { d.max };
    }
    if d.start < d.min || d.start > d.max {
        return Err(Error::InvalidParameter(format!(
            "START value ({}) cannot be outside MINVALUE/MAXVALUE",
            d.start
        )));
    }
    Ok(d)
}

/// CREATE SEQUENCE.
pub(crate) fn create_sequence(
    b: &Binder,
    name: &ast::ObjectName,
    ty: Option<&ast::DataType>,
    opts: &[ast::SequenceOptions],
    if_not_exists: bool,
) -> Result<DdlOutcome> {
    let n = b.new_object_name(name)?;
    let ty = ty.map(data_type).transpose()?.unwrap_or(DataType::BigInt);
    b.catalog.create_sequence(&n, seq_def(&ty, opts)?, if_not_exists)?;
    Ok(done("CREATE SEQUENCE"))
}

/// The row count of a table, for sizing a hash index built on it.
fn row_count(b: &Binder, table: &str) -> Result<u64> {
    let t = b.catalog.db().table(table)?;
    let txn = b.catalog.db().begin(Isolation::Snapshot)?;
    let n = txn.scan(&t)?.count() as u64;
    txn.abort();
    Ok(n)
}

/// CREATE INDEX.
/// The most buckets a hash index may have, as in SQL Server: 2^30. A
/// bigger array is refused rather than attempted, since an allocation that
/// fails ends the process.
const MAX_BUCKETS: u64 = 1 << 30;

/// A `bucket_count` option's value, between 1 and [`MAX_BUCKETS`].
fn bucket_count(v: &str) -> Result<u64> {
    match v.parse::<u64>() {
        Ok(n) if (1..=MAX_BUCKETS).contains(&n) => Ok(n),
        _ => Err(Error::InvalidParameter(format!(
            "invalid value for parameter \"bucket_count\": \"{v}\" (it must be between 1 and {MAX_BUCKETS})"
        ))),
    }
}

pub(crate) fn create_index(b: &Binder, ci: &ast::CreateIndex) -> Result<DdlOutcome> {
    let table = b.table_name(&ci.table_name)?;
    let shaped = ci.predicate.is_some()
        || ci.columns.iter().any(|c| !matches!(c.column.expr, ast::Expr::Identifier(_)));
    let (cols, desc) = if shaped {
        let desc = ci.columns.iter().map(|c| matches!(c.column.options.sort, Some(ast::OrderBySort::Desc)));
        (ci.columns.iter().map(|c| key_name_part(&c.column.expr)).collect(), desc.collect())
    } else {
        index_columns(&ci.columns)?
    };
    let name = match &ci.name {
        Some(n) => {
            let parts = object_parts(n)?;
            parts.last().cloned().unwrap_or_default()
        }
        None => format!("{}_{}_idx", short(&table), cols.join("_")),
    };
    let mut buckets = None;
    let mut notices = Vec::new();
    for w in &ci.with {
        if let ast::Expr::BinaryOp { left, op: ast::BinaryOperator::Eq, right } = w {
            let k = left.to_string().to_lowercase();
            let v = right.to_string();
            if k == "bucket_count" {
                buckets = Some(bucket_count(&v)?);
            } else {
                notices.push(format!("index parameter \"{k}\" is ignored"));
            }
        }
    }
    let shape = if shaped { Some(ShapedIndex::bind(b, &table, ci)?) } else { None };
    let cols = shape.as_ref().map_or(cols, |s| s.key_columns.clone());
    let cols_ref: Vec<&str> = cols.iter().map(|s| s.as_str()).collect();
    let def = match &ci.using {
        Some(ast::IndexType::Hash) => {
            let buckets = match buckets {
                Some(n) => n,
                None => (row_count(b, &table)?.saturating_mul(2)).next_power_of_two().max(MIN_BUCKETS),
            };
            IndexDef::hash(&name, &cols_ref, buckets)
        }
        None | Some(ast::IndexType::BTree) => IndexDef::range(&name, &cols_ref).descending(&desc),
        Some(other) => return Err(Error::unsupported(format!("access method \"{other}\""))),
    };
    let def = if ci.unique { def.unique() } else { def };
    if let Some(shape) = shape {
        if b.catalog.db().index_table(&name).is_some() {
            if ci.if_not_exists {
                notices.push(format!("relation \"{name}\" already exists, skipping"));
                return Ok(DdlOutcome { tag: "CREATE INDEX".into(), notices });
            }
            return Err(centum_engine::Error::IndexExists(name).into());
        }
        shape.build(b, &table, def)?;
        b.catalog.invalidate();
        return Ok(DdlOutcome { tag: "CREATE INDEX".into(), notices });
    }
    match build_index(b.catalog.db(), &table, def) {
        Err(Error::Engine(centum_engine::Error::IndexExists(_))) if ci.if_not_exists => {
            notices.push(format!("relation \"{name}\" already exists, skipping"));
        }
        r => r?,
    }
    b.catalog.invalidate();
    Ok(DdlOutcome { tag: "CREATE INDEX".into(), notices })
}

/// The part of a default index name a key gives: a column's name, a
/// function's name, or `expr`, as PostgreSQL chooses.
fn key_name_part(e: &ast::Expr) -> String {
    match unparenthesized(e) {
        ast::Expr::Identifier(id) => ident(id),
        ast::Expr::Function(f) => {
            f.name.0.last().and_then(|p| p.as_ident()).map(ident).unwrap_or_else(|| "expr".into())
        }
        _ => "expr".into(),
    }
}

/// `e` without the parentheses around it (an index key is written `(a *
/// 2)`).
fn unparenthesized(mut e: &ast::Expr) -> &ast::Expr {
    while let ast::Expr::Nested(inner) = e {
        e = inner;
    }
    e
}

/// An index on expressions, or a partial index, bound and ready to build
/// (see [`crate::catalog::IndexShape`]): the hidden key columns it adds
/// to the table, and the columns its engine index covers.
struct ShapedIndex {
    shape: crate::catalog::IndexShape,
    /// The engine index's columns: a plain key's own column, or a hidden
    /// one.
    key_columns: Vec<String>,
    /// The hidden columns to add: name, type, generated expression as
    /// text and bound over the table's row.
    hidden: Vec<(String, DataType, String, crate::planner::expr::Expr)>,
}

impl ShapedIndex {
    fn bind(b: &Binder, table: &str, ci: &ast::CreateIndex) -> Result<ShapedIndex> {
        let info = b.catalog.table(table)?;
        let cols = OutputColumn::of_table(info.table.columns());
        let scope = Scope::of(short(table), &cols);
        let mut binder = Binder::new(b.catalog, b.search_path, vec![]);
        // Index keys and predicates must give the same answer for a row
        // every time they are computed, as PostgreSQL's must be IMMUTABLE.
        let check = |e: &crate::planner::expr::Expr, what: &str| -> Result<()> {
            let mut subquery = false;
            let mut mutable = !e.is_stable();
            e.walk(&mut |x| match x {
                crate::planner::expr::Expr::Subquery(..) => subquery = true,
                crate::planner::expr::Expr::Func(f, _)
                    if matches!(
                        f.name,
                        "now"
                            | "statement_timestamp"
                            | "transaction_timestamp"
                            | "timeofday"
                            | "current_setting"
                    ) =>
                {
                    mutable = true
                }
                _ => {}
            });
            if subquery {
                return Err(Error::other("0A000", format!("cannot use subquery in index {what}")));
            }
            if mutable {
                return Err(Error::other(
                    "42P17",
                    format!("functions in index {what} must be marked IMMUTABLE"),
                ));
            }
            Ok(())
        };
        let predicate = match &ci.predicate {
            Some(p) => {
                let (e, ty) = binder.expr(p, &Ctx::plain(&scope))?;
                check(&e, "predicate")?;
                if !matches!(ty, Some(DataType::Boolean) | None) {
                    return Err(Error::other("42804", "argument of WHERE must be type boolean"));
                }
                Some(p.to_string())
            }
            None => None,
        };
        let mut next = info
            .table
            .columns()
            .iter()
            .filter_map(|c| c.name.strip_prefix('\0').and_then(|n| n.parse::<u32>().ok()))
            .max()
            .map_or(0, |n| n + 1);
        let mut shaped = ShapedIndex { shape: Default::default(), key_columns: vec![], hidden: vec![] };
        for c in &ci.columns {
            let key = &c.column.expr;
            let (e, ty) = binder.expr(key, &Ctx::plain(&scope))?;
            check(&e, "expression")?;
            let key_text = unparenthesized(key);
            let text = match key_text {
                ast::Expr::Identifier(id) => crate::names::quote_ident(&ident(id)),
                other => other.to_string(),
            };
            shaped.shape.keys.push(text.clone());
            if let (ast::Expr::Identifier(id), None) = (key_text, &predicate) {
                shaped.key_columns.push(ident(id));
                continue;
            }
            let ty = ty.unwrap_or(DataType::Text);
            let generated = match &predicate {
                Some(p) => format!("CASE WHEN ({p}) THEN ({text}) END"),
                None => text,
            };
            let bound = binder.expr(&crate::planner::dml::parse_expr(&generated)?, &Ctx::plain(&scope))?.0;
            let name = format!("\0{next}");
            next += 1;
            shaped.key_columns.push(name.clone());
            shaped.hidden.push((name, ty, generated, bound));
        }
        shaped.shape.predicate = predicate;
        Ok(shaped)
    }

    /// Adds the hidden columns, computed for every row, and the index, in
    /// one rewrite of the table (which checks a unique index's keys).
    fn build(self, b: &Binder, table: &str, index: IndexDef) -> Result<()> {
        let info = b.catalog.table(table)?;
        let mut def = info.table.def();
        let mut meta = info.meta.clone();
        for (name, ty, generated, _) in &self.hidden {
            def.columns.push(centum_engine::Column { name: name.clone(), ty: ty.clone(), nullable: true });
            meta.columns.push(ColumnMeta { generated: Some(generated.clone()), ..Default::default() });
        }
        meta.index_shapes.insert(index.name.clone(), self.shape);
        def.indexes.push(index);
        let hidden = self.hidden;
        rewrite(b, table, &info.meta, def, meta, |old, cx| {
            let mut row = old.to_vec();
            for (_, ty, _, e) in &hidden {
                row.push(crate::execution::eval::eval(e, old, &[], cx)?.coerce_to(ty)?);
            }
            Ok(row)
        })
    }
}

/// Drops `indexes` of `table`, which include indexes on expressions or
/// partial indexes, with the hidden key columns they own, in one rewrite.
fn drop_shaped(b: &Binder, table: &str, indexes: &[String]) -> Result<()> {
    let info = b.catalog.table(table)?;
    let mut def = info.table.def();
    let mut meta = info.meta.clone();
    let mut gone = hidden_columns_of(&def, indexes);
    gone.sort_unstable();
    gone.dedup();
    def.indexes.retain(|i| !indexes.contains(&i.name));
    for &c in gone.iter().rev() {
        def.columns.remove(c);
        meta.columns.remove(c);
    }
    let shift = |c: usize| c - gone.iter().filter(|&&g| g < c).count();
    for f in &mut meta.foreign_keys {
        f.columns = f.columns.iter().map(|&c| shift(c)).collect();
    }
    meta.not_null = meta.not_null.iter().map(|&c| shift(c)).collect();
    for n in indexes {
        meta.index_shapes.remove(n);
    }
    rewrite(b, table, &info.meta, def, meta, |old, _| {
        Ok(old.iter().enumerate().filter(|(i, _)| !gone.contains(i)).map(|(_, v)| v.clone()).collect())
    })
}

/// The positions in `def` of the hidden key columns of `indexes`.
fn hidden_columns_of(def: &TableDef, indexes: &[String]) -> Vec<usize> {
    def.indexes
        .iter()
        .filter(|i| indexes.contains(&i.name))
        .flat_map(|i| i.columns.iter())
        .filter(|c| crate::catalog::is_hidden_column(c))
        .filter_map(|c| def.columns.iter().position(|x| &x.name == c))
        .collect()
}

/// The indexes on expressions or partial indexes of `meta` whose keys or
/// predicate read column `name`.
fn shapes_reading(meta: &TableMeta, name: &str) -> Result<Vec<String>> {
    let mut out = Vec::new();
    for (index, sh) in &meta.index_shapes {
        let mut reads = false;
        for text in sh.keys.iter().chain(&sh.predicate) {
            reads |= crate::parser::words(text)?.iter().any(|w| w.eq_ignore_ascii_case(name));
        }
        if reads {
            out.push(index.clone());
        }
    }
    Ok(out)
}

/// DROP TABLE / INDEX / SEQUENCE / SCHEMA.
pub(crate) fn drop(
    b: &Binder,
    kind: &ast::ObjectType,
    names: &[ast::ObjectName],
    if_exists: bool,
    cascade: bool,
) -> Result<DdlOutcome> {
    let mut notices = Vec::new();
    let tag = match kind {
        ast::ObjectType::Table => "DROP TABLE",
        ast::ObjectType::Index => "DROP INDEX",
        ast::ObjectType::Sequence => "DROP SEQUENCE",
        ast::ObjectType::Schema => "DROP SCHEMA",
        other => return Err(Error::unsupported(format!("DROP {other}"))),
    };
    for n in names {
        match kind {
            ast::ObjectType::Table => {
                let view = match b.table_name(n) {
                    Ok(t) => b.catalog.view(&t),
                    Err(_) => b.view_named(&object_parts(n)?),
                };
                if let Some(v) = view {
                    let kind = if v.materialized { "materialized view" } else { "view" };
                    return Err(super::views::not_a("table", &v.name, Some(kind)));
                }
                let t = match b.table_name(n) {
                    Ok(t) => t,
                    Err(_) if if_exists => {
                        notices.push(format!("table \"{n}\" does not exist, skipping"));
                        continue;
                    }
                    Err(e) => return Err(e),
                };
                let info = b.catalog.table(&t)?;
                super::views::drop_dependents(b, &t, &format!("table {}", short(&t)), cascade, &mut notices)?;
                for (child, fk) in &info.referenced_by {
                    if child != &t {
                        if !cascade {
                            return Err(Error::other(
                                "2BP01",
                                format!("cannot drop table {t} because other objects depend on it\nDETAIL:  constraint {} on table {child} depends on table {t}", fk.name),
                            ));
                        }
                        drop_child_fks(b, child, |f| f.ref_table == t)?;
                        notices.push(format!("drop cascades to constraint {} on table {child}", fk.name));
                    }
                }
                b.catalog.db().drop_table(&t)?;
                b.catalog.republish(&t, None)?;
                // Sequences owned by serial/identity columns go with the table.
                drop_owned_sequences(b, &info.meta.columns)?;
                b.catalog.invalidate();
            }
            ast::ObjectType::Index => {
                let name = object_parts(n)?.last().cloned().unwrap_or_default();
                let owner = b.catalog.db().index_table(&name);
                if let Some(t) = &owner {
                    let table = t.name();
                    if b.catalog.table(&table)?.meta.index_shapes.contains_key(&name) {
                        drop_shaped(b, &table, std::slice::from_ref(&name))?;
                        b.catalog.invalidate();
                        continue;
                    }
                }
                match b.catalog.db().drop_index(&name) {
                    Err(centum_engine::Error::NoSuchIndex(_)) if if_exists => {
                        notices.push(format!("index \"{name}\" does not exist, skipping"));
                    }
                    r => r?,
                }
                b.catalog.invalidate();
                // Its comment goes with it.
                if let Some(t) = owner {
                    let mut meta = b.catalog.table(&t.name())?.meta.clone();
                    if meta.index_comments.remove(&name).is_some() {
                        b.catalog.set_meta(&t.name(), &meta)?;
                    }
                }
            }
            ast::ObjectType::Sequence => {
                let name = b.new_object_name(n).unwrap_or_else(|_| n.to_string());
                if !b.catalog.has_sequence(&name) && if_exists {
                    notices.push(format!("sequence \"{name}\" does not exist, skipping"));
                    continue;
                }
                b.catalog.drop_sequence(&name, if_exists)?;
            }
            _ => {
                let name = object_parts(n)?.join(".");
                b.catalog.drop_schema(&name, if_exists)?;
            }
        }
    }
    Ok(DdlOutcome { tag: tag.into(), notices })
}

/// Drops the foreign keys of table `child` that `gone` picks (what a
/// CASCADE does to the tables that reference a dropped table or column).
fn drop_child_fks(b: &Binder, child: &str, gone: impl Fn(&ForeignKey) -> bool) -> Result<()> {
    let mut meta = b.catalog.table(child)?.meta.clone();
    meta.foreign_keys.retain(|f| !gone(f));
    b.catalog.set_meta(child, &meta)
}

/// `ALTER SEQUENCE [IF EXISTS] name action`, from its text (see
/// `parser::ALTER_SEQUENCE`). Actions:
///
/// - `RESTART [[WITH] n]`: the next `nextval` returns `n` (or the start).
/// - `OWNER TO role`: as [`owner_to`].
/// - `OWNED BY table.column | NONE`: a sequence belongs to the serial or
///   identity column it was made for (`table_column_seq`, once the
///   column's default draws from it) and to no other; naming that column,
///   as pg_dump does, succeeds.
///
/// Other actions (a new increment, bounds, cycling) are 0A000.
pub(crate) fn alter_sequence(b: &Binder, text: &str) -> Result<String> {
    use sqlparser::tokenizer::{Token, Tokenizer};
    let dialect = sqlparser::dialect::PostgreSqlDialect {};
    let tokens = Tokenizer::new(&dialect, text).tokenize().map_err(|e| Error::Syntax(e.to_string()))?;
    let words: Vec<Token> = tokens.into_iter().filter(|t| !matches!(t, Token::Whitespace(_))).collect();
    let kw = |i: usize, w: &str| matches!(words.get(i), Some(Token::Word(x)) if x.quote_style.is_none() && x.value.eq_ignore_ascii_case(w));
    let mut at = 2;
    let if_exists = kw(at, "if") && kw(at + 1, "exists");
    if if_exists {
        at += 2;
    }
    // A dotted name, then the action.
    let mut name = Vec::new();
    while let Some(Token::Word(w)) = words.get(at) {
        name.push(word_ident(w));
        at += 1;
        if words.get(at) != Some(&Token::Period) {
            break;
        }
        at += 1;
    }
    let obj = ast::ObjectName::from(name);
    let parts = object_parts(&obj)?;
    if parts.len() > 2 {
        return Err(Error::Syntax(format!("improper relation name: {obj}")));
    }
    let seq = b.sequence_named(&parts);
    let Some(seq) = seq else {
        if if_exists {
            return Ok("ALTER SEQUENCE".into());
        }
        return Err(Error::UndefinedTable(obj.to_string()));
    };
    super::grant::require_owner(b, ObjectKind::Sequence, &seq)?;
    let number = |i: usize| -> Result<i64> {
        let (neg, i) = if words.get(i) == Some(&Token::Minus) { (true, i + 1) } else { (false, i) };
        match words.get(i) {
            Some(Token::Number(n, _)) => n
                .parse::<i64>()
                .map(|v| if neg { -v } else { v })
                .map_err(|_| Error::InvalidParameter(format!("invalid sequence value {n}"))),
            _ => Err(Error::Syntax("ALTER SEQUENCE ... RESTART WITH takes a number".into())),
        }
    };
    if kw(at, "restart") {
        let value = if kw(at + 1, "with") {
            number(at + 2)?
        } else if words.get(at + 1).is_some() {
            number(at + 1)?
        } else {
            b.catalog.sequence_def(&seq).map(|d| d.start).unwrap_or(1)
        };
        b.catalog.setval(&seq, value, false)?;
    } else if kw(at, "owner") && kw(at + 1, "to") {
        let Some(Token::Word(w)) = words.get(at + 2) else {
            return Err(Error::Syntax("OWNER TO takes a role".into()));
        };
        let owner = ast::Owner::Ident(word_ident(w));
        super::grant::owner_to(b, ObjectKind::Sequence, &seq, &owner)?;
    } else if kw(at, "owned") && kw(at + 1, "by") {
        let target: Vec<String> = words[at + 2..]
            .iter()
            .filter_map(|t| match t {
                Token::Word(w) if w.quote_style.is_some() => Some(w.value.clone()),
                Token::Word(w) => Some(w.value.to_lowercase()),
                _ => None,
            })
            .collect();
        let owner = match target.as_slice() {
            [t, c] => Some((b.table_name(&ast::ObjectName::from(vec![ast::Ident::new(t)]))?, c.clone())),
            [s, t, c] => Some((crate::names::qualify(s, t), c.clone())),
            _ => None,
        };
        // pg_dump sets the column's default after this statement.
        let drawn_by = owner.as_ref().is_some_and(|(t, c)| {
            seq == format!("{t}_{c}_seq")
                && b.catalog.table(t).ok().is_some_and(|i| i.table.column_index(c).is_ok())
        });
        if !drawn_by {
            return Err(Error::unsupported(
                "ALTER SEQUENCE ... OWNED BY (a sequence belongs to the serial or identity column it was made for)",
            ));
        }
    } else {
        return Err(Error::unsupported(format!(
            "ALTER SEQUENCE {}",
            text.split_whitespace().skip(3).collect::<Vec<_>>().join(" ")
        )));
    }
    Ok("ALTER SEQUENCE".into())
}

/// A default that draws from a sequence, written as PostgreSQL shows it
/// (`nextval('public.s'::regclass)`) or with a bare name, in the one form
/// Centum stores: `nextval('<engine name>')`. Serial and identity columns
/// have that form, by which their sequence is known to be theirs.
fn canonical_default(b: &Binder, text: &str) -> Option<String> {
    let e = crate::planner::dml::parse_expr(text).ok()?;
    let ast::Expr::Function(f) = &e else { return None };
    if object_parts(&f.name).ok()?.last().map(String::as_str) != Some("nextval") {
        return None;
    }
    let ast::FunctionArguments::List(list) = &f.args else { return None };
    let [ast::FunctionArg::Unnamed(ast::FunctionArgExpr::Expr(arg))] = list.args.as_slice() else {
        return None;
    };
    let literal = |e: &ast::Expr| match e {
        ast::Expr::Value(v) => match &v.value {
            ast::Value::SingleQuotedString(s) => Some(s.clone()),
            _ => None,
        },
        _ => None,
    };
    let name = match arg {
        ast::Expr::Cast { expr, .. } => literal(expr)?,
        other => literal(other)?,
    };
    let parts = object_parts(&crate::names::sqlparser_object_name(&name).ok()?).ok()?;
    let seq = b.sequence_named(&parts)?;
    Some(format!("nextval('{seq}')"))
}

/// A word token as an identifier (quoted or not, as written).
fn word_ident(w: &sqlparser::tokenizer::Word) -> ast::Ident {
    match w.quote_style {
        Some(q) => ast::Ident::with_quote(q, w.value.clone()),
        None => ast::Ident::new(w.value.clone()),
    }
}

/// ALTER TABLE (or ALTER VIEW) `at`, keeping the views over the table
/// whole (see [`super::views::after_alter`]).
pub(crate) fn alter_table(b: &Binder, at: &ast::AlterTable) -> Result<DdlOutcome> {
    if let Some(v) = super::views::altered_view(b, at)? {
        return super::views::alter_view(b, &v, at);
    }
    let table = b.table_name(&at.name).ok().filter(|t| b.catalog.db().table(t).is_ok());
    let deps = table.as_deref().map(|t| super::views::dependents_before(b, t)).unwrap_or_default();
    let mut out = alter_plain_table(b, at)?;
    if let (Some(t), false) = (&table, deps.is_empty()) {
        super::views::after_alter(b, t, at, &deps, &mut out)?;
    }
    Ok(out)
}

/// A table's `memory_limit` storage parameter: a size (`64MB`, bytes), or
/// `0` / `none` for no limit of its own.
fn memory_limit(v: &str) -> Result<Option<u64>> {
    if v == "none" || v == "0" {
        return Ok(None);
    }
    match centum_engine::memory::parse_size(v) {
        Ok(n) => Ok(Some(n as u64)),
        Err(e) => Err(Error::InvalidParameter(format!("invalid value for parameter \"memory_limit\": {e}"))),
    }
}

/// ALTER TABLE: constraints and primary keys.
fn alter_plain_table(b: &Binder, at: &ast::AlterTable) -> Result<DdlOutcome> {
    // `ALTER TABLE seq OWNER TO ...` also names sequences (pg_dump's form).
    if let [ast::AlterTableOperation::OwnerTo { new_owner }] = at.operations.as_slice() {
        let parts = object_parts(&at.name)?;
        let (kind, name) = match b.sequence_named(&parts) {
            Some(seq) => (ObjectKind::Sequence, seq),
            None => {
                let t = b.table_name(&at.name)?;
                b.catalog.table(&t)?;
                (ObjectKind::Relation, t)
            }
        };
        super::grant::owner_to(b, kind, &name, new_owner)?;
        return Ok(done("ALTER TABLE"));
    }
    let table = match b.table_name(&at.name) {
        Ok(t) => t,
        Err(_) if at.if_exists => return Ok(done("ALTER TABLE")),
        Err(e) => return Err(e),
    };
    let mut notices = Vec::new();
    for op in &at.operations {
        let info = b.catalog.table(&table)?;
        let def = info.table.def();
        let mut bl = Builder {
            table: table.clone(),
            def: def.clone(),
            meta: info.meta.clone(),
            sequences: vec![],
            buckets: None,
            notices: vec![],
        };
        match op {
            ast::AlterTableOperation::AddConstraint { constraint, .. } => {
                let before = bl.def.indexes.len();
                bl.table_constraint(b, constraint)?;
                if let ast::TableConstraint::PrimaryKey(_) = constraint {
                    // The engine cannot change nullability in place: the SQL
                    // layer checks these columns instead.
                    if let Some(ix) = bl.def.indexes.last() {
                        for c in ix.columns.clone() {
                            if let Some(pos) = def.columns.iter().position(|x| x.name == c && x.nullable) {
                                if !bl.meta.not_null.contains(&pos) {
                                    bl.meta.not_null.push(pos);
                                }
                            }
                        }
                    }
                }
                validate_expressions(b, &mut bl)?;
                verify_existing(b, &table, &bl.meta, &info.meta)?;
                for ix in bl.def.indexes[before..].iter().cloned() {
                    build_index(b.catalog.db(), &table, ix)?;
                }
                b.catalog.set_meta(&table, &bl.meta)?;
            }
            ast::AlterTableOperation::DropConstraint { name, if_exists, .. } => {
                let n = ident(name);
                let mut meta = info.meta.clone();
                let before = (meta.checks.len(), meta.foreign_keys.len());
                meta.checks.retain(|c| c.name != n);
                meta.foreign_keys.retain(|f| f.name != n);
                let is_index = meta.primary_key.as_deref() == Some(&n) || meta.unique.contains(&n);
                if is_index {
                    if meta.primary_key.as_deref() == Some(&n) {
                        meta.primary_key = None;
                    }
                    meta.unique.retain(|u| u != &n);
                    meta.index_comments.remove(&n);
                    b.catalog.db().drop_index(&n)?;
                } else if before == (meta.checks.len(), meta.foreign_keys.len()) {
                    if *if_exists {
                        continue;
                    }
                    return Err(Error::UndefinedObject(format!(
                        "constraint \"{n}\" of relation \"{table}\" does not exist"
                    )));
                }
                b.catalog.set_meta(&table, &meta)?;
            }
            ast::AlterTableOperation::AddColumn { column_def, if_not_exists, .. } => {
                add_column(b, &table, column_def, *if_not_exists)?;
            }
            ast::AlterTableOperation::DropColumn { column_names, if_exists, drop_behavior, .. } => {
                let cascade = matches!(drop_behavior, Some(ast::DropBehavior::Cascade));
                for c in column_names {
                    let n = drop_column(b, &table, &ident(c), *if_exists, cascade)?;
                    bl.notices.extend(n);
                }
                notices.append(&mut bl.notices);
            }
            ast::AlterTableOperation::AlterColumn { column_name, op } => {
                alter_column(b, &table, &ident(column_name), op)?;
            }
            ast::AlterTableOperation::EnableTrigger { name } => {
                crate::triggers::set_enabled(b, &table, name, true)?;
            }
            ast::AlterTableOperation::DisableTrigger { name } => {
                crate::triggers::set_enabled(b, &table, name, false)?;
            }
            ast::AlterTableOperation::RenameColumn { old_column_name, new_column_name } => {
                rename_column(b, &table, &ident(old_column_name), &ident(new_column_name))?;
            }
            ast::AlterTableOperation::RenameConstraint { old_name, new_name } => {
                rename_constraint(b, &table, &ident(old_name), &ident(new_name))?;
            }
            ast::AlterTableOperation::RenameTable { table_name } => {
                let (ast::RenameTableNameKind::To(to) | ast::RenameTableNameKind::As(to)) = table_name;
                rename_table(b, &table, to)?;
                // Any further operation names the table by its new name.
                break;
            }
            ast::AlterTableOperation::SetOptionsParens { options } => {
                let mut meta = info.meta.clone();
                for o in options {
                    let ast::SqlOption::KeyValue { key, value } = o else {
                        return Err(Error::Syntax(format!("expected name = value, found {o}")));
                    };
                    let v = value.to_string().trim_matches('\'').to_lowercase();
                    match ident(key).as_str() {
                        "memory_limit" => meta.memory_limit = memory_limit(&v)?,
                        other => notices.push(format!(
                            "storage parameter \"{other}\" is ignored: tables are memory-optimized"
                        )),
                    }
                }
                b.catalog.set_meta(&table, &meta)?;
            }
            other => return Err(Error::unsupported(format!("ALTER TABLE {other}"))),
        }
    }
    b.catalog.invalidate();
    Ok(DdlOutcome { tag: "ALTER TABLE".into(), notices })
}

/// ALTER TABLE ... ALTER COLUMN: defaults and NOT NULL change the SQL
/// facts only (SET NOT NULL after checking the rows); DROP NOT NULL of a
/// column the engine itself keeps NOT NULL, and a change of type, rewrite
/// the table (see [`rewrite`]) with the column converted (by the USING
/// expression if given, else by a cast).
fn alter_column(b: &Binder, table: &str, name: &str, op: &ast::AlterColumnOperation) -> Result<()> {
    use ast::AlterColumnOperation as Op;
    let info = b.catalog.table(table)?;
    let col = info
        .table
        .column_index(name)
        .map_err(|_| Error::UndefinedColumn(format!("\"{name}\" of relation \"{}\"", short(table))))?;
    let column = info.table.columns()[col].clone();
    let mut meta = info.meta.clone();
    let cols = OutputColumn::of_table(info.table.columns());
    let scope = Scope::of(short(table), &cols);
    let mut binder = Binder::new(b.catalog, b.search_path, vec![]);
    match op {
        Op::SetDefault { value } => {
            let t = binder.expr(value, &Ctx::plain(&Scope::default()))?;
            binder.coerce_untyped(t, &Some(column.ty.clone()))?;
            let text = value.to_string();
            meta.columns[col].default = Some(canonical_default(b, &text).unwrap_or(text));
            b.catalog.set_meta(table, &meta)
        }
        Op::DropDefault => {
            meta.columns[col].default = None;
            b.catalog.set_meta(table, &meta)
        }
        Op::SetNotNull => {
            if !column.nullable || meta.not_null.contains(&col) {
                return Ok(());
            }
            meta.not_null.push(col);
            verify_existing(b, table, &meta, &info.meta)?;
            b.catalog.set_meta(table, &meta)
        }
        Op::DropNotNull => {
            let in_pk = meta
                .primary_key
                .as_ref()
                .and_then(|pk| info.table.index(pk).ok())
                .is_some_and(|ix| ix.key_columns().contains(&col));
            if in_pk {
                return Err(Error::other("42P16", format!("column \"{name}\" is in a primary key")));
            }
            if meta.not_null.contains(&col) {
                meta.not_null.retain(|&c| c != col);
                return b.catalog.set_meta(table, &meta);
            }
            if column.nullable {
                return Ok(());
            }
            let mut def = info.table.def();
            def.columns[col].nullable = true;
            rewrite(b, table, &info.meta, def, meta, |old, _| Ok(old.to_vec()))
        }
        Op::SetDataType { data_type: dt, using, .. } => {
            let ty = b.data_type(dt)?;
            let using = match using {
                Some(e) => Some(binder.expr(e, &Ctx::plain(&scope))?.0),
                None if ty == column.ty => return Ok(()),
                None => None,
            };
            let mut def = info.table.def();
            def.columns[col].ty = ty.clone();
            // The hidden key columns of indexes that read the column take
            // the type their expression now has, and are computed again.
            let hidden = hidden_columns_of(&def, &shapes_reading(&meta, name)?);
            let new_scope = Scope::of(short(table), &OutputColumn::of_table(&def.columns));
            let mut keys = Vec::new();
            for h in hidden {
                let Some(g) = &meta.columns[h].generated else { continue };
                let (e, t) = binder.expr(&crate::planner::dml::parse_expr(g)?, &Ctx::plain(&new_scope))?;
                let t = t.unwrap_or(DataType::Text);
                def.columns[h].ty = t.clone();
                keys.push((h, e, t));
            }
            rewrite(b, table, &info.meta, def, meta, |old, cx| {
                let mut row = old.to_vec();
                let v = match &using {
                    Some(e) => crate::execution::eval::eval(e, old, &[], cx)?,
                    None => std::mem::replace(&mut row[col], centum_types::Value::Null),
                };
                row[col] = v.coerce_to(&ty)?;
                for (h, e, t) in &keys {
                    row[*h] = crate::execution::eval::eval(e, &row, &[], cx)?.coerce_to(t)?;
                }
                Ok(row)
            })
        }
        Op::AddGenerated { generated_as, sequence_options } => {
            let m = &meta.columns[col];
            let state = |what: String| {
                Err(Error::other(
                    "55000",
                    format!("column \"{name}\" of relation \"{}\" {what}", short(table)),
                ))
            };
            if m.identity_always.is_some() {
                return state("is already an identity column".into());
            }
            if m.default.is_some() || m.generated.is_some() {
                return state("already has a default value".into());
            }
            if column.nullable && !meta.not_null.contains(&col) {
                return state("must be declared NOT NULL before identity can be added".into());
            }
            // Named as CREATE TABLE names an identity's sequence.
            let seq = format!("{table}_{name}_seq");
            b.catalog.create_sequence(
                &seq,
                seq_def(&column.ty, sequence_options.as_deref().unwrap_or(&[]))?,
                false,
            )?;
            meta.columns[col].default = Some(format!("nextval('{seq}')"));
            meta.columns[col].identity_always =
                Some(!matches!(generated_as, Some(ast::GeneratedAs::ByDefault)));
            let r = b.catalog.set_meta(table, &meta);
            if r.is_err() {
                let _ = b.catalog.drop_sequence(&seq, true);
            }
            r
        }
    }
}

/// ALTER TABLE ... RENAME TO: the table keeps its schema, rows, indexes,
/// sequences and constraints; foreign keys that reference it follow it.
fn rename_table(b: &Binder, table: &str, to: &ast::ObjectName) -> Result<()> {
    let parts = object_parts(to)?;
    let [new_short] = parts.as_slice() else {
        return Err(Error::Syntax("RENAME TO takes a table name without a schema".into()));
    };
    let new = match table.split_once('.') {
        Some((schema, _)) => format!("{schema}.{new_short}"),
        None => new_short.clone(),
    };
    if b.catalog.db().table(&new).is_ok() || b.catalog.has_sequence(&new) {
        return Err(Error::Duplicate {
            code: "42P07",
            message: format!("relation \"{}\" already exists", crate::catalog::display_name(&new)),
        });
    }
    let referencing: Vec<String> =
        b.catalog.table(table)?.referenced_by.iter().map(|(child, _)| child.clone()).collect();
    b.catalog.db().rename_table(table, &new)?;
    b.catalog.republish(table, Some(&new))?;
    b.catalog.invalidate();
    for child in referencing.iter().map(|c| if c == table { new.clone() } else { c.clone() }) {
        let mut meta = b.catalog.table(&child)?.meta.clone();
        for fk in meta.foreign_keys.iter_mut().filter(|f| f.ref_table == table) {
            fk.ref_table = new.clone();
        }
        b.catalog.set_meta(&child, &meta)?;
    }
    Ok(())
}

/// The open block's transaction when the running schema change belongs
/// to it (see [`centum_engine::ddl_scope`]).
fn block_txn<'a>(b: &Binder<'a>) -> Option<&'a centum_engine::Transaction> {
    b.block.filter(|t| centum_engine::ddl_txn() == Some(t.id()))
}

/// New CHECK and FOREIGN KEY constraints must hold for the rows already
/// there.
fn verify_existing(b: &Binder, table: &str, new: &TableMeta, old: &TableMeta) -> Result<()> {
    let added_checks: Vec<&Check> = new.checks.iter().filter(|c| !old.checks.contains(c)).collect();
    let added_fks: Vec<&ForeignKey> =
        new.foreign_keys.iter().filter(|f| !old.foreign_keys.contains(f)).collect();
    let added_not_null: Vec<usize> =
        new.not_null.iter().filter(|c| !old.not_null.contains(c)).copied().collect();
    if added_checks.is_empty() && added_fks.is_empty() && added_not_null.is_empty() {
        return Ok(());
    }
    let db = b.catalog.db();
    // Rows other transactions have not committed would escape the check.
    db.wait_for_writers(table)?;
    let info = b.catalog.table(table)?;
    let cols = OutputColumn::of_table(info.table.columns());
    let scope = Scope::of(short(table), &cols);
    let mut binder = Binder::new(b.catalog, b.search_path, vec![]);
    let mut checks = Vec::new();
    for c in &added_checks {
        checks.push((
            c.name.clone(),
            binder.expr(&crate::planner::dml::parse_expr(&c.expr)?, &Ctx::plain(&scope))?.0,
        ));
    }
    // Inside a block the rows are read as the block sees them: its own
    // uncommitted rows are checked, rows it deleted are not.
    let fresh;
    let txn = match block_txn(b) {
        Some(t) => t,
        None => {
            fresh = db.begin(Isolation::Snapshot)?;
            &fresh
        }
    };
    let currval = Default::default();
    let cx = crate::execution::ExecCtx::new(txn, b.catalog, &[], &currval, None, None);
    for row in txn.scan(&info.table)? {
        let vals = row.values();
        for &c in &added_not_null {
            if vals[c].is_null() {
                return Err(Error::other(
                    "23502",
                    format!(
                        "column \"{}\" of relation \"{table}\" contains null values",
                        info.table.columns()[c].name
                    ),
                ));
            }
        }
        for (name, e) in &checks {
            if let centum_types::Value::Boolean(false) = crate::execution::eval::eval(e, &vals, &[], &cx)? {
                return Err(Error::other(
                    "23514",
                    format!("check constraint \"{name}\" of relation \"{table}\" is violated by some row"),
                ));
            }
        }
        for fk in &added_fks {
            let key: Vec<centum_types::Value> = fk.columns.iter().map(|&c| vals[c].clone()).collect();
            if key.iter().any(|v| v.is_null()) {
                continue;
            }
            let parent = b.catalog.table(&fk.ref_table)?;
            let ix = crate::planner::dml::referenced_index(&parent.table, fk)?;
            if txn.get(&parent.table, &ix, &key)?.is_none() {
                return Err(Error::ForeignKeyViolation {
                    message: format!(
                        "insert or update on table \"{table}\" violates foreign key constraint \"{}\"",
                        fk.name
                    ),
                    detail: None,
                    table: table.to_string(),
                    constraint: fk.name.clone(),
                });
            }
        }
    }
    Ok(())
}

/// What the TRUNCATE triggers of the tables `names` names need, as any
/// trigger's statements need it of the role that fires them (tables that
/// do not exist are left to [`truncate`] to report).
pub(crate) fn truncate_needs(b: &Binder, names: &[ast::TruncateTableTarget]) -> Result<Vec<Need>> {
    for n in names {
        let Ok(t) = b.table_name(&n.name) else { continue };
        let Ok(info) = b.catalog.table(&t) else { continue };
        let triggers = crate::planner::triggers::compile(b.catalog, &info)?;
        b.need_triggers(triggers.as_deref(), crate::triggers::TRUNCATE);
    }
    Ok(b.needs.borrow().clone())
}

/// TRUNCATE: deletes every row of each table, in one transaction.
/// TRUNCATE: deletes every row, in `txn` (the open block's) if given,
/// else in a transaction of its own.
pub(crate) fn truncate(
    b: &Binder,
    names: &[ast::TruncateTableTarget],
    txn: Option<&centum_engine::Transaction>,
) -> Result<DdlOutcome> {
    let mut tables = Vec::new();
    for n in names {
        match b.table_name(&n.name) {
            Ok(t) => tables.push(t),
            Err(e) => match b.view_named(&object_parts(&n.name)?) {
                Some(v) => {
                    return Err(Error::other("42809", format!("\"{}\" is not a table", short(&v.name))))
                }
                None => return Err(e),
            },
        }
    }
    for t in &tables {
        let info = b.catalog.table(t)?;
        for (child, fk) in &info.referenced_by {
            if !tables.contains(child) {
                return Err(Error::other(
                    "0A000",
                    format!("cannot truncate a table referenced in a foreign key constraint\nDETAIL:  Table \"{child}\" references \"{t}\" ({}).", fk.name),
                ));
            }
        }
    }
    let empty = |txn: &centum_engine::Transaction| {
        for t in &tables {
            let table = b.catalog.db().table(t)?;
            let rows: Vec<_> = txn.scan(&table)?.collect();
            for r in rows {
                txn.delete(&r)?;
            }
        }
        Ok(())
    };
    let mut triggers = Vec::new();
    for t in &tables {
        triggers.extend(crate::planner::triggers::compile(b.catalog, &*b.catalog.table(t)?)?);
    }
    // With triggers: BEFORE TRUNCATE for every table, the rows, then
    // AFTER TRUNCATE, all in the one transaction.
    let fired = |txn: &centum_engine::Transaction| -> Result<()> {
        let currval = Default::default();
        let cx = crate::execution::ExecCtx::new(txn, b.catalog, &[], &currval, None, None);
        let mut firings = Vec::new();
        for t in &triggers {
            firings.extend(Firing::start(Some(t), crate::triggers::TRUNCATE, vec![], &cx)?);
        }
        empty(txn)?;
        for f in firings {
            f.finish(&cx)?;
        }
        Ok(())
    };
    match txn {
        Some(txn) if triggers.is_empty() => empty(txn)?,
        Some(txn) => fired(txn)?,
        None if triggers.is_empty() => b.catalog.db().run(Isolation::Snapshot, 3, |txn| empty(txn))?,
        None => {
            let txn = b.catalog.db().begin(Isolation::Snapshot)?;
            match fired(&txn) {
                Ok(()) => txn.commit()?,
                Err(e) => {
                    txn.abort();
                    return Err(e);
                }
            }
        }
    }
    Ok(done("TRUNCATE TABLE"))
}

/// CREATE SCHEMA.
pub(crate) fn create_schema(b: &Binder, name: &ast::SchemaName, if_not_exists: bool) -> Result<DdlOutcome> {
    let n = match name {
        ast::SchemaName::Simple(n) => object_parts(n)?.join("."),
        _ => return Err(Error::unsupported("CREATE SCHEMA AUTHORIZATION")),
    };
    b.catalog.create_schema(&n, if_not_exists)?;
    Ok(done("CREATE SCHEMA"))
}

#[allow(dead_code)]
fn _kinds(_: IndexKind) {}

/// Suffix of the table a column change builds before it replaces the
/// original.
const REWRITE: &str = "$rewrite";

/// Replaces table `name` by one with definition `def` (its indexes are
/// built after the swap) and SQL facts `meta`, its rows computed from the
/// old ones by `map`. The new rows are checked (CHECK, FOREIGN KEY, NOT
/// NULL and new unique keys) before the original is dropped, so a refused
/// change leaves the table as it was.
///
/// Not online: rows committed by other sessions while it copies are lost
/// to the new table. A crash before the swap leaves `name$rewrite`, which
/// the next open drops; a crash between the drop and the rename leaves it
/// alone, which the next open renames back (secondary indexes are then
/// rebuilt by nothing: their definitions are lost).
fn rewrite(
    b: &Binder,
    name: &str,
    old_meta: &TableMeta,
    def: TableDef,
    mut meta: TableMeta,
    map: impl Fn(&[centum_types::Value], &crate::execution::ExecCtx) -> Result<Vec<centum_types::Value>>,
) -> Result<()> {
    let db = b.catalog.db();
    // The comments of indexes the new definition no longer has (on a
    // dropped column) go with them.
    meta.index_comments.retain(|n, _| def.indexes.iter().any(|i| &i.name == n));
    // Writes other transactions have not committed would stay behind in the
    // old table: wait for them first (lock_timeout, statement_timeout).
    db.wait_for_writers(name)?;
    let tmp = format!("{name}{REWRITE}");
    let _ = db.drop_table(&tmp);
    // (Indexes the block has dropped stay in the old table until it
    // commits, but are not in its definition: the new table is built
    // without them.)
    let indexes: Vec<IndexDef> = def.indexes.clone();
    let old_names: Vec<String> = db.table(name)?.def().indexes.into_iter().map(|i| i.name).collect();
    let new_unique: Vec<IndexDef> =
        indexes.iter().filter(|i| i.unique && !old_names.contains(&i.name)).cloned().collect();
    let mut bare = def.clone();
    bare.name = tmp.clone();
    bare.indexes.clear();
    db.create_table(bare.extra(crate::catalog::encode_table_meta(&meta)))?;
    b.catalog.invalidate();
    // Inside a block the copy is the block's: it reads the rows as the
    // block sees them and writes the new ones as its own, so that they
    // commit or roll back with the block's other changes.
    let block = block_txn(b);
    let result = (|| -> Result<()> {
        let old = db.table(name)?;
        let new = db.table(&tmp)?;
        let fresh = if block.is_none() { Some(db.begin(Isolation::Snapshot)?) } else { None };
        let txn = block.or(fresh.as_ref()).expect("a block or a fresh transaction");
        let currval = Default::default();
        let cx = crate::execution::ExecCtx::new(txn, b.catalog, &[], &currval, None, None);
        // Rows go over in primary key order, so that a default computed
        // per row (a serial column added) numbers them predictably.
        let mut rows: Vec<Vec<centum_types::Value>> = txn.scan(&old)?.map(|r| r.values()).collect();
        let pk: Vec<usize> = old_meta
            .primary_key
            .as_ref()
            .and_then(|n| old.index(n).ok())
            .map(|ix| ix.key_columns().to_vec())
            .unwrap_or_default();
        if !pk.is_empty() {
            rows.sort_by(|a, b| {
                pk.iter().map(|&c| a[c].cmp(&b[c])).find(|o| o.is_ne()).unwrap_or(std::cmp::Ordering::Equal)
            });
        }
        for row in rows {
            txn.insert(&new, map(&row, &cx)?)?;
        }
        std::mem::drop(cx);
        if let Some(fresh) = fresh {
            fresh.commit()?;
        }
        verify_existing(b, &tmp, &meta, old_meta)?;
        // New unique keys must hold before the swap. (A block's own rows
        // are not in an index it builds until it relinks them, below.)
        for ix in new_unique.iter().filter(|_| block.is_none()) {
            let mut probe = ix.clone();
            probe.name = format!("{}{REWRITE}", ix.name);
            db.create_index(&tmp, probe.clone()).map_err(|e| match e {
                centum_engine::Error::UniqueViolation { .. } => could_not_create(&ix.name),
                e => e.into(),
            })?;
            db.drop_index(&probe.name)?;
        }
        Ok(())
    })();
    if let Err(e) = result {
        let _ = db.drop_table(&tmp);
        b.catalog.invalidate();
        return Err(e);
    }
    db.drop_table(name)?;
    db.rename_table(&tmp, name)?;
    for ix in indexes {
        db.create_index(name, ix)?;
    }
    b.catalog.invalidate();
    if let Some(txn) = block {
        // The block's rows go into the indexes just built; a duplicate
        // there fails the statement, and the block's abort (or ROLLBACK TO)
        // puts the table back.
        relink_own_writes(txn)?;
    }
    Ok(())
}

/// Builds index `def` on `table`. Rows that break a new unique index
/// give PostgreSQL's error for it, not an insert's.
fn build_index(db: &centum_engine::Database, table: &str, def: centum_engine::IndexDef) -> Result<()> {
    let name = def.name.clone();
    db.create_index(table, def).map_err(|e| match e {
        centum_engine::Error::UniqueViolation { index, .. } if index == name => could_not_create(&name),
        e => e.into(),
    })
}

/// Links the rows block transaction `txn` wrote into indexes built since
/// (see `Transaction::relink_own_writes`). The indexes that had them
/// checked them already, so a duplicate is one a new unique index meets:
/// PostgreSQL's error for building it.
pub(crate) fn relink_own_writes(txn: &centum_engine::Transaction) -> Result<()> {
    txn.relink_own_writes().map_err(|e| match e {
        centum_engine::Error::UniqueViolation { index, .. } => could_not_create(&index),
        e => e.into(),
    })
}

/// PostgreSQL's error for a unique index that existing rows break.
fn could_not_create(index: &str) -> Error {
    Error::other("23505", format!("could not create unique index \"{index}\""))
}

/// Finishes column changes a crash interrupted (see [`rewrite`]).
pub(crate) fn recover_rewrites(db: &centum_engine::Database) -> Result<()> {
    for t in db.table_names() {
        if let Some(base) = t.strip_suffix(REWRITE) {
            if db.table(base).is_ok() {
                db.drop_table(&t)?;
            } else {
                db.rename_table(&t, base)?;
            }
        }
    }
    Ok(())
}

/// ALTER TABLE ... ADD COLUMN.
fn add_column(b: &Binder, table: &str, c: &ast::ColumnDef, if_not_exists: bool) -> Result<()> {
    let info = b.catalog.table(table)?;
    if info.table.column_index(&ident(&c.name)).is_ok() {
        if if_not_exists {
            return Ok(());
        }
        return Err(Error::other(
            "42701",
            format!("column \"{}\" of relation \"{table}\" already exists", ident(&c.name)),
        ));
    }
    let mut bl = Builder {
        table: table.to_string(),
        def: info.table.def(),
        meta: info.meta.clone(),
        sequences: vec![],
        buckets: None,
        notices: vec![],
    };
    let cons = bl.column(b, c)?;
    for (col, opt, name) in cons {
        bl.column_constraint(b, &col, opt, name)?;
    }
    validate_expressions(b, &mut bl)?;
    for (seq, def) in &bl.sequences {
        b.catalog.create_sequence(seq, def.clone(), false)?;
    }
    let cols = OutputColumn::of_table(&bl.def.columns);
    let scope = Scope::of(short(table), &cols);
    let mut binder = Binder::new(b.catalog, b.search_path, vec![]);
    let col = bl.meta.columns.len() - 1;
    let ty = bl.def.columns[col].ty.clone();
    let nullable = bl.def.columns[col].nullable;
    // The new column's value for existing rows: generated, default or NULL
    // (a volatile default is computed per row, as in PostgreSQL).
    let value = match (&bl.meta.columns[col].generated, &bl.meta.columns[col].default) {
        (Some(g), _) => Some(binder.expr(&crate::planner::dml::parse_expr(g)?, &Ctx::plain(&scope))?.0),
        (None, Some(d)) => {
            let t = binder.expr(&crate::planner::dml::parse_expr(d)?, &Ctx::plain(&Scope::default()))?;
            Some(binder.coerce_untyped(t, &Some(ty.clone()))?.0)
        }
        (None, None) => None,
    };
    let old_meta = info.meta.clone();
    rewrite(b, table, &old_meta, bl.def, bl.meta, |old, cx| {
        let mut row = old.to_vec();
        row.push(centum_types::Value::Null);
        if let Some(e) = &value {
            row[col] = crate::execution::eval::eval(e, &row, &[], cx)?.coerce_to(&ty)?;
        }
        if row[col].is_null() && !nullable {
            return Err(Error::other(
                "23502",
                format!("column \"{}\" of relation \"{table}\" contains null values", cols[col].name),
            ));
        }
        Ok(row)
    })
}

/// ALTER TABLE ... DROP COLUMN.
fn drop_column(b: &Binder, table: &str, name: &str, if_exists: bool, cascade: bool) -> Result<Vec<String>> {
    let info = b.catalog.table(table)?;
    let Ok(col) = info.table.column_index(name) else {
        if if_exists {
            return Ok(vec![format!("column \"{name}\" of relation \"{table}\" does not exist, skipping")]);
        }
        return Err(Error::UndefinedColumn(format!("\"{name}\" of relation \"{table}\"")));
    };
    if info.table.columns().len() == 1 {
        return Err(Error::unsupported("a table without columns"));
    }
    // Indexes over expressions that read the column go first, with their
    // hidden columns, as PostgreSQL drops an index with its column.
    let reading = shapes_reading(&info.meta, name)?;
    if !reading.is_empty() {
        drop_shaped(b, table, &reading)?;
        return drop_column(b, table, name, if_exists, cascade);
    }
    let mut notices = Vec::new();
    for (child, fk) in &info.referenced_by {
        if fk.ref_columns.iter().any(|c| c == name) {
            if !cascade {
                return Err(Error::other(
                    "2BP01",
                    format!("cannot drop column {name} of table {table} because other objects depend on it\nDETAIL:  constraint {} on table {child} depends on column {name} of table {table}", fk.name),
                ));
            }
            drop_child_fks(b, child, |f| f.name == fk.name)?;
            notices.push(format!("drop cascades to constraint {} on table {child}", fk.name));
        }
    }
    let mut def = info.table.def();
    def.columns.remove(col);
    def.indexes.retain(|ix| !ix.columns.iter().any(|c| c == name));
    let mut meta = info.meta.clone();
    meta.columns.remove(col);
    // A trigger whose UPDATE OF or WHEN names the column depends on it.
    let mut kept_triggers = Vec::new();
    for t in std::mem::take(&mut meta.triggers) {
        let trigger = crate::triggers::TriggerDef::parse(&t.source)?;
        let in_when = match &trigger.when {
            Some(w) => crate::parser::words(w)?.iter().any(|x| x.eq_ignore_ascii_case(name)),
            None => false,
        };
        if !trigger.columns.iter().any(|c| c == name) && !in_when {
            kept_triggers.push(t);
            continue;
        }
        if !cascade {
            return Err(Error::other(
                "2BP01",
                format!("cannot drop column {name} of table {table} because other objects depend on it\nDETAIL:  trigger {} on table {table} depends on column {name} of table {table}", t.name),
            ));
        }
        notices.push(format!("drop cascades to trigger {} on table {table}", t.name));
    }
    meta.triggers = kept_triggers;
    let shift = |c: usize| if c > col { c - 1 } else { c };
    meta.foreign_keys.retain(|f| !f.columns.contains(&col));
    for f in &mut meta.foreign_keys {
        f.columns = f.columns.iter().map(|&c| shift(c)).collect();
    }
    meta.not_null = meta.not_null.iter().filter(|&&c| c != col).map(|&c| shift(c)).collect();
    let kept: Vec<String> = def.indexes.iter().map(|i| i.name.clone()).collect();
    if meta.primary_key.as_ref().is_some_and(|p| !kept.contains(p)) {
        meta.primary_key = None;
    }
    meta.unique.retain(|u| kept.contains(u));
    // CHECK constraints and generated columns that read the column go too
    // (generated columns refuse: they would lose their meaning).
    let cols = OutputColumn::of_table(&def.columns);
    let scope = Scope::of(short(table), &cols);
    let mut binder = Binder::new(b.catalog, b.search_path, vec![]);
    let mut reads = |text: &str| -> Result<bool> {
        Ok(binder.expr(&crate::planner::dml::parse_expr(text)?, &Ctx::plain(&scope)).is_err())
    };
    for c in &meta.columns {
        if let Some(g) = &c.generated {
            if reads(g)? {
                return Err(Error::other(
                    "2BP01",
                    format!(
                        "cannot drop column {name} of table {table} because a generated column depends on it"
                    ),
                ));
            }
        }
    }
    let mut checks = Vec::new();
    for c in std::mem::take(&mut meta.checks) {
        if reads(&c.expr)? {
            notices.push(format!("drop cascades to constraint {} on table {table}", c.name));
        } else {
            checks.push(c);
        }
    }
    meta.checks = checks;
    let old_meta = info.meta.clone();
    rewrite(b, table, &old_meta, def, meta, |old, _| {
        let mut row = old.to_vec();
        row.remove(col);
        Ok(row)
    })?;
    // A serial or identity column's sequence goes with it, as in PostgreSQL.
    drop_owned_sequences(b, &old_meta.columns[col..=col])?;
    Ok(notices)
}

/// ALTER TABLE ... RENAME COLUMN: the column takes its new name in the
/// table, its indexes, the CHECK, DEFAULT and generation expressions that
/// read it, and the foreign keys of other tables that reference it. The
/// table is rewritten (see [`rewrite`]) under the new definition. A view
/// that reads the column holds the rename back (0A000): views keep their
/// query as text, written with the old name.
fn rename_column(b: &Binder, table: &str, from: &str, to: &str) -> Result<()> {
    let info = b.catalog.table(table)?;
    let Ok(col) = info.table.column_index(from) else {
        return Err(Error::UndefinedColumn(format!("\"{from}\" of relation \"{}\"", short(table))));
    };
    if info.table.column_index(to).is_ok() {
        return Err(Error::Duplicate {
            code: "42701",
            message: format!("column \"{to}\" of relation \"{}\" already exists", short(table)),
        });
    }
    let mut def = info.table.def();
    def.columns[col].name = to.to_string();
    for ix in &mut def.indexes {
        for c in ix.columns.iter_mut().filter(|c| c.as_str() == from) {
            *c = to.to_string();
        }
    }
    let rename = |text: &str| renamed_in_expression(text, short(table), from, to);
    let mut meta = info.meta.clone();
    for c in &mut meta.columns {
        c.default = c.default.as_deref().map(rename).transpose()?;
        c.generated = c.generated.as_deref().map(rename).transpose()?;
    }
    for c in &mut meta.checks {
        c.expr = rename(&c.expr)?;
    }
    for sh in meta.index_shapes.values_mut() {
        for k in &mut sh.keys {
            *k = rename(k)?;
        }
        sh.predicate = sh.predicate.as_deref().map(rename).transpose()?;
    }
    // Triggers name the column in UPDATE OF and as NEW.col / OLD.col in
    // WHEN (their functions' bodies are text, as in PostgreSQL).
    for t in &mut meta.triggers {
        let mut def = crate::triggers::TriggerDef::parse(&t.source)?;
        for c in def.columns.iter_mut().filter(|c| c.as_str() == from) {
            *c = to.to_string();
        }
        if let Some(w) = &def.when {
            let w = renamed_in_expression(w, "new", from, to)?;
            def.when = Some(renamed_in_expression(&w, "old", from, to)?);
        }
        t.source = def.text(table, false);
    }
    let renamed_refs = |fks: &mut Vec<ForeignKey>| {
        for f in fks.iter_mut().filter(|f| f.ref_table == table) {
            for c in f.ref_columns.iter_mut().filter(|c| c.as_str() == from) {
                *c = to.to_string();
            }
        }
    };
    renamed_refs(&mut meta.foreign_keys);
    rewrite(b, table, &info.meta, def, meta, |old, _| Ok(old.to_vec()))?;
    let mut children: Vec<&str> =
        info.referenced_by.iter().map(|(c, _)| c.as_str()).filter(|c| *c != table).collect();
    children.dedup();
    for child in children {
        let mut child_meta = b.catalog.table(child)?.meta.clone();
        renamed_refs(&mut child_meta.foreign_keys);
        b.catalog.set_meta(child, &child_meta)?;
    }
    Ok(())
}

/// ALTER TABLE ... RENAME CONSTRAINT: a CHECK or FOREIGN KEY constraint
/// is renamed in the table's SQL facts; a PRIMARY KEY or UNIQUE
/// constraint is its index, renamed with it (see [`rename_index`]).
fn rename_constraint(b: &Binder, table: &str, from: &str, to: &str) -> Result<()> {
    let mut meta = b.catalog.table(table)?.meta.clone();
    let taken = meta.checks.iter().any(|c| c.name == to)
        || meta.foreign_keys.iter().any(|f| f.name == to)
        || b.catalog.db().index_table(to).is_some();
    if taken {
        return Err(Error::Duplicate {
            code: "42710",
            message: format!("constraint \"{to}\" for relation \"{}\" already exists", short(table)),
        });
    }
    if meta.primary_key.as_deref() == Some(from) || meta.unique.iter().any(|u| u == from) {
        return rename_index(b, from, to);
    }
    let mut found = false;
    for c in meta.checks.iter_mut().filter(|c| c.name == from) {
        c.name = to.to_string();
        found = true;
    }
    for f in meta.foreign_keys.iter_mut().filter(|f| f.name == from) {
        f.name = to.to_string();
        found = true;
    }
    if !found {
        return Err(Error::UndefinedObject(format!(
            "constraint \"{from}\" for table \"{}\" does not exist",
            short(table)
        )));
    }
    b.catalog.set_meta(table, &meta)
}

/// ALTER INDEX ... RENAME TO: the index is built again under its new name
/// and the old one dropped (the engine names an index for its life), and
/// the table's SQL facts follow: the constraint it backs (PRIMARY KEY or
/// UNIQUE, whose name is the index's) and its comment.
pub(crate) fn rename_index(b: &Binder, from: &str, to: &str) -> Result<()> {
    let db = b.catalog.db();
    let Some(table) = db.index_table(from) else {
        return Err(Error::UndefinedTable(from.to_string()));
    };
    if db.index_table(to).is_some() || db.table(to).is_ok() || b.catalog.view(to).is_some() {
        return Err(Error::Duplicate { code: "42P07", message: format!("relation \"{to}\" already exists") });
    }
    let name = table.name();
    let mut def = table
        .def()
        .indexes
        .into_iter()
        .find(|i| i.name == from)
        .ok_or_else(|| Error::UndefinedTable(from.to_string()))?;
    def.name = to.to_string();
    db.create_index(&name, def)?;
    db.drop_index(from)?;
    let mut meta = b.catalog.table(&name)?.meta.clone();
    if meta.primary_key.as_deref() == Some(from) {
        meta.primary_key = Some(to.to_string());
    }
    for u in meta.unique.iter_mut().filter(|u| u.as_str() == from) {
        *u = to.to_string();
    }
    if let Some(c) = meta.index_comments.remove(from) {
        meta.index_comments.insert(to.to_string(), c);
    }
    if let Some(sh) = meta.index_shapes.remove(from) {
        meta.index_shapes.insert(to.to_string(), sh);
    }
    b.catalog.set_meta(&name, &meta)?;
    b.catalog.invalidate();
    Ok(())
}

/// Expression `text` of table `table` with column `from` written `to`,
/// where it stands alone or qualified by the table's name.
fn renamed_in_expression(text: &str, table: &str, from: &str, to: &str) -> Result<String> {
    let mut e = crate::planner::dml::parse_expr(text)?;
    let new_ident = || {
        let plain = crate::names::quote_ident(to) == to;
        if plain {
            ast::Ident::new(to)
        } else {
            ast::Ident::with_quote('"', to)
        }
    };
    let _ = ast::visit_expressions_mut(&mut e, |x| {
        match x {
            ast::Expr::Identifier(id) if ident(id) == from => *id = new_ident(),
            ast::Expr::CompoundIdentifier(parts)
                if parts.len() >= 2
                    && ident(&parts[parts.len() - 1]) == from
                    && ident(&parts[parts.len() - 2]) == table =>
            {
                *parts.last_mut().expect("two parts") = new_ident();
            }
            _ => {}
        }
        std::ops::ControlFlow::<()>::Continue(())
    });
    Ok(e.to_string())
}

/// Drops the sequences that serial or identity `columns` draw from.
fn drop_owned_sequences(b: &Binder, columns: &[ColumnMeta]) -> Result<()> {
    for s in b.catalog.sequence_names() {
        let draws = format!("nextval('{s}')");
        if columns.iter().any(|c| c.default.as_deref() == Some(draws.as_str())) {
            b.catalog.drop_sequence(&s, true)?;
        }
    }
    Ok(())
}

/// `COMMENT ON TABLE | MATERIALIZED VIEW | COLUMN | INDEX name IS 'text' |
/// NULL`. A comment lives in its table's SQL facts (design §12.3), so it
/// goes with the table, the column or the index when they are dropped,
/// follows a renamed table, and belongs to the transaction block it was
/// made in. Other kinds of object are refused (0A000).
pub(crate) fn comment(
    b: &Binder,
    kind: &ast::CommentObject,
    name: &ast::ObjectName,
    text: Option<&str>,
) -> Result<DdlOutcome> {
    use ast::CommentObject as K;
    // An empty comment removes it, as in PostgreSQL.
    let text = text.filter(|t| !t.is_empty()).map(str::to_string);
    match kind {
        K::Table | K::MaterializedView => {
            let table = b.table_name(name)?;
            let materialized = b.catalog.views().iter().any(|v| v.materialized && v.name == table);
            if materialized != (*kind == K::MaterializedView) {
                let what = if materialized { "a table" } else { "a materialized view" };
                return Err(Error::other("42809", format!("\"{}\" is not {what}", short(&table))));
            }
            let mut meta = b.catalog.table(&table)?.meta.clone();
            meta.comment = text;
            b.catalog.set_meta(&table, &meta)?;
        }
        K::Column => {
            let mut t = name.clone();
            let column = match t.0.pop() {
                Some(ast::ObjectNamePart::Identifier(c)) if !t.0.is_empty() => ident(&c),
                _ => return Err(Error::other("42601", format!("column name \"{name}\" must be qualified"))),
            };
            let table = b.table_name(&t)?;
            let info = b.catalog.table(&table)?;
            let col = info.table.column_index(&column).map_err(|_| {
                Error::UndefinedColumn(format!("\"{column}\" of relation \"{}\"", short(&table)))
            })?;
            let mut meta = info.meta.clone();
            meta.columns[col].comment = text;
            b.catalog.set_meta(&table, &meta)?;
        }
        K::Index => {
            let index = object_parts(name)?.last().cloned().unwrap_or_default();
            let Some(t) = b.catalog.db().index_table(&index) else {
                return Err(Error::UndefinedTable(index));
            };
            let table = t.name();
            let mut meta = b.catalog.table(&table)?.meta.clone();
            match text {
                Some(text) => meta.index_comments.insert(index, text),
                None => meta.index_comments.remove(&index),
            };
            b.catalog.set_meta(&table, &meta)?;
        }
        K::View => {
            let parts = object_parts(name)?;
            let v = b.view_named(&parts).ok_or_else(|| Error::UndefinedTable(name.to_string()))?;
            if v.materialized {
                return Err(Error::other("42809", format!("\"{}\" is not a view", short(&v.name))));
            }
            b.catalog.set_comment(ObjectKind::Relation, &v.name, text)?;
        }
        K::Sequence => {
            let parts = object_parts(name)?;
            let seq = b.sequence_named(&parts).ok_or_else(|| Error::UndefinedTable(name.to_string()))?;
            b.catalog.set_comment(ObjectKind::Sequence, &seq, text)?;
        }
        K::Schema => {
            let schema = object_parts(name)?.join(".");
            if !b.catalog.has_schema(&schema) || schema == "pg_catalog" {
                return Err(Error::other("3F000", format!("schema \"{schema}\" does not exist")));
            }
            b.catalog.set_comment(ObjectKind::Schema, &schema, text)?;
        }
        K::Function | K::Procedure => {
            let routine = object_parts(name)?.last().cloned().unwrap_or_default();
            if b.catalog.routine_source(&routine).is_none() {
                return Err(Error::UndefinedFunction(routine));
            }
            b.catalog.set_comment(ObjectKind::Routine, &routine, text)?;
        }
        other => return Err(Error::unsupported(format!("COMMENT ON {other}"))),
    }
    Ok(done("COMMENT"))
}

/// ALTER TYPE ... RENAME VALUE: rewrites each table with a column of enum
/// type `oid` so that its stored values carry the new label (see
/// [`rewrite`]).
pub(crate) fn relabel_tables(b: &Binder, oid: u32) -> Result<()> {
    let Some(entry) = b.catalog.enum_by_oid(oid) else { return Ok(()) };
    let mut by_table: std::collections::BTreeMap<String, Vec<usize>> = Default::default();
    for (t, _, c) in crate::enums::dependent_columns(b.catalog, oid) {
        by_table.entry(t).or_default().push(c);
    }
    for (table, cols) in by_table {
        let info = b.catalog.table(&table)?;
        let def = info.table.def();
        rewrite(b, &table, &info.meta, def, info.meta.clone(), |old, _| {
            Ok(crate::enums::relabel(old, &cols, &entry))
        })?;
    }
    Ok(())
}

/// DROP TYPE ... CASCADE of an enum or composite type: drops the columns that use it
/// first. Returns the notices PostgreSQL gives.
pub(crate) fn drop_type_columns(b: &Binder, columns: &[(String, String)]) -> Result<Vec<String>> {
    let mut notices = Vec::new();
    for (table, column) in columns {
        notices.push(format!("drop cascades to column {column} of table {}", short(table)));
        notices.extend(drop_column(b, table, column, false, true)?);
    }
    Ok(notices)
}
