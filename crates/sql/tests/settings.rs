//! `SHOW ALL`: every setting with the session's own value.
//!
//! Not a golden script: PostgreSQL lists its own few hundred settings, so
//! the comparison with it would say nothing.

use centum_sql::Database;
use centum_types::Value;

#[test]
fn show_all_lists_each_setting_with_the_sessions_value() {
    let d = Database::open(centum_engine::Database::open(Default::default()).unwrap()).unwrap();
    let mut s = d.session();
    s.execute("SET statement_timeout = '5s'; SET application_name = 'tests'; SET lock_timeout = 100")
        .unwrap();
    let r = s.execute("SHOW ALL").unwrap().pop().unwrap();
    let names: Vec<&str> = r.columns.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(names, ["name", "setting", "description"]);
    let get = |name: &str| {
        r.rows
            .iter()
            .find(|row| row[0] == Value::Text(name.into()))
            .map(|row| (row[1].clone(), row[2].clone()))
    };
    assert_eq!(get("statement_timeout").unwrap().0, Value::Text("5s".into()));
    assert_eq!(get("application_name").unwrap().0, Value::Text("tests".into()));
    assert_eq!(get("lock_timeout").unwrap().0, Value::Text("100ms".into()));
    assert_eq!(get("search_path").unwrap().0, Value::Text("public".into()));
    // Sorted by name (case aside, as PostgreSQL sorts them), each once,
    // each known one described.
    let all: Vec<String> = r.rows.iter().map(|row| row[0].to_string().to_lowercase()).collect();
    let mut sorted = all.clone();
    sorted.sort();
    sorted.dedup();
    assert_eq!(all, sorted);
    assert!(r.rows.iter().all(|row| row[2] != Value::Text(String::new())));
    assert_eq!(get("server_version_num").unwrap().0, Value::Text("150000".into()));
    assert_eq!(get("DateStyle").unwrap().0, Value::Text("ISO, MDY".into()));
}
