//! psql against the real server: meta-commands (`\d` on tables with hash
//! and range indexes, `\dt`, `\di`, `\dn`, `\l`, `\du`, `\dT`), `\copy` in both
//! directions, transactions, errors, the `centum` schema's views, and a
//! TLS connection.
//!
//! The scripts in `tests/psql/*.sql` run with `psql -X -a -f` (each
//! command echoed before its output); the output must equal the `.out`
//! file next to the script. `UPDATE_GOLDEN=1` rewrites them.

mod common;

use common::{psql, require, run_ok, Server};
use std::path::Path;
use std::process::Command;

fn golden(script: &str) {
    let Some(bin) = require("psql") else { return };
    let server = Server::start(&[]);
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/psql");
    let sql = dir.join(format!("{script}.sql"));
    let out = psql(&bin, &server, &["-a", "-f", sql.to_str().unwrap()]);
    let expected = dir.join(format!("{script}.out"));
    if std::env::var_os("UPDATE_GOLDEN").is_some() {
        std::fs::write(&expected, &out).unwrap();
        return;
    }
    let want = std::fs::read_to_string(&expected).unwrap_or_default();
    assert!(out == want, "psql output of {script}.sql differs from {script}.out:\n{out}");
}

#[test]
fn the_centum_views_show_memory_indexes_checkpoints_log_collector_and_transactions() {
    golden("centum_views");
}

#[test]
fn describe_and_copy() {
    golden("describe");
}

#[test]
fn enum_types_are_listed_with_their_labels() {
    golden("enums");
}

#[test]
fn composite_types_are_listed_with_their_fields() {
    golden("composite_types");
}

#[test]
fn privileges_are_shown_and_enforced_for_each_role() {
    golden("privileges");
}

#[test]
fn a_role_without_privileges_is_refused_with_42501() {
    let Some(bin) = require("psql") else { return };
    let server = Server::start(&[]);
    let setup = "CREATE ROLE reader LOGIN; CREATE TABLE t (id int PRIMARY KEY); \
                 INSERT INTO t VALUES (1); GRANT SELECT ON t TO reader";
    psql(&bin, &server, &["-c", setup]);
    let as_reader = |sql: &str| {
        let out = Command::new(&bin)
            .arg(server.url("reader"))
            .args(["-X", "-At", "-v", "VERBOSITY=verbose", "-c", sql])
            .output()
            .unwrap();
        (String::from_utf8_lossy(&out.stdout).into_owned(), String::from_utf8_lossy(&out.stderr).into_owned())
    };
    assert_eq!(as_reader("SELECT count(*) FROM t").0.trim(), "1");
    for refused in [
        "INSERT INTO t VALUES (2)",
        "DELETE FROM t",
        "DROP TABLE t",
        "CREATE TABLE mine (x int)",
        "ALTER TABLE t OWNER TO reader",
        "ALTER ROLE reader SUPERUSER",
        "SET ROLE centum",
    ] {
        let (_, err) = as_reader(refused);
        assert!(err.contains("42501"), "{refused}: {err}");
    }
    // Nothing the refused statements tried happened.
    let count = psql(&bin, &server, &["-At", "-c", "SELECT count(*) FROM t"]);
    assert_eq!(count.trim(), "1");
}

#[test]
fn cluster_wide_meta_commands_list_the_database_and_roles() {
    let Some(bin) = require("psql") else { return };
    let server = Server::start(&[]);
    psql(&bin, &server, &["-c", "CREATE ROLE reader LOGIN PASSWORD 'r'"]);
    let l = psql(&bin, &server, &["-c", "\\l"]);
    assert!(l.contains("postgres"), "\\l:\n{l}");
    let du = psql(&bin, &server, &["-c", "\\du"]);
    assert!(du.contains("centum") && du.contains("Superuser") && du.contains("reader"), "\\du:\n{du}");
}

#[test]
fn errors_leave_the_session_usable_and_report_the_sqlstate() {
    let Some(bin) = require("psql") else { return };
    let server = Server::start(&[]);
    let out = Command::new(&bin)
        .arg(server.url("centum"))
        .args(["-X", "-v", "VERBOSITY=verbose"])
        .args(["-c", "CREATE TABLE t (id int PRIMARY KEY)"])
        .args(["-c", "INSERT INTO t VALUES (1)"])
        .args(["-c", "INSERT INTO t VALUES (1)"])
        .args(["-c", "SELECT count(*) FROM t"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stderr.contains("23505"), "{stderr}");
    assert!(stdout.contains(" 1\n"), "{stdout}");
}

#[test]
fn errors_in_routines_carry_detail_hint_and_context() {
    let Some(bin) = require("psql") else { return };
    let server = Server::start(&[]);
    let out = Command::new(&bin)
        .arg(server.url("centum"))
        .args(["-X", "-v", "VERBOSITY=default"])
        .args([
            "-c",
            "CREATE FUNCTION f(x int) RETURNS int LANGUAGE plpgsql AS $$\nBEGIN\n  RAISE EXCEPTION 'bad %', x \
             USING DETAIL = 'the detail', HINT = 'the hint', ERRCODE = '22023';\nEND $$",
        ])
        .args(["-c", "SELECT f(7)"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    for want in [
        "ERROR:  bad 7",
        "DETAIL:  the detail",
        "HINT:  the hint",
        "CONTEXT:  PL/pgSQL function f(integer) line 3 at RAISE",
    ] {
        assert!(stderr.contains(want), "{want} missing from:\n{stderr}");
    }
}

#[test]
fn reset_returns_to_the_start_up_settings() {
    let Some(bin) = require("psql") else { return };
    let server = Server::start(&[]);
    let out = Command::new(&bin)
        .arg(server.url("centum"))
        .args(["-X", "-At", "-q"])
        .args(["-c", "SET statement_timeout = 5"])
        .args(["-c", "RESET statement_timeout"])
        .args(["-c", "SHOW statement_timeout"])
        .args(["-c", "SET default_transaction_isolation = 'serializable'"])
        .args(["-c", "DISCARD ALL"])
        .args(["-c", "SHOW default_transaction_isolation"])
        .env("PGOPTIONS", "-c statement_timeout=1234 -c default_transaction_isolation=repeatable\\ read")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(stdout, "1234ms\nrepeatable read\n", "{}", String::from_utf8_lossy(&out.stderr));
}

#[test]
fn a_bad_startup_setting_is_refused_before_the_session_starts() {
    let Some(bin) = require("psql") else { return };
    let server = Server::start(&[]);
    let out = Command::new(&bin)
        .arg(server.url("centum"))
        .args(["-X", "-At", "-c", "SHOW statement_timeout"])
        .env("PGOPTIONS", "-c statement_timeout=bogus")
        .output()
        .unwrap();
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("FATAL") && stderr.contains("statement_timeout"), "{stderr}");
    assert!(!stderr.contains("closed the connection unexpectedly"), "{stderr}");
    let out = run_ok(
        Command::new(&bin)
            .arg(server.url("centum"))
            .args(["-X", "-At", "-c", "SHOW statement_timeout"])
            .env("PGOPTIONS", "-c statement_timeout=7s"),
    );
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "7s");
}

#[test]
fn tls_connections_are_encrypted_when_a_certificate_is_given() {
    let Some(bin) = require("psql") else { return };
    let key = rcgen::generate_simple_self_signed(vec!["localhost".into()]).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let (cert, pem) = (dir.path().join("server.crt"), dir.path().join("server.key"));
    std::fs::write(&cert, key.cert.pem()).unwrap();
    std::fs::write(&pem, key.signing_key.serialize_pem()).unwrap();
    let server = Server::start(&["--tls-cert", cert.to_str().unwrap(), "--tls-key", pem.to_str().unwrap()]);
    let url = format!("{}?sslmode=require", server.url("centum"));
    let out = run_ok(Command::new(&bin).arg(&url).args(["-X", "-At", "-c", "SELECT 40 + 2"]));
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "42");
    // psql's \conninfo names the TLS protocol when the connection is encrypted.
    let out = run_ok(Command::new(&bin).arg(&url).args(["-X", "-c", "\\conninfo"]));
    assert!(String::from_utf8_lossy(&out.stdout).contains("SSL connection"), "not encrypted");
}
