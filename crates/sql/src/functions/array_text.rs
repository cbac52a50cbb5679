//! Arrays as text: PostgreSQL's array literal, written and read.
//!
//! Array functions read array values given as text with it, routines read
//! their array arguments with it, and the virtual catalog writes its
//! array columns with it. The catalog columns PostgreSQL declares as arrays (`conkey`,
//! `reloptions`, `datacl`, ...) hold arrays written in PostgreSQL's text
//! form, `{a,b,"c d",NULL}`, and the catalog functions psql calls read
//! them so; a cast (`conkey::int2[]`) makes a real array of one.
//! `int2vector` columns (`indkey`) use their own form, `1 2`.

use crate::error::Result;

/// Renders elements as an array literal.
pub(crate) fn render(items: &[String]) -> String {
    centum_types::array::render_literal(items.iter().map(|s| Some(s.as_str())))
}

/// Renders elements (`None`: NULL) as an array literal.
pub(crate) fn render_opt(items: &[Option<&str>]) -> String {
    centum_types::array::render_literal(items.iter().copied())
}

/// Parses a one-dimensional array literal (`{a,"b c",NULL}`); an
/// `int2vector`'s `1 2` form is accepted too.
pub(crate) fn parse(s: &str) -> Result<Vec<Option<String>>> {
    let t = s.trim();
    if !t.starts_with('{') && !t.is_empty() && t.split_whitespace().all(|p| p.parse::<i64>().is_ok()) {
        return Ok(t.split_whitespace().map(|p| Some(p.to_string())).collect());
    }
    Ok(centum_types::array::parse_literal(s)?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_and_refuses_malformed() {
        let items = vec!["a".to_string(), "b c".into(), "".into(), "x\"y".into(), "NULL".into()];
        let text = render(&items);
        assert_eq!(text, r#"{a,"b c","","x\"y","NULL"}"#);
        let back: Vec<String> = parse(&text).unwrap().into_iter().map(|x| x.unwrap()).collect();
        assert_eq!(back, items);
        assert_eq!(parse("{1, NULL ,3}").unwrap(), vec![Some("1".into()), None, Some("3".into())]);
        assert_eq!(parse("{}").unwrap(), Vec::<Option<String>>::new());
        assert_eq!(parse("1 2").unwrap(), vec![Some("1".into()), Some("2".into())]);
        for bad in ["", "{", "{a,}", "{\"a}", "{a}b", "x"] {
            assert!(parse(bad).is_err(), "{bad}");
        }
    }
}
