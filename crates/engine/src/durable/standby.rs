//! A standby's side of replication: another server's redo records applied
//! to this database's live tables while its own transactions read them.
//!
//! ```text
//!  one transaction's record frames (commit ts T, ops in the primary's order)
//!     Schema ── the catalog image set against the live catalog: tables
//!               created, dropped, renamed, their extra bytes changed;
//!               indexes dropped and created (a range index is filled in
//!               place; a hash index, whose links live in the versions,
//!               serves snapshots once every live version is in it, which
//!               the primary's rewrite of the old versions brings about)
//!     Insert ── a committed version (begin = T, op number = seq) linked
//!               into the scan list and every index, as recovery links one
//!     Delete ── the version (table, creator ts, seq), found through an
//!               index by its old image or else by a scan, ended at T and
//!               handed to the collector at T
//!  then the clock jumps to T: from here new snapshots see the whole record
//! ```
//!
//! Snapshots read as of the clock's watermark, which reaches T only after
//! the last op of T's record, so no snapshot sees part of a transaction,
//! and one taken before goes on seeing the versions T ended until it
//! finishes (the collector waits for it). Records must arrive in commit
//! timestamp order, the primary's log order; one at or below the
//! watermark was applied before and is skipped, so a replay may start
//! early. A standby takes no writes of its own: its clock belongs to the
//! records it applies.
//!
//! Deletes are found cheaply when the primary logs old images
//! ([`crate::Options::logical`]); without them each delete scans its table.

use super::read_catalog;
use crate::chunked::Chunked;
use crate::db::{build_table, install_index, remove_index, Database, Shared};
use crate::error::{Error, Result};
use crate::gc::GcItem;
use crate::index::btree::Direction;
use crate::index::Index;
use crate::mvcc::visibility::{self, Begin, End};
use crate::mvcc::word::INFINITY;
use crate::row::sortkey::{prefix_successor, KeyBytes};
use crate::row::version::VersionPtr;
use crate::schema::Durability;
use crate::schema::IndexDef;
use crate::sync::Ordering::SeqCst;
use crate::table::Table;
use centum_storage::format::{push_frame, split_frames, Reader};
use centum_storage::log::{decode_record, DecodedRecord};
use centum_storage::{LogReader, Op};
use std::collections::{HashMap, HashSet};
use std::sync::Arc;

/// What applying one transaction's record did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Applied {
    /// Its commit timestamp (0 for an empty record).
    pub commit_ts: u64,
    /// Row versions it created.
    pub inserted: u64,
    /// Row versions it ended.
    pub deleted: u64,
    /// Whether it changed the schema.
    pub schema: bool,
    /// Whether it had been applied before and was left alone.
    pub skipped: bool,
}

/// What to do with a record whose commit timestamp the clock has passed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Late {
    /// It was applied before: leave it (a standby reading a log again
    /// from an earlier position).
    Skip,
    /// It was not: apply it under a new timestamp of this server's, above
    /// the clock, and remember the pair so that later deletes find its
    /// versions. For a group that hands each record over exactly once: a
    /// former primary gets a record of its own it had given up on (its
    /// outcome was not known) after its clock moved on.
    Renumber,
}

/// What applying keeps between records.
#[derive(Default)]
pub(crate) struct PendingIndexes {
    /// Hash indexes a schema record created on tables with rows: they serve
    /// snapshots once every live version of their table is linked into
    /// them.
    hash: Vec<(Arc<Table>, Arc<Index>)>,
    /// Records applied under another timestamp ([`Late::Renumber`]): the
    /// log's timestamp and this server's.
    renumbered: HashMap<u64, u64>,
    /// The same pairs the other way round: this server's timestamp and
    /// the log's.
    canonical: HashMap<u64, u64>,
}

impl PendingIndexes {
    /// The log's name for the versions this server created at `local`.
    pub(crate) fn canonical(&self, local: u64) -> u64 {
        self.canonical.get(&local).copied().unwrap_or(local)
    }
}

/// The first frame of an image ([`Database::image`]): this, then the
/// image's timestamp.
const IMAGE_MAGIC: &[u8; 8] = b"CNTMIMG1";
/// The last frame: this, then the number of rows.
const IMAGE_END: &[u8] = b"END";
/// Row bytes gathered into one frame of an image.
const IMAGE_CHUNK: usize = 1 << 20;

fn corrupt(what: String) -> Error {
    Error::Storage { code: "XX001", message: format!("replicated record: {what}") }
}

impl Database {
    /// Applies one transaction's record frames, as the primary's log holds
    /// them (see [`centum_storage::Record::into_frames`]).
    pub fn apply_frames(&self, frames: &[u8]) -> Result<Applied> {
        let records = split_frames(frames, 0)
            .map_err(|(at, e)| corrupt(format!("frame at byte {at}: {e:?}")))?
            .into_iter()
            .map(|(at, payload)| {
                decode_record(payload).ok_or_else(|| corrupt(format!("frame at byte {at} is no record")))
            })
            .collect::<Result<Vec<_>>>()?;
        self.apply_records_as(&records, Late::Renumber)
    }

    /// Applies every durable transaction `reader` has not handed out yet
    /// (a standby following a primary's log); returns how many were
    /// applied, not counting those applied before.
    pub fn apply_log(&self, reader: &mut LogReader) -> Result<usize> {
        let mut n = 0;
        loop {
            let txns = reader.read()?;
            if txns.is_empty() {
                return Ok(n);
            }
            for t in &txns {
                let records: Vec<_> = t.records().collect();
                n += usize::from(!self.apply_records(&records)?.skipped);
            }
        }
    }

    /// Applies one transaction: every frame of its record, decoded, in log
    /// order; one applied before is skipped. See the module's header.
    pub fn apply_records(&self, records: &[DecodedRecord<'_>]) -> Result<Applied> {
        self.apply_records_as(records, Late::Skip)
    }

    /// [`Database::apply_records`], with a record the clock has passed
    /// handled as `late` says.
    pub fn apply_records_as(&self, records: &[DecodedRecord<'_>], late: Late) -> Result<Applied> {
        let Some(primary_ts) = records.first().map(|r| r.commit_ts) else { return Ok(Applied::default()) };
        if records.iter().any(|r| r.commit_ts != primary_ts) {
            return Err(corrupt("the frames of one transaction carry different timestamps".into()));
        }
        let shared = &self.shared;
        // One applier at a time, and no schema change of this server's own
        // in between.
        let _ddl = shared.claim_lock();
        let mut out = Applied { commit_ts: primary_ts, ..Applied::default() };
        let mut ts = primary_ts;
        let now = shared.clock.watermark();
        if ts <= now {
            if late == Late::Skip {
                out.skipped = true;
                return Ok(out);
            }
            ts = now + 1;
            let mut pending = shared.standby.lock().unwrap_or_else(|p| p.into_inner());
            pending.renumbered.insert(primary_ts, ts);
            pending.canonical.insert(ts, primary_ts);
            shared.renumbered.store(true, SeqCst);
        }
        let renumbered = |created: u64| {
            let pending = shared.standby.lock().unwrap_or_else(|p| p.into_inner());
            pending.renumbered.get(&created).copied().unwrap_or(created)
        };
        let mut tables = tables_by_id(shared);
        let mut garbage = Chunked::default();
        let mut held: Vec<Arc<Table>> = Vec::new();
        // The version a delete marked as replaced: its successor is the
        // next insert of the same table.
        let mut replaced: Option<(u64, VersionPtr)> = None;
        let _pin = crossbeam_epoch::pin();
        for op in records.iter().flat_map(|r| r.ops.iter()) {
            match *op {
                Op::Schema { catalog } => {
                    self.apply_catalog(catalog, ts)?;
                    tables = tables_by_id(shared);
                    out.schema = true;
                }
                Op::Insert { table, seq, data } => {
                    let t = table_of(&tables, table)?;
                    if !t.layout.is_well_formed(data) {
                        return Err(corrupt(format!("a row of \"{}\" does not fit its columns", t.name())));
                    }
                    let set = t.indexes.load();
                    let v = VersionPtr::new(ts, set.gen, seq, set.links(), data.len(), |b| {
                        b.copy_from_slice(data)
                    });
                    t.link(&set, v);
                    t.live.add(1);
                    if let Some((_, old)) = replaced.take_if(|(id, _)| *id == table) {
                        old.set_newer(Some(v));
                    }
                    out.inserted += 1;
                }
                Op::Delete { table, ts: created, seq, old } => {
                    let t = table_of(&tables, table)?;
                    let created = renumbered(created);
                    let v = find_version(t, created, seq, old.map(|(image, _)| image)).ok_or_else(|| {
                        corrupt(format!("no live version ({created}, {seq}) of \"{}\" to delete", t.name()))
                    })?;
                    v.end().store(ts, SeqCst);
                    t.live.add(-1);
                    let at = match held.iter().position(|h| Arc::ptr_eq(h, t)) {
                        Some(at) => at,
                        None => {
                            held.push(t.clone());
                            held.len() - 1
                        }
                    };
                    garbage.push((at as u32, v));
                    if old.is_some_and(|(_, update)| update) {
                        replaced = Some((table, v));
                    }
                    out.deleted += 1;
                }
            }
        }
        self.ready_pending(ts);
        shared.clock.jump(ts);
        if !garbage.is_empty() {
            let item = GcItem { ts, tables: held, versions: garbage, undone: Chunked::default() };
            let help = shared.gc.push(item);
            shared.gc.help(&shared.clock, &shared.txns, help);
        }
        Ok(out)
    }

    /// An image of the database for a member that starts from it instead
    /// of from the first record (a group's checkpoint, or a snapshot sent
    /// to a member far behind): the catalog and every row of the
    /// SCHEMA_AND_DATA tables as of the watermark, each version under the
    /// name the replicated log gives it (its creator's timestamp there and
    /// its op number), so that later records' deletes find it. The caller
    /// makes sure no record is applied meanwhile; commits of this server's
    /// own that are still publishing are not in it. Format: `image` in
    /// docs/design.md.
    pub fn image(&self) -> Result<Vec<u8>> {
        let shared = &self.shared;
        let _ddl = shared.claim_lock();
        // A snapshot transaction holds the collector back from what it
        // reads.
        let reader = self.begin(crate::Isolation::Snapshot)?;
        let ts = reader.read_ts;
        let mut out = Vec::new();
        let mut head = Vec::with_capacity(16);
        head.extend_from_slice(IMAGE_MAGIC);
        head.extend_from_slice(&ts.to_le_bytes());
        push_frame(&mut out, &head);
        push_frame(&mut out, &shared.claim_image());
        let mut count = 0u64;
        let _pin = crossbeam_epoch::pin();
        let mut tables: Vec<Arc<Table>> = shared.catalog.load().values().cloned().collect();
        tables.sort_by_key(|t| t.id);
        for t in tables.iter().filter(|t| t.durability == Durability::SchemaAndData) {
            let mut chunk = Vec::new();
            for b in t.scan.buckets_in_use() {
                let mut cur = t.scan.first(b);
                while let Some(v) = cur {
                    cur = t.scan.next(v);
                    if !t.scan.is_live(v) {
                        continue;
                    }
                    // The image holds what the applied entries made, and
                    // only that: a transaction of this member's still
                    // waiting for its entry (one it proposed as primary)
                    // has not happened yet, whether it created the version
                    // or deleted it. A reader would take it speculatively;
                    // an image must not.
                    let created = match visibility::begin(&shared.txns, v, reader.id) {
                        Begin::Committed(created) if created <= ts => shared.canonical_ts(created),
                        _ => continue,
                    };
                    if matches!(visibility::end(&shared.txns, v, reader.id), End::Committed(e) if e <= ts) {
                        continue;
                    }
                    if chunk.is_empty() {
                        chunk.extend_from_slice(&t.id.to_le_bytes());
                    }
                    chunk.extend_from_slice(&created.to_le_bytes());
                    chunk.extend_from_slice(&v.header().stmt.to_le_bytes());
                    chunk.extend_from_slice(&(v.data().len() as u32).to_le_bytes());
                    chunk.extend_from_slice(v.data());
                    count += 1;
                    if chunk.len() >= IMAGE_CHUNK {
                        push_frame(&mut out, &chunk);
                        chunk.clear();
                    }
                }
            }
            if !chunk.is_empty() {
                push_frame(&mut out, &chunk);
            }
        }
        let mut end = Vec::with_capacity(16);
        end.extend_from_slice(IMAGE_END);
        end.extend_from_slice(&count.to_le_bytes());
        push_frame(&mut out, &end);
        drop(reader);
        Ok(out)
    }

    /// Replaces every table by those of `image` ([`Database::image`]), its
    /// rows under the log's names, and moves the clock up to the image's
    /// timestamp. The image is checked whole before anything changes; a
    /// damaged one fails with XX001. Snapshots open now go on reading the
    /// tables they had. Returns the image's timestamp.
    pub fn install_image(&self, image: &[u8]) -> Result<u64> {
        let bad = |what: &str| Error::Storage { code: "XX001", message: format!("database image: {what}") };
        let frames: Vec<&[u8]> = split_frames(image, 0)
            .map_err(|(at, e)| bad(&format!("frame at byte {at}: {e:?}")))?
            .into_iter()
            .map(|(_, payload)| payload)
            .collect();
        let (Some(head), Some(catalog), Some(end)) = (frames.first(), frames.get(1), frames.last()) else {
            return Err(bad("too short"));
        };
        if frames.len() < 3 || head.len() != 16 || &head[..8] != IMAGE_MAGIC || !end.starts_with(IMAGE_END) {
            return Err(bad("not an image"));
        }
        let ts = u64::from_le_bytes(head[8..16].try_into().map_err(|_| bad("header"))?);
        let count = Reader::new(&end[IMAGE_END.len()..]).u64().ok_or_else(|| bad("end"))?;
        let catalog = read_catalog(catalog)?;
        let shared = &self.shared;
        let _ddl = shared.claim_lock();
        let mut next = HashMap::with_capacity(catalog.tables.len());
        let mut by_id = HashMap::with_capacity(catalog.tables.len());
        for ti in &catalog.tables {
            let t = Arc::new(build_table(ti.id, &ti.def)?);
            by_id.insert(ti.id, t.clone());
            next.insert(ti.def.name.clone(), t);
        }
        let mut seen = 0u64;
        for chunk in &frames[2..frames.len() - 1] {
            let mut r = Reader::new(chunk);
            let id = r.u64().ok_or_else(|| bad("chunk"))?;
            let t = by_id.get(&id).ok_or_else(|| bad(&format!("rows of no table ({id})")))?;
            let set = t.indexes.load();
            while !r.is_empty() {
                let (Some(created), Some(seq), Some(data)) = (r.u64(), r.u32(), r.bytes()) else {
                    return Err(bad("row"));
                };
                if created > ts || !t.layout.is_well_formed(data) {
                    return Err(bad(&format!("a row of \"{}\" does not fit", t.name())));
                }
                let v = VersionPtr::new(created, set.gen, seq, set.links(), data.len(), |b| {
                    b.copy_from_slice(data)
                });
                t.link(&set, v);
                t.live.add(1);
                seen += 1;
            }
        }
        if seen != count {
            return Err(bad(&format!("{seen} rows where {count} were written")));
        }
        for t in shared.catalog.load().values() {
            t.dropped.store(true, SeqCst);
        }
        shared.next_table_id.fetch_max(catalog.next_table_id, SeqCst);
        shared.catalog.store(Arc::new(next));
        shared.catalog_extra.store(Arc::new(catalog.extra));
        shared.claims_ended.fetch_add(1, SeqCst);
        // Every version now has the log's name.
        let mut pending = shared.standby.lock().unwrap_or_else(|p| p.into_inner());
        *pending = PendingIndexes::default();
        shared.renumbered.store(false, SeqCst);
        drop(pending);
        if shared.clock.watermark() < ts {
            shared.clock.jump(ts);
        }
        Ok(ts)
    }

    /// Raises the clock to `floor` if it is below: what a new primary does
    /// once it has applied everything before its term and before it takes
    /// writes, so that its commit timestamps pass any an earlier primary
    /// may have handed out (see `replicate`). No transaction of this
    /// server's may be committing meanwhile.
    pub fn raise_clock(&self, floor: u64) {
        let _ddl = self.shared.claim_lock();
        if self.shared.clock.watermark() < floor {
            self.shared.clock.jump(floor);
        }
    }

    /// The clock's watermark: every commit at or below it is visible to
    /// new snapshots.
    pub fn watermark(&self) -> u64 {
        self.shared.clock.watermark()
    }

    /// Waits until the watermark reaches `ts`: every commit stamped at or
    /// below it has been published or undone.
    pub fn wait_watermark(&self, ts: u64) {
        self.shared.clock.wait_visible(ts);
    }

    /// Sets the live catalog to `image`'s, changing only what differs.
    fn apply_catalog(&self, image: &[u8], ts: u64) -> Result<()> {
        let shared = &self.shared;
        let image = read_catalog(image)?;
        let cur = shared.catalog.load_full();
        let by_id: HashMap<u64, &Arc<Table>> = cur.values().map(|t| (t.id, t)).collect();
        let mut next = HashMap::with_capacity(image.tables.len());
        let mut kept = HashSet::new();
        for ti in &image.tables {
            let t = match by_id.get(&ti.id) {
                Some(&t) if t.columns == ti.def.columns && t.durability == ti.def.durability => {
                    if t.name() != ti.def.name {
                        t.set_name(ti.def.name.clone());
                    }
                    if t.extra() != ti.def.extra {
                        t.set_extra(ti.def.extra.clone());
                    }
                    self.apply_indexes(t, &ti.def.indexes, ts)?;
                    kept.insert(ti.id);
                    t.clone()
                }
                Some(&t) => {
                    return Err(corrupt(format!(
                        "table \"{}\" changed its columns under the same id",
                        t.name()
                    )));
                }
                None => Arc::new(build_table(ti.id, &ti.def)?),
            };
            next.insert(ti.def.name.clone(), t);
        }
        for t in cur.values().filter(|t| !kept.contains(&t.id)) {
            t.dropped.store(true, SeqCst);
        }
        shared.next_table_id.fetch_max(image.next_table_id, SeqCst);
        shared.catalog.store(Arc::new(next));
        shared.catalog_extra.store(Arc::new(image.extra));
        // What the layer above cached about the schema is stale now.
        shared.claims_ended.fetch_add(1, SeqCst);
        Ok(())
    }

    /// Drops the indexes of `t` that `defs` lacks and builds those it adds.
    fn apply_indexes(&self, t: &Arc<Table>, defs: &[IndexDef], ts: u64) -> Result<()> {
        let shared = &self.shared;
        let live: Vec<Arc<Index>> = t.indexes.load().named().cloned().collect();
        let have: Vec<IndexDef> = live.iter().map(|ix| ix.def(&t.columns)).collect();
        for (ix, def) in live.iter().zip(&have) {
            if !defs.contains(def) {
                shared
                    .standby
                    .lock()
                    .unwrap_or_else(|p| p.into_inner())
                    .hash
                    .retain(|(_, p)| !Arc::ptr_eq(p, ix));
                remove_index(shared, t, ix.name());
            }
        }
        for def in defs.iter().filter(|d| !have.contains(d)) {
            let _tddl = t.ddl.lock().unwrap_or_else(|p| p.into_inner());
            let ix = install_index(t, def)?;
            match &*ix {
                Index::Range(_) => {
                    crate::index::fill::fill(&shared.txns, t, &ix, None, None)?;
                    ix.set_ready(ts);
                }
                Index::Hash(_) => {
                    shared.standby.lock().unwrap_or_else(|p| p.into_inner()).hash.push((t.clone(), ix))
                }
            }
        }
        Ok(())
    }

    /// Makes every pending hash index that now holds each live version of
    /// its table serve snapshots from `ts` on.
    fn ready_pending(&self, ts: u64) {
        let mut pending = self.shared.standby.lock().unwrap_or_else(|p| p.into_inner());
        pending.hash.retain(|(t, ix)| {
            if t.dropped.load(SeqCst) {
                return false;
            }
            let missing = live_versions(t).any(|v| !ix.covers(v));
            if !missing {
                ix.set_ready(ts);
            }
            missing
        });
    }
}

fn tables_by_id(shared: &Shared) -> HashMap<u64, Arc<Table>> {
    shared.catalog.load().values().map(|t| (t.id, t.clone())).collect()
}

fn table_of(tables: &HashMap<u64, Arc<Table>>, id: u64) -> Result<&Arc<Table>> {
    tables.get(&id).ok_or_else(|| corrupt(format!("no table with id {id}")))
}

/// Every version of `t` that no transaction has ended. The caller is
/// pinned.
fn live_versions(t: &Table) -> impl Iterator<Item = VersionPtr> + '_ {
    t.scan.buckets_in_use().flat_map(move |b| {
        std::iter::successors(t.scan.first(b), move |&v| t.scan.next(v))
            .filter(move |&v| t.scan.is_live(v) && v.end().load(SeqCst) == INFINITY)
    })
}

/// The live version `(created, seq)` of `t`: through an index that holds
/// every version when the old image is known, else by a scan. The caller
/// is pinned.
fn find_version(t: &Table, created: u64, seq: u32, image: Option<&[u8]>) -> Option<VersionPtr> {
    let is = |v: VersionPtr| {
        v.begin().load(SeqCst) == created && v.header().stmt == seq && v.end().load(SeqCst) == INFINITY
    };
    let set = t.indexes.load();
    let complete = set.iter().find(|ix| ix.ready_for(created));
    if let (Some(image), Some(ix)) = (image, complete) {
        if !t.layout.is_well_formed(image) {
            return None;
        }
        let mut found = None;
        match &**ix {
            Index::Hash(h) => {
                let probe = h.key.probe_row(&t.layout, image);
                let (walk, mut cur) = h.first(&probe);
                while let Some(w) = cur {
                    if h.chains.is_live(w) && is(w) {
                        found = Some(w);
                        break;
                    }
                    cur = h.chains.next(&walk, w);
                }
            }
            Index::Range(r) => {
                let mut lo = KeyBytes::new();
                r.key.encode_row(&t.layout, image, &mut lo);
                let hi = prefix_successor(&lo);
                r.for_each(Some(&lo), hi.as_deref(), Direction::Forward, |w| {
                    if is(w) {
                        found = Some(w);
                    }
                    found.is_none()
                });
            }
        }
        if found.is_some() {
            return found;
        }
    }
    live_versions(t).find(|&v| is(v))
}
