//! What a run found, and the files it is written to: `results.json` (all
//! of it), `results.csv` (one line per figure) and `BENCHMARKS.md` (a table
//! per workload: Centum's figure, each comparator's, the ratio, and the
//! seed's figure for context).

use super::Res;
use serde::Serialize;
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::Path;

/// One measured figure of one system.
#[derive(Serialize, Clone, Debug)]
pub struct Figure {
    /// `W1` ... `W6`.
    pub workload: &'static str,
    /// What was measured, with its durability class, e.g. `8 clients,
    /// -M prepared (durable)`. Figures of one case are compared.
    pub case: String,
    /// `Centum`, `PostgreSQL` or `SQLite`.
    pub system: &'static str,
    /// The unit, e.g. `orders/s`.
    pub metric: &'static str,
    pub value: f64,
    /// Whether more is better (rates) or less (times).
    pub higher_is_better: bool,
    pub p50_ms: Option<f64>,
    pub p99_ms: Option<f64>,
    pub p999_ms: Option<f64>,
    /// Retries after write conflicts.
    pub retries: Option<u64>,
    /// Failed transactions (pgbench's count), or intended rollbacks (W6).
    pub failed: Option<u64>,
}

impl Figure {
    /// A figure with no latency or retry detail.
    pub fn new(
        workload: &'static str,
        case: impl Into<String>,
        system: &'static str,
        metric: &'static str,
        value: f64,
    ) -> Figure {
        Figure {
            workload,
            case: case.into(),
            system,
            metric,
            value,
            higher_is_better: true,
            p50_ms: None,
            p99_ms: None,
            p999_ms: None,
            retries: None,
            failed: None,
        }
    }

    /// The same figure where less is better (a time, a size).
    pub fn lower_is_better(self) -> Figure {
        Figure { higher_is_better: false, ..self }
    }

    /// Adds the latency percentiles and counts of a driver run.
    pub fn with_load(mut self, o: &super::driver::Outcome) -> Figure {
        self.p50_ms = Some(o.ms(0.5));
        self.p99_ms = Some(o.ms(0.99));
        self.p999_ms = Some(o.ms(0.999));
        self.retries = Some(o.retries);
        self.failed = Some(o.rolled_back);
        self
    }
}

/// One line of a plot.
#[derive(Serialize, Clone, Debug)]
pub struct Series {
    /// The PNG's file stem; series with the same plot are drawn together.
    pub plot: String,
    pub title: String,
    pub x_label: String,
    pub y_label: String,
    /// The line's legend.
    pub name: String,
    pub points: Vec<(f64, f64)>,
    /// Latency curves: x is a quantile, drawn on a "nines" axis.
    pub quantile_x: bool,
}

/// A correctness check a workload made after it ran.
#[derive(Serialize, Clone, Debug)]
pub struct Check {
    pub workload: &'static str,
    pub system: &'static str,
    pub what: String,
    pub ok: bool,
    /// What was found, e.g. the row counts compared.
    pub found: String,
}

/// The machine and the systems, measured in the same run.
#[derive(Serialize, Clone, Debug, Default)]
pub struct Machine {
    pub cores: usize,
    pub memory_gib: f64,
    pub cpu: String,
    pub kernel: String,
    /// The directory the data lives in, whose disk was measured.
    pub data_dir: String,
    /// 4 KiB appends each followed by fdatasync, one thread.
    pub fsyncs_per_sec: f64,
    /// 1 MiB writes, then one fdatasync.
    pub seq_write_mib_per_sec: f64,
    pub postgres: String,
    /// The settings PostgreSQL runs with beyond durability (tuned for the
    /// machine; see `servers::tuned_settings`).
    pub postgres_settings: Vec<String>,
    pub sqlite: String,
    pub centum: String,
}

/// Everything one run found.
#[derive(Serialize, Debug, Default)]
pub struct Report {
    pub mode: String,
    pub command: String,
    pub date: String,
    pub machine: Machine,
    pub figures: Vec<Figure>,
    pub series: Vec<Series>,
    pub checks: Vec<Check>,
    /// Free-text findings per workload (W4's checkpoint log, sizes).
    pub notes: BTreeMap<String, Vec<String>>,
    /// Seconds each workload took.
    pub seconds: BTreeMap<String, f64>,
}

impl Report {
    /// Records a check; a failed one is also printed at once.
    pub fn check(
        &mut self,
        workload: &'static str,
        system: &'static str,
        what: impl Into<String>,
        ok: bool,
        found: impl Into<String>,
    ) {
        let c = Check { workload, system, what: what.into(), ok, found: found.into() };
        if !c.ok {
            eprintln!("CHECK FAILED: {workload} {system}: {} (found {})", c.what, c.found);
        }
        self.checks.push(c);
    }

    /// Records a figure and prints it.
    pub fn figure(&mut self, f: Figure) {
        let lat = match (f.p50_ms, f.p99_ms) {
            (Some(a), Some(b)) => format!("  p50 {a:.2} ms  p99 {b:.2} ms"),
            _ => String::new(),
        };
        println!("{:<3} {:<56} {:<10} {:>14.1} {}{lat}", f.workload, f.case, f.system, f.value, f.metric);
        self.figures.push(f);
    }

    /// Adds a line to a workload's notes and prints it.
    pub fn note(&mut self, workload: &str, line: impl Into<String>) {
        let line = line.into();
        println!("{workload}  {line}");
        self.notes.entry(workload.to_string()).or_default().push(line);
    }

    /// Writes `results.json` and `results.csv` under `out`.
    pub fn write_raw(&self, out: &Path) -> Res<()> {
        std::fs::write(out.join("results.json"), serde_json::to_string_pretty(self)?)?;
        let mut csv = csv::Writer::from_path(out.join("results.csv"))?;
        for f in &self.figures {
            csv.serialize(f)?;
        }
        csv.flush()?;
        Ok(())
    }

    /// Writes `BENCHMARKS.md` under `out`, linking the plots in `plots`.
    pub fn write_markdown(&self, out: &Path, plots: &[(String, String)]) -> Res<()> {
        std::fs::write(out.join("BENCHMARKS.md"), self.markdown(plots))?;
        Ok(())
    }

    fn markdown(&self, plots: &[(String, String)]) -> String {
        let m = &self.machine;
        let mut s = String::new();
        let _ = writeln!(s, "# Centum benchmarks\n");
        let _ = writeln!(
            s,
            "Generated by `{}` on {} ({} mode). Every figure below was measured in that one run, on one \
             machine, so the figure that counts is the ratio: Centum's rate over the comparator's (for \
             times, the comparator's time over Centum's), above 1 where Centum is ahead.\n",
            self.command, self.date, self.mode
        );
        let _ = writeln!(
            s,
            "- Machine: {} cores ({}), {:.0} GiB memory, Linux {}.",
            m.cores, m.cpu, m.memory_gib, m.kernel
        );
        let _ = writeln!(
            s,
            "- Disk under `{}`, measured in the same run: **{:.0} fsyncs/s** (4 KiB appends, each followed by \
             fdatasync) and **{:.0} MiB/s** sequential writes. A durable commit cannot be acknowledged faster \
             than the first allows one client.",
            m.data_dir, m.fsyncs_per_sec, m.seq_write_mib_per_sec
        );
        let _ = writeln!(
            s,
            "- Systems: Centum {} (durable: every commit's log record fdatasync'ed before it is acknowledged); \
             PostgreSQL {} (`fsync=on`, `synchronous_commit=on`, `max_connections=300`, autovacuum on, and as \
             a tuning guide sets them for this machine: {}); SQLite {} through rusqlite (WAL with \
             `synchronous=FULL` when durable, `:memory:` when not).",
            m.centum,
            m.postgres,
            m.postgres_settings.iter().map(|s| format!("`{}`", s.replace(" = ", "="))).collect::<Vec<_>>().join(", "),
            m.sqlite
        );
        let _ = writeln!(
            s,
            "- Each figure is one measurement. On a shared machine the disk's fsync rate, and with it every \
             durable figure, moves between runs and within one (each workload's notes give the rate just \
             before it), so read ratios near 1 as a tie."
        );
        let passed = self.checks.iter().filter(|c| c.ok).count();
        let _ = writeln!(
            s,
            "- Correctness: {passed} of {} checks passed (row counts, balances, integrity; listed at the end).\n",
            self.checks.len()
        );
        for (w, title) in super::WORKLOADS {
            let figures: Vec<&Figure> = self.figures.iter().filter(|f| f.workload == w).collect();
            if figures.is_empty() && !self.notes.contains_key(w) {
                continue;
            }
            let _ = writeln!(s, "## {w}: {title}\n");
            let _ = writeln!(s, "{}\n", super::describe(w));
            s.push_str(&table(&figures));
            if let Some(notes) = self.notes.get(w) {
                s.push('\n');
                for n in notes {
                    let _ = writeln!(s, "- {n}");
                }
            }
            match super::seed_figure(w) {
                Some(seed) => _ = writeln!(s, "\nSeed's figure, for context: {seed}\n"),
                None => s.push('\n'),
            }
            for (file, title) in plots.iter().filter(|(f, _)| f.starts_with(&w.to_lowercase())) {
                let _ = writeln!(s, "![{title}]({file})\n");
            }
            if let Some(secs) = self.seconds.get(w) {
                let _ = writeln!(s, "_{w} took {secs:.0} s._\n");
            }
        }
        let _ = writeln!(s, "## Checks\n");
        let _ = writeln!(s, "| workload | system | check | found | |\n| --- | --- | --- | --- | --- |");
        for c in &self.checks {
            let _ = writeln!(
                s,
                "| {} | {} | {} | {} | {} |",
                c.workload,
                c.system,
                c.what,
                c.found,
                if c.ok { "ok" } else { "**FAILED**" }
            );
        }
        s
    }
}

/// A workload's table: one row per case, one column per system (in the
/// order they first appear), then Centum's ratio against each other
/// system, then latencies.
fn table(figures: &[&Figure]) -> String {
    let mut systems: Vec<&str> = Vec::new();
    let mut cases: Vec<(&str, &str)> = Vec::new();
    for f in figures {
        if !systems.contains(&f.system) {
            systems.push(f.system);
        }
        if !cases.contains(&(f.case.as_str(), f.metric)) {
            cases.push((&f.case, f.metric));
        }
    }
    if cases.is_empty() {
        return String::new();
    }
    systems.sort_by_key(|s| *s != "Centum");
    let others: Vec<&str> = systems.iter().copied().filter(|s| *s != "Centum").collect();
    let has_latency = figures.iter().any(|f| f.p99_ms.is_some());
    let mut s = String::from("| case | unit |");
    for sys in &systems {
        let _ = write!(s, " {sys} |");
    }
    for o in &others {
        let _ = write!(s, " vs {o} |");
    }
    if has_latency {
        s.push_str(" p50 / p99 / p99.9 ms |");
    }
    s.push_str("\n| --- | --- |");
    for _ in 0..systems.len() + others.len() + usize::from(has_latency) {
        s.push_str(" ---: |");
    }
    s.push('\n');
    for (case, metric) in cases {
        let find =
            |sys: &str| figures.iter().find(|f| f.case == case && f.metric == metric && f.system == sys);
        let _ = write!(s, "| {case} | {metric} |");
        for sys in &systems {
            let _ = write!(s, " {} |", find(sys).map(|f| number(f.value)).unwrap_or_default());
        }
        let centum = find("Centum");
        for o in &others {
            let ratio = match (centum, find(o)) {
                (Some(c), Some(x)) if c.value > 0.0 && x.value > 0.0 => {
                    let r = if c.higher_is_better { c.value / x.value } else { x.value / c.value };
                    format!("**{r:.2}x**")
                }
                _ => String::new(),
            };
            let _ = write!(s, " {ratio} |");
        }
        if has_latency {
            let lat: Vec<String> = systems
                .iter()
                .filter_map(|sys| {
                    let f = find(sys)?;
                    Some(format!("{}: {:.2} / {:.2} / {:.2}", short(sys), f.p50_ms?, f.p99_ms?, f.p999_ms?))
                })
                .collect();
            let _ = write!(s, " {} |", lat.join("<br>"));
        }
        s.push('\n');
    }
    s
}

/// A system's initial, for the latency column.
fn short(system: &str) -> &str {
    &system[..1]
}

/// A figure with thousands separators, one decimal below 100.
pub fn number(v: f64) -> String {
    if v.abs() < 100.0 {
        return format!("{v:.2}");
    }
    let digits = format!("{:.0}", v.abs());
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    if v < 0.0 {
        out.insert(0, '-');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_are_grouped() {
        assert_eq!(number(1234567.4), "1,234,567");
        assert_eq!(number(999.0), "999");
        assert_eq!(number(12.345), "12.35");
    }

    #[test]
    fn tables_put_centum_first_and_compute_ratios() {
        let a = Figure::new("W2", "8 clients", "PostgreSQL", "tps", 100.0);
        let b = Figure::new("W2", "8 clients", "Centum", "tps", 250.0);
        let c = Figure::new("W4", "checkpoint", "Centum", "s", 2.0).lower_is_better();
        let d = Figure::new("W4", "checkpoint", "PostgreSQL", "s", 5.0).lower_is_better();
        let t = table(&[&a, &b]);
        assert!(t.starts_with("| case | unit | Centum | PostgreSQL | vs PostgreSQL |"), "{t}");
        assert!(t.contains("| 8 clients | tps | 250 | 100 | **2.50x** |"), "{t}");
        let t = table(&[&c, &d]);
        assert!(t.contains("**2.50x**"), "{t}");
    }
}
