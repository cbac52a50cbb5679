//! Replication slots: a consumer's durable position in the change feed,
//! which keeps the log it still needs from being removed.
//!
//! A server with a data directory keeps its slots in the `slots` file. A
//! member of a replicated group keeps the same file, but every change of a
//! durable slot (create, drop, confirm) is ordered by the group's log
//! first ([`SlotGroup`]) and applied on every member ([`Slots::apply`]),
//! so that the slots and their positions survive a change of primary.
//! Temporary slots belong to their session and are never written down.
//!
//! The slots file holds one frame (CRC-checked), written to `slots.tmp`,
//! synced and renamed over `slots`, so a crash leaves the old or the new
//! list whole:
//!
//! ```text
//!  payload: version u8 (1), count u32, then per slot:
//!    name bytes, plugin bytes, database bytes, confirmed segment u64, offset u64
//!  a change, in a group's log:
//!    u8 1 (create), name bytes, plugin bytes, database bytes, segment u64, offset u64
//!    u8 2 (drop), name bytes
//!    u8 3 (confirm), name bytes, segment u64, offset u64
//! ```

use crate::error::{Error, Result};
use crate::format::{push_frame, read_frame, Put, Reader};
use crate::fs::{read_all, Fs};
use crate::log::segment::LogPos;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering::SeqCst};
use std::sync::{Arc, Mutex, MutexGuard};

/// A replication slot: a consumer's name for its position in the feed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Slot {
    /// The slot's name.
    pub name: String,
    /// The output plugin it decodes with.
    pub plugin: String,
    /// The database it belongs to.
    pub database: String,
    /// Everything up to here is confirmed: the feed resumes after it.
    pub confirmed: LogPos,
    /// A temporary slot is never written down and goes with its session.
    pub temporary: bool,
    /// The session streaming from it, if any (its process id).
    pub active_pid: Option<u32>,
}

/// A change of a durable slot, as a replicated group's log carries it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SlotChange {
    /// A new slot (never temporary, never active).
    Create(Slot),
    /// The slot of that name goes.
    Drop(String),
    /// The slot of that name moves forward to the position (never back).
    Confirm(String, LogPos),
}

impl SlotChange {
    /// The change's bytes (see the module's header).
    pub fn encode(&self) -> Vec<u8> {
        let mut out = Vec::new();
        match self {
            SlotChange::Create(s) => {
                out.put_u8(1);
                put_slot(&mut out, s);
            }
            SlotChange::Drop(name) => {
                out.put_u8(2);
                out.put_bytes(name.as_bytes());
            }
            SlotChange::Confirm(name, to) => {
                out.put_u8(3);
                out.put_bytes(name.as_bytes());
                out.put_u64(to.segment);
                out.put_u64(to.offset);
            }
        }
        out
    }

    /// The change `bytes` hold; `None` if they are not one.
    pub fn decode(bytes: &[u8]) -> Option<SlotChange> {
        let mut r = Reader::new(bytes);
        let change = match r.u8()? {
            1 => SlotChange::Create(get_slot(&mut r)?),
            2 => SlotChange::Drop(text(&mut r)?),
            3 => SlotChange::Confirm(text(&mut r)?, LogPos { segment: r.u64()?, offset: r.u64()? }),
            _ => return None,
        };
        r.is_empty().then_some(change)
    }
}

/// Where the slots of a member of a replicated group send their changes.
pub trait SlotGroup: Send + Sync {
    /// Orders `change` in the group's log; returns once this member has
    /// applied it ([`Slots::apply`]), or with the reason it was not taken
    /// (this member is not the primary, the group is unreachable).
    fn replicate(&self, change: &SlotChange) -> Result<()>;
}

/// The slots of a data directory, kept in its `slots` file.
pub struct Slots {
    fs: Arc<dyn Fs>,
    dir: PathBuf,
    slots: Mutex<Vec<Slot>>,
    /// The first segment some slot still needs (`u64::MAX`: none), which
    /// the checkpoint worker does not remove (in a group: the first entry
    /// of the group's log).
    keep_from: Arc<AtomicU64>,
    /// In a replicated group: where durable changes go first.
    group: Option<Arc<dyn SlotGroup>>,
    /// Orders this member's changes in a group: a name checked free stays
    /// free until its creation is applied.
    changing: Mutex<()>,
}

/// The slots file's name.
pub const SLOTS_FILE: &str = "slots";

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

impl Slots {
    /// The slots written in `dir` (none if it has no slots file).
    pub fn open(fs: Arc<dyn Fs>, dir: PathBuf) -> Result<Slots> {
        Self::open_in(fs, dir, None)
    }

    /// The slots of a member of a replicated group, written in `dir`:
    /// durable changes are made through `group`.
    pub fn replicated(fs: Arc<dyn Fs>, dir: PathBuf, group: Arc<dyn SlotGroup>) -> Result<Slots> {
        Self::open_in(fs, dir, Some(group))
    }

    fn open_in(fs: Arc<dyn Fs>, dir: PathBuf, group: Option<Arc<dyn SlotGroup>>) -> Result<Slots> {
        let slots = read_slots(fs.as_ref(), &dir)?;
        let s = Slots {
            fs,
            dir,
            slots: Mutex::new(slots),
            keep_from: Arc::new(AtomicU64::new(u64::MAX)),
            group,
            changing: Mutex::new(()),
        };
        s.publish(&s.lock());
        Ok(s)
    }

    /// Shared with the checkpoint worker: the first segment to keep.
    pub(crate) fn keep_from(&self) -> Arc<AtomicU64> {
        self.keep_from.clone()
    }

    /// The first segment (in a group: log entry) some slot still needs;
    /// `u64::MAX` when none does.
    pub fn first_needed(&self) -> u64 {
        self.keep_from.load(SeqCst)
    }

    fn lock(&self) -> MutexGuard<'_, Vec<Slot>> {
        lock(&self.slots)
    }

    fn publish(&self, slots: &[Slot]) {
        let min = slots.iter().map(|s| s.confirmed.segment).min().unwrap_or(u64::MAX);
        self.keep_from.store(min, SeqCst);
    }

    /// Every slot.
    pub fn list(&self) -> Vec<Slot> {
        self.lock().clone()
    }

    /// The slot named `name`.
    pub fn get(&self, name: &str) -> Option<Slot> {
        self.lock().iter().find(|s| s.name == name).cloned()
    }

    /// The group a durable change of `temporary` slot goes through first.
    fn group_for(&self, temporary: bool) -> Option<&Arc<dyn SlotGroup>> {
        self.group.as_ref().filter(|_| !temporary)
    }

    /// Adds `slot`; false if one of that name exists.
    pub fn create(&self, slot: Slot) -> Result<bool> {
        if let Some(group) = self.group_for(slot.temporary) {
            let _one = lock(&self.changing);
            if self.get(&slot.name).is_some() {
                return Ok(false);
            }
            group.replicate(&SlotChange::Create(Slot { active_pid: None, ..slot }))?;
            return Ok(true);
        }
        let mut slots = self.lock();
        if slots.iter().any(|s| s.name == slot.name) {
            return Ok(false);
        }
        let durable = !slot.temporary;
        slots.push(slot);
        if durable {
            if let Err(e) = self.write(&slots) {
                slots.pop();
                return Err(e);
            }
        }
        self.publish(&slots);
        Ok(true)
    }

    /// Removes the slot named `name`; false if there is none.
    pub fn drop_slot(&self, name: &str) -> Result<bool> {
        let Some(slot) = self.get(name) else { return Ok(false) };
        if let Some(group) = self.group_for(slot.temporary) {
            let _one = lock(&self.changing);
            group.replicate(&SlotChange::Drop(name.to_string()))?;
            return Ok(true);
        }
        let mut slots = self.lock();
        let Some(i) = slots.iter().position(|s| s.name == name) else { return Ok(false) };
        let gone = slots.remove(i);
        if !gone.temporary {
            if let Err(e) = self.write(&slots) {
                slots.insert(i, gone);
                return Err(e);
            }
        }
        self.publish(&slots);
        Ok(true)
    }

    /// Marks the slot in use by `pid` (`None`: released); false if it is
    /// missing, or in use by another session when `pid` is given. (Not
    /// written down, and in a group known to this member only.)
    pub fn set_active(&self, name: &str, pid: Option<u32>) -> bool {
        let mut slots = self.lock();
        match slots.iter_mut().find(|s| s.name == name) {
            Some(s) if pid.is_none() || s.active_pid.is_none() || s.active_pid == pid => {
                s.active_pid = pid;
                true
            }
            _ => false,
        }
    }

    /// Moves the slot's confirmed position forward to `to` (never back),
    /// and writes it down before returning.
    pub fn confirm(&self, name: &str, to: LogPos) -> Result<()> {
        let Some(slot) = self.get(name) else { return Ok(()) };
        if to <= slot.confirmed {
            return Ok(());
        }
        if let Some(group) = self.group_for(slot.temporary) {
            return group.replicate(&SlotChange::Confirm(name.to_string(), to));
        }
        let mut slots = self.lock();
        let Some(i) = slots.iter().position(|s| s.name == name) else { return Ok(()) };
        if to <= slots[i].confirmed {
            return Ok(());
        }
        let was = slots[i].confirmed;
        slots[i].confirmed = to;
        if !slots[i].temporary {
            if let Err(e) = self.write(&slots) {
                slots[i].confirmed = was;
                return Err(e);
            }
        }
        self.publish(&slots);
        Ok(())
    }

    /// Applies a change the group's log ordered, on every member: the
    /// same outcome everywhere, written down before it returns. A create
    /// of a name that exists, or a change of a missing slot, changes
    /// nothing (two members' requests crossed).
    pub fn apply(&self, change: &SlotChange) -> Result<()> {
        let mut slots = self.lock();
        let before = slots.clone();
        match change {
            SlotChange::Create(slot) => {
                if slots.iter().any(|s| s.name == slot.name) {
                    return Ok(());
                }
                slots.push(Slot { temporary: false, active_pid: None, ..slot.clone() });
            }
            SlotChange::Drop(name) => slots.retain(|s| s.temporary || &s.name != name),
            SlotChange::Confirm(name, to) => {
                match slots.iter_mut().find(|s| !s.temporary && &s.name == name) {
                    Some(s) if *to > s.confirmed => s.confirmed = *to,
                    _ => return Ok(()),
                }
            }
        }
        if let Err(e) = self.write(&slots) {
            *slots = before;
            return Err(e);
        }
        self.publish(&slots);
        Ok(())
    }

    /// The durable slots as bytes: part of a group member's image.
    pub fn image(&self) -> Vec<u8> {
        encode_slots(&self.lock())
    }

    /// Replaces the durable slots by those of an image ([`Slots::image`]),
    /// written down before it returns; temporary slots stay.
    pub fn install(&self, image: &[u8]) -> Result<()> {
        let path = self.dir.join(SLOTS_FILE);
        let durable = decode_slots(image).ok_or_else(|| Error::corrupt(&path, 0, "malformed slots image"))?;
        let mut slots = self.lock();
        let mut next: Vec<Slot> = durable
            .into_iter()
            .map(|mut s| {
                s.active_pid = slots.iter().find(|o| o.name == s.name).and_then(|o| o.active_pid);
                s
            })
            .collect();
        next.extend(slots.iter().filter(|s| s.temporary).cloned());
        self.write(&next)?;
        *slots = next;
        self.publish(&slots);
        Ok(())
    }

    /// Writes the durable slots: a new file, synced, renamed over the old.
    fn write(&self, slots: &[Slot]) -> Result<()> {
        let mut bytes = Vec::new();
        push_frame(&mut bytes, &encode_slots(slots));
        let tmp = self.dir.join("slots.tmp");
        let path = self.dir.join(SLOTS_FILE);
        let file = self.fs.create(&tmp).map_err(|e| Error::io(&tmp, "create", e))?;
        file.write_at(0, &bytes).map_err(|e| Error::io(&tmp, "write", e))?;
        file.sync_data().map_err(|e| Error::io(&tmp, "fdatasync", e))?;
        drop(file);
        self.fs.rename(&tmp, &path).map_err(|e| Error::io(&path, "rename", e))?;
        self.fs.sync_dir(&self.dir).map_err(|e| Error::io(&self.dir, "sync directory", e))
    }
}

fn put_slot(out: &mut Vec<u8>, s: &Slot) {
    out.put_bytes(s.name.as_bytes());
    out.put_bytes(s.plugin.as_bytes());
    out.put_bytes(s.database.as_bytes());
    out.put_u64(s.confirmed.segment);
    out.put_u64(s.confirmed.offset);
}

fn text(r: &mut Reader<'_>) -> Option<String> {
    String::from_utf8(r.bytes()?.to_vec()).ok()
}

fn get_slot(r: &mut Reader<'_>) -> Option<Slot> {
    let (name, plugin, database) = (text(r)?, text(r)?, text(r)?);
    let confirmed = LogPos { segment: r.u64()?, offset: r.u64()? };
    Some(Slot { name, plugin, database, confirmed, temporary: false, active_pid: None })
}

/// The payload of the slots file: the durable slots among `slots`.
fn encode_slots(slots: &[Slot]) -> Vec<u8> {
    let mut payload = Vec::new();
    payload.put_u8(1);
    let durable: Vec<&Slot> = slots.iter().filter(|s| !s.temporary).collect();
    payload.put_u32(durable.len() as u32);
    for s in durable {
        put_slot(&mut payload, s);
    }
    payload
}

fn decode_slots(payload: &[u8]) -> Option<Vec<Slot>> {
    let mut r = Reader::new(payload);
    if r.u8()? != 1 {
        return None;
    }
    let count = r.u32()?;
    let slots = (0..count).map(|_| get_slot(&mut r)).collect::<Option<Vec<_>>>()?;
    r.is_empty().then_some(slots)
}

/// The slots in `dir`'s slots file; none if there is no such file.
pub(crate) fn read_slots(fs: &dyn Fs, dir: &Path) -> Result<Vec<Slot>> {
    let path = dir.join(SLOTS_FILE);
    let file = match fs.open(&path) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(Error::io(&path, "open", e)),
    };
    let bytes = read_all(file.as_ref()).map_err(|e| Error::io(&path, "read", e))?;
    let (payload, _) = read_frame(&bytes, 0).map_err(|e| Error::corrupt(&path, 0, e.what()))?;
    decode_slots(payload).ok_or_else(|| Error::corrupt(&path, 0, "malformed slots file"))
}

/// The first segment the slots in `dir` need (`u64::MAX`: none).
pub(crate) fn first_kept_segment(fs: &dyn Fs, dir: &Path) -> Result<u64> {
    Ok(read_slots(fs, dir)?.iter().map(|s| s.confirmed.segment).min().unwrap_or(u64::MAX))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicUsize;

    /// A group of one member: the change is "ordered" and applied at once.
    struct Loopback(Mutex<Option<Arc<Slots>>>, AtomicUsize);

    impl SlotGroup for Loopback {
        fn replicate(&self, change: &SlotChange) -> Result<()> {
            self.1.fetch_add(1, SeqCst);
            let slots = lock(&self.0).clone().expect("wired");
            slots.apply(change)
        }
    }

    fn slot(name: &str, at: u64) -> Slot {
        Slot {
            name: name.into(),
            plugin: "pgoutput".into(),
            database: "centum".into(),
            confirmed: LogPos { segment: at, offset: 0 },
            temporary: false,
            active_pid: None,
        }
    }

    #[test]
    fn changes_round_trip_and_garbage_is_refused() {
        for c in [
            SlotChange::Create(slot("a", 7)),
            SlotChange::Drop("a".into()),
            SlotChange::Confirm("a".into(), LogPos { segment: 9, offset: 2 }),
        ] {
            assert_eq!(SlotChange::decode(&c.encode()), Some(c.clone()));
            let mut longer = c.encode();
            longer.push(0);
            assert_eq!(SlotChange::decode(&longer), None);
        }
        assert_eq!(SlotChange::decode(&[9]), None);
        assert_eq!(SlotChange::decode(&[]), None);
    }

    #[test]
    fn a_group_members_changes_go_through_the_group_and_survive_reopening() {
        let dir = tempfile::tempdir().unwrap();
        let fs: Arc<dyn Fs> = Arc::new(crate::fs::StdFs);
        let group = Arc::new(Loopback(Mutex::new(None), AtomicUsize::new(0)));
        let slots = Arc::new(Slots::replicated(fs.clone(), dir.path().into(), group.clone()).unwrap());
        *lock(&group.0) = Some(slots.clone());
        assert!(slots.create(slot("a", 5)).unwrap());
        assert!(!slots.create(slot("a", 6)).unwrap());
        assert!(slots.create(Slot { temporary: true, ..slot("t", 1) }).unwrap());
        slots.confirm("a", LogPos { segment: 8, offset: 1 }).unwrap();
        slots.confirm("a", LogPos { segment: 2, offset: 0 }).unwrap();
        // Create and confirm of "a" went through the group; the temporary
        // slot and the backward confirm did not.
        assert_eq!(group.1.load(SeqCst), 2);
        assert_eq!(slots.first_needed(), 1);
        let image = slots.image();
        let reopened = Slots::open(fs.clone(), dir.path().into()).unwrap();
        assert_eq!(
            reopened.list(),
            vec![Slot { confirmed: LogPos { segment: 8, offset: 1 }, ..slot("a", 0) }]
        );
        // An image installed elsewhere gives the same durable slots.
        let other = tempfile::tempdir().unwrap();
        let copy = Slots::open(fs.clone(), other.path().into()).unwrap();
        copy.install(&image).unwrap();
        assert_eq!(copy.list(), reopened.list());
        assert!(slots.drop_slot("a").unwrap());
        assert_eq!(group.1.load(SeqCst), 3);
        assert_eq!(slots.list().len(), 1, "the temporary slot stays");
        assert!(copy.install(b"junk").is_err());
    }
}
