//! W5, document vault: objects, their versions and typed property values,
//! through each server, one client. Round m creates m objects (each with
//! 2 properties), checks each in (a new version), adds a property to each,
//! then runs m look-up searches (property = value) and m range searches
//! (value between two bounds). Each operation's time per round is
//! recorded, so the curves show how cost grows with the number of objects.

use super::report::{Figure, Series};
use super::servers::Endpoint;
use super::{driver, Ctx, Res};
use std::time::Instant;

pub const DESCRIPTION: &str = "Tables vault_object, vault_version and vault_property (object, version, property, int \
and text value), hash primary keys in Centum (B-trees in PostgreSQL) and a range index on (property, int value) in \
both. Round m (m = 1, 2, ... M) creates m objects (object, version 1 and 2 properties in one transaction), checks each \
in (a new version, the object's latest version moved), sets a third property on each, then runs m look-up searches \
(objects whose category property equals a value: 1 in 97 objects) and m range searches (objects whose size property \
lies in a window of 1% of its range), each joined back to the objects. One client, durable commits. Figures are the \
milliseconds each operation took over all rounds, and in the last round.";

const OPS: [&str; 5] = ["create object", "check in", "set property", "lookup search", "range search"];

/// The schema; `WITH (bucket_count = N)` is dropped for PostgreSQL.
fn schema(centum: bool, objects: u64) -> String {
    let buckets = (2 * objects).next_power_of_two().max(1024);
    let with = |n: u64| if centum { format!(" WITH (bucket_count = {n})") } else { String::new() };
    format!(
        "CREATE TABLE vault_object (object_id bigint PRIMARY KEY, name text NOT NULL, created timestamp NOT NULL, \
           latest_version int NOT NULL){};
         CREATE TABLE vault_version (object_id bigint NOT NULL, version int NOT NULL, checked_in timestamp NOT NULL, \
           comment text, PRIMARY KEY (object_id, version)){};
         CREATE TABLE vault_property (object_id bigint NOT NULL, version int NOT NULL, property_id int NOT NULL, \
           int_value bigint, text_value text, PRIMARY KEY (object_id, version, property_id)){};
         CREATE INDEX vault_property_value ON vault_property (property_id, int_value);",
        with(buckets),
        with(2 * buckets),
        with(4 * buckets)
    )
}

/// An object's category (property 1) and size (property 2).
fn category(id: i64) -> i64 {
    id % 97
}
fn size(id: i64) -> i64 {
    id * 7919 % 100_000
}

/// The hot statements whose plans are recorded, with values.
const HOT: [&str; 3] = [
    "UPDATE vault_object SET latest_version = latest_version + 1 WHERE object_id = 7 RETURNING latest_version",
    "SELECT o.object_id, o.name FROM vault_property p JOIN vault_object o ON o.object_id = p.object_id \
     WHERE p.property_id = 1 AND p.int_value = 7",
    "SELECT o.object_id, o.name FROM vault_property p JOIN vault_object o ON o.object_id = p.object_id \
     WHERE p.property_id = 2 AND p.int_value BETWEEN 7 AND 1006",
];

/// The statements of one session.
struct Vault {
    c: postgres::Client,
    st: Vec<postgres::Statement>,
}

impl Vault {
    fn new(ep: &Endpoint) -> Res<Vault> {
        let mut c = ep.connect()?;
        let sql = [
            "INSERT INTO vault_object VALUES ($1, $2, localtimestamp, 1)",
            "INSERT INTO vault_version VALUES ($1, $2, localtimestamp, $3)",
            "INSERT INTO vault_property VALUES ($1, $2, $3, $4, $5)",
            "UPDATE vault_object SET latest_version = latest_version + 1 WHERE object_id = $1 RETURNING latest_version",
            "SELECT o.object_id, o.name FROM vault_property p JOIN vault_object o ON o.object_id = p.object_id \
             WHERE p.property_id = 1 AND p.int_value = $1",
            "SELECT o.object_id, o.name FROM vault_property p JOIN vault_object o ON o.object_id = p.object_id \
             WHERE p.property_id = 2 AND p.int_value BETWEEN $1 AND $2",
        ];
        let st = sql.iter().map(|q| c.prepare(q)).collect::<Result<_, _>>()?;
        Ok(Vault { c, st })
    }

    fn create(&mut self, id: i64) -> Res<()> {
        let mut t = self.c.transaction()?;
        t.execute(&self.st[0], &[&id, &format!("document {id}")])?;
        t.execute(&self.st[1], &[&id, &1i32, &"created"])?;
        t.execute(&self.st[2], &[&id, &1i32, &1i32, &category(id), &None::<String>])?;
        t.execute(&self.st[2], &[&id, &1i32, &2i32, &size(id), &None::<String>])?;
        Ok(t.commit()?)
    }

    /// A new version; returns its number.
    fn check_in(&mut self, id: i64) -> Res<i32> {
        let mut t = self.c.transaction()?;
        let v: i32 = t.query_one(&self.st[3], &[&id])?.get(0);
        t.execute(&self.st[1], &[&id, &v, &"checked in"])?;
        t.commit()?;
        Ok(v)
    }

    fn set_property(&mut self, id: i64, version: i32) -> Res<()> {
        self.c
            .execute(&self.st[2], &[&id, &version, &3i32, &None::<i64>, &Some(format!("reviewed {id}"))])?;
        Ok(())
    }

    fn lookup(&mut self, value: i64) -> Res<usize> {
        Ok(self.c.query(&self.st[4], &[&value])?.len())
    }

    fn range(&mut self, lo: i64, hi: i64) -> Res<usize> {
        Ok(self.c.query(&self.st[5], &[&lo, &hi])?.len())
    }
}

/// Runs every round on `ep`; returns each round's milliseconds per
/// operation and the objects after it.
fn rounds(ctx: &mut Ctx, ep: &Endpoint) -> Res<Vec<(u64, [f64; 5])>> {
    let m_max = ctx.scale.w5_rounds;
    let objects = m_max * (m_max + 1) / 2;
    ep.connect()?.batch_execute(&schema(ep.system == "Centum", objects))?;
    let mut v = Vault::new(ep)?;
    let mut out = Vec::new();
    let mut next_id = 1i64;
    let mut wrong = 0u64;
    let mut categories = [0usize; 97];
    let mut sizes: Vec<i64> = Vec::new();
    let bar = driver::timed(&format!("W5 {}: rounds", ep.system), m_max);
    for m in 1..=m_max {
        let ids: Vec<i64> = (next_id..next_id + m as i64).collect();
        next_id += m as i64;
        let total = next_id - 1;
        let mut ms = [0.0; 5];
        let mut timed = |k: usize, f: &mut dyn FnMut() -> Res<()>| -> Res<()> {
            let started = Instant::now();
            f()?;
            ms[k] = started.elapsed().as_secs_f64() * 1e3;
            Ok(())
        };
        timed(0, &mut || ids.iter().try_for_each(|&id| v.create(id)))?;
        let mut versions = Vec::new();
        timed(1, &mut || {
            ids.iter().try_for_each(|&id| {
                versions.push(v.check_in(id)?);
                Ok(())
            })
        })?;
        timed(2, &mut || ids.iter().zip(&versions).try_for_each(|(&id, &ver)| v.set_property(id, ver)))?;
        // Searches for the new objects' values; each must find exactly the
        // objects that have them (counted here, outside the timing).
        for &id in &ids {
            categories[category(id) as usize] += 1;
            let at = sizes.partition_point(|&s| s < size(id));
            sizes.insert(at, size(id));
        }
        let window = |id: i64| (size(id), size(id) + 999);
        let want_lookup: Vec<usize> = ids.iter().map(|&id| categories[category(id) as usize]).collect();
        let want_range: Vec<usize> = ids
            .iter()
            .map(|&id| {
                let (lo, hi) = window(id);
                sizes.partition_point(|&s| s <= hi) - sizes.partition_point(|&s| s < lo)
            })
            .collect();
        timed(3, &mut || {
            for (&id, &want) in ids.iter().zip(&want_lookup) {
                wrong += u64::from(v.lookup(category(id))? != want);
            }
            Ok(())
        })?;
        timed(4, &mut || {
            for (&id, &want) in ids.iter().zip(&want_range) {
                let (lo, hi) = window(id);
                wrong += u64::from(v.range(lo, hi)? != want);
            }
            Ok(())
        })?;
        out.push((total as u64, ms));
        bar.set_position(m);
    }
    bar.finish_and_clear();
    let counts: (i64, i64, i64) = {
        let r = v.c.query_one(
            "SELECT (SELECT count(*) FROM vault_object), (SELECT count(*) FROM vault_version), (SELECT count(*) FROM vault_property)",
            &[],
        )?;
        (r.get(0), r.get(1), r.get(2))
    };
    let n = objects as i64;
    ctx.report.check(
        "W5",
        ep.system,
        "objects, versions (2 each) and properties (3 each) all stored",
        counts == (n, 2 * n, 3 * n),
        format!("{counts:?} for {n} objects"),
    );
    ctx.report.check(
        "W5",
        ep.system,
        "every search found exactly the matching objects",
        wrong == 0,
        format!("{wrong} wrong answers"),
    );
    let plans = super::plans::explained(ep, &HOT)?;
    super::plans::judge(ctx, "W5", "check-in and searches after the last round", ep, &plans)?;
    if ep.system == "Centum" {
        let plan: Vec<String> = v
            .c
            .query("EXPLAIN SELECT object_id FROM vault_property WHERE property_id = 2 AND int_value BETWEEN 5 AND 900", &[])?
            .iter()
            .map(|r| r.get(0))
            .collect();
        let plan = plan.join(" / ");
        ctx.report.check(
            "W5",
            ep.system,
            "the range search is planned on the range index",
            plan.contains("vault_property_value"),
            plan,
        );
    }
    Ok(out)
}

pub fn run(ctx: &mut Ctx) -> Res<()> {
    let pg = ctx.postgres()?;
    let centum = ctx.centum()?;
    let mut all = Vec::new();
    for ep in [&centum.endpoint, &pg.endpoint] {
        let r = rounds(ctx, ep)?;
        all.push((ep.system, r));
    }
    for (k, op) in OPS.iter().enumerate() {
        let plot = format!("w5-{}", op.replace(' ', "-"));
        for (system, r) in &all {
            let total: f64 = r.iter().map(|(_, ms)| ms[k]).sum();
            let (objects, last) = r.last().map(|(n, ms)| (*n, ms[k])).unwrap_or_default();
            let cases = [
                (format!("{op}, all {} rounds (durable)", r.len()), total),
                (format!("{op}, last round ({} ops, {objects} objects)", r.len()), last),
            ];
            for (case, ms) in cases {
                ctx.report.figure(Figure::new("W5", case, system, "ms", ms).lower_is_better());
            }
            ctx.report.series.push(Series {
                plot: plot.clone(),
                title: format!("W5: {op}, ms per round (round m does m operations)"),
                x_label: "objects in the vault".into(),
                y_label: "ms per round".into(),
                name: system.to_string(),
                points: r.iter().map(|(n, ms)| (*n as f64, ms[k])).collect(),
                quantile_x: false,
            });
        }
    }
    Ok(())
}
