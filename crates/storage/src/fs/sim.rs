//! [`SimFs`]: an in-memory file system for crash and fault tests.
//!
//! Each file keeps two images: what was written, and what the last
//! [`File::sync_data`] made durable. Each directory entry exists twice too:
//! in the live namespace, and in the durable namespace that
//! [`Fs::sync_dir`] copies it to. A crash keeps only the durable side:
//!
//! ```text
//!             write_at / set_len          sync_data
//!  live data ───────────────────▶ data ─────────────▶ durable data
//!             create / rename / remove    sync_dir(parent)
//!  live names ──────────────────▶ names ────────────▶ durable names
//!
//!  crash image = { name -> durable data | name in durable names }
//! ```
//!
//! So an unsynced append is lost, and a created, renamed or removed file
//! whose directory was not synced is missing, keeps its old name, or comes
//! back. Directories themselves are made by [`Fs::create_dir_all`] and are
//! durable at once.
//!
//! With [`SimFs::record_images`] on, the durable state is captured after
//! every sync (of a file or a directory), and [`SimFs::crash_image`]`(n)`
//! gives a fresh file system holding the state after the `n`th sync.
//! [`SimFs::fail_write`] and [`SimFs::fail_sync`] make the `n`th write or
//! sync (counted from 1 over the whole file system) return an error; a failed
//! write stores the first half of its bytes, as a real short write might.
//! [`SimFs::fail_writes`] makes every write to some files fail with a given
//! error (a full disk: `ErrorKind::StorageFull`) until [`SimFs::heal`],
//! while shrinking files and syncing still work, as on a full disk.

use super::{File, Fs};
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::io;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

/// Durable state: every durable name with its durable bytes.
type Image = BTreeMap<PathBuf, Arc<Vec<u8>>>;

/// An in-memory file system that can produce crash images and fail on
/// demand. Cloning shares the file system.
#[derive(Clone, Default)]
pub struct SimFs {
    state: Arc<Mutex<State>>,
    /// Nanoseconds every file sync sleeps, as a disk would (shared).
    sync_delay: Arc<AtomicU64>,
}

#[derive(Default)]
struct State {
    inodes: HashMap<u64, Inode>,
    next_ino: u64,
    names: BTreeMap<PathBuf, u64>,
    durable_names: BTreeMap<PathBuf, u64>,
    dirs: BTreeSet<PathBuf>,
    writes: u64,
    syncs: u64,
    syncs_by_path: HashMap<PathBuf, u64>,
    fail_write: Option<u64>,
    fail_sync: Option<u64>,
    /// Files (by name prefix) whose writes fail, and with what, until healed.
    failing: Vec<(String, io::ErrorKind)>,
    /// `images[k]` is the durable state after the `k`th sync.
    images: Option<Vec<Arc<Image>>>,
}

#[derive(Default)]
struct Inode {
    data: Vec<u8>,
    durable: Arc<Vec<u8>>,
}

impl State {
    fn image(&self) -> Image {
        self.durable_names
            .iter()
            .map(|(p, ino)| {
                let data = self.inodes.get(ino).map(|i| i.durable.clone());
                (p.clone(), data.unwrap_or_default())
            })
            .collect()
    }

    /// Counts a sync; returns an error if this is the one to fail.
    fn begin_sync(&mut self, path: &Path) -> io::Result<()> {
        self.syncs += 1;
        *self.syncs_by_path.entry(path.to_path_buf()).or_default() += 1;
        if self.fail_sync == Some(self.syncs) {
            return Err(io::Error::other(format!("injected sync failure #{}", self.syncs)));
        }
        Ok(())
    }

    fn end_sync(&mut self) {
        if self.images.is_some() {
            let image = Arc::new(self.image());
            if let Some(images) = &mut self.images {
                images.push(image);
            }
        }
    }

    /// Counts a write; returns an error if this is the one to fail.
    fn begin_write(&mut self) -> Option<io::Error> {
        self.writes += 1;
        (self.fail_write == Some(self.writes)).then(|| io::Error::other("injected write failure"))
    }

    /// The error a write to `path` meets while [`SimFs::fail_writes`] holds.
    fn failing_write(&self, path: &Path) -> Option<io::Error> {
        let name = path.file_name()?.to_str()?;
        let (_, kind) = self.failing.iter().find(|(prefix, _)| name.starts_with(prefix.as_str()))?;
        Some(io::Error::new(*kind, format!("injected {kind} writing {name}")))
    }

    fn inode(&mut self, ino: u64) -> io::Result<&mut Inode> {
        self.inodes.get_mut(&ino).ok_or_else(|| io::Error::new(io::ErrorKind::NotFound, "stale file handle"))
    }

    fn check_parent(&self, path: &Path) -> io::Result<()> {
        match path.parent() {
            Some(p) if p.as_os_str().is_empty() || self.dirs.contains(p) => Ok(()),
            None => Ok(()),
            Some(p) => Err(io::Error::new(io::ErrorKind::NotFound, format!("no directory {}", p.display()))),
        }
    }

    /// Drops inodes no name (live or durable) refers to.
    fn collect(&mut self, ino: u64) {
        let used = self.names.values().chain(self.durable_names.values());
        if !used.into_iter().any(|&i| i == ino) {
            self.inodes.remove(&ino);
        }
    }
}

impl SimFs {
    /// An empty file system.
    pub fn new() -> Self {
        Self::default()
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        // A panic while holding the lock only happens in a failing test.
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Starts capturing the durable state after every sync; image 0 is the
    /// state now.
    pub fn record_images(&self) {
        let mut s = self.lock();
        let image = Arc::new(s.image());
        s.images = Some(vec![image]);
    }

    /// Number of images captured (syncs since recording began, plus one).
    pub fn image_count(&self) -> usize {
        self.lock().images.as_ref().map_or(0, Vec::len)
    }

    /// A fresh file system holding what a crash right after the `n`th
    /// recorded sync leaves (0: before any). `None` if there is no such
    /// image.
    pub fn crash_image(&self, n: usize) -> Option<SimFs> {
        let s = self.lock();
        let image = s.images.as_ref()?.get(n)?.clone();
        Some(Self::from_image(&image, s.dirs.clone()))
    }

    /// A fresh file system holding what a crash now leaves.
    pub fn crash_now(&self) -> SimFs {
        let s = self.lock();
        Self::from_image(&s.image(), s.dirs.clone())
    }

    fn from_image(image: &Image, dirs: BTreeSet<PathBuf>) -> SimFs {
        let mut st = State { dirs, ..State::default() };
        for (path, data) in image {
            let ino = st.next_ino;
            st.next_ino += 1;
            st.inodes.insert(ino, Inode { data: data.to_vec(), durable: data.clone() });
            st.names.insert(path.clone(), ino);
            st.durable_names.insert(path.clone(), ino);
        }
        SimFs { state: Arc::new(Mutex::new(st)), sync_delay: Arc::default() }
    }

    /// Makes every file sync take `delay` (outside any lock), like a disk.
    pub fn set_sync_delay(&self, delay: Duration) {
        let nanos = u64::try_from(delay.as_nanos()).unwrap_or(u64::MAX);
        self.sync_delay.store(nanos, Ordering::Relaxed);
    }

    /// Makes the `n`th write from now on (1 = the next) fail.
    pub fn fail_write(&self, n: u64) {
        let mut s = self.lock();
        s.fail_write = Some(s.writes + n);
    }

    /// Makes the `n`th sync from now on (1 = the next) fail.
    pub fn fail_sync(&self, n: u64) {
        let mut s = self.lock();
        s.fail_sync = Some(s.syncs + n);
    }

    /// Makes every write to a file whose name starts with `prefix` fail with
    /// an error of `kind` until [`SimFs::heal`]: writes (which store the
    /// first half of their bytes, as a short write on a filling disk
    /// might), truncations that grow a file, and creations. Shrinking a
    /// file and syncing still work, as on a full disk.
    pub fn fail_writes(&self, prefix: &str, kind: io::ErrorKind) {
        self.lock().failing.push((prefix.to_owned(), kind));
    }

    /// Ends every failure [`SimFs::fail_writes`] started.
    pub fn heal(&self) {
        self.lock().failing.clear();
    }

    /// Syncs (file and directory) so far.
    pub fn syncs(&self) -> u64 {
        self.lock().syncs
    }

    /// Writes so far.
    pub fn writes(&self) -> u64 {
        self.lock().writes
    }

    /// Syncs of files whose name starts with `prefix`.
    pub fn syncs_of(&self, prefix: &str) -> u64 {
        let s = self.lock();
        s.syncs_by_path
            .iter()
            .filter(|(p, _)| p.file_name().and_then(|n| n.to_str()).is_some_and(|n| n.starts_with(prefix)))
            .map(|(_, n)| n)
            .sum()
    }

    /// The live bytes of a file, for tests that damage files.
    pub fn read(&self, path: &Path) -> Option<Vec<u8>> {
        let s = self.lock();
        let ino = s.names.get(path)?;
        s.inodes.get(ino).map(|i| i.data.clone())
    }

    /// Replaces a file's bytes, live and durable, for tests that damage
    /// files.
    pub fn overwrite(&self, path: &Path, data: Vec<u8>) {
        let mut s = self.lock();
        if let Some(&ino) = s.names.get(path) {
            if let Some(i) = s.inodes.get_mut(&ino) {
                i.durable = Arc::new(data.clone());
                i.data = data;
            }
        }
    }
}

struct SimFile {
    fs: SimFs,
    ino: u64,
    path: PathBuf,
}

impl File for SimFile {
    fn write_at(&self, offset: u64, buf: &[u8]) -> io::Result<()> {
        let mut s = self.fs.lock();
        let fail = s.begin_write().or_else(|| s.failing_write(&self.path));
        let buf = if fail.is_some() { &buf[..buf.len() / 2] } else { buf };
        let inode = s.inode(self.ino)?;
        let off = usize::try_from(offset).map_err(io::Error::other)?;
        let end = off + buf.len();
        if inode.data.len() < end {
            inode.data.resize(end, 0);
        }
        inode.data[off..end].copy_from_slice(buf);
        match fail {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }

    fn read_at(&self, offset: u64, buf: &mut [u8]) -> io::Result<usize> {
        let mut s = self.fs.lock();
        let inode = s.inode(self.ino)?;
        let off = usize::try_from(offset).map_err(io::Error::other)?;
        if off >= inode.data.len() {
            return Ok(0);
        }
        let n = buf.len().min(inode.data.len() - off);
        buf[..n].copy_from_slice(&inode.data[off..off + n]);
        Ok(n)
    }

    fn len(&self) -> io::Result<u64> {
        let mut s = self.fs.lock();
        Ok(s.inode(self.ino)?.data.len() as u64)
    }

    fn set_len(&self, len: u64) -> io::Result<()> {
        let mut s = self.fs.lock();
        if let Some(e) = s.begin_write() {
            return Err(e);
        }
        let len = usize::try_from(len).map_err(io::Error::other)?;
        // A full disk still lets a file shrink.
        if len > s.inode(self.ino)?.data.len() {
            if let Some(e) = s.failing_write(&self.path) {
                return Err(e);
            }
        }
        s.inode(self.ino)?.data.resize(len, 0);
        Ok(())
    }

    fn sync_data(&self) -> io::Result<()> {
        let delay = self.fs.sync_delay.load(Ordering::Relaxed);
        if delay > 0 {
            std::thread::sleep(Duration::from_nanos(delay));
        }
        let mut s = self.fs.lock();
        s.begin_sync(&self.path)?;
        let inode = s.inode(self.ino)?;
        inode.durable = Arc::new(inode.data.clone());
        s.end_sync();
        Ok(())
    }
}

impl Fs for SimFs {
    fn create(&self, path: &Path) -> io::Result<Box<dyn File>> {
        let mut s = self.lock();
        s.check_parent(path)?;
        if let Some(e) = s.failing_write(path) {
            return Err(e);
        }
        let ino = match s.names.get(path) {
            Some(&ino) => {
                s.inode(ino)?.data.clear();
                ino
            }
            None => {
                let ino = s.next_ino;
                s.next_ino += 1;
                s.inodes.insert(ino, Inode::default());
                s.names.insert(path.to_path_buf(), ino);
                ino
            }
        };
        Ok(Box::new(SimFile { fs: self.clone(), ino, path: path.to_path_buf() }))
    }

    fn open(&self, path: &Path) -> io::Result<Box<dyn File>> {
        let s = self.lock();
        let ino = *s
            .names
            .get(path)
            .ok_or_else(|| io::Error::new(io::ErrorKind::NotFound, format!("no file {}", path.display())))?;
        Ok(Box::new(SimFile { fs: self.clone(), ino, path: path.to_path_buf() }))
    }

    fn rename(&self, from: &Path, to: &Path) -> io::Result<()> {
        let mut s = self.lock();
        s.check_parent(to)?;
        let ino = s
            .names
            .remove(from)
            .ok_or_else(|| io::Error::new(io::ErrorKind::NotFound, format!("no file {}", from.display())))?;
        if let Some(old) = s.names.insert(to.to_path_buf(), ino) {
            s.collect(old);
        }
        Ok(())
    }

    fn remove(&self, path: &Path) -> io::Result<()> {
        let mut s = self.lock();
        let ino = s
            .names
            .remove(path)
            .ok_or_else(|| io::Error::new(io::ErrorKind::NotFound, format!("no file {}", path.display())))?;
        s.collect(ino);
        Ok(())
    }

    fn list(&self, dir: &Path) -> io::Result<Vec<String>> {
        let s = self.lock();
        if !s.dirs.contains(dir) {
            return Err(io::Error::new(io::ErrorKind::NotFound, format!("no directory {}", dir.display())));
        }
        Ok(s.names
            .keys()
            .filter(|p| p.parent() == Some(dir))
            .filter_map(|p| p.file_name()?.to_str().map(str::to_owned))
            .collect())
    }

    fn create_dir_all(&self, dir: &Path) -> io::Result<()> {
        let mut s = self.lock();
        for d in dir.ancestors() {
            if !d.as_os_str().is_empty() {
                s.dirs.insert(d.to_path_buf());
            }
        }
        Ok(())
    }

    fn sync_dir(&self, dir: &Path) -> io::Result<()> {
        let mut s = self.lock();
        s.begin_sync(dir)?;
        let gone: Vec<(PathBuf, u64)> = s
            .durable_names
            .iter()
            .filter(|(p, _)| p.parent() == Some(dir))
            .map(|(p, i)| (p.clone(), *i))
            .collect();
        for (p, _) in &gone {
            s.durable_names.remove(p);
        }
        let live: Vec<(PathBuf, u64)> =
            s.names.iter().filter(|(p, _)| p.parent() == Some(dir)).map(|(p, i)| (p.clone(), *i)).collect();
        s.durable_names.extend(live);
        for (_, ino) in gone {
            s.collect(ino);
        }
        s.end_sync();
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn crash_keeps_only_synced_bytes_and_names() {
        let fs = SimFs::new();
        let dir = Path::new("/db");
        fs.create_dir_all(dir).unwrap();
        fs.record_images();
        let f = fs.create(&dir.join("a")).unwrap();
        f.write_at(0, b"hello").unwrap();
        f.sync_data().unwrap(); // 1: data durable, name not
        fs.sync_dir(dir).unwrap(); // 2: name durable
        f.write_at(5, b" world").unwrap();
        fs.rename(&dir.join("a"), &dir.join("b")).unwrap();
        f.sync_data().unwrap(); // 3: longer data durable, rename not
        assert!(fs.crash_image(1).unwrap().open(&dir.join("a")).is_err());
        let img = fs.crash_image(2).unwrap();
        let a = img.open(&dir.join("a")).unwrap();
        assert_eq!(super::super::read_all(a.as_ref()).unwrap(), b"hello");
        let img = fs.crash_image(3).unwrap();
        assert!(img.open(&dir.join("b")).is_err());
        let a = img.open(&dir.join("a")).unwrap();
        assert_eq!(super::super::read_all(a.as_ref()).unwrap(), b"hello world");
    }

    #[test]
    fn injected_failures_fire_once() {
        let fs = SimFs::new();
        fs.create_dir_all(Path::new("/d")).unwrap();
        let f = fs.create(Path::new("/d/x")).unwrap();
        fs.fail_write(2);
        f.write_at(0, b"ab").unwrap();
        assert!(f.write_at(2, b"cdef").is_err());
        assert_eq!(fs.read(Path::new("/d/x")).unwrap(), b"abcd");
        fs.fail_sync(1);
        assert!(f.sync_data().is_err());
        f.sync_data().unwrap();
    }

    #[test]
    fn failing_writes_last_until_healed_and_spare_shrinking() {
        let fs = SimFs::new();
        fs.create_dir_all(Path::new("/d")).unwrap();
        let f = fs.create(Path::new("/d/log-1")).unwrap();
        let other = fs.create(Path::new("/d/data-1")).unwrap();
        f.write_at(0, b"ab").unwrap();
        fs.fail_writes("log-", io::ErrorKind::StorageFull);
        for _ in 0..3 {
            let e = f.write_at(2, b"cdef").unwrap_err();
            assert_eq!(e.kind(), io::ErrorKind::StorageFull);
        }
        assert_eq!(fs.read(Path::new("/d/log-1")).unwrap(), b"abcd");
        assert!(f.set_len(10).is_err());
        f.set_len(2).unwrap();
        f.sync_data().unwrap();
        assert!(fs.create(Path::new("/d/log-2")).is_err());
        other.write_at(0, b"fine").unwrap();
        fs.heal();
        f.write_at(2, b"cdef").unwrap();
        assert_eq!(fs.read(Path::new("/d/log-1")).unwrap(), b"abcdef");
    }
}
