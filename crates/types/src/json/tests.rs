use std::cmp::Ordering;

use super::parse::canonical_number;
use super::*;

fn jb(s: &str) -> Jsonb {
    Jsonb::parse(s).unwrap_or_else(|e| panic!("{s}: {e}"))
}

#[test]
fn numbers_take_numeric_form() {
    for (lexeme, want) in [
        ("1", "1"),
        ("-0", "0"),
        ("-0.0", "0.0"),
        ("1.50", "1.50"),
        ("1e2", "100"),
        ("1E+2", "100"),
        ("1.5e-2", "0.015"),
        ("1.0e-2", "0.010"),
        ("12.345e1", "123.45"),
        ("1.50e1", "15.0"),
        ("0.001", "0.001"),
        ("-12", "-12"),
        ("0e5", "0"),
    ] {
        assert_eq!(canonical_number(lexeme).unwrap(), want, "{lexeme}");
    }
    assert_eq!(canonical_number("1e200000").unwrap_err().sqlstate(), "22003");
    assert_eq!(canonical_number("1e-20000").unwrap_err().sqlstate(), "22003");
}

#[test]
fn output_is_postgres_jsonb_text() {
    for (input, want) in [
        (r#"{"b": 1, "a": 2, "aa": [1, 2.50, null]}"#, r#"{"a": 2, "b": 1, "aa": [1, 2.50, null]}"#),
        (r#"{"a":1,"a":2}"#, r#"{"a": 2}"#),
        (r#" [ true , false,"x\"y\n\u00e9\u0001" ] "#, "[true, false, \"x\\\"y\\n\u{e9}\\u0001\"]"),
        ("{}", "{}"),
        ("[]", "[]"),
        ("\"\\ud83d\\ude00\"", "\"\u{1F600}\""),
        ("-1e3", "-1000"),
    ] {
        assert_eq!(jb(input).to_string(), want, "{input}");
    }
}

#[test]
fn bad_input_is_refused_with_postgres_codes() {
    for bad in [
        "",
        "{",
        "[1,]",
        "{\"a\" 1}",
        "01",
        "1.",
        ".5",
        "-",
        "tru",
        "truex",
        "'a'",
        "{a: 1}",
        "[1] 2",
        "\"\\x\"",
        "\"\u{1}\"",
        "\"\\ud800\"",
        "NaN",
    ] {
        let err = Jsonb::parse(bad).unwrap_err();
        assert_eq!(err.sqlstate(), "22P02", "{bad:?}");
        assert_eq!(err.to_string(), "invalid input syntax for type json");
    }
    assert_eq!(Jsonb::parse("\"\\u0000\"").unwrap_err().sqlstate(), "22P05");
    let deep = format!("{}{}", "[".repeat(parse::MAX_DEPTH + 1), "]".repeat(parse::MAX_DEPTH + 1));
    assert_eq!(Jsonb::parse(&deep).unwrap_err().sqlstate(), "54001");
    let ok = format!("{}{}", "[".repeat(parse::MAX_DEPTH), "]".repeat(parse::MAX_DEPTH));
    assert!(Jsonb::parse(&ok).is_ok());
}

#[test]
fn navigation() {
    let d = jb(r#"{"a": {"b": [10, 20, 30]}, "c": "x", "dd": null}"#);
    let r = d.root();
    assert_eq!(r.get("c").map(|v| v.kind()), Some(Kind::String("x")));
    assert_eq!(r.get("dd").map(|v| v.kind()), Some(Kind::Null));
    assert!(r.get("zz").is_none());
    let b = r.get("a").and_then(|a| a.get("b")).unwrap();
    assert_eq!(b.count(), 3);
    assert_eq!(b.index(0).unwrap().kind(), Kind::Number("10"));
    assert_eq!(b.index(-1).unwrap().kind(), Kind::Number("30"));
    assert!(b.index(3).is_none() && b.index(-4).is_none());
    assert_eq!(b.to_jsonb().to_string(), "[10, 20, 30]");
    assert_eq!(r.members().map(|(k, _)| k).collect::<Vec<_>>(), ["a", "c", "dd"]);
    assert!(r.exists("a") && !r.exists("b"));
    assert!(jb(r#"["a", 1]"#).root().exists("a"));
    assert!(jb(r#""a""#).root().exists("a"));
}

#[test]
fn containment_follows_postgres() {
    let yes = [
        (r#"{"a": 1, "b": {"c": [1, 2, 3]}}"#, r#"{"b": {"c": [3]}}"#),
        (r#"{"a": 1.0}"#, r#"{"a": 1}"#),
        ("[1, 2, [3, 4]]", "[[4]]"),
        ("[1, 2, 3]", "[3, 1, 1]"),
        ("[1, 2, 3]", "2"),
        ("[1, 2]", "[]"),
        (r#"{"a": 1}"#, "{}"),
        ("\"x\"", "\"x\""),
        (r#"[{"a": 1, "b": 2}]"#, r#"[{"a": 1}]"#),
    ];
    for (a, b) in yes {
        assert!(jb(a).root().contains(jb(b).root()), "{a} @> {b}");
    }
    let no = [
        (r#"{"a": [1, 2]}"#, r#"{"a": 1}"#),
        (r#"{"a": 1}"#, r#"{"a": 1, "b": 2}"#),
        ("[1, 2]", "[3]"),
        ("[[1, 2]]", "[1]"),
        (r#"{"a": 1}"#, "[]"),
        ("1", "[1]"),
        (r#"{"a": {"b": 1}}"#, r#"{"b": 1}"#),
    ];
    for (a, b) in no {
        assert!(!jb(a).root().contains(jb(b).root()), "{a} @> {b}");
    }
}

/// A small generator of documents, without a random crate: a linear
/// congruential sequence drives the shapes.
fn generate(seed: &mut u64, depth: u32) -> Node {
    *seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
    let r = (*seed >> 33) as u32;
    match if depth == 0 { r % 4 } else { r % 6 } {
        0 => Node::Null,
        1 => Node::Bool(r & 16 != 0),
        2 => Node::Number(
            ["0", "1", "1.0", "-2", "10", "0.5", "-0.50", "123456789012345678901234567890"]
                [(r >> 8) as usize % 8]
                .to_string(),
        ),
        3 => Node::String(["", "a", "b", "ab", "\u{1}x", "é"][(r >> 8) as usize % 6].to_string()),
        4 => Node::Array((0..(r >> 8) % 4).map(|_| generate(seed, depth - 1)).collect()),
        _ => Node::Object(
            (0..(r >> 8) % 4)
                .map(|i| {
                    (
                        ["a", "b", "aa", "c"][(i as usize + (r >> 12) as usize) % 4].to_string(),
                        generate(seed, depth - 1),
                    )
                })
                .collect(),
        ),
    }
}

#[test]
fn order_sort_key_and_equality_agree() {
    let mut seed = 7;
    let docs: Vec<Jsonb> = (0..300).map(|_| Jsonb::from_node(&generate(&mut seed, 3))).collect();
    let key = |j: &Jsonb| {
        let mut k = Vec::new();
        j.root().sort_key(&mut k);
        k
    };
    for a in &docs {
        // Text output parses back to an equal value with the same bytes.
        let back = jb(&a.to_string());
        assert_eq!(back.as_bytes(), a.as_bytes());
        assert!(a.root().contains(a.root()), "{a}");
        for b in docs.iter().take(60) {
            let ord = a.cmp(b);
            assert_eq!(key(a).cmp(&key(b)), ord, "{a} vs {b}");
            assert_eq!(b.cmp(a), ord.reverse());
            if ord == Ordering::Equal {
                assert!(a.root().contains(b.root()) && b.root().contains(a.root()));
            }
        }
    }
    assert_eq!(jb("1.0"), jb("1"));
    assert_eq!(key(&jb(r#"{"a": [1.50]}"#)), key(&jb(r#"{"a": [1.5]}"#)));
    let ordered = [
        "null",
        "\"\"",
        "\"a\"",
        "-10",
        "-2",
        "0",
        "0.5",
        "1",
        "10",
        "false",
        "true",
        "[]",
        "[9]",
        "[1, 1]",
        "{}",
        r#"{"a": 1}"#,
    ];
    for w in ordered.windows(2) {
        assert_eq!(jb(w[0]).cmp(&jb(w[1])), Ordering::Less, "{} < {}", w[0], w[1]);
    }
}

#[test]
fn damaged_bytes_read_without_panicking() {
    let good = jb(r#"{"a": [1, "x", {"b": null}], "bb": true}"#);
    let bytes = good.as_bytes();
    for cut in 0..bytes.len() {
        for flip in [0u8, 0xFF, 3, 5, 6] {
            let mut b = bytes[..cut].to_vec();
            if let Some(x) = b.get_mut(cut / 2) {
                *x = flip;
            }
            let j = Jsonb::from_bytes(&b);
            let r = j.root();
            let _ = (r.text(), r.get("a"), r.index(-1), r.exists("bb"), r.contains(good.root()));
            let mut k = Vec::new();
            r.sort_key(&mut k);
            let _ = j.cmp(&good);
        }
    }
}

#[test]
fn pretty_and_builder_text() {
    let n = super::parse(r#"{"a": [1, {"b": null}], "c": {}}"#).unwrap();
    assert_eq!(
        n.pretty(),
        "{\n    \"a\": [\n        1,\n        {\n            \"b\": null\n        }\n    ],\n    \"c\": {\n    }\n}"
    );
    let mut s = String::new();
    n.write_json(",", ":", &mut s);
    assert_eq!(s, r#"{"a":[1,{"b":null}],"c":{}}"#);
    assert_eq!(super::parse("[1,2]").unwrap().type_name(), "array");
}

#[test]
fn json_text_keeps_member_slices() {
    let text = r#" {"a": {"b":  1}, "a": [1 , 2], "c": "x"} "#;
    let members = parse::object_members(text).unwrap().unwrap();
    assert_eq!(members, vec![("a".into(), r#"{"b":  1}"#), ("a".into(), "[1 , 2]"), ("c".into(), "\"x\"")]);
    assert_eq!(parse::array_elements("[1 , [2,3] ]").unwrap().unwrap(), vec!["1", "[2,3]"]);
    assert_eq!(parse::array_elements("{}").unwrap(), None);
    assert!(parse::object_members("{").is_err());
}
