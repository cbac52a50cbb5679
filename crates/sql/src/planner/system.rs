//! Binding what the virtual catalog adds to the language: catalog
//! functions, `reg*` and `oid` casts, regular-expression operators,
//! `= ANY(array)`, array subscripts and `ARRAY(subquery)`.
//!
//! `'t'::regclass` and the other casts of a constant resolve the name when
//! the statement is planned, as PostgreSQL does (its constant is an OID).
//! A cast of an OID column (`conrelid::regclass`) gives the name as text,
//! which is how clients use it; a cast of other text gives the OID.

use super::bind::{Binder, Ctx, Typed};
use super::expr::{Expr, SubqueryKind};
use crate::error::{Error, Result};
use crate::functions::array_text;
use crate::system::functions::{self as sysfn, CatalogFn};
use centum_types::{DataType, Value};
use sqlparser::ast;

/// The `reg*` and related type names a cast can name.
#[derive(Clone, Copy, PartialEq, Eq)]
enum RegType {
    Oid,
    Class,
    Type,
    Namespace,
    /// `regproc`, `regrole` and friends: there are no such objects to name,
    /// numbers pass through.
    Other,
    /// `"char"`, `int2vector` and `oidvector`: text.
    Text,
}

fn reg_type(dt: &ast::DataType) -> Option<RegType> {
    match dt {
        ast::DataType::Regclass => Some(RegType::Class),
        ast::DataType::Custom(name, _) => {
            let n = crate::names::object_parts(name).ok()?.last()?.clone();
            Some(match n.as_str() {
                "oid" => RegType::Oid,
                "regclass" => RegType::Class,
                "regtype" => RegType::Type,
                "regnamespace" => RegType::Namespace,
                "regproc" | "regprocedure" | "regrole" | "regoper" | "regoperator" | "regconfig" => {
                    RegType::Other
                }
                "char" | "int2vector" | "oidvector" => RegType::Text,
                _ => return None,
            })
        }
        _ => None,
    }
}

impl Binder<'_> {
    /// The search path as an array literal, for functions that need it.
    fn path_arg(&self) -> Expr {
        Expr::Literal(Value::Text(array_text::render(self.search_path)))
    }

    /// Whether a cast to `dt` is one [`Binder::catalog_cast`] binds.
    pub(crate) fn catalog_cast_target(&self, dt: &ast::DataType) -> bool {
        reg_type(dt).is_some()
    }

    /// The OID of the enum or composite type (or array of one) `name`
    /// names, if it does.
    fn user_type_oid(&self, name: &str) -> Result<Option<i32>> {
        let name = name.trim();
        let (base, array) = match name.strip_suffix("[]") {
            Some(b) => (b, true),
            None => (name, false),
        };
        let Ok(parsed) = crate::names::sqlparser_object_name(base) else { return Ok(None) };
        let composite = || {
            let n = crate::names::object_parts(&parsed).ok()?.last()?.clone();
            self.catalog.composite_entry(&n).map(|t| t.oid)
        };
        let found =
            crate::enums::lookup(self.catalog, self.search_path, &parsed)?.map(|e| e.oid).or_else(composite);
        Ok(found.map(|o| o as i32 + i32::from(array)))
    }

    /// A cast to one of the catalog's types, if `dt` is one.
    pub(crate) fn catalog_cast(
        &mut self,
        e: &ast::Expr,
        dt: &ast::DataType,
        ctx: &Ctx,
    ) -> Result<Option<Typed>> {
        let Some(reg) = reg_type(dt) else { return Ok(None) };
        let x = self.expr(e, ctx)?;
        // A constant text search configuration is checked and named now.
        if let (ast::DataType::Custom(name, _), (Expr::Literal(Value::Text(s)), _)) = (dt, &x) {
            if crate::names::object_parts(name)?.last().is_some_and(|n| n == "regconfig") {
                let c = centum_types::tsearch::config::Config::from_name(s)?;
                return Ok(Some((Expr::Literal(Value::Text(c.name().to_string())), Some(DataType::Text))));
            }
        }
        // What the cast gives: an `oid`, or the `integer` the reg* types
        // stand for.
        let int_type = if reg == RegType::Oid { DataType::Oid } else { DataType::Integer };
        let int = Some(int_type.clone());
        if reg == RegType::Text {
            let x = self.coerce_untyped(x, &Some(DataType::Text))?;
            return Ok(Some(match x {
                (e, Some(DataType::Text)) => (e, Some(DataType::Text)),
                (e, _) => (Expr::Cast(Box::new(e), DataType::Text), Some(DataType::Text)),
            }));
        }
        // A constant names its object now.
        if let (Expr::Literal(v), _) = &x {
            let s = match v {
                Value::Null => return Ok(Some((Expr::Literal(Value::Null), int))),
                Value::Text(s) => s.clone(),
                v => v.to_string(),
            };
            let oid = match reg {
                RegType::Class => {
                    let snap = self.catalog.snapshot()?;
                    sysfn::regclass_in(&snap, &s, self.search_path)?
                }
                RegType::Type => match self.user_type_oid(&s)? {
                    Some(oid) => oid,
                    None => sysfn::regtype_in(&s)?,
                },
                RegType::Namespace => sysfn::regnamespace_in(&self.catalog.snapshot()?, &s)?,
                RegType::Oid => match Value::parse(&s, &DataType::Oid)? {
                    Value::Integer(oid) => oid,
                    _ => 0,
                },
                // A routine's name stays the name (the catalog keeps
                // handler names as text).
                RegType::Other if s.trim().parse::<i64>().is_err() => {
                    return Ok(Some((Expr::Literal(Value::Text(s)), Some(DataType::Text))))
                }
                _ => s.trim().parse::<i64>().ok().and_then(|o| i32::try_from(o).ok()).ok_or_else(|| {
                    Error::other("22P02", format!("invalid input syntax for type oid: \"{s}\""))
                })?,
            };
            return Ok(Some((Expr::Literal(Value::Integer(oid)), int)));
        }
        if reg == RegType::Other && matches!(&x.1, Some(t) if t.is_string()) {
            return Ok(Some(x));
        }
        // A parameter of no known type (`$1::regclass`) is a name, as a
        // driver sends it: text, looked up when the statement runs.
        let untyped = x.1.is_none() && !matches!(x.0, Expr::Literal(_));
        let x = if untyped && reg == RegType::Class {
            self.coerce_untyped(x, &Some(DataType::Text))?
        } else {
            self.coerce_untyped(x, &int)?
        };
        // `x::regclass::regclass`: already one.
        if let (Expr::Catalog(CatalogFn::RegclassIn | CatalogFn::RegclassOut, _), _) = &x {
            if reg == RegType::Class {
                return Ok(Some(x));
            }
        }
        // `x::regclass::oid`: back to the OID.
        if let (
            Expr::Catalog(CatalogFn::RegclassOut | CatalogFn::RegtypeOut | CatalogFn::RegnamespaceOut, args),
            _,
        ) = &x
        {
            if reg == RegType::Oid {
                return Ok(Some((args[0].clone(), int)));
            }
        }
        let is_text = matches!(&x.1, Some(t) if t.is_string());
        Ok(Some(match (reg, is_text) {
            (RegType::Class, true) => (Expr::Catalog(CatalogFn::RegclassIn, vec![x.0, self.path_arg()]), int),
            (RegType::Class, false) => {
                (Expr::Catalog(CatalogFn::RegclassOut, vec![x.0, self.path_arg()]), Some(DataType::Text))
            }
            (RegType::Type, false) => (Expr::Catalog(CatalogFn::RegtypeOut, vec![x.0]), Some(DataType::Text)),
            (RegType::Namespace, false) => {
                (Expr::Catalog(CatalogFn::RegnamespaceOut, vec![x.0]), Some(DataType::Text))
            }
            (_, true) | (RegType::Oid | RegType::Other, false) => match x {
                (e, Some(DataType::Integer | DataType::Oid)) => (e, int),
                (e, _) => (Expr::Cast(Box::new(e), int_type), int),
            },
            (RegType::Text, _) => return Ok(None),
        }))
    }

    /// A catalog function call, if `name` is one.
    pub(crate) fn catalog_call(&mut self, name: &str, args: Vec<Typed>) -> Result<Option<Typed>> {
        let Some(sig) = sysfn::resolve(name, args.len()) else { return Ok(None) };
        let sig = sig?;
        let _ = sig.min;
        let mut exprs = Vec::with_capacity(args.len() + 1);
        // The size functions and pg_get_viewdef take a regclass: a quoted
        // name names the relation, as `pg_total_relation_size('t')` does
        // in PostgreSQL.
        let takes_regclass = matches!(sig.func, CatalogFn::Size(0..=2) | CatalogFn::ViewDef);
        for (i, (a, want)) in args.into_iter().zip(&sig.params).enumerate() {
            if let (0, true, (Expr::Literal(Value::Text(s)), None)) = (i, takes_regclass, &a) {
                let oid = sysfn::regclass_in(&self.catalog.snapshot()?, s, self.search_path)?;
                exprs.push(Expr::Literal(Value::Integer(oid)));
                continue;
            }
            let want = Some(want.clone());
            let (e, t) = self.coerce_untyped(a, &want)?;
            exprs.push(match t {
                Some(t) if Some(&t) != want.as_ref() && !(t.is_string() && want == Some(DataType::Text)) => {
                    Expr::Cast(Box::new(e), want.clone().unwrap_or(DataType::Text))
                }
                _ => e,
            });
        }
        if sig.search_path {
            exprs.push(self.path_arg());
        }
        Ok(Some((Expr::Catalog(sig.func, exprs), Some(sig.ret))))
    }

    /// `~`, `~*`, `!~`, `!~*`.
    pub(crate) fn regex(&mut self, l: Typed, r: Typed, ci: bool, negated: bool) -> Result<Typed> {
        let text = Some(DataType::Text);
        let l = self.coerce_untyped(l, &text)?;
        let r = self.coerce_untyped(r, &text)?;
        if let Some(t) = [&l.1, &r.1].into_iter().flatten().find(|t| !t.is_string()) {
            return Err(Error::TypeMismatch {
                code: "42883",
                message: format!("operator does not exist: {} ~ text", t.sql_name()),
            });
        }
        Ok((Expr::Catalog(CatalogFn::Regex(ci, negated), vec![l.0, r.0]), Some(DataType::Boolean)))
    }

    /// `x op ANY/ALL (array)`: over an array typed as one (see
    /// `planner::arrays`), or `x = ANY` over array text.
    pub(crate) fn any_array(
        &mut self,
        left: &ast::Expr,
        op: &ast::BinaryOperator,
        right: &ast::Expr,
        all: bool,
        ctx: &Ctx,
    ) -> Result<Typed> {
        let l = self.expr(left, ctx)?;
        let r = self.expr(right, ctx)?;
        let text_array = matches!(&r.1, Some(t) if t.is_string());
        if !text_array {
            let cmp = super::bind::comparison(op)?;
            if let Some(done) = self.quantified_array(l.clone(), cmp, all, r.clone())? {
                return Ok(done);
            }
        }
        if all || !matches!(op, ast::BinaryOperator::Eq) {
            return Err(Error::unsupported(format!(
                "{op} {} over array text",
                if all { "ALL" } else { "ANY" }
            )));
        }
        let l = self.coerce_untyped(l, &Some(DataType::Text))?;
        let r = self.coerce_untyped(r, &Some(DataType::Text))?;
        Ok((Expr::Catalog(CatalogFn::AnyEq, vec![l.0, r.0]), Some(DataType::Boolean)))
    }

    /// `array[i]`: the element as text, or as the element type of an array
    /// cast (`prattrs::int2[]`).
    pub(crate) fn subscript(
        &mut self,
        root: &ast::Expr,
        chain: &[ast::AccessExpr],
        ctx: &Ctx,
    ) -> Result<Typed> {
        // `t.col[i]` arrives as `t` with the chain `.col`, `[i]`.
        let qualified;
        let (root, chain) = match (root, chain) {
            (ast::Expr::Identifier(t), [ast::AccessExpr::Dot(ast::Expr::Identifier(c)), rest @ ..]) => {
                qualified = ast::Expr::CompoundIdentifier(vec![t.clone(), c.clone()]);
                (&qualified, rest)
            }
            _ => (root, chain),
        };
        let a = self.expr(root, ctx)?;
        let (a, chain) = self.select_fields(a, chain)?;
        if chain.is_empty() {
            return Ok(a);
        }
        if let Some(done) = self.array_subscript(&a, chain, ctx)? {
            return Ok(done);
        }
        let [ast::AccessExpr::Subscript(ast::Subscript::Index { index })] = chain else {
            return Err(Error::unsupported("this kind of subscript or field access"));
        };
        let elem = element_type(root)?;
        let a = self.coerce_untyped(a, &Some(DataType::Text))?;
        let i = self.expr(index, ctx)?;
        let i = self.coerce_untyped(i, &Some(DataType::Integer))?;
        // A catalog column of numbers that is not an array is a vector
        // (`indkey`, `proargtypes`), counted from 0.
        let vector = Expr::Literal(Value::Boolean(elem.is_some()));
        let e = Expr::Catalog(CatalogFn::Subscript, vec![a.0, i.0, vector]);
        Ok(match elem {
            Some(t) if t != DataType::Text => (Expr::Cast(Box::new(e), t.clone()), Some(t)),
            _ => (e, Some(DataType::Text)),
        })
    }

    /// `ARRAY(subquery)`.
    pub(crate) fn array_subquery(&mut self, q: &ast::Query, ctx: &Ctx) -> Result<Typed> {
        let (plan, cols) = self.subquery(q, ctx)?;
        if cols.len() != 1 {
            return Err(Error::Syntax("subquery must return only one column".into()));
        }
        let elem = cols[0].ty.clone().unwrap_or(DataType::Text);
        Ok((Expr::Subquery(Box::new(plan), SubqueryKind::Array), Some(DataType::array_of(elem)?)))
    }
}

/// The element type of an array (arrays being text in Centum): that of a
/// cast to `type[]`, or of a catalog column PostgreSQL declares as an array
/// of numbers (`conkey`, ...); `None` if unknown.
pub(crate) fn element_type(e: &ast::Expr) -> Result<Option<DataType>> {
    Ok(match e {
        ast::Expr::Cast { data_type: ast::DataType::Array(def), .. } => match def {
            ast::ArrayElemTypeDef::AngleBracket(t)
            | ast::ArrayElemTypeDef::SquareBracket(t, _)
            | ast::ArrayElemTypeDef::Parenthesis(t)
            | ast::ArrayElemTypeDef::Qualified(t, _) => Some(crate::names::data_type(t)?),
            ast::ArrayElemTypeDef::None => None,
        },
        ast::Expr::Identifier(c) => crate::system::tables::array_element_type(&crate::names::ident(c)),
        ast::Expr::CompoundIdentifier(ids) => {
            ids.last().and_then(|c| crate::system::tables::array_element_type(&crate::names::ident(c)))
        }
        _ => None,
    })
}

/// `OPERATOR(schema.op)`: the operator it names.
pub(crate) fn custom_operator(parts: &[String]) -> Result<ast::BinaryOperator> {
    use ast::BinaryOperator as B;
    Ok(match parts.last().map(String::as_str) {
        Some("~") => B::PGRegexMatch,
        Some("~*") => B::PGRegexIMatch,
        Some("!~") => B::PGRegexNotMatch,
        Some("!~*") => B::PGRegexNotIMatch,
        Some("=") => B::Eq,
        Some("<>") | Some("!=") => B::NotEq,
        Some("<") => B::Lt,
        Some("<=") => B::LtEq,
        Some(">") => B::Gt,
        Some(">=") => B::GtEq,
        Some("+") => B::Plus,
        Some("-") => B::Minus,
        Some("*") => B::Multiply,
        Some("/") => B::Divide,
        Some("||") => B::StringConcat,
        Some("~~") => B::PGLikeMatch,
        Some("!~~") => B::PGNotLikeMatch,
        _ => {
            return Err(Error::TypeMismatch {
                code: "42883",
                message: format!("operator does not exist: {}", parts.join(".")),
            })
        }
    })
}
