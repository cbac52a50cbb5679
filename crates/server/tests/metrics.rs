//! The metrics endpoint (`--metrics-listen`) scraped over HTTP, its text
//! read by a strict parser of Prometheus's exposition format; and the slow
//! statement log (`log_min_duration_statement`) read from the server's
//! log.

mod common;

use common::Server;
use postgres::{Client, NoTls};
use std::collections::{BTreeMap, HashMap};
use std::time::{Duration, Instant};

fn connect(s: &Server) -> Client {
    Client::connect(&s.conninfo("centum"), NoTls).unwrap()
}

/// The metrics address the server wrote into its lock file.
fn metrics_addr(s: &Server) -> String {
    let lock = std::fs::read_to_string(s.dir.path().join("data").join("centum.lock")).unwrap();
    let line = lock.lines().find_map(|l| l.strip_prefix("metrics ")).expect("metrics address in centum.lock");
    line.trim().to_string()
}

fn agent() -> ureq::Agent {
    ureq::Agent::config_builder().timeout_global(Some(Duration::from_secs(10))).build().into()
}

/// `GET /metrics`: the content type and the parsed figures.
fn scrape(s: &Server) -> (String, Exposition) {
    let mut reply = agent().get(&format!("http://{}/metrics", metrics_addr(s))).call().unwrap();
    let kind = reply.headers().get("content-type").unwrap().to_str().unwrap().to_string();
    let text = reply.body_mut().read_to_string().unwrap();
    let parsed = parse(&text).unwrap_or_else(|e| panic!("{e}\n{text}"));
    (kind, parsed)
}

/// One sample: name, labels, value.
#[derive(Debug)]
struct Sample {
    name: String,
    labels: BTreeMap<String, String>,
    value: f64,
}

/// A parsed exposition: the declared type of each family, and the samples.
#[derive(Debug, Default)]
struct Exposition {
    types: HashMap<String, String>,
    samples: Vec<Sample>,
}

impl Exposition {
    /// The value of `name` with exactly `labels`.
    fn get(&self, name: &str, labels: &[(&str, &str)]) -> Option<f64> {
        let want: BTreeMap<String, String> =
            labels.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
        self.samples.iter().find(|s| s.name == name && s.labels == want).map(|s| s.value)
    }

    fn value(&self, name: &str, labels: &[(&str, &str)]) -> f64 {
        self.get(name, labels).unwrap_or_else(|| panic!("no sample {name} {labels:?}"))
    }
}

/// Parses Prometheus's text format (version 0.0.4) strictly: every sample
/// belongs to a family whose TYPE came first (a histogram's `_bucket`,
/// `_sum` and `_count` to the histogram), no family is declared twice, no
/// sample repeats, names and labels are well formed, values are numbers,
/// and a histogram's buckets are cumulative and end with `+Inf` equal to
/// its count.
fn parse(text: &str) -> Result<Exposition, String> {
    let mut out = Exposition::default();
    let mut seen = std::collections::HashSet::new();
    for (n, line) in text.lines().enumerate() {
        let bad = |why: &str| format!("line {}: {why}: {line:?}", n + 1);
        if line.is_empty() {
            continue;
        }
        if let Some(rest) = line.strip_prefix('#') {
            let mut words = rest.trim_start().splitn(3, ' ');
            match (words.next(), words.next(), words.next()) {
                (Some("TYPE"), Some(name), Some(kind)) => {
                    if !valid_name(name) {
                        return Err(bad("bad metric name"));
                    }
                    if !["counter", "gauge", "histogram", "summary", "untyped"].contains(&kind) {
                        return Err(bad("unknown type"));
                    }
                    if out.types.insert(name.to_string(), kind.to_string()).is_some() {
                        return Err(bad("type declared twice"));
                    }
                }
                (Some("HELP"), Some(name), _) if !valid_name(name) => return Err(bad("bad metric name")),
                _ => {}
            }
            continue;
        }
        let (name, labels, rest) = split_sample(line).ok_or_else(|| bad("malformed sample"))?;
        let family = ["_bucket", "_sum", "_count"]
            .iter()
            .find_map(|suffix| {
                let base = name.strip_suffix(suffix)?;
                (out.types.get(base).map(String::as_str) == Some("histogram")).then_some(base)
            })
            .unwrap_or(name);
        if !out.types.contains_key(family) {
            return Err(bad("sample before its TYPE"));
        }
        let mut fields = rest.split(' ');
        let value = match fields.next() {
            Some("+Inf") => f64::INFINITY,
            Some("-Inf") => f64::NEG_INFINITY,
            Some(v) => v.parse::<f64>().map_err(|_| bad("bad value"))?,
            None => return Err(bad("no value")),
        };
        if let Some(ts) = fields.next() {
            ts.parse::<i64>().map_err(|_| bad("bad timestamp"))?;
        }
        if fields.next().is_some() {
            return Err(bad("trailing fields"));
        }
        if !seen.insert((name.to_string(), labels.clone())) {
            return Err(bad("sample repeated"));
        }
        out.samples.push(Sample { name: name.to_string(), labels, value });
    }
    check_histograms(&out)?;
    Ok(out)
}

fn valid_name(name: &str) -> bool {
    let mut chars = name.chars();
    chars.next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_' || c == ':')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_' || c == ':')
}

/// `name{labels} rest` into its parts.
fn split_sample(line: &str) -> Option<(&str, BTreeMap<String, String>, &str)> {
    let end = line.find(['{', ' '])?;
    let name = &line[..end];
    if !valid_name(name) {
        return None;
    }
    let mut labels = BTreeMap::new();
    let mut rest = &line[end..];
    if let Some(mut l) = rest.strip_prefix('{') {
        loop {
            if let Some(after) = l.strip_prefix('}') {
                rest = after;
                break;
            }
            let eq = l.find('=')?;
            let key = &l[..eq];
            if !valid_name(key) || key.contains(':') {
                return None;
            }
            l = l[eq + 1..].strip_prefix('"')?;
            let mut value = String::new();
            let mut chars = l.char_indices();
            let close = loop {
                match chars.next()? {
                    (i, '"') => break i,
                    (_, '\\') => match chars.next()?.1 {
                        'n' => value.push('\n'),
                        c @ ('\\' | '"') => value.push(c),
                        _ => return None,
                    },
                    (_, c) => value.push(c),
                }
            };
            if labels.insert(key.to_string(), value).is_some() {
                return None;
            }
            l = &l[close + 1..];
            l = l.strip_prefix(',').unwrap_or(l);
        }
    }
    Some((name, labels, rest.strip_prefix(' ')?))
}

fn check_histograms(e: &Exposition) -> Result<(), String> {
    for (name, _) in e.types.iter().filter(|(_, k)| *k == "histogram") {
        let buckets: Vec<&Sample> = e.samples.iter().filter(|s| s.name == format!("{name}_bucket")).collect();
        let mut last = 0.0;
        for b in &buckets {
            if b.value < last {
                return Err(format!("{name}: buckets are not cumulative"));
            }
            last = b.value;
        }
        let inf = buckets.iter().find(|b| b.labels.get("le").map(String::as_str) == Some("+Inf"));
        let count = e.get(&format!("{name}_count"), &[]);
        match (inf, count) {
            (Some(inf), Some(count))
                if inf.value == count && e.get(&format!("{name}_sum"), &[]).is_some() => {}
            _ => return Err(format!("{name}: no +Inf bucket equal to _count, or no _sum")),
        }
    }
    Ok(())
}

#[test]
fn the_parser_refuses_what_prometheus_would() {
    assert!(parse("# TYPE a counter\na_total 1\n").is_err(), "sample of an undeclared family");
    assert!(parse("a 1\n").is_err());
    assert!(parse("# TYPE a gauge\na{x=\"1} 1\n").is_err());
    assert!(parse("# TYPE a gauge\na{x=\"1\"} one\n").is_err());
    assert!(parse("# TYPE a gauge\na 1\na 2\n").is_err());
    assert!(parse("# TYPE h histogram\nh_bucket{le=\"1\"} 2\nh_bucket{le=\"+Inf\"} 1\nh_sum 1\nh_count 1\n")
        .is_err());
    let e = parse("# TYPE a gauge\na{x=\"q\\\"\",y=\"2\"} 1.5\n").unwrap();
    assert_eq!(e.value("a", &[("x", "q\""), ("y", "2")]), 1.5);
}

#[test]
fn metrics_endpoint_serves_the_engine_and_server_figures() {
    let mut s = Server::start(&["--metrics-listen", "127.0.0.1:0"]);
    let (kind, before) = scrape(&s);
    assert!(kind.starts_with("text/plain; version=0.0.4"), "{kind}");
    let committed_before = before.value("centum_transactions_committed_total", &[]);

    let mut c = connect(&s);
    c.batch_execute("CREATE TABLE items (id int PRIMARY KEY, v text)").unwrap();
    let rows: Vec<String> = (0..100).map(|i| format!("({i}, 'v{i}')")).collect();
    c.batch_execute(&format!("BEGIN; INSERT INTO items VALUES {}; COMMIT", rows.join(", "))).unwrap();
    let missing = c.batch_execute("SELECT * FROM missing").unwrap_err();
    assert_eq!(missing.code().unwrap().code(), "42P01");
    assert_eq!(c.query_one("SELECT v FROM items WHERE id = $1", &[&7]).unwrap().get::<_, String>(0), "v7");
    // Two snapshot transactions update the same row: the second fails
    // with a serialization failure.
    let mut other = connect(&s);
    c.batch_execute("BEGIN ISOLATION LEVEL REPEATABLE READ; SELECT count(*) FROM items").unwrap();
    other.batch_execute("UPDATE items SET v = 'other' WHERE id = 1").unwrap();
    let conflict = c.batch_execute("UPDATE items SET v = 'mine' WHERE id = 1").unwrap_err();
    assert_eq!(conflict.code().unwrap().code(), "40001");
    c.batch_execute("ROLLBACK").unwrap();

    let (_, m) = scrape(&s);
    let items = [("table", "items")];
    assert_eq!(m.value("centum_table_live_rows", &items), 100.0);
    assert_eq!(m.value("centum_table_rows_inserted_total", &items), 100.0);
    assert_eq!(m.value("centum_table_rows_updated_total", &items), 1.0);
    assert!(m.value("centum_table_row_versions", &items) >= 100.0);
    assert!(m.value("centum_table_row_bytes", &items) > 0.0);
    let pkey = [("table", "items"), ("index", "items_pkey")];
    assert!(m.value("centum_index_entries", &pkey) >= 100.0);
    assert!(m.value("centum_index_bytes", &pkey) > 0.0);
    assert!(m.value("centum_table_index_scans_total", &items) >= 1.0);
    assert!(m.value("centum_transactions_committed_total", &[]) >= committed_before + 3.0);
    assert!(m.value("centum_transactions_rolled_back_total", &[]) >= 1.0);
    assert_eq!(m.value("centum_errors_total", &[("sqlstate", "42P01")]), 1.0);
    assert_eq!(m.value("centum_errors_total", &[("sqlstate", "40001")]), 1.0);
    assert_eq!(m.value("centum_serialization_failures_total", &[]), 1.0);
    assert!(m.value("centum_connections", &[]) >= 2.0);
    assert!(m.value("centum_connections_accepted_total", &[]) >= 2.0);
    assert_eq!(m.types["centum_statement_duration_seconds"], "histogram");
    assert!(m.value("centum_statement_duration_seconds_count", &[]) >= 8.0);
    assert!(m.value("centum_statement_duration_seconds_sum", &[]) > 0.0);
    assert!(m.value("centum_commit_wait_seconds_count", &[]) >= 1.0);
    assert!(m.value("centum_log_records_total", &[]) >= 2.0);
    assert!(m.value("centum_log_written_bytes_total", &[]) > 0.0);
    assert_eq!(m.value("centum_log_failed", &[]), 0.0);
    assert!(m.value("centum_memory_resident_bytes", &[]) > 1e6);
    // No --memory-limit: the default, a share of physical memory.
    assert!(m.value("centum_memory_limit_bytes", &[]) > m.value("centum_memory_resident_bytes", &[]));
    assert!(m.value("centum_log_durable_ts", &[]) >= 1.0);
    assert_eq!(m.value("centum_log_delayed_records", &[]), 0.0);
    assert!(m.value("centum_transactions_open", &[]) >= 0.0);
    assert!(m.get("centum_gc_freed_versions_total", &[]).is_some());
    assert!(m.get("centum_checkpoints_total", &[]).is_some());
    assert!(m.get("centum_checkpoint_files", &[("kind", "data"), ("state", "active")]).is_some());
    for (name, kind) in &m.types {
        assert!(name.starts_with("centum_"), "{name}");
        assert_eq!(kind == "counter", name.ends_with("_total"), "{name} is a {kind}");
    }

    // Only /metrics, and only GET.
    let err = agent().get(&format!("http://{}/", metrics_addr(&s))).call().unwrap_err();
    assert!(matches!(err, ureq::Error::StatusCode(404)), "{err}");
    let err = agent().post(&format!("http://{}/metrics", metrics_addr(&s))).send("").unwrap_err();
    assert!(matches!(err, ureq::Error::StatusCode(405)), "{err}");
    drop((c, other));
    assert!(s.stop(), "server did not stop cleanly: {}", s.log_text());
}

#[test]
fn without_the_flag_there_is_no_endpoint() {
    let s = Server::start(&[]);
    let lock = std::fs::read_to_string(s.dir.path().join("data").join("centum.lock")).unwrap();
    assert!(!lock.contains("metrics"), "{lock}");
}

/// Waits up to 10 s for the server's log to contain `needle`.
fn wait_for_log(s: &Server, needle: &str) -> String {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let log = s.log_text();
        if log.contains(needle) {
            return log;
        }
        assert!(Instant::now() < deadline, "{needle:?} not in the log:\n{log}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn slow_statements_are_logged_with_their_plan() {
    let s = Server::start(&[]);
    let mut c = connect(&s);
    assert_eq!(c.query_one("SHOW log_min_duration_statement", &[]).unwrap().get::<_, String>(0), "-1");
    c.batch_execute(
        "CREATE TABLE items (id int PRIMARY KEY, v text); INSERT INTO items VALUES (1, 'a'), (2, 'b')",
    )
    .unwrap();
    c.batch_execute("SELECT v FROM items WHERE id = 2 -- off").unwrap();
    c.batch_execute("SET log_min_duration_statement = 0").unwrap();
    let setting = c
        .query_one("SELECT setting, unit FROM pg_settings WHERE name = 'log_min_duration_statement'", &[])
        .unwrap();
    assert_eq!((setting.get::<_, String>(0), setting.get::<_, String>(1)), ("0".into(), "ms".into()));
    c.batch_execute("SELECT v FROM items WHERE id = 1").unwrap();
    let log = wait_for_log(&s, "statement: SELECT v FROM items WHERE id = 1");
    let at = log.find("statement: SELECT v FROM items WHERE id = 1").unwrap();
    let line_start = log[..at].rfind('\n').map_or(0, |i| i + 1);
    let entry = &log[line_start..];
    assert!(entry.contains("duration: ") && entry.contains(" ms  statement: "), "{entry}");
    assert!(
        entry.contains("plan:\n  Index Scan using items_pkey on items"),
        "no plan after the duration line:\n{entry}"
    );
    // The extended protocol names the portal, and the plan is the one
    // that ran.
    c.query_one("SELECT v FROM items WHERE id = $1", &[&2]).unwrap();
    let log = wait_for_log(&s, "execute <unnamed>: SELECT v FROM items WHERE id = $1");
    assert!(log.contains("Index Cond: (id = $1)") || log.contains("Index Scan using items_pkey"), "{log}");
    // -1 turns it off again; units are taken.
    c.batch_execute("SET log_min_duration_statement = -1").unwrap();
    c.batch_execute("SELECT v FROM items WHERE id = 2 -- off again").unwrap();
    c.batch_execute("SET log_min_duration_statement = '1s'").unwrap();
    assert_eq!(c.query_one("SHOW log_min_duration_statement", &[]).unwrap().get::<_, String>(0), "1s");
    c.batch_execute("SELECT v FROM items WHERE id = 2 -- fast").unwrap();
    c.batch_execute("SET log_min_duration_statement = 0").unwrap();
    c.batch_execute("SELECT 'last'").unwrap();
    let log = wait_for_log(&s, "statement: SELECT 'last'");
    for quiet in ["-- off", "-- off again", "-- fast"] {
        assert!(!log.contains(quiet), "{quiet} was logged:\n{log}");
    }
    assert_eq!(
        c.batch_execute("SET log_min_duration_statement = -2").unwrap_err().code().unwrap().code(),
        "22023"
    );
}

#[test]
fn the_server_flag_sets_the_default() {
    let s = Server::start(&["--log-min-duration-statement", "0"]);
    let mut c = connect(&s);
    assert_eq!(c.query_one("SHOW log_min_duration_statement", &[]).unwrap().get::<_, String>(0), "0");
    c.batch_execute("SELECT 40 + 2").unwrap();
    wait_for_log(&s, "statement: SELECT 40 + 2");
    c.batch_execute("RESET log_min_duration_statement").unwrap();
    assert_eq!(c.query_one("SHOW log_min_duration_statement", &[]).unwrap().get::<_, String>(0), "0");
}
