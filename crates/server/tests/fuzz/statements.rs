//! Every statement kind besides the query itself: INSERT (VALUES, SELECT,
//! ON CONFLICT, RETURNING), UPDATE, DELETE, MERGE, TRUNCATE, transaction
//! control, DDL in the middle of a case, EXPLAIN, PREPARE/EXECUTE, and
//! queries heavy enough that only statement_timeout stops them.

use super::generator::{Gen, ScopeCol};
use super::schema::{self, Ty};
use super::values;

impl Gen {
    /// One random statement.
    pub fn statement(&mut self) -> String {
        self.aliases = 0;
        if self.schema.tables.is_empty() {
            return self.select(false);
        }
        let t = self.rng.below(self.schema.tables.len());
        if self.in_block && self.rng.chance(0.3) {
            self.in_block = false;
            return self.rng.pick(&["COMMIT", "ROLLBACK", "END", "ABORT"]).to_string();
        }
        match self.rng.below(100) {
            0..=44 => self.select(false),
            45..=56 => {
                let n = 1 + self.rng.size(200);
                self.insert_values(t, n)
            }
            57..=60 => self.insert_select(t),
            61..=68 => self.update(t),
            69..=74 => self.delete(t),
            75..=77 => self.merge(t),
            78..=83 => self.transaction_control(),
            84..=86 => self.explain(),
            87 | 88 => self.ddl(t),
            89 => format!("TRUNCATE {}", self.schema.tables[t].name),
            90 => self.rng.pick(&["VACUUM", "ANALYZE", "SHOW statement_timeout", "SELECT 1"]).to_string(),
            91 | 92 => self.prepared(),
            93 if self.rng.chance(0.1) => self.heavy(t),
            _ => {
                let ty = *self.rng.pick(&Ty::ALL);
                let e = if self.rng.chance(0.5) { self.chain(ty) } else { self.deep(ty) };
                format!("SELECT {e}")
            }
        }
    }

    /// The columns of table `t` under alias `alias` (or the bare names).
    fn table_scope(&self, t: usize, alias: Option<&str>) -> Vec<ScopeCol> {
        self.schema.tables[t]
            .columns
            .iter()
            .map(|c| ScopeCol {
                sql: match alias {
                    Some(a) => format!("{a}.{}", c.name),
                    None => c.name.clone(),
                },
                ty: c.ty,
            })
            .collect()
    }

    /// A subset of table `t`'s columns in random order (all of them,
    /// unnamed, when `None`).
    fn target_columns(&mut self, t: usize) -> Option<Vec<usize>> {
        let n = self.schema.tables[t].columns.len();
        if self.rng.chance(0.3) {
            return None;
        }
        let mut cols: Vec<usize> = (0..n).filter(|_| self.rng.chance(0.7)).collect();
        if cols.is_empty() {
            cols.push(self.rng.below(n));
        }
        for i in (1..cols.len()).rev() {
            let j = self.rng.below(i + 1);
            cols.swap(i, j);
        }
        Some(cols)
    }

    /// `INSERT INTO t [(cols)] VALUES ...` with `rows` rows of literals
    /// (sometimes expressions or DEFAULT), and ON CONFLICT / RETURNING.
    pub fn insert_values(&mut self, t: usize, rows: usize) -> String {
        let table = self.schema.tables[t].clone();
        let cols = self.target_columns(t);
        let positions: Vec<usize> = cols.clone().unwrap_or_else(|| (0..table.columns.len()).collect());
        let mut tuples = Vec::with_capacity(rows);
        for _ in 0..rows {
            let vals: Vec<String> = positions
                .iter()
                .map(|&i| {
                    let ty = table.columns[i].ty;
                    match self.rng.below(20) {
                        0 => "DEFAULT".to_string(),
                        1 => self.expr(ty, 2),
                        _ => values::literal(&mut self.rng, ty),
                    }
                })
                .collect();
            tuples.push(format!("({})", vals.join(", ")));
        }
        let names = match &cols {
            Some(c) => {
                let n: Vec<&str> = c.iter().map(|&i| table.columns[i].name.as_str()).collect();
                format!(" ({})", n.join(", "))
            }
            None => String::new(),
        };
        let mut s = format!("INSERT INTO {}{names} VALUES {}", table.name, tuples.join(", "));
        s.push_str(&self.on_conflict(t));
        s.push_str(&self.returning(t));
        s
    }

    /// `INSERT INTO t (cols) SELECT ...` from a small query.
    fn insert_select(&mut self, t: usize) -> String {
        let table = self.schema.tables[t].clone();
        let cols = self.target_columns(t).unwrap_or_else(|| (0..table.columns.len()).collect());
        let tys: Vec<Ty> = cols.iter().map(|&i| table.columns[i].ty).collect();
        let names: Vec<&str> = cols.iter().map(|&i| table.columns[i].name.as_str()).collect();
        let mut q = self.select_typed(&tys, false);
        if !q.contains(" LIMIT ") {
            q = format!("SELECT * FROM ({q}) AS src LIMIT {}", self.rng.size(100));
        }
        format!("INSERT INTO {} ({}) {q}{}", table.name, names.join(", "), self.on_conflict(t))
    }

    /// Sometimes an ON CONFLICT clause.
    fn on_conflict(&mut self, t: usize) -> String {
        let table = self.schema.tables[t].clone();
        match self.rng.below(8) {
            0 => " ON CONFLICT DO NOTHING".into(),
            1 if !table.key.is_empty() => {
                let key: Vec<&str> = table.key.iter().map(|&i| table.columns[i].name.as_str()).collect();
                let c = self.rng.pick(&table.columns).clone();
                let mut scope = self.table_scope(t, Some(&table.name));
                scope.extend(self.table_scope(t, Some("excluded")));
                let e = self.nested(scope, |g| g.expr(c.ty, 2));
                format!(" ON CONFLICT ({}) DO UPDATE SET {} = {e}", key.join(", "), c.name)
            }
            _ => String::new(),
        }
    }

    /// Sometimes a RETURNING list.
    fn returning(&mut self, t: usize) -> String {
        if !self.rng.chance(0.2) {
            return String::new();
        }
        if self.rng.chance(0.4) {
            return " RETURNING *".into();
        }
        let scope = self.table_scope(t, None);
        let items =
            self.nested(scope, |g| (0..1 + g.rng.below(3)).map(|_| g.any_expr(2).0).collect::<Vec<_>>());
        format!(" RETURNING {}", items.join(", "))
    }

    /// `UPDATE t SET ... [WHERE ...] [RETURNING ...]`.
    fn update(&mut self, t: usize) -> String {
        let table = self.schema.tables[t].clone();
        let alias = if self.rng.chance(0.3) { Some(self.alias()) } else { None };
        let scope = self.table_scope(t, alias.as_deref());
        let (sets, filter) = self.nested(scope, |g| {
            let sets: Vec<String> = (0..1 + g.rng.below(3))
                .map(|_| {
                    let c = g.rng.pick(&table.columns).clone();
                    let v = if g.rng.chance(0.05) { "DEFAULT".to_string() } else { g.expr(c.ty, 3) };
                    format!("{} = {v}", c.name)
                })
                .collect();
            let filter = if g.rng.chance(0.8) { format!(" WHERE {}", g.condition()) } else { String::new() };
            (sets, filter)
        });
        let target = match &alias {
            Some(a) => format!("{} AS {a}", table.name),
            None => table.name.clone(),
        };
        format!("UPDATE {target} SET {}{filter}{}", sets.join(", "), self.returning(t))
    }

    /// `DELETE FROM t [WHERE ...] [RETURNING ...]`.
    fn delete(&mut self, t: usize) -> String {
        let table = self.schema.tables[t].name.clone();
        let scope = self.table_scope(t, None);
        let filter = self.nested(scope, |g| {
            if g.rng.chance(0.9) {
                format!(" WHERE {}", g.condition())
            } else {
                String::new()
            }
        });
        format!("DELETE FROM {table}{filter}{}", self.returning(t))
    }

    /// `MERGE INTO t USING (query) ON ... WHEN MATCHED ... WHEN NOT
    /// MATCHED ...`.
    fn merge(&mut self, t: usize) -> String {
        let table = self.schema.tables[t].clone();
        let tys: Vec<Ty> = table.columns.iter().map(|c| c.ty).collect();
        let source = self.nested(vec![], |g| g.select_typed(&tys, false));
        let names: Vec<String> = (0..tys.len()).map(|i| format!("s{i}")).collect();
        let mut scope = self.table_scope(t, Some(&table.name));
        scope.extend(tys.iter().enumerate().map(|(i, &ty)| ScopeCol { sql: format!("src.s{i}"), ty }));
        let body = self.nested(scope, |g| {
            let k = g.rng.below(table.columns.len());
            let on = if g.rng.chance(0.7) {
                format!("{}.{} = src.s{k}", table.name, table.columns[k].name)
            } else {
                g.condition()
            };
            let mut s = format!(" ON {on}");
            if g.rng.chance(0.7) {
                let c = g.rng.pick(&table.columns).clone();
                let and = if g.rng.chance(0.3) { format!(" AND {}", g.condition()) } else { String::new() };
                if g.rng.chance(0.3) {
                    s.push_str(&format!(" WHEN MATCHED{and} THEN DELETE"));
                } else {
                    s.push_str(&format!(
                        " WHEN MATCHED{and} THEN UPDATE SET {} = {}",
                        c.name,
                        g.expr(c.ty, 2)
                    ));
                }
            }
            if g.rng.chance(0.7) {
                let vals: Vec<String> = (0..tys.len()).map(|i| format!("src.s{i}")).collect();
                s.push_str(&format!(" WHEN NOT MATCHED THEN INSERT VALUES ({})", vals.join(", ")));
            }
            s
        });
        format!("MERGE INTO {} USING ({source}) AS src({}){body}", table.name, names.join(", "))
    }

    /// BEGIN (ended a few statements later), savepoints, and now and then
    /// an ending or a savepoint where there is no block.
    fn transaction_control(&mut self) -> String {
        if self.in_block || self.rng.chance(0.2) {
            let s = *self.rng.pick(&[
                "SAVEPOINT sp",
                "ROLLBACK TO SAVEPOINT sp",
                "RELEASE SAVEPOINT sp",
                "COMMIT",
                "ROLLBACK",
            ]);
            if !s.contains("SAVEPOINT") {
                self.in_block = false;
            }
            return s.to_string();
        }
        self.in_block = true;
        self.rng
            .pick(&[
                "BEGIN",
                "BEGIN ISOLATION LEVEL SERIALIZABLE",
                "BEGIN ISOLATION LEVEL REPEATABLE READ",
                "BEGIN ISOLATION LEVEL READ COMMITTED",
                "BEGIN READ ONLY",
                "START TRANSACTION",
            ])
            .to_string()
    }

    /// EXPLAIN [ANALYZE] of a query or DML.
    fn explain(&mut self) -> String {
        let analyze = if self.rng.chance(0.3) { "ANALYZE " } else { "" };
        let q = if self.rng.chance(0.7) { self.select(false) } else { self.delete(0) };
        format!("EXPLAIN {analyze}{q}")
    }

    /// DDL in the middle of a case: an index, a column, a constraint.
    fn ddl(&mut self, t: usize) -> String {
        let table = self.schema.tables[t].name.clone();
        match self.rng.below(8) {
            0 | 1 => schema::create_index(&mut self.rng, &mut self.schema, t),
            2 => {
                let n = self.schema.indexes.max(1);
                format!("DROP INDEX IF EXISTS ix{}", self.rng.below(n))
            }
            3 => {
                let scope = self.table_scope(t, None);
                let check = self.nested(scope, |g| g.boolean(2));
                format!("ALTER TABLE {table} ADD CONSTRAINT k{} CHECK ({check})", self.rng.below(1000))
            }
            4 => {
                let c = self.rng.pick(&self.schema.tables[t].columns).name.clone();
                if self.rng.chance(0.5) {
                    format!("CREATE INDEX ON {table} ({c})")
                } else {
                    let what = *self.rng.pick(&["PRIMARY KEY", "UNIQUE"]);
                    format!("ALTER TABLE {table} ADD {what} ({c})")
                }
            }
            5 => {
                let c = self.rng.pick(&self.schema.tables[t].columns).clone();
                let parent = self.rng.pick(&self.schema.tables).name.clone();
                format!("ALTER TABLE {table} ADD FOREIGN KEY ({}) REFERENCES {parent}", c.name)
            }
            6 => {
                let ty = *self.rng.pick(&Ty::ALL);
                let decl = ty.declared(&mut self.rng);
                let default = if self.rng.chance(0.5) {
                    format!(" DEFAULT {}", values::literal(&mut self.rng, ty))
                } else {
                    String::new()
                };
                format!("ALTER TABLE {table} ADD COLUMN x{} {decl}{default}", self.rng.below(1000))
            }
            _ => {
                let c = self.rng.pick(&self.schema.tables[t].columns).name.clone();
                format!("ALTER TABLE {table} DROP COLUMN {c}")
            }
        }
    }

    /// PREPARE of a query with a parameter, or EXECUTE of one.
    fn prepared(&mut self) -> String {
        if self.rng.chance(0.5) {
            let ty = *self.rng.pick(&Ty::ALL);
            let q = self.select(false);
            format!(
                "PREPARE p{} ({}) AS {}",
                self.rng.below(3),
                ty.sql(),
                q.replacen("SELECT ", "SELECT $1, ", 1)
            )
        } else {
            let ty = *self.rng.pick(&Ty::ALL);
            format!("EXECUTE p{}({})", self.rng.below(3), values::literal(&mut self.rng, ty))
        }
    }

    /// A statement that runs far longer than statement_timeout unless the
    /// timeout (or statement_mem) stops it.
    fn heavy(&mut self, t: usize) -> String {
        let table = self.schema.tables[t].clone();
        let c = table.columns[0].clone();
        match self.rng.below(8) {
            0 => {
                let v = values::literal(&mut self.rng, c.ty);
                format!(
                    "INSERT INTO {} ({}) SELECT {v} FROM generate_series(1, 100000000) ON CONFLICT DO NOTHING",
                    table.name, c.name
                )
            }
            1 => format!(
                "UPDATE {} SET {} = {} WHERE (SELECT count(*) FROM generate_series(1, 100000000)) > 0",
                table.name, c.name, c.name
            ),
            2 => "SELECT count(*) FROM generate_series(1, 1000000000)".into(),
            3 => "SELECT count(*) FROM generate_series(1, 100000) a CROSS JOIN generate_series(1, 100000) b".into(),
            4 => "SELECT sum(length(repeat('x', 1000))) FROM generate_series(1, 100000000)".into(),
            5 => "SELECT count(*) FROM generate_series(1, 10000) AS a(x) JOIN generate_series(1, 10000) AS b(y) ON a.x + b.y = 0"
                .into(),
            6 => format!("DELETE FROM {} WHERE (SELECT count(*) FROM generate_series(1, 100000000)) < 0", table.name),
            _ => "SELECT max(g) FROM (SELECT g FROM generate_series(1, 50000000) AS s(g) ORDER BY g DESC) s".into(),
        }
    }
}
