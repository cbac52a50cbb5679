//! Typed random expressions.
//!
//! `expr(ty, depth)` writes an expression meant to have type `ty`, so that
//! most statements get past the binder and reach the executor; `depth`
//! bounds the random tree. Besides that tree, two shapes are drawn on
//! purpose because they stress recursion: long flat chains (`a OR b OR
//! ...`, `1 + 1 + ...`, `s || s || ...`) up to [`Gen::chain_limit`] terms,
//! and deep nesting (parentheses, CASE, calls, casts inside each other) up
//! to [`Gen::depth_limit`] levels.
//!
//! Every type gets the generic forms too: CASE, COALESCE, NULLIF, a cast
//! from another type (often one that fails at run time), a scalar
//! subquery, and with aggregates allowed, aggregate calls.

use super::generator::Gen;
use super::schema::Ty;
use super::values;

/// Fields of EXTRACT, date_part and date_trunc, a few of them invalid.
const FIELDS: &[&str] = &[
    "year",
    "month",
    "day",
    "hour",
    "minute",
    "second",
    "milliseconds",
    "microseconds",
    "epoch",
    "dow",
    "isodow",
    "doy",
    "week",
    "quarter",
    "decade",
    "century",
    "millennium",
    "julian",
    "isoyear",
    "timezone",
    "fortnight",
];

/// Comparison operators.
const COMPARE: &[&str] = &["=", "<>", "!=", "<", "<=", ">", ">="];

impl Gen {
    /// An expression of type `ty`, a random tree at most `depth` deep.
    pub fn expr(&mut self, ty: Ty, depth: u32) -> String {
        if depth == 0 || self.rng.chance(0.25) {
            return self.leaf(ty);
        }
        let d = depth - 1;
        match self.rng.below(24) {
            0 => self.case_expr(ty, d),
            1 => {
                let n = 1 + self.rng.below(4);
                let args: Vec<String> = (0..=n).map(|_| self.expr(ty, d)).collect();
                format!("COALESCE({})", args.join(", "))
            }
            2 => format!("NULLIF({}, {})", self.expr(ty, d), self.expr(ty, d)),
            3 => self.cast_from_other(ty, d),
            4 if self.nesting < 3 => self.scalar_subquery(ty),
            5 if self.aggregates => self.aggregate(ty),
            6 if self.rng.chance(0.05) => self.chain(ty),
            7 if self.rng.chance(0.05) => self.deep(ty),
            8 => format!("({})", self.expr(ty, d)),
            9 if matches!(ty, Ty::Int4 | Ty::Bool | Ty::Text) => self.read_array(ty, d),
            _ => match ty {
                Ty::Int2 | Ty::Int4 | Ty::Int8 | Ty::Numeric | Ty::Double => self.number(ty, d),
                Ty::Text => self.text(d),
                Ty::Bool => self.boolean(d),
                Ty::Date | Ty::Ts | Ty::TsTz => self.time(ty, d),
                Ty::Uuid => self.uuid(d),
                Ty::Bytea => self.bytea(d),
                Ty::IntArray | Ty::TextArray => self.array(ty, d),
            },
        }
    }

    /// An array expression.
    fn array(&mut self, ty: Ty, d: u32) -> String {
        let elem = if ty == Ty::IntArray { Ty::Int4 } else { Ty::Text };
        match self.rng.below(10) {
            0 => format!("{} || {}", self.expr(ty, d), self.expr(ty, d)),
            1 => format!("array_append({}, {})", self.expr(ty, d), self.expr(elem, d)),
            2 => format!("array_remove({}, {})", self.expr(ty, d), self.expr(elem, d)),
            3 => {
                let items: Vec<String> = (0..1 + self.rng.below(4)).map(|_| self.expr(elem, d)).collect();
                format!("ARRAY[{}]", items.join(", "))
            }
            4 => format!("({})[{}:{}]", self.expr(ty, d), self.int_arg(d), self.int_arg(d)),
            5 if ty == Ty::TextArray => {
                format!("string_to_array({}, {})", self.expr(Ty::Text, d), self.expr(Ty::Text, d))
            }
            6 if self.nesting < 3 => {
                let col = self.scope.iter().find(|c| c.ty == elem).map(|c| c.sql.clone());
                match col {
                    Some(c) => format!("ARRAY(SELECT {c} LIMIT 5)"),
                    None => self.leaf(ty),
                }
            }
            _ => self.leaf(ty),
        }
    }

    /// A value of `ty` (integer, boolean or text) read from an array.
    fn read_array(&mut self, ty: Ty, d: u32) -> String {
        let arr = *self.rng.pick(&[Ty::IntArray, Ty::TextArray]);
        let elem = if arr == Ty::IntArray { Ty::Int4 } else { Ty::Text };
        let a = self.expr(arr, d);
        match (ty, self.rng.below(4)) {
            (Ty::Int4, 0) => format!("cardinality({a})"),
            (Ty::Int4, 1) => format!("array_length({a}, {})", self.int_arg(d)),
            (Ty::Int4, 2) => format!("array_position({a}, {})", self.expr(elem, d)),
            (Ty::Int4, _) if arr == Ty::IntArray => format!("({a})[{}]", self.int_arg(d)),
            (Ty::Bool, 0) => format!("{} = ANY({a})", self.expr(elem, d)),
            (Ty::Bool, 1) => format!("{} < ALL({a})", self.expr(elem, d)),
            (Ty::Bool, 2) => format!("{a} @> {}", self.expr(arr, d)),
            (Ty::Bool, _) => format!("{a} && {}", self.expr(arr, d)),
            (Ty::Text, 0) if arr == Ty::TextArray => format!("({a})[{}]", self.int_arg(d)),
            (Ty::Text, _) => format!("array_to_string({a}, {})", self.expr(Ty::Text, d)),
            _ => self.leaf(ty),
        }
    }

    /// An expression of a random type; returns it with the type.
    pub fn any_expr(&mut self, depth: u32) -> (String, Ty) {
        let ty = self.any_type();
        (self.expr(ty, depth), ty)
    }

    /// A type, preferring those of the columns in scope.
    pub fn any_type(&mut self) -> Ty {
        if !self.scope.is_empty() && self.rng.chance(0.7) {
            self.rng.pick(&self.scope).ty
        } else {
            *self.rng.pick(&Ty::ALL)
        }
    }

    /// A column of `ty` in scope, a literal or a NULL.
    pub fn leaf(&mut self, ty: Ty) -> String {
        let columns: Vec<&str> = self.scope.iter().filter(|c| c.ty == ty).map(|c| c.sql.as_str()).collect();
        if !columns.is_empty() && self.rng.chance(0.6) {
            return self.rng.pick(&columns).to_string();
        }
        match self.rng.below(12) {
            0 => format!("NULL::{}", ty.sql()),
            1 => "NULL".into(),
            _ => values::literal(&mut self.rng, ty),
        }
    }

    /// A boolean condition (WHERE, ON, HAVING).
    pub fn condition(&mut self) -> String {
        let depth = 1 + self.rng.below(3) as u32;
        if self.rng.chance(0.1) {
            self.chain(Ty::Bool)
        } else {
            self.boolean(depth)
        }
    }

    /// `CASE WHEN ... THEN ... ELSE ... END`, searched or simple.
    fn case_expr(&mut self, ty: Ty, d: u32) -> String {
        let arms = 1 + self.rng.below(4);
        let mut s = String::from("CASE");
        let operand = if self.rng.chance(0.3) { Some(self.any_expr(d)) } else { None };
        if let Some((e, _)) = &operand {
            s.push_str(&format!(" {e}"));
        }
        for _ in 0..arms {
            let when = match &operand {
                Some((_, t)) => self.expr(*t, d),
                None => self.boolean(d),
            };
            s.push_str(&format!(" WHEN {when} THEN {}", self.expr(ty, d)));
        }
        if self.rng.chance(0.7) {
            s.push_str(&format!(" ELSE {}", self.expr(ty, d)));
        }
        s + " END"
    }

    /// A value of another type cast to `ty`: many of these fail at run
    /// time (text that is not a number, a number out of range).
    fn cast_from_other(&mut self, ty: Ty, d: u32) -> String {
        let from = *self.rng.pick(&Ty::ALL);
        let e = self.expr(from, d);
        let target = ty.declared(&mut self.rng);
        if self.rng.chance(0.5) {
            format!("CAST({e} AS {target})")
        } else {
            format!("({e})::{target}")
        }
    }

    /// `(SELECT ...)` returning one column of `ty`.
    fn scalar_subquery(&mut self, ty: Ty) -> String {
        let q = self.select_typed(&[ty], true);
        format!("({q})")
    }

    /// An aggregate call whose result has type `ty` (or close to it).
    pub fn aggregate(&mut self, ty: Ty) -> String {
        let aggregates = std::mem::replace(&mut self.aggregates, self.rng.chance(0.03));
        let distinct = if self.rng.chance(0.15) { "DISTINCT " } else { "" };
        let call = match ty {
            Ty::Int8 if self.rng.chance(0.5) => {
                if self.rng.chance(0.5) {
                    "count(*)".to_string()
                } else {
                    let (e, _) = self.any_expr(1);
                    format!("count({distinct}{e})")
                }
            }
            Ty::Int8 | Ty::Numeric | Ty::Double if self.rng.chance(0.5) => {
                let arg = *self.rng.pick(&[Ty::Int2, Ty::Int4, Ty::Int8, Ty::Numeric, Ty::Double]);
                let f = self.rng.pick(&["sum", "avg"]).to_string();
                format!("{f}({distinct}{})", self.expr(arg, 1))
            }
            Ty::Bool => {
                let f = self.rng.pick(&["bool_and", "bool_or", "every"]).to_string();
                format!("{f}({})", self.boolean(1))
            }
            Ty::Text if self.rng.chance(0.5) => {
                format!("string_agg({distinct}{}, {})", self.expr(Ty::Text, 1), self.leaf(Ty::Text))
            }
            _ => {
                let f = self.rng.pick(&["min", "max"]).to_string();
                format!("{f}({distinct}{})", self.expr(ty, 1))
            }
        };
        let call =
            if self.rng.chance(0.1) { format!("{call} FILTER (WHERE {})", self.boolean(1)) } else { call };
        self.aggregates = aggregates;
        call
    }

    /// A flat chain of many terms: `AND`/`OR` for booleans, arithmetic for
    /// numbers, `||` for text; other types are compared in an OR chain.
    pub fn chain(&mut self, ty: Ty) -> String {
        let n = 2 + self.rng.size(self.chain_limit());
        let terms: Vec<String> = (0..n)
            .map(|_| match ty {
                Ty::Bool if self.rng.chance(0.7) => {
                    let t = self.any_type();
                    let op = *self.rng.pick(COMPARE);
                    format!("{} {op} {}", self.leaf(t), self.leaf(t))
                }
                _ => self.leaf(ty),
            })
            .collect();
        let mut s = terms[0].clone();
        for t in &terms[1..] {
            let op = match ty {
                Ty::Bool => *self.rng.pick(&[" AND ", " OR "]),
                t if t.is_number() => *self.rng.pick(&[" + ", " - ", " * ", " + ", " - "]),
                Ty::Text => " || ",
                _ => {
                    return format!("{} IN ({})", terms[0], terms[1..].join(", "));
                }
            };
            s.push_str(op);
            s.push_str(t);
        }
        s
    }

    /// Deep nesting: parentheses, unary minus, NOT, calls, CASE and casts
    /// inside each other.
    pub fn deep(&mut self, ty: Ty) -> String {
        let n = 1 + self.rng.size(self.depth_limit());
        let mut s = self.leaf(ty);
        let kind = self.rng.below(5);
        for i in 0..n {
            s = match (kind, ty) {
                (0, _) => format!("({s})"),
                (1, Ty::Bool) => format!("NOT ({s})"),
                (1, t) if t.is_number() => format!("-({s} + {i})"),
                (2, Ty::Text) => format!("lower({s})"),
                (2, t) if t.is_number() => format!("abs({s})"),
                (3, _) => format!("CASE WHEN {} THEN {s} ELSE NULL END", self.leaf(Ty::Bool)),
                (4, _) => format!("COALESCE({s}, {})", self.leaf(ty)),
                _ => format!("({s})"),
            };
        }
        s
    }

    /// A number-valued expression.
    fn number(&mut self, ty: Ty, d: u32) -> String {
        match self.rng.below(20) {
            0..=4 => {
                let op = *self.rng.pick(&["+", "-", "*", "/", "%"]);
                format!("{} {op} {}", self.expr(ty, d), self.expr(ty, d))
            }
            5 => format!("- {}", self.expr(ty, d)),
            6 => {
                let f =
                    self.rng.pick(&["abs", "sign", "ceil", "ceiling", "floor", "round", "trunc"]).to_string();
                format!("{f}({})", self.expr(ty, d))
            }
            7 => format!("round({}, {})", self.expr(ty, d), self.int_arg(d)),
            8 => {
                let f = self.rng.pick(&["mod", "div", "gcd", "lcm", "power", "pow", "log"]).to_string();
                format!("{f}({}, {})", self.expr(ty, d), self.expr(ty, d))
            }
            9 => {
                let f = self.rng.pick(&["sqrt", "cbrt", "exp", "ln", "log", "log10"]).to_string();
                format!("{f}({})", self.expr(ty, d))
            }
            10 => {
                let f = self.rng.pick(&["greatest", "least"]).to_string();
                let args: Vec<String> = (0..1 + self.rng.below(4)).map(|_| self.expr(ty, d)).collect();
                format!("{f}({})", args.join(", "))
            }
            11 => {
                let f = self.rng.pick(&["length", "char_length", "octet_length", "ascii"]).to_string();
                format!("{f}({})", self.expr(Ty::Text, d))
            }
            12 => format!("position({} IN {})", self.expr(Ty::Text, d), self.expr(Ty::Text, d)),
            13 => format!("strpos({}, {})", self.expr(Ty::Text, d), self.expr(Ty::Text, d)),
            14 => {
                let t = *self.rng.pick(&[Ty::Date, Ty::Ts, Ty::TsTz]);
                let field = *self.rng.pick(FIELDS);
                if self.rng.chance(0.5) {
                    format!("extract({field} FROM {})", self.expr(t, d))
                } else {
                    format!("date_part('{field}', {})", self.expr(t, d))
                }
            }
            15 => format!("{} ^ {}", self.expr(ty, d), self.expr(ty, d)),
            16 => self.rng.pick(&["pi()", "random()", "pg_backend_pid()"]).to_string(),
            17 => format!("{} - {}", self.expr(Ty::Date, d), self.expr(Ty::Date, d)),
            18 => {
                let f = self
                    .rng
                    .pick(&["pg_table_size", "pg_indexes_size", "pg_total_relation_size", "array_length"])
                    .to_string();
                if f == "array_length" {
                    format!("array_length({}, {})", self.expr(Ty::Text, d), self.int_arg(d))
                } else {
                    format!("{f}({})", self.catalog_oid(d))
                }
            }
            _ => format!("{}::{}", self.expr(ty, d), ty.declared(&mut self.rng)),
        }
    }

    /// A smallint or integer argument (a count, a position, a field).
    fn int_arg(&mut self, d: u32) -> String {
        let ty = *self.rng.pick(&[Ty::Int2, Ty::Int4]);
        self.expr(ty, d)
    }

    /// An OID argument: a table's name cast to regclass, or any integer.
    fn catalog_oid(&mut self, d: u32) -> String {
        if !self.schema.tables.is_empty() && self.rng.chance(0.6) {
            let t = self.rng.pick(&self.schema.tables).name.clone();
            format!("'{t}'::regclass")
        } else {
            self.expr(Ty::Int4, d)
        }
    }

    /// A text-valued expression.
    fn text(&mut self, d: u32) -> String {
        match self.rng.below(22) {
            0..=2 => format!("{} || {}", self.expr(Ty::Text, d), self.expr(Ty::Text, d)),
            3 => {
                let args: Vec<String> = (0..1 + self.rng.below(4)).map(|_| self.any_expr(d).0).collect();
                format!("concat({})", args.join(", "))
            }
            4 => {
                let args: Vec<String> = (0..1 + self.rng.below(4)).map(|_| self.any_expr(d).0).collect();
                format!("concat_ws({}, {})", self.expr(Ty::Text, d), args.join(", "))
            }
            5 => {
                let f = self
                    .rng
                    .pick(&[
                        "lower",
                        "upper",
                        "initcap",
                        "reverse",
                        "md5",
                        "trim",
                        "btrim",
                        "ltrim",
                        "rtrim",
                        "quote_ident",
                    ])
                    .to_string();
                format!("{f}({})", self.expr(Ty::Text, d))
            }
            6 => format!("substr({}, {}, {})", self.expr(Ty::Text, d), self.int_arg(d), self.int_arg(d)),
            7 => format!(
                "substring({} FROM {} FOR {})",
                self.expr(Ty::Text, d),
                self.int_arg(d),
                self.int_arg(d)
            ),
            8 => format!(
                "replace({}, {}, {})",
                self.expr(Ty::Text, d),
                self.expr(Ty::Text, d),
                self.expr(Ty::Text, d)
            ),
            9 => {
                let f = self.rng.pick(&["lpad", "rpad"]).to_string();
                format!("{f}({}, {}, {})", self.expr(Ty::Text, d), self.int_arg(d), self.expr(Ty::Text, d))
            }
            10 => {
                let f = self.rng.pick(&["left", "right", "repeat"]).to_string();
                format!("{f}({}, {})", self.expr(Ty::Text, d), self.int_arg(d))
            }
            11 => format!(
                "split_part({}, {}, {})",
                self.expr(Ty::Text, d),
                self.expr(Ty::Text, d),
                self.int_arg(d)
            ),
            12 => format!("chr({})", self.int_arg(d)),
            13 => format!("to_hex({})", self.expr(Ty::Int8, d)),
            14 => {
                let (e, _) = self.any_expr(d);
                format!("({e})::text")
            }
            15 => self
                .rng
                .pick(&[
                    "version()",
                    "current_user",
                    "session_user",
                    "current_database()",
                    "current_schema()",
                    "current_setting('statement_timeout')",
                    "current_setting('no.such_setting', true)",
                    "current_schemas(true)",
                ])
                .to_string(),
            16 => format!("pg_size_pretty({})", self.expr(Ty::Int8, d)),
            17 => format!(
                "array_to_string({}, {}, {})",
                self.expr(Ty::Text, d),
                self.expr(Ty::Text, d),
                self.expr(Ty::Text, d)
            ),
            18 => {
                let f = self.rng.pick(&["format_type", "col_description"]).to_string();
                format!("{f}({}, {})", self.catalog_oid(d), self.int_arg(d))
            }
            19 => {
                let f = self
                    .rng
                    .pick(&[
                        "pg_get_userbyid",
                        "pg_encoding_to_char",
                        "pg_get_indexdef",
                        "pg_get_constraintdef",
                    ])
                    .to_string();
                format!("{f}({})", self.catalog_oid(d))
            }
            20 => format!("md5({})", self.expr(Ty::Bytea, d)),
            _ => format!("trim(both {} from {})", self.expr(Ty::Text, d), self.expr(Ty::Text, d)),
        }
    }

    /// A boolean expression.
    pub fn boolean(&mut self, d: u32) -> String {
        match self.rng.below(24) {
            0..=4 => {
                let t = self.any_type();
                let op = *self.rng.pick(COMPARE);
                format!("{} {op} {}", self.expr(t, d), self.expr(t, d))
            }
            5 | 6 => {
                let op = *self.rng.pick(&["AND", "OR"]);
                format!("({} {op} {})", self.expr(Ty::Bool, d), self.expr(Ty::Bool, d))
            }
            7 => format!("NOT {}", self.expr(Ty::Bool, d)),
            8 => {
                let (e, _) = self.any_expr(d);
                format!("{e} IS {}NULL", self.not())
            }
            9 => {
                let t = self.any_type();
                format!("{} IS {}DISTINCT FROM {}", self.expr(t, d), self.not(), self.expr(t, d))
            }
            10 => {
                let t = self.any_type();
                let sym = if self.rng.chance(0.02) { "SYMMETRIC " } else { "" };
                format!(
                    "{} {}BETWEEN {sym}{} AND {}",
                    self.expr(t, d),
                    self.not(),
                    self.expr(t, d),
                    self.expr(t, d)
                )
            }
            11 => {
                let t = self.any_type();
                let max = if self.rng.chance(0.1) { self.chain_limit() } else { 5 };
                let n = 1 + self.rng.size(max);
                let list: Vec<String> = (0..n).map(|_| self.expr(t, d.min(1))).collect();
                format!("{} {}IN ({})", self.expr(t, d), self.not(), list.join(", "))
            }
            12 if self.nesting < 3 => {
                let t = self.any_type();
                let q = self.select_typed(&[t], false);
                format!("{} {}IN ({q})", self.expr(t, d), self.not())
            }
            13 if self.nesting < 3 => {
                let q = self.select(false);
                format!("{}EXISTS ({q})", self.not())
            }
            14 if self.nesting < 3 => {
                let t = self.any_type();
                let q = self.select_typed(&[t], false);
                let op = *self.rng.pick(COMPARE);
                let quantifier = *self.rng.pick(&["ANY", "ALL", "SOME"]);
                format!("{} {op} {quantifier} ({q})", self.expr(t, d))
            }
            15 => {
                let op = *self.rng.pick(&["LIKE", "ILIKE", "NOT LIKE", "NOT ILIKE", "~", "~*", "!~", "!~*"]);
                format!("{} {op} {}", self.expr(Ty::Text, d), self.expr(Ty::Text, d))
            }
            16 => format!("starts_with({}, {})", self.expr(Ty::Text, d), self.expr(Ty::Text, d)),
            17 => {
                let what = *self.rng.pick(&["TRUE", "FALSE", "UNKNOWN"]);
                format!("{} IS {}{what}", self.expr(Ty::Bool, d), self.not())
            }
            18 => format!("pg_table_is_visible({})", self.catalog_oid(d)),
            _ => self.leaf(Ty::Bool),
        }
    }

    /// `NOT ` or nothing.
    fn not(&mut self) -> &'static str {
        if self.rng.chance(0.3) {
            "NOT "
        } else {
            ""
        }
    }

    /// A date or timestamp expression of type `ty`.
    fn time(&mut self, ty: Ty, d: u32) -> String {
        match (self.rng.below(10), ty) {
            (0, _) => self
                .rng
                .pick(&[
                    "now()",
                    "current_timestamp",
                    "current_date",
                    "localtimestamp",
                    "statement_timestamp()",
                    "clock_timestamp()",
                    "transaction_timestamp()",
                    "current_timestamp(3)",
                ])
                .to_string(),
            (1, Ty::Date) => {
                format!("make_date({}, {}, {})", self.int_arg(d), self.int_arg(d), self.int_arg(d))
            }
            (1, _) => format!(
                "make_timestamp({}, {}, {}, {}, {}, {})",
                self.int_arg(d),
                self.int_arg(d),
                self.int_arg(d),
                self.int_arg(d),
                self.int_arg(d),
                self.expr(Ty::Double, d)
            ),
            (2, _) => {
                let field = *self.rng.pick(FIELDS);
                format!("date_trunc('{field}', {})", self.expr(ty, d))
            }
            (3, _) => format!("to_timestamp({})", self.expr(Ty::Double, d)),
            (4, Ty::Date) => {
                let op = *self.rng.pick(&["+", "-"]);
                format!("{} {op} {}", self.expr(Ty::Date, d), self.expr(Ty::Int4, d))
            }
            (5, _) => {
                let from = *self.rng.pick(&[Ty::Date, Ty::Ts, Ty::TsTz, Ty::Text]);
                format!("({})::{}", self.expr(from, d), ty.sql())
            }
            _ => self.leaf(ty),
        }
    }

    /// A uuid expression.
    fn uuid(&mut self, d: u32) -> String {
        match self.rng.below(4) {
            0 => "gen_random_uuid()".into(),
            1 => format!("({})::uuid", self.expr(Ty::Text, d)),
            _ => self.leaf(Ty::Uuid),
        }
    }

    /// A bytea expression.
    fn bytea(&mut self, d: u32) -> String {
        match self.rng.below(4) {
            0 => format!("{} || {}", self.expr(Ty::Bytea, d), self.expr(Ty::Bytea, d)),
            1 => format!("({})::bytea", self.expr(Ty::Text, d)),
            _ => self.leaf(Ty::Bytea),
        }
    }
}
