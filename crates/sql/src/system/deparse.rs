//! Stored expressions (column defaults, generated columns, CHECK
//! constraints) shown the way PostgreSQL shows them.
//!
//! Centum keeps such an expression as the SQL text it was written in.
//! PostgreSQL keeps a parse tree with every type resolved, and prints it
//! back (`pg_get_expr`, `pg_get_constraintdef`, `information_schema`) in
//! a canonical form: constants carry their type (`'x'::text`, `0` for an
//! integer), a text literal read as a typed constant shows that type's
//! output (`'2020-01-01 00:00:00'::timestamp without time zone`), `IN`
//! becomes `= ANY (ARRAY[...])`, `BETWEEN` two comparisons, `LIKE` the
//! `~~` operator, and coercions the parser added show as casts
//! (`v::text` for a `varchar` column compared with text). Migration tools
//! and ORMs compare what they read back with what their models say, so a
//! different spelling looks like a schema change to them.
//!
//! [`show`] reads the text again, resolves the types of columns, constants
//! and operators as PostgreSQL's parser does for the common cases, and
//! prints the result in either of PostgreSQL's styles: plain (every
//! operator in parentheses, `pg_get_expr` and `pg_get_constraintdef(oid)`)
//! or pretty (parentheses only where needed, `pg_get_constraintdef(oid,
//! true)`). Where an expression holds something it does not model, it
//! gives `None` and the caller shows the text as written.

use crate::names::quote_ident;
use crate::planner::bind::is_int;
use centum_types::{DataType, Value};
use sqlparser::ast;

/// How to print.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Style {
    /// PostgreSQL's pretty style: parentheses only where needed.
    pub pretty: bool,
    /// Whether coercions the parser added implicitly show as casts, as in
    /// constraint definitions (`pg_get_expr` hides them).
    pub implicit: bool,
}

/// `text` (an expression over `columns`) as PostgreSQL prints it, coerced
/// to `target` when given (a default, to its column's type); `None` when
/// it holds something this does not model.
pub(crate) fn show(
    text: &str,
    columns: &[centum_engine::Column],
    target: Option<&DataType>,
    style: Style,
) -> Option<String> {
    let dialect = sqlparser::dialect::PostgreSqlDialect {};
    let e = sqlparser::parser::Parser::new(&dialect).try_with_sql(text).ok()?.parse_expr().ok()?;
    let p = Printer { columns, style };
    let s = p.expr(&e)?;
    let s = match target {
        Some(t) => p.coerce(s, t)?,
        None => s,
    };
    s.ty.as_ref()?;
    Some(s.text)
}

/// What kind of node a shown expression is, for parentheses.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Kind {
    /// A column, constant, function call or cast: never parenthesized.
    Simple,
    /// An operator (comparison, arithmetic, IS NULL, ANY).
    Op,
    /// AND.
    And,
    /// OR.
    Or,
    /// NOT.
    Not,
}

/// A literal whose type PostgreSQL decides from its context.
#[derive(Clone, Debug)]
enum Literal {
    /// A quoted string (type `unknown` until coerced).
    Text(String),
    /// A number (`integer`, `bigint` or `numeric`).
    Number,
}

/// An expression as printed, with its type.
#[derive(Clone, Debug)]
struct Shown {
    text: String,
    /// `None`: an untyped literal.
    ty: Option<DataType>,
    kind: Kind,
    literal: Option<Literal>,
}

impl Shown {
    fn simple(text: String, ty: DataType) -> Shown {
        Shown { text, ty: Some(ty), kind: Kind::Simple, literal: None }
    }
}

struct Printer<'a> {
    columns: &'a [centum_engine::Column],
    style: Style,
}

/// The name PostgreSQL labels a constant of `ty` with (no modifiers).
fn label(ty: &DataType) -> String {
    match ty {
        DataType::Varchar(_) => "character varying".into(),
        DataType::Char(_) => "bpchar".into(),
        DataType::Numeric { .. } => "numeric".into(),
        DataType::Array(e) => format!("{}[]", label(e)),
        other => other.sql_name(),
    }
}

/// A string constant as SQL: quoted, quotes doubled.
fn quoted(s: &str) -> String {
    format!("'{}'", s.replace('\'', "''"))
}

/// Where a number type stands in PostgreSQL's implicit promotions.
fn number_rank(ty: &DataType) -> Option<u8> {
    match ty {
        DataType::SmallInt | DataType::Integer | DataType::BigInt => Some(0),
        DataType::Numeric { .. } => Some(1),
        DataType::Double => Some(2),
        _ => None,
    }
}

/// Whether two types are the same apart from modifiers.
fn same_base(a: &DataType, b: &DataType) -> bool {
    std::mem::discriminant(a) == std::mem::discriminant(b)
        && !matches!(a, DataType::Array(_))
        && !matches!(b, DataType::Array(_))
}

/// A constant of type `ty`, as PostgreSQL prints one: bare where it reads
/// back as a constant of that type (a boolean, an `integer` that is not
/// negative, a `numeric` written with a point or an exponent), else
/// quoted with its type (`'-1'::integer`, `'0'::numeric`, `'5'::bigint`).
fn constant(v: &Value, ty: &DataType) -> String {
    let t = v.to_string();
    match v {
        Value::Boolean(b) => return b.to_string(),
        Value::Integer(i) if *i >= 0 => return t,
        Value::Numeric(_) if t.starts_with(|c: char| c.is_ascii_digit()) && t.contains(['.', 'e', 'E']) => {
            return t
        }
        _ => {}
    }
    format!("{}::{}", quoted(&t), label(ty))
}

impl Printer<'_> {
    fn wrap(&self, s: &Shown) -> String {
        if s.kind == Kind::Simple {
            s.text.clone()
        } else {
            format!("({})", s.text)
        }
    }

    /// `s` cast to `to`: shown when the style shows implicit casts.
    fn cast(&self, s: Shown, to: &DataType, explicit: bool) -> Shown {
        if !explicit && !self.style.implicit {
            return Shown { ty: Some(to.clone()), literal: None, ..s };
        }
        let inner = if self.style.pretty && s.kind == Kind::Simple && !s.text.starts_with('-') {
            s.text
        } else {
            format!("({})", s.text)
        };
        Shown::simple(format!("{inner}::{}", label(to)), to.clone())
    }

    /// `s` as a value of type `to`, as PostgreSQL's parser coerces it.
    fn coerce(&self, s: Shown, to: &DataType) -> Option<Shown> {
        match (&s.literal, &s.ty) {
            (Some(Literal::Text(t)), None) => {
                let v = Value::parse(t, &base(to)).ok()?;
                Some(Shown::simple(constant(&v, to), to.clone()))
            }
            (Some(Literal::Number), Some(from)) if !same_base(from, to) => {
                number_rank(to)?;
                Some(self.cast(s, to, false))
            }
            (_, Some(from)) if same_base(from, to) => Some(s),
            (_, Some(from))
                if matches!(from, DataType::Varchar(_) | DataType::Char(_)) && *to == DataType::Text =>
            {
                Some(self.cast(s, to, false))
            }
            (_, Some(from)) if number_rank(from)? < number_rank(to)? => Some(self.cast(s, to, false)),
            _ => None,
        }
    }

    /// The type both sides of a comparison or arithmetic operator take,
    /// and the sides coerced to it.
    fn unify(&self, l: Shown, r: Shown) -> Option<(Shown, Shown, DataType)> {
        let string = |t: &DataType| matches!(t, DataType::Varchar(_) | DataType::Char(_) | DataType::Text);
        match (l.ty.clone(), r.ty.clone()) {
            (None, None) => None,
            (Some(t), None) | (None, Some(t)) if string(&t) => {
                let (l, r) = (self.coerce(l, &DataType::Text)?, self.coerce(r, &DataType::Text)?);
                Some((l, r, DataType::Text))
            }
            (Some(t), None) => Some((l, self.coerce(r, &t)?, t)),
            (None, Some(t)) => Some((self.coerce(l, &t)?, r, t)),
            (Some(a), Some(b)) if string(&a) && string(&b) => {
                if same_base(&a, &b) && a != DataType::Text && !matches!(a, DataType::Varchar(_)) {
                    return Some((l, r, a));
                }
                Some((self.coerce(l, &DataType::Text)?, self.coerce(r, &DataType::Text)?, DataType::Text))
            }
            (Some(a), Some(b)) if is_int(&a) && is_int(&b) => {
                let wider = if matches!(a, DataType::BigInt) || matches!(b, DataType::BigInt) {
                    DataType::BigInt
                } else if matches!(a, DataType::Integer) || matches!(b, DataType::Integer) {
                    DataType::Integer
                } else {
                    DataType::SmallInt
                };
                Some((l, r, wider))
            }
            (Some(a), Some(b)) => match (number_rank(&a), number_rank(&b)) {
                (Some(x), Some(y)) if x < y => Some((self.coerce(l, &b)?, r, b)),
                (Some(x), Some(y)) if x > y => {
                    let r = self.coerce(r, &a)?;
                    Some((l, r, a))
                }
                _ if same_base(&a, &b) => Some((l, r, a)),
                _ => None,
            },
        }
    }

    /// A binary operator over two shown operands.
    fn op(&self, l: &Shown, op: &str, r: &Shown, ty: DataType) -> Shown {
        let side = |s: &Shown| if self.style.pretty { self.wrap(s) } else { s.text.clone() };
        let text = if self.style.pretty {
            format!("{} {op} {}", side(l), side(r))
        } else {
            format!("({} {op} {})", side(l), side(r))
        };
        Shown { text, ty: Some(ty), kind: Kind::Op, literal: None }
    }

    /// AND or OR over operands, flattened as PostgreSQL keeps them.
    fn boolean(&self, items: Vec<Shown>, and: bool) -> Shown {
        let (word, kind) = if and { ("AND", Kind::And) } else { ("OR", Kind::Or) };
        let parts: Vec<String> = items
            .iter()
            .map(|s| {
                let needs = self.style.pretty
                    && matches!((s.kind, and), (Kind::Or, true) | (Kind::And, false) | (Kind::Not, _));
                if needs {
                    format!("({})", s.text)
                } else {
                    s.text.clone()
                }
            })
            .collect();
        let body = parts.join(&format!(" {word} "));
        let text = if self.style.pretty { body } else { format!("({body})") };
        Shown { text, ty: Some(DataType::Boolean), kind, literal: None }
    }

    /// The operands of a chain of one boolean operator.
    fn flatten<'e>(&self, e: &'e ast::Expr, want: &ast::BinaryOperator, out: &mut Vec<&'e ast::Expr>) {
        match e {
            ast::Expr::BinaryOp { left, op, right } if op == want => {
                self.flatten(left, want, out);
                self.flatten(right, want, out);
            }
            ast::Expr::Nested(inner) if matches!(&**inner, ast::Expr::BinaryOp { op, .. } if op == want) => {
                self.flatten(inner, want, out)
            }
            other => out.push(other),
        }
    }

    fn boolean_operand(&self, e: &ast::Expr) -> Option<Shown> {
        let s = self.expr(e)?;
        (s.ty == Some(DataType::Boolean)).then_some(s)
    }

    fn expr(&self, e: &ast::Expr) -> Option<Shown> {
        use ast::BinaryOperator as B;
        Some(match e {
            ast::Expr::Nested(inner) => self.expr(inner)?,
            ast::Expr::Identifier(id) => match self.column(id) {
                Some(c) => c,
                None => keyword_function(&crate::names::ident(id))?,
            },
            ast::Expr::CompoundIdentifier(ids) if ids.len() == 1 => self.column(&ids[0])?,
            ast::Expr::Value(v) => match &v.value {
                ast::Value::SingleQuotedString(s) => Shown {
                    text: quoted(s),
                    ty: None,
                    kind: Kind::Simple,
                    literal: Some(Literal::Text(s.clone())),
                },
                ast::Value::Number(n, _) => number(n)?,
                ast::Value::Boolean(b) => Shown::simple(b.to_string(), DataType::Boolean),
                _ => return None,
            },
            ast::Expr::UnaryOp { op: ast::UnaryOperator::Minus, expr } => match &**expr {
                ast::Expr::Value(v) => match &v.value {
                    ast::Value::Number(n, _) => number(&format!("-{n}"))?,
                    _ => return None,
                },
                _ => return None,
            },
            ast::Expr::UnaryOp { op: ast::UnaryOperator::Not, expr } => {
                let x = self.boolean_operand(expr)?;
                let text = if self.style.pretty {
                    format!("NOT {}", self.wrap(&x))
                } else {
                    format!("(NOT {})", x.text)
                };
                Shown { text, ty: Some(DataType::Boolean), kind: Kind::Not, literal: None }
            }
            ast::Expr::BinaryOp { op: op @ (B::And | B::Or), .. } => {
                let mut items = Vec::new();
                self.flatten(e, op, &mut items);
                let shown = items.into_iter().map(|i| self.boolean_operand(i)).collect::<Option<Vec<_>>>()?;
                self.boolean(shown, *op == B::And)
            }
            ast::Expr::BinaryOp { left, op, right } => {
                let (name, compares) = match op {
                    B::Eq => ("=", true),
                    B::NotEq => ("<>", true),
                    B::Lt => ("<", true),
                    B::LtEq => ("<=", true),
                    B::Gt => (">", true),
                    B::GtEq => (">=", true),
                    B::Plus => ("+", false),
                    B::Minus => ("-", false),
                    B::Multiply => ("*", false),
                    B::Divide => ("/", false),
                    B::Modulo => ("%", false),
                    B::StringConcat => ("||", false),
                    _ => return None,
                };
                let (l, r, ty) = self.unify(self.expr(left)?, self.expr(right)?)?;
                if name == "||" && ty != DataType::Text {
                    return None;
                }
                if !compares && number_rank(&ty).is_none() && name != "||" {
                    return None;
                }
                self.op(&l, name, &r, if compares { DataType::Boolean } else { ty })
            }
            ast::Expr::Like { negated, expr, pattern, escape_char: None, any: false } => {
                self.like(expr, pattern, if *negated { "!~~" } else { "~~" })?
            }
            ast::Expr::ILike { negated, expr, pattern, escape_char: None, any: false } => {
                self.like(expr, pattern, if *negated { "!~~*" } else { "~~*" })?
            }
            ast::Expr::IsNull(x) | ast::Expr::IsNotNull(x) => {
                let x = self.expr(x)?;
                x.ty.as_ref()?;
                let word = if matches!(e, ast::Expr::IsNull(_)) { "IS NULL" } else { "IS NOT NULL" };
                let text = if self.style.pretty {
                    format!("{} {word}", self.wrap(&x))
                } else {
                    format!("({} {word})", x.text)
                };
                Shown { text, ty: Some(DataType::Boolean), kind: Kind::Op, literal: None }
            }
            ast::Expr::Between { expr, negated, low, high } => {
                let (lo, hi) = if *negated { ("<", ">") } else { (">=", "<=") };
                let (a, l, t1) = self.unify(self.expr(expr)?, self.expr(low)?)?;
                let (b, h, t2) = self.unify(self.expr(expr)?, self.expr(high)?)?;
                let first = self.op(&a, lo, &l, DataType::Boolean);
                let second = self.op(&b, hi, &h, DataType::Boolean);
                let _ = (t1, t2);
                self.boolean(vec![first, second], !*negated)
            }
            ast::Expr::InList { expr, list, negated } => self.in_list(expr, list, *negated)?,
            ast::Expr::Cast { expr, data_type, .. } => {
                // The reg* types are names for OIDs, not modelled here.
                if data_type.to_string().to_lowercase().starts_with("reg") {
                    return None;
                }
                let to = crate::names::data_type(data_type).ok()?;
                let x = self.expr(expr)?;
                match (&x.literal, &x.ty) {
                    (Some(Literal::Text(_)), None) => self.coerce(x, &to)?,
                    (_, Some(from)) if same_base(from, &to) && from == &to => x,
                    (_, Some(_)) => self.cast(x, &to, true),
                    _ => return None,
                }
            }
            ast::Expr::Function(f) => self.function(f)?,
            _ => return None,
        })
    }

    fn column(&self, id: &ast::Ident) -> Option<Shown> {
        let name = crate::names::ident(id);
        let c = self.columns.iter().find(|c| c.name == name)?;
        Some(Shown::simple(quote_ident(&c.name), c.ty.clone()))
    }

    fn like(&self, expr: &ast::Expr, pattern: &ast::Expr, op: &str) -> Option<Shown> {
        let x = self.coerce(self.expr(expr)?, &DataType::Text)?;
        let p = self.coerce(self.expr(pattern)?, &DataType::Text)?;
        Some(self.op(&x, op, &p, DataType::Boolean))
    }

    /// `x IN (a, b)`: `x = ANY (ARRAY[a, b])`, the elements of the type
    /// common to them and `x`; a `varchar` column compares as text.
    fn in_list(&self, expr: &ast::Expr, list: &[ast::Expr], negated: bool) -> Option<Shown> {
        let x = self.expr(expr)?;
        let ty = x.ty.clone()?;
        let items = list
            .iter()
            .map(|i| {
                let s = self.expr(i)?;
                match &s.ty {
                    None => self.coerce(s, &ty),
                    Some(t) if same_base(t, &ty) => Some(s),
                    _ => None,
                }
            })
            .collect::<Option<Vec<_>>>()?;
        let array = format!("ARRAY[{}]", items.iter().map(|s| s.text.clone()).collect::<Vec<_>>().join(", "));
        let (x, array) = if matches!(ty, DataType::Varchar(_) | DataType::Char(_)) {
            let x = self.coerce(x, &DataType::Text)?;
            let array = if !self.style.implicit {
                array
            } else if self.style.pretty {
                format!("{array}::text[]")
            } else {
                format!("({array})::text[]")
            };
            (x, array)
        } else {
            (x, array)
        };
        let (op, quant) = if negated { ("<>", "ALL") } else { ("=", "ANY") };
        let left = if self.style.pretty { self.wrap(&x) } else { x.text };
        let body = format!("{left} {op} {quant} ({array})");
        let text = if self.style.pretty { body } else { format!("({body})") };
        Some(Shown { text, ty: Some(DataType::Boolean), kind: Kind::Op, literal: None })
    }

    fn function(&self, f: &ast::Function) -> Option<Shown> {
        if f.over.is_some() || f.filter.is_some() || !f.within_group.is_empty() {
            return None;
        }
        let name = f.name.0.last()?.as_ident()?.value.to_lowercase();
        if f.name.0.len() != 1 {
            return None;
        }
        if matches!(f.args, ast::FunctionArguments::None) {
            return keyword_function(&name);
        }
        let ast::FunctionArguments::List(l) = &f.args else { return None };
        if l.duplicate_treatment.is_some() || !l.clauses.is_empty() {
            return None;
        }
        let mut args = Vec::new();
        for a in &l.args {
            let ast::FunctionArg::Unnamed(ast::FunctionArgExpr::Expr(x)) = a else { return None };
            let s = self.expr(x)?;
            let s = match (&s.literal, &s.ty) {
                // `nextval('s')` reads its argument as a regclass.
                (Some(Literal::Text(t)), None) if name == "nextval" => {
                    Shown::simple(format!("{}::regclass", quoted(t)), DataType::Integer)
                }
                (Some(Literal::Text(_)), None) => self.coerce(s, &DataType::Text)?,
                _ => s,
            };
            args.push(s.text);
        }
        let ty = match name.as_str() {
            "now" | "statement_timestamp" | "transaction_timestamp" | "clock_timestamp" => {
                DataType::TimestampTz
            }
            "nextval" | "currval" => DataType::BigInt,
            "length" | "char_length" | "octet_length" => DataType::Integer,
            "lower" | "upper" | "btrim" | "trim" | "md5" | "concat" => DataType::Text,
            "gen_random_uuid" => DataType::Uuid,
            "random" => DataType::Double,
            _ => return None,
        };
        Some(Shown::simple(format!("{name}({})", args.join(", ")), ty))
    }
}

/// The SQL-standard functions written without parentheses.
fn keyword_function(name: &str) -> Option<Shown> {
    let (text, ty) = match name {
        "current_date" => ("CURRENT_DATE", DataType::Date),
        "current_timestamp" => ("CURRENT_TIMESTAMP", DataType::TimestampTz),
        "localtimestamp" => ("LOCALTIMESTAMP", DataType::Timestamp),
        "localtime" => ("LOCALTIME", DataType::Time),
        "current_user" => ("CURRENT_USER", DataType::Text),
        "session_user" => ("SESSION_USER", DataType::Text),
        _ => return None,
    };
    Some(Shown::simple(text.into(), ty))
}

/// A number literal: `integer` when it fits, then `bigint`, else
/// `numeric` (as PostgreSQL's parser types them).
fn number(n: &str) -> Option<Shown> {
    let (v, ty) = if let Ok(i) = n.parse::<i32>() {
        (Value::Integer(i), DataType::Integer)
    } else if let Ok(i) = n.parse::<i64>() {
        (Value::BigInt(i), DataType::BigInt)
    } else {
        let ty = DataType::Numeric { precision: None, scale: None };
        (Value::parse(n, &ty).ok()?, ty)
    };
    let text = constant(&v, &ty);
    Some(Shown { text, ty: Some(ty), kind: Kind::Simple, literal: Some(Literal::Number) })
}

/// `ty` without the modifiers a constant's value does not take on
/// (`varchar(10)` is checked on assignment, not in the constant).
fn base(ty: &DataType) -> DataType {
    match ty {
        DataType::Varchar(_) => DataType::Varchar(None),
        DataType::Numeric { .. } => DataType::Numeric { precision: None, scale: None },
        other => other.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use centum_engine::Column;

    fn cols() -> Vec<Column> {
        let c = |n: &str, ty: DataType| Column { name: n.into(), ty, nullable: true };
        vec![
            c("i", DataType::Integer),
            c("b", DataType::BigInt),
            c("s", DataType::SmallInt),
            c("n", DataType::Numeric { precision: None, scale: None }),
            c("f", DataType::Double),
            c("t", DataType::Text),
            c("v", DataType::Varchar(Some(10))),
            c("bo", DataType::Boolean),
            c("ts", DataType::TimestampTz),
        ]
    }

    const PRETTY: Style = Style { pretty: true, implicit: true };
    const PLAIN: Style = Style { pretty: false, implicit: true };
    const DEFAULT: Style = Style { pretty: false, implicit: false };

    /// Each case's expected text is what PostgreSQL 15 prints for it.
    #[test]
    fn checks_print_as_postgresql_prints_them() {
        let cases = [
            ("n >= 0", "n >= 0::numeric", "(n >= (0)::numeric)"),
            ("f > 0", "f > 0::double precision", "(f > (0)::double precision)"),
            ("v = 'q' or i = 1", "v::text = 'q'::text OR i = 1", "(((v)::text = 'q'::text) OR (i = 1))"),
            ("not bo", "NOT bo", "(NOT bo)"),
            ("i in (1,2,3)", "i = ANY (ARRAY[1, 2, 3])", "(i = ANY (ARRAY[1, 2, 3]))"),
            ("s > 0", "s > 0", "(s > 0)"),
            (
                "t in ('a','b')",
                "t = ANY (ARRAY['a'::text, 'b'::text])",
                "(t = ANY (ARRAY['a'::text, 'b'::text]))",
            ),
            ("i + 1 > 2 * i", "(i + 1) > (2 * i)", "((i + 1) > (2 * i))"),
            (
                "ts > '2020-01-01'",
                "ts > '2020-01-01 00:00:00+00'::timestamp with time zone",
                "(ts > '2020-01-01 00:00:00+00'::timestamp with time zone)",
            ),
            (
                "v in ('a','b')",
                "v::text = ANY (ARRAY['a'::character varying, 'b'::character varying]::text[])",
                "((v)::text = ANY ((ARRAY['a'::character varying, 'b'::character varying])::text[]))",
            ),
            ("i > 0 and i < 10", "i > 0 AND i < 10", "((i > 0) AND (i < 10))"),
            ("t <> ''", "t <> ''::text", "(t <> ''::text)"),
            ("b between 1 and 9", "b >= 1 AND b <= 9", "((b >= 1) AND (b <= 9))"),
            ("i is not null", "i IS NOT NULL", "(i IS NOT NULL)"),
            ("t like 'a%'", "t ~~ 'a%'::text", "(t ~~ 'a%'::text)"),
            ("length(t) < 5", "length(t) < 5", "(length(t) < 5)"),
            ("n > 1.5", "n > 1.5", "(n > 1.5)"),
        ];
        for (src, pretty, plain) in cases {
            assert_eq!(show(src, &cols(), None, PRETTY).as_deref(), Some(pretty), "{src}");
            assert_eq!(show(src, &cols(), None, PLAIN).as_deref(), Some(plain), "{src}");
        }
    }

    #[test]
    fn defaults_print_as_postgresql_prints_them() {
        let cases = [
            ("0", DataType::Integer, "0"),
            ("-1", DataType::Integer, "'-1'::integer"),
            ("5", DataType::BigInt, "5"),
            ("0", DataType::Numeric { precision: None, scale: None }, "0"),
            ("1.5", DataType::Numeric { precision: Some(10), scale: Some(2) }, "1.5"),
            ("2", DataType::Double, "2"),
            ("'x'", DataType::Text, "'x'::text"),
            ("'y'", DataType::Varchar(Some(10)), "'y'::character varying"),
            ("'true'", DataType::Boolean, "true"),
            ("false", DataType::Boolean, "false"),
            ("'0'", DataType::Integer, "0"),
            ("now()", DataType::TimestampTz, "now()"),
            ("current_date", DataType::Date, "CURRENT_DATE"),
            ("3", DataType::SmallInt, "3"),
            ("'2020-01-01'", DataType::Timestamp, "'2020-01-01 00:00:00'::timestamp without time zone"),
            ("upper('a')", DataType::Text, "upper('a'::text)"),
            ("'it''s'", DataType::Text, "'it''s'::text"),
            ("'0'", DataType::Numeric { precision: Some(8), scale: Some(2) }, "'0'::numeric"),
            ("'1.5'", DataType::Numeric { precision: None, scale: None }, "1.5"),
            ("'-2'", DataType::Numeric { precision: Some(8), scale: Some(2) }, "'-2'::numeric"),
            ("-2", DataType::Numeric { precision: None, scale: None }, "'-2'::integer"),
            ("10000000000", DataType::Numeric { precision: None, scale: None }, "'10000000000'::bigint"),
            ("'5'", DataType::Integer, "5"),
            ("'1'", DataType::Double, "'1'::double precision"),
            ("3", DataType::BigInt, "3"),
            ("'3'", DataType::BigInt, "'3'::bigint"),
        ];
        for (src, ty, want) in cases {
            assert_eq!(show(src, &cols(), Some(&ty), DEFAULT).as_deref(), Some(want), "{src}");
        }
    }

    #[test]
    fn what_it_does_not_model_is_left_to_the_caller() {
        for src in [
            "nextval('public.s'::regclass)",
            "i = any(x)",
            "unknown_fn(1) > 0",
            "t ~ 'a'",
            "nosuchcolumn > 1",
            "'a' = 'b'",
        ] {
            assert_eq!(show(src, &cols(), None, PRETTY), None, "{src}");
        }
    }
}
