//! Parsing: PostgreSQL-dialect SQL text to statements, via `sqlparser`.

use crate::error::{Error, Result};
use sqlparser::ast::Statement;
use sqlparser::dialect::PostgreSqlDialect;
use sqlparser::parser::Parser;

/// Parses `sql` into statements; errors read as PostgreSQL's (42601).
pub fn parse(sql: &str) -> Result<Vec<Statement>> {
    Parser::parse_sql(&PostgreSqlDialect {}, sql).map_err(|e| Error::Syntax(syntax_message(&e.to_string())))
}

/// A 42601 error from a sqlparser message.
pub(crate) fn syntax_error(m: &str) -> Error {
    Error::Syntax(syntax_message(m))
}

/// Rewrites sqlparser's message into PostgreSQL's `syntax error at or near
/// "token"`, keeping the parser's expectation as a hint.
fn syntax_message(m: &str) -> String {
    let m = m.strip_prefix("sql parser error: ").unwrap_or(m);
    if let Some(at) = m.find(", found: ") {
        let rest = &m[at + 9..];
        let token = rest.split(" at Line:").next().unwrap_or(rest).trim();
        if token == "EOF" {
            return "syntax error at end of input".into();
        }
        return format!("syntax error at or near \"{token}\"");
    }
    format!("syntax error: {m}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn syntax_errors_name_the_token() {
        let e = parse("SELEC 1").unwrap_err();
        assert_eq!(e.sqlstate(), "42601");
        assert_eq!(e.to_string(), "syntax error at or near \"SELEC\"");
        let e = parse("SELECT (1").unwrap_err();
        assert_eq!(e.to_string(), "syntax error at end of input");
    }
}
