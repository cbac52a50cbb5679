//! Smoke runs of the benchmarks (`centum-bench triggers` at a tiny size,
//! below), and the benchmark suite's: `centum-bench suite --quick` runs
//! every workload (W1-W6) at a small scale against a real PostgreSQL, the
//! Centum server and SQLite, and fails when any workload's correctness
//! checks fail (row counts, balances, integrity). Nothing here looks at
//! speed. It needs PostgreSQL's server programs (`apt-get install
//! postgresql`) and DejaVu Sans for the plots (`fonts-dejavu-core`); where
//! they are missing it says so and passes, except under CI, where it fails.

use std::path::Path;
use std::process::Command;

fn have_postgres() -> bool {
    std::fs::read_dir("/usr/lib/postgresql")
        .into_iter()
        .flatten()
        .flatten()
        .any(|e| e.path().join("bin/initdb").is_file())
}

#[test]
fn every_workload_completes_with_correct_results() {
    if !have_postgres() || !Path::new("/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf").is_file() {
        let msg = "PostgreSQL's server programs or DejaVu Sans are missing (apt-get install postgresql fonts-dejavu-core)";
        assert!(std::env::var_os("CI").is_none(), "{msg}");
        eprintln!("skipped: {msg}");
        return;
    }
    let out = tempfile::tempdir().unwrap();
    // Under the system's temporary directory: PostgreSQL runs as its own
    // account when the tests run as root, and must reach its directory.
    let data = tempfile::tempdir().unwrap();
    let run = Command::new(env!("CARGO_BIN_EXE_centum-bench"))
        .args(["suite", "--quick", "--out"])
        .arg(out.path())
        .arg("--dir")
        .arg(data.path())
        .output()
        .expect("run centum-bench");
    let text = format!("{}{}", String::from_utf8_lossy(&run.stdout), String::from_utf8_lossy(&run.stderr));
    assert!(run.status.success(), "the quick suite failed:\n{text}");

    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.path().join("results.json")).unwrap()).unwrap();
    let checks = json["checks"].as_array().unwrap();
    for w in ["W1", "W2", "W3", "W4", "W5", "W6"] {
        let mine: Vec<_> = checks.iter().filter(|c| c["workload"] == w).collect();
        assert!(mine.len() >= 3, "{w} made {} checks:\n{text}", mine.len());
        assert!(mine.iter().all(|c| c["ok"] == true), "{w}: {mine:?}");
        let figures = json["figures"].as_array().unwrap().iter().filter(|f| f["workload"] == w).count();
        assert!(figures >= 2, "{w} reported {figures} figures");
    }
    // W1 runs on Tarantool too wherever it is installed (CI installs it).
    if Command::new("tarantool").arg("--version").output().is_ok_and(|o| o.status.success()) {
        let t: Vec<_> =
            checks.iter().filter(|c| c["workload"] == "W1" && c["system"] == "Tarantool").collect();
        assert!(t.len() >= 5 && t.iter().all(|c| c["ok"] == true), "W1 on Tarantool: {t:?}\n{text}");
    }
    let md = std::fs::read_to_string(out.path().join("BENCHMARKS.md")).unwrap();
    for needle in ["## W1", "## W6", "vs PostgreSQL", "vs SQLite", "fsyncs/s", "Seed's figure"] {
        assert!(md.contains(needle), "BENCHMARKS.md lacks {needle:?}");
    }
    let csv = std::fs::read_to_string(out.path().join("results.csv")).unwrap();
    assert!(csv.lines().count() > 40, "results.csv has {} lines", csv.lines().count());
    for png in ["w1-throughput", "w2b-throughput", "w5-range-search", "w6-latency"] {
        let bytes = std::fs::read(out.path().join(format!("{png}.png"))).unwrap();
        assert!(bytes.starts_with(b"\x89PNG") && bytes.len() > 10_000, "{png}.png is not a plot");
    }
}

/// `centum-bench triggers` runs its three ways of inserting and checks
/// that every audited row reached the audit table; a tiny run only shows
/// that it completes and reports.
#[test]
fn the_trigger_benchmark_completes_and_audits_every_row() {
    let run = Command::new(env!("CARGO_BIN_EXE_centum-bench"))
        .args(["triggers", "--rounds", "1", "--seconds", "0.05"])
        .output()
        .expect("run centum-bench");
    let text = String::from_utf8_lossy(&run.stdout);
    assert!(run.status.success(), "{text}{}", String::from_utf8_lossy(&run.stderr));
    assert!(text.contains("the trigger costs") && text.contains("the second insert costs"), "{text}");
}
