//! Random SELECTs: FROM lists of tables, derived tables, VALUES,
//! generate_series and catalog tables joined every way; WHERE, GROUP BY
//! with HAVING, DISTINCT (ON), ORDER BY, LIMIT/OFFSET with odd counts; set
//! operations and WITH.

use super::generator::{Gen, ScopeCol};
use super::schema::Ty;

/// Joins, with how often each is drawn.
const JOINS: &[&str] =
    &["JOIN", "INNER JOIN", "LEFT JOIN", "LEFT OUTER JOIN", "RIGHT JOIN", "FULL JOIN", "CROSS JOIN", ","];

impl Gen {
    /// A SELECT with one to five columns of any type; `scalar` asks for at
    /// most one row (LIMIT 1 or an aggregate).
    pub fn select(&mut self, scalar: bool) -> String {
        let n = 1 + self.rng.below(5);
        let tys: Vec<Ty> = (0..n).map(|_| self.any_type_anywhere()).collect();
        self.select_typed(&tys, scalar)
    }

    /// A type, independent of the scope (the FROM list is not chosen yet).
    fn any_type_anywhere(&mut self) -> Ty {
        *self.rng.pick(&Ty::ALL)
    }

    /// A query whose columns have types `tys`: a SELECT, a set operation
    /// of several, or a WITH over one.
    pub fn select_typed(&mut self, tys: &[Ty], scalar: bool) -> String {
        match self.rng.below(12) {
            0 if !scalar => self.set_operation(tys),
            1 if self.nesting < 2 => {
                let name = self.alias();
                let inner_tys: Vec<Ty> =
                    (0..1 + self.rng.below(3)).map(|_| *self.rng.pick(&Ty::ALL)).collect();
                let inner = self.nested(vec![], |g| g.simple_select(&inner_tys, false));
                let cols: Vec<String> = (0..inner_tys.len()).map(|i| format!("w{i}")).collect();
                let scope: Vec<ScopeCol> = inner_tys
                    .iter()
                    .enumerate()
                    .map(|(i, &ty)| ScopeCol { sql: format!("{name}.w{i}"), ty })
                    .collect();
                let body =
                    self.nested(vec![], |g| g.simple_select_from(tys, scalar, Some((name.clone(), scope))));
                format!("WITH {name}({}) AS ({inner}) {body}", cols.join(", "))
            }
            _ => self.simple_select(tys, scalar),
        }
    }

    /// `q UNION [ALL] q INTERSECT q ...` over two to four selects.
    fn set_operation(&mut self, tys: &[Ty]) -> String {
        let n = 2 + self.rng.below(3);
        let mut s = String::new();
        for i in 0..n {
            if i > 0 {
                let op = *self.rng.pick(&[
                    " UNION ",
                    " UNION ALL ",
                    " INTERSECT ",
                    " EXCEPT ",
                    " INTERSECT ALL ",
                    " EXCEPT ALL ",
                ]);
                s.push_str(op);
            }
            let part = self.simple_select_bare(tys);
            if self.rng.chance(0.3) {
                s.push_str(&format!("({part})"));
            } else {
                s.push_str(&part);
            }
        }
        if self.rng.chance(0.5) {
            s.push_str(" ORDER BY 1");
        }
        if self.rng.chance(0.3) {
            s.push_str(&format!(" LIMIT {}", self.limit()));
        }
        s
    }

    /// A SELECT without ORDER BY or LIMIT (a set operation's operand).
    fn simple_select_bare(&mut self, tys: &[Ty]) -> String {
        let (from, scope) = self.sources();
        self.nested(scope, |g| {
            let cols: Vec<String> = tys.iter().map(|&t| g.expr(t, 2)).collect();
            let mut s = format!("SELECT {}", cols.join(", "));
            if !from.is_empty() {
                s.push_str(&format!(" FROM {from}"));
            }
            if g.rng.chance(0.5) {
                s.push_str(&format!(" WHERE {}", g.condition()));
            }
            s
        })
    }

    /// One SELECT ... FROM ... with all its clauses.
    fn simple_select(&mut self, tys: &[Ty], scalar: bool) -> String {
        self.simple_select_from(tys, scalar, None)
    }

    /// A SELECT whose FROM list includes `extra` (a WITH query's name and
    /// columns) when given.
    fn simple_select_from(
        &mut self,
        tys: &[Ty],
        scalar: bool,
        extra: Option<(String, Vec<ScopeCol>)>,
    ) -> String {
        let (mut from, mut scope) = self.sources();
        if let Some((name, cols)) = extra {
            from = if from.is_empty() { name } else { format!("{from} CROSS JOIN {name}") };
            scope.extend(cols);
        }
        self.nested(scope, |g| g.select_body(tys, scalar, &from))
    }

    /// The clauses after FROM, with the FROM list's columns in scope.
    fn select_body(&mut self, tys: &[Ty], scalar: bool, from: &str) -> String {
        let grouped = !self.scope.is_empty() && self.rng.chance(0.25);
        let aggregate_only = !grouped && (scalar && self.rng.chance(0.5) || self.rng.chance(0.08));
        let mut keys = Vec::new();
        if grouped {
            for _ in 0..1 + self.rng.below(3) {
                let c = self.rng.pick(&self.scope).clone();
                keys.push(c);
            }
        }
        let mut items = Vec::new();
        for &t in tys {
            let e = if aggregate_only {
                self.aggregates = true;
                let e = self.aggregate(t);
                self.aggregates = false;
                e
            } else if grouped {
                match keys.iter().find(|k| k.ty == t) {
                    Some(k) if self.rng.chance(0.6) => k.sql.clone(),
                    _ => {
                        self.aggregates = true;
                        let e = if self.rng.chance(0.7) { self.aggregate(t) } else { self.expr(t, 2) };
                        self.aggregates = false;
                        e
                    }
                }
            } else {
                self.expr(t, 3)
            };
            let alias = if self.rng.chance(0.2) { format!(" AS {}", self.alias()) } else { String::new() };
            items.push(format!("{e}{alias}"));
        }
        let distinct = match self.rng.below(20) {
            0 | 1 => "DISTINCT ".to_string(),
            2 if !self.scope.is_empty() => {
                let c = self.rng.pick(&self.scope).sql.clone();
                format!("DISTINCT ON ({c}) ")
            }
            _ => String::new(),
        };
        let mut s = format!("SELECT {distinct}{}", items.join(", "));
        if !from.is_empty() {
            s.push_str(&format!(" FROM {from}"));
        }
        if self.rng.chance(0.6) {
            s.push_str(&format!(" WHERE {}", self.condition()));
        }
        if grouped {
            let k: Vec<&str> = keys.iter().map(|k| k.sql.as_str()).collect();
            s.push_str(&format!(" GROUP BY {}", k.join(", ")));
            if self.rng.chance(0.4) {
                self.aggregates = true;
                let having = if self.rng.chance(0.5) {
                    let t = *self.rng.pick(&[Ty::Int8, Ty::Numeric, Ty::Int4, Ty::Text]);
                    let op = *self.rng.pick(&["=", "<", ">", "<>"]);
                    format!("{} {op} {}", self.aggregate(t), self.expr(t, 1))
                } else {
                    self.boolean(2)
                };
                self.aggregates = false;
                s.push_str(&format!(" HAVING {having}"));
            }
        }
        if self.rng.chance(0.4) {
            s.push_str(&self.order_by(tys.len(), grouped || aggregate_only));
        }
        if scalar && !aggregate_only {
            s.push_str(" LIMIT 1");
        } else if self.rng.chance(0.3) {
            s.push_str(&format!(" LIMIT {}", self.limit()));
            if self.rng.chance(0.3) {
                s.push_str(&format!(" OFFSET {}", self.limit()));
            }
        } else if self.rng.chance(0.05) {
            s.push_str(&format!(" FETCH FIRST {} ROWS ONLY", self.limit()));
        }
        s
    }

    /// ORDER BY output positions (some out of range) or expressions.
    fn order_by(&mut self, outputs: usize, grouped: bool) -> String {
        let n = 1 + self.rng.below(3);
        let mut keys = Vec::new();
        for _ in 0..n {
            let key = if grouped || self.scope.is_empty() || self.rng.chance(0.5) {
                let past_the_end = usize::from(self.rng.chance(0.05));
                format!("{}", 1 + self.rng.below(outputs + past_the_end))
            } else {
                self.any_expr(1).0
            };
            let dir = *self.rng.pick(&["", " ASC", " DESC", " DESC NULLS LAST", " NULLS FIRST"]);
            keys.push(format!("{key}{dir}"));
        }
        format!(" ORDER BY {}", keys.join(", "))
    }

    /// A LIMIT or OFFSET count: small, zero, huge, negative, NULL or ALL.
    pub fn limit(&mut self) -> String {
        match self.rng.below(10) {
            0 => self
                .rng
                .pick(&["0", "-1", "NULL", "ALL", "9223372036854775807", "9223372036854775808", "1.5", "'3'"])
                .to_string(),
            _ => format!("{}", self.rng.below(20)),
        }
    }

    /// A FROM list (empty: no FROM) and the columns it brings into scope.
    pub fn sources(&mut self) -> (String, Vec<ScopeCol>) {
        if self.rng.chance(0.08) {
            return (String::new(), vec![]);
        }
        let (mut from, mut scope) = self.table_ref();
        let joins = match self.rng.below(10) {
            0..=5 => 0,
            6..=8 => 1,
            _ => 2,
        };
        for _ in 0..joins {
            let (item, cols) = self.table_ref();
            let join = *self.rng.pick(JOINS);
            scope.extend(cols);
            from = match join {
                "," => format!("{from}, {item}"),
                "CROSS JOIN" => format!("{from} CROSS JOIN {item}"),
                _ => {
                    let on = self.nested(scope.clone(), |g| g.condition());
                    format!("{from} {join} {item} ON {on}")
                }
            };
        }
        (from, scope)
    }

    /// One FROM item with an alias: a table, a derived table, VALUES,
    /// generate_series or a catalog table.
    fn table_ref(&mut self) -> (String, Vec<ScopeCol>) {
        let alias = self.alias();
        let pick = self.rng.below(20);
        if (pick < 13 || self.nesting >= 2) && !self.schema.tables.is_empty() {
            let t = self.rng.pick(&self.schema.tables).clone();
            let scope =
                t.columns.iter().map(|c| ScopeCol { sql: format!("{alias}.{}", c.name), ty: c.ty }).collect();
            return (format!("{} AS {alias}", t.name), scope);
        }
        match pick {
            13..=15 => {
                let tys: Vec<Ty> = (0..1 + self.rng.below(3)).map(|_| *self.rng.pick(&Ty::ALL)).collect();
                let q = self.nested(vec![], |g| g.select_typed(&tys, false));
                let names: Vec<String> = (0..tys.len()).map(|i| format!("d{i}")).collect();
                let scope = tys
                    .iter()
                    .enumerate()
                    .map(|(i, &ty)| ScopeCol { sql: format!("{alias}.d{i}"), ty })
                    .collect();
                (format!("({q}) AS {alias}({})", names.join(", ")), scope)
            }
            16 | 17 => {
                let tys: Vec<Ty> = (0..1 + self.rng.below(3)).map(|_| *self.rng.pick(&Ty::ALL)).collect();
                let rows: Vec<String> = (0..1 + self.rng.size(20))
                    .map(|_| {
                        let vals: Vec<String> =
                            tys.iter().map(|&t| super::values::literal(&mut self.rng, t)).collect();
                        format!("({})", vals.join(", "))
                    })
                    .collect();
                let names: Vec<String> = (0..tys.len()).map(|i| format!("v{i}")).collect();
                let scope = tys
                    .iter()
                    .enumerate()
                    .map(|(i, &ty)| ScopeCol { sql: format!("{alias}.v{i}"), ty })
                    .collect();
                (format!("(VALUES {}) AS {alias}({})", rows.join(", "), names.join(", ")), scope)
            }
            18 => {
                let (lo, hi) = match self.rng.below(6) {
                    0 => ("-9223372036854775808".to_string(), "-9223372036854775800".to_string()),
                    1 => ("9223372036854775800".to_string(), "9223372036854775807".to_string()),
                    2 => ("10".to_string(), "1".to_string()),
                    _ => ("1".to_string(), format!("{}", self.rng.size(1000))),
                };
                let step = if self.rng.chance(0.2) {
                    format!(", {}", self.rng.pick(&["0", "-1", "2", "9223372036854775807"]))
                } else {
                    String::new()
                };
                let ty = if lo.len() > 10 || hi.len() > 10 { Ty::Int8 } else { Ty::Int4 };
                let scope = vec![ScopeCol { sql: format!("{alias}.g"), ty }];
                (format!("generate_series({lo}, {hi}{step}) AS {alias}(g)"), scope)
            }
            _ => {
                let (name, cols): (&str, &[(&str, Ty)]) = *self.rng.pick(&[
                    ("pg_class", &[("relname", Ty::Text), ("oid", Ty::Int4), ("relkind", Ty::Text)][..]),
                    (
                        "pg_attribute",
                        &[("attname", Ty::Text), ("attrelid", Ty::Int4), ("attnum", Ty::Int2)][..],
                    ),
                    ("pg_index", &[("indexrelid", Ty::Int4), ("indisunique", Ty::Bool)][..]),
                    ("pg_type", &[("typname", Ty::Text), ("oid", Ty::Int4)][..]),
                    (
                        "information_schema.columns",
                        &[("column_name", Ty::Text), ("data_type", Ty::Text), ("ordinal_position", Ty::Int4)]
                            [..],
                    ),
                    ("pg_settings", &[("name", Ty::Text), ("setting", Ty::Text)][..]),
                    (
                        "pg_constraint",
                        &[("conname", Ty::Text), ("conrelid", Ty::Int4), ("contype", Ty::Text)][..],
                    ),
                ]);
                let scope = cols
                    .iter()
                    .map(|&(c, ty)| ScopeCol { sql: format!("{alias}.{c}"), ty })
                    .collect::<Vec<_>>();
                (format!("{name} AS {alias}"), scope)
            }
        }
    }
}
