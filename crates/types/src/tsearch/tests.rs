//! The tokenizer, the configurations, text input and output, the binary
//! form and matching; expected answers are PostgreSQL 15's.

use super::config::{tokenize, Config};
use super::parse::{parse_query_text, parse_vector};
use super::{TsQuery, TsVector};

fn vector(config: Config, text: &str) -> String {
    config.to_tsvector(text).to_string()
}

fn query(text: &str) -> TsQuery {
    parse_query_text(text).unwrap()
}

fn tsv(text: &str) -> TsVector {
    parse_vector(text).unwrap()
}

#[test]
fn tokenizer_splits_like_the_default_parser() {
    let toks: Vec<String> = tokenize("The fat-cat's 3.14 -5 abc123 e.g. café,naïve 1,000 under_score")
        .into_iter()
        .map(|t| t.text)
        .collect();
    assert_eq!(
        toks,
        [
            "The", "fat-cat", "fat", "cat", "s", "3.14", "-5", "abc123", "e.g", "café", "naïve", "1", "000",
            "under", "score"
        ]
    );
    let stems: Vec<bool> = tokenize("word w0rd 42 x-ray a1-b2").into_iter().map(|t| t.stem).collect();
    assert_eq!(stems, [true, false, false, true, true, true, false, false, false]);
    assert!(tokenize("  ... !!! ").is_empty());
}

#[test]
fn configurations() {
    assert_eq!(
        vector(Config::English, "The fat rats ate 3.14 cakes abc123"),
        "'3.14':5 'abc123':7 'ate':4 'cake':6 'fat':2 'rat':3"
    );
    assert_eq!(vector(Config::Simple, "The Fat rats, the FAT rats"), "'fat':2,5 'rats':3,6 'the':1,4");
    assert_eq!(
        vector(Config::English, "running-shoes state-of-the-art"),
        "'art':8 'run':2 'running-sho':1 'shoe':3 'state':5 'state-of-the-art':4"
    );
    assert_eq!(vector(Config::English, "the and of"), "");
    assert_eq!(Config::from_name("pg_catalog.english"), Ok(Config::English));
    assert_eq!(Config::from_name("Simple"), Ok(Config::Simple));
    let err = Config::from_name("french").unwrap_err();
    assert_eq!(err.sqlstate(), "42704");
    assert_eq!(err.to_string(), "text search configuration \"french\" does not exist");
}

#[test]
fn vector_text_round_trips() {
    for (input, output) in [
        ("a fat cat sat on a mat and ate a fat rat", "'a' 'and' 'ate' 'cat' 'fat' 'mat' 'on' 'rat' 'sat'"),
        ("a:1 fat:2 cat:3,10B", "'a':1 'cat':3,10B 'fat':2"),
        ("'don''t' 'a\\\\b' c:5A,3", "'a\\\\b' 'c':3,5A 'don''t'"),
        ("b:3 a:2 b:1", "'a':2 'b':1,3"),
        ("", ""),
    ] {
        assert_eq!(parse_vector(input).map(|v| v.to_string()), Ok(output.to_string()), "{input}");
        assert_eq!(parse_vector(output).map(|v| v.to_string()), Ok(output.to_string()), "{output}");
    }
    assert_eq!(parse_vector("a:0").unwrap_err().sqlstate(), "42601");
    assert_eq!(parse_vector("'a").unwrap_err().sqlstate(), "42601");
}

#[test]
fn query_text_round_trips() {
    for (input, output) in [
        ("fat & rat", "'fat' & 'rat'"),
        ("fat & (rat | cat)", "'fat' & ( 'rat' | 'cat' )"),
        ("fat | rat & cat", "'fat' | 'rat' & 'cat'"),
        ("!fat & !(a | b)", "!'fat' & !( 'a' | 'b' )"),
        ("a <-> b <2> c", "'a' <-> 'b' <2> 'c'"),
        ("a <-> (b <-> c)", "'a' <-> ( 'b' <-> 'c' )"),
        ("(a | b) <-> c", "( 'a' | 'b' ) <-> 'c'"),
        ("super:*AB & x:b", "'super':*AB & 'x':B"),
        ("!!a", "!!'a'"),
        ("'it''s'", "'it''s'"),
        ("Fat", "'Fat'"),
    ] {
        assert_eq!(query(input).to_string(), output, "{input}");
        assert_eq!(query(output).to_string(), output, "{output}");
    }
    assert_eq!(query("   ").to_string(), "");
    for bad in ["a &", "& a", "(a", "a)", "a b", "a <x> b", "!"] {
        assert_eq!(parse_query_text(bad).unwrap_err().sqlstate(), "42601", "{bad}");
    }
}

#[test]
fn to_tsquery_normalizes_and_drops_stop_words() {
    let q = |c: Config, t: &str| c.to_tsquery(t).unwrap().to_string();
    assert_eq!(q(Config::English, "The & Fat & Rats"), "'fat' & 'rat'");
    assert_eq!(q(Config::English, "cat <-> the <-> rat"), "'cat' <2> 'rat'");
    assert_eq!(q(Config::English, "'cat the rat'"), "'cat' <2> 'rat'");
    assert_eq!(q(Config::English, "the <-> cat"), "'cat'");
    assert_eq!(q(Config::English, "!the & cat"), "'cat'");
    assert_eq!(q(Config::English, "running-shoes"), "'running-sho' <-> 'run' <-> 'shoe'");
    assert_eq!(q(Config::English, "supernova:*"), "'supernova':*");
    assert_eq!(q(Config::English, "the"), "");
    assert_eq!(q(Config::Simple, "The & Fat"), "'the' & 'fat'");
    assert_eq!(
        Config::English.plainto_tsquery("The fat-cat rats").to_string(),
        "'fat-cat' & 'fat' & 'cat' & 'rat'"
    );
    assert_eq!(
        Config::English.phraseto_tsquery("The fat cat of the rats").to_string(),
        "'fat' <-> 'cat' <3> 'rat'"
    );
    assert_eq!(
        Config::English.websearch_to_tsquery("\"fat rat\" or cat -dog").to_string(),
        "'fat' <-> 'rat' | 'cat' & !'dog'"
    );
}

#[test]
fn matching() {
    let v = Config::English.to_tsvector("a fat cat sat on a mat and ate a fat rat");
    let m = |q: &str| query(q).matches(&v);
    assert!(m("cat & rat"));
    assert!(!m("cat & dog"));
    assert!(m("cat | dog"));
    assert!(m("!dog"));
    assert!(!m("!cat"));
    assert!(m("fat <-> cat"));
    assert!(!m("cat <-> fat"));
    assert!(m("fat <-> rat"));
    assert!(m("sat <3> mat"));
    assert!(!m("sat <2> mat"));
    assert!(m("fat <-> !cat"));
    assert!(!m("!fat <-> cat"));
    assert!(m("(fat | sat) <-> (cat | mat)"));
    assert!(m("ca:*"));
    assert!(!m("dog:*"));
    assert!(!TsQuery::default().matches(&v));
    let weighted = tsv("fat:1A cat:2B");
    assert!(query("fat:A").matches(&weighted));
    assert!(!query("fat:B").matches(&weighted));
    assert!(query("cat:AB").matches(&weighted));
    // Without positions: plain operators match, phrases do not.
    let stripped = v.strip();
    assert!(query("fat & cat").matches(&stripped));
    assert!(!query("fat <-> cat").matches(&stripped));
    assert!(query("!dog").matches(&stripped));
    assert!(query("fat:A").matches(&stripped));
    assert!(!query("!fat:A").matches(&stripped));
}

#[test]
fn vector_functions() {
    let a = tsv("fat:2,4 cat:3 rat:5A");
    let b = tsv("fat:1 dog:2B");
    assert_eq!(a.concat(&b).to_string(), "'cat':3 'dog':7B 'fat':2,4,6 'rat':5A");
    assert_eq!(a.strip().to_string(), "'cat' 'fat' 'rat'");
    assert_eq!(a.setweight(2).to_string(), "'cat':3B 'fat':2B,4B 'rat':5B");
    assert_eq!(a.len(), 3);
}

#[test]
fn binary_forms_are_postgres_send() {
    assert_eq!(hex(&tsv("a:1,3B b c:2").send()), "00000003610000020001800362000000630000010002");
    assert_eq!(hex(&query("a & b").send()), "00000003020201000062000100006100");
    assert_eq!(hex(&query("a <2> b:*A").send()), "000000030204000201080162000100006100");
    assert_eq!(hex(&query("a & b | c").send()), "0000000502030100006300020201000062000100006100");
    for q in ["a & b", "!a <-> (b | c:*)", ""] {
        let q = query(q);
        assert_eq!(TsQuery::recv(&q.send()).unwrap(), q);
    }
    let v = tsv("a:1,3B b c:2");
    assert_eq!(TsVector::recv(&v.send()).unwrap(), v);
    assert_eq!(TsVector::recv(&[0, 0, 0, 1, b'a']).unwrap_err().sqlstate(), "22P03");
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}
