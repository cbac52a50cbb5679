//! Model checks of the lock-free core under `loom` (`make loom`).
//!
//! Built only with `--cfg loom`, where [`crate::sync`] gives the version
//! header and the index chains loom's atomics. Loom runs every test under
//! every interleaving of its threads (up to a preemption bound) and reports
//! any access to a version's atomics, or to the shadow cell standing in for
//! its data, that is not ordered after the version was made.
//!
//! - index chains ([`crate::index::chain`]): concurrent pushes seen by a
//!   walker; unlinks of neighbours, of the head while a push goes in, and
//!   both at once; a batch sweep racing an unlink between its versions;
//!   a scan list's occupancy map finding every push that has returned;
//! - hash index chains ([`crate::index::split`]): a doubling, and the
//!   insert that links the new bucket's dummy, racing a second insert and a
//!   look-up of a version that moves to the new bucket; the dummy's link
//!   racing the unlink of the version it is linked after;
//! - version install ([`crate::mvcc::write`]): two writers race for one end
//!   field; a new version published into a chain is seen fully written;
//! - the range index's B+tree ([`crate::index::btree`], with 4-entry nodes
//!   under loom): a root split under a look-up, under a scan, and under a
//!   second inserter whose key moves to the new leaf; a leaf merge (and the
//!   root collapsing onto its one child) under a backward scan.
//!
//! Loom's partial-order reduction can miss interleavings: a load by one
//! thread followed by a load and a compare-and-swap of the same atomic by
//! another is never reordered (tokio-rs/loom#166, #392), and a walker that
//! runs before the writers then sees only the initial chain, in one
//! iteration. So every actor, the walker included, is a spawned thread, the
//! walker spawned last (loom first runs threads in spawn order, and moves a
//! later read before an earlier write), and each test checks that the
//! outcomes loom produced are exactly the possible ones: a test that
//! explores too little fails instead of passing vacuously.
//!
//! Versions are plain heap memory that loom does not track; each iteration
//! frees its own after every thread has joined.

use crate::index::chain::Chains;
use crate::index::split::SplitChains;
use crate::mvcc::word::{TxnId, Word, INFINITY};
use crate::row::version::VersionPtr;
use crate::sync::Ordering::SeqCst;
use loom::cell::UnsafeCell;
use loom::sync::Arc;
use loom::thread;
use std::collections::BTreeSet;
use std::fmt::Debug;

/// Runs `f` under every interleaving loom explores and returns the set of
/// outcomes it returned. Three preemptions at most unless
/// `LOOM_MAX_PREEMPTIONS` says otherwise, so `make loom` stays quick.
fn explore<T>(f: impl Fn() -> T + Sync + Send + 'static) -> BTreeSet<T>
where
    T: Ord + Debug + Send + 'static,
{
    explore_bounded(None, f)
}

/// [`explore`] with the preemption bound `bound` (`None`: the
/// `LOOM_MAX_PREEMPTIONS` setting, or 3).
fn explore_bounded<T>(bound: Option<usize>, f: impl Fn() -> T + Sync + Send + 'static) -> BTreeSet<T>
where
    T: Ord + Debug + Send + 'static,
{
    let seen = std::sync::Arc::new(std::sync::Mutex::new(BTreeSet::new()));
    let mut b = loom::model::Builder::new();
    if bound.is_some() || b.preemption_bound.is_none() {
        b.preemption_bound = Some(bound.unwrap_or(3));
    }
    let out = seen.clone();
    b.check(move || {
        let o = f();
        out.lock().expect("outcomes").insert(o);
    });
    let mut seen = seen.lock().expect("outcomes");
    std::mem::take(&mut *seen)
}

/// A one-link version whose four data bytes all hold `tag`.
fn version(tag: u8) -> VersionPtr {
    VersionPtr::new(1, 0, 0, 1, 4, |d| d.fill(tag))
}

fn tag(v: VersionPtr) -> u8 {
    let d = v.data();
    assert!(d.iter().all(|&b| b == d[0]), "version seen half written: {d:?}");
    d[0]
}

/// Every version reachable from bucket 0, marked ones included, in chain
/// order. Panics on a cycle (no chain here is longer than four).
fn reachable(c: &Chains) -> Vec<VersionPtr> {
    let mut out = vec![];
    let mut cur = c.first(0);
    while let Some(v) = cur {
        assert!(out.len() < 8, "cycle in chain");
        out.push(v);
        cur = c.next(v);
    }
    out
}

/// Walks bucket 0 as a reader does (skipping marked versions) and returns
/// the tags it saw. Panics if it meets a version twice.
fn walk(c: &Chains) -> Vec<u8> {
    let mut met = vec![];
    let mut live = vec![];
    let mut cur = c.first(0);
    while let Some(v) = cur {
        assert!(!met.contains(&v), "walker met version {} twice", tag(v));
        met.push(v);
        if c.is_live(v) {
            live.push(tag(v));
        }
        cur = c.next(v);
    }
    live
}

/// A chain (one bucket, link 0) holding `tags` from head to tail.
fn chain_of(tags: &[u8]) -> (Arc<Chains>, Vec<VersionPtr>) {
    let c = Chains::new(1, 0);
    let vs: Vec<_> = tags.iter().map(|&t| version(t)).collect();
    for &v in vs.iter().rev() {
        c.push(0, v);
    }
    (Arc::new(c), vs)
}

fn spawn_walker(c: &Arc<Chains>) -> thread::JoinHandle<Vec<u8>> {
    let c = c.clone();
    thread::spawn(move || walk(&c))
}

fn spawn_push(c: &Arc<Chains>, t: u8) -> thread::JoinHandle<VersionPtr> {
    let c = c.clone();
    thread::spawn(move || {
        let v = version(t);
        c.push(0, v);
        v
    })
}

fn spawn_unlink(c: &Arc<Chains>, v: VersionPtr) -> thread::JoinHandle<()> {
    let c = c.clone();
    thread::spawn(move || c.unlink(0, v))
}

fn free(vs: impl IntoIterator<Item = VersionPtr>) {
    for v in vs {
        // SAFETY: every thread of this iteration has joined; nothing else
        // holds the version.
        unsafe { v.free() };
    }
}

/// Two pushes race each other and a walker: the walker never meets a
/// version twice nor loses the one already there, and afterwards both
/// pushes are in the chain.
#[test]
fn loom_pushes_race_a_walker() {
    let seen = explore(|| {
        let (c, old) = chain_of(&[0]);
        let pushers = [spawn_push(&c, 1), spawn_push(&c, 2)];
        let walked = spawn_walker(&c).join().expect("walker");
        let new = pushers.map(|h| h.join().expect("pusher"));
        let after = walk(&c);
        assert!(after == [1, 2, 0] || after == [2, 1, 0], "a push was lost: {after:?}");
        assert_eq!(reachable(&c).len(), 3);
        free(old.into_iter().chain(new));
        walked
    });
    let all: BTreeSet<Vec<u8>> =
        [&[0][..], &[1, 0], &[2, 0], &[1, 2, 0], &[2, 1, 0]].map(|s| s.to_vec()).into();
    assert_eq!(seen, all);
}

/// Two pushes into different buckets of a scan list race a scanner that
/// finds buckets through the occupancy map. Each pusher raises a flag once
/// its push has returned (as its transaction would then commit); a
/// scanner that saw the flag must find the version, although both pushes
/// set bits in the same map word and the same summary word.
#[test]
fn loom_occupancy_map_finds_every_finished_push() {
    let seen = explore(|| {
        let c = Arc::new(Chains::with_occupancy(2, 0));
        let done = Arc::new([
            loom::sync::atomic::AtomicBool::new(false),
            loom::sync::atomic::AtomicBool::new(false),
        ]);
        let pushers = [0u8, 1].map(|b| {
            let (c, done) = (c.clone(), done.clone());
            thread::spawn(move || {
                let v = version(b);
                c.push(b as usize, v);
                done[b as usize].store(true, SeqCst);
                v
            })
        });
        let scanner = {
            let (c, done) = (c.clone(), done.clone());
            thread::spawn(move || {
                let finished = [done[0].load(SeqCst), done[1].load(SeqCst)];
                let mut found = [false; 2];
                for b in c.buckets_in_use() {
                    let mut cur = c.first(b);
                    while let Some(v) = cur {
                        found[tag(v) as usize] = true;
                        cur = c.next(v);
                    }
                }
                for i in 0..2 {
                    assert!(!finished[i] || found[i], "push {i} had returned but the scan missed it");
                }
                (finished, found)
            })
        };
        let out = scanner.join().expect("scanner");
        let vs = pushers.map(|h| h.join().expect("pusher"));
        assert_eq!(c.buckets_in_use().collect::<Vec<_>>(), [0, 1]);
        free(vs);
        out
    });
    // Scans before, between and after the pushes were all explored.
    assert!(seen.contains(&([false, false], [false, false])), "{seen:?}");
    assert!(seen.contains(&([true, true], [true, true])), "{seen:?}");
    assert!(seen.iter().any(|(f, _)| f == &[true, false]), "{seen:?}");
}

/// Unlinking two neighbours at once (the Harris-Michael case where one
/// thread's swing would otherwise bring back the other's victim): afterwards
/// neither is reachable even through marked links, and a concurrent walker
/// always sees the versions on either side of them.
#[test]
fn loom_unlinks_of_adjacent_versions() {
    let seen = explore(|| {
        let (c, vs) = chain_of(&[0, 1, 2, 3]);
        let unlinkers = [spawn_unlink(&c, vs[1]), spawn_unlink(&c, vs[2])];
        let walked = spawn_walker(&c).join().expect("walker");
        for h in unlinkers {
            h.join().expect("unlinker");
        }
        assert_eq!(reachable(&c), [vs[0], vs[3]], "an unlinked version is still reachable");
        assert!(!c.is_live(vs[1]) && !c.is_live(vs[2]));
        free(vs);
        walked
    });
    let all: BTreeSet<Vec<u8>> =
        [&[0, 1, 2, 3][..], &[0, 2, 3], &[0, 1, 3], &[0, 3]].map(|s| s.to_vec()).into();
    assert_eq!(seen, all);
}

/// A batch sweep (two versions marked, one sweep to the end of the chain)
/// racing a single unlink of the version between them: all three go, none
/// stays reachable through another's frozen link, and a walker sees the
/// ends of the chain whatever it meets.
#[test]
fn loom_batch_sweep_races_an_unlink_between_its_versions() {
    let seen = explore(|| {
        let (c, vs) = chain_of(&[0, 1, 2, 3, 4]);
        let sweeper = {
            let c = c.clone();
            let (a, b) = (vs[1], vs[3]);
            thread::spawn(move || {
                c.mark(a);
                c.mark(b);
                c.sweep(0, None);
            })
        };
        let unlinker = spawn_unlink(&c, vs[2]);
        let walked = spawn_walker(&c).join().expect("walker");
        sweeper.join().expect("sweeper");
        unlinker.join().expect("unlinker");
        assert_eq!(reachable(&c), [vs[0], vs[4]], "a swept or unlinked version is still reachable");
        free(vs);
        walked
    });
    assert!(seen.iter().all(|w| w.first() == Some(&0) && w.last() == Some(&4)), "{seen:?}");
    assert!(
        seen.contains(&vec![0, 1, 2, 3, 4]) && seen.contains(&vec![0, 4]),
        "explored too little: {seen:?}"
    );
}

/// Unlinking the head while a push goes in: both compare-and-swap the
/// bucket word, or the push lands in front of the version being unlinked.
/// The new version must stay, the old head must go, and a walker never
/// loses the tail.
#[test]
fn loom_unlink_of_head_races_a_push() {
    let seen = explore(|| {
        let (c, vs) = chain_of(&[0, 1]);
        let pusher = spawn_push(&c, 9);
        let unlinker = spawn_unlink(&c, vs[0]);
        let walked = spawn_walker(&c).join().expect("walker");
        let new = pusher.join().expect("pusher");
        unlinker.join().expect("unlinker");
        assert_eq!(reachable(&c), [new, vs[1]], "push lost or old head still reachable");
        assert_eq!(c.chain_len(0), 2);
        free(vs.into_iter().chain([new]));
        walked
    });
    let all: BTreeSet<Vec<u8>> = [&[0, 1][..], &[1], &[9, 0, 1], &[9, 1]].map(|s| s.to_vec()).into();
    assert_eq!(seen, all);
}

/// The three chain operations at once: the head and its neighbour are
/// unlinked while a push goes in at the head. Only the pushed version and
/// the tail are left, and a walker sees every mix of the three changes.
#[test]
fn loom_unlinks_of_head_and_neighbour_race_a_push() {
    let seen = explore(|| {
        let (c, vs) = chain_of(&[0, 1, 2]);
        let pusher = spawn_push(&c, 9);
        let unlinkers = [spawn_unlink(&c, vs[0]), spawn_unlink(&c, vs[1])];
        let walked = spawn_walker(&c).join().expect("walker");
        let new = pusher.join().expect("pusher");
        for h in unlinkers {
            h.join().expect("unlinker");
        }
        assert_eq!(reachable(&c), [new, vs[2]], "push lost or unlinked version reachable");
        free(vs.into_iter().chain([new]));
        walked
    });
    let all: BTreeSet<Vec<u8>> =
        [&[0, 1, 2][..], &[0, 2], &[1, 2], &[2], &[9, 0, 1, 2], &[9, 0, 2], &[9, 1, 2], &[9, 2]]
            .map(|s| s.to_vec())
            .into();
    assert_eq!(seen, all);
}

/// A hash chain's versions, hashed by their tag.
fn split_hash(v: VersionPtr) -> u64 {
    u64::from(tag(v))
}

/// Split chains of one bucket holding versions tagged (and hashed) `tags`.
fn split_of(tags: &[u8]) -> (Arc<SplitChains>, Vec<VersionPtr>) {
    let c = SplitChains::new(1, 0);
    let vs: Vec<_> = tags.iter().map(|&t| version(t)).collect();
    for &v in &vs {
        c.insert(split_hash(v), v, &split_hash);
    }
    (Arc::new(c), vs)
}

/// The tags met by a look-up of hash `h`, in walk order, marked versions
/// skipped; panics on a version met twice.
fn split_walk(c: &SplitChains, h: u64) -> Vec<u8> {
    let (w, mut cur) = c.first(h);
    let (mut met, mut live) = (vec![], vec![]);
    while let Some(v) = cur {
        assert!(!met.contains(&v), "walker met version {} twice", tag(v));
        met.push(v);
        if c.is_live(v) {
            live.push(tag(v));
        }
        cur = c.next(&w, v);
    }
    live
}

/// Doubles the buckets, then inserts version `t` (hashed `t`).
fn spawn_grow_and_insert(c: &Arc<SplitChains>, t: u8) -> thread::JoinHandle<VersionPtr> {
    let c = c.clone();
    thread::spawn(move || {
        c.grow();
        let v = version(t);
        c.insert(u64::from(t), v, &split_hash);
        v
    })
}

/// One thread doubles a one-bucket index and inserts hash 3, which links
/// bucket 1's dummy between 0 and 1; another inserts hash 5 (bucket 0
/// before the doubling, bucket 1 after); a third looks hash 1 up. The
/// look-up always finds 1, whether it began at bucket 0's dummy (and met
/// 0) or at bucket 1's, and afterwards every version is found in split
/// order: 0 | 1, 5, 3.
#[test]
fn loom_doubling_races_an_insert_and_a_look_up() {
    let seen = explore(|| {
        let (c, old) = split_of(&[0, 1]);
        let grower = spawn_grow_and_insert(&c, 3);
        let inserter = {
            let c = c.clone();
            thread::spawn(move || {
                let v = version(5);
                c.insert(5, v, &split_hash);
                v
            })
        };
        let walker = {
            let c = c.clone();
            thread::spawn(move || split_walk(&c, 1))
        };
        let walked = walker.join().expect("walker");
        let new = [grower.join().expect("grower"), inserter.join().expect("inserter")];
        assert!(walked.contains(&1), "the look-up lost version 1: {walked:?}");
        for t in [0u8, 1, 3, 5] {
            assert!(split_walk(&c, u64::from(t)).contains(&t), "version {t} lost");
        }
        assert_eq!(split_walk(&c, 0), [0], "bucket 0 ends at bucket 1's dummy");
        assert_eq!(split_walk(&c, 1), [1, 5, 3]);
        free(old.into_iter().chain(new));
        walked.first() == Some(&0)
    });
    // Both starts were explored.
    assert_eq!(seen, [false, true].into());
}

/// A doubling's insert links bucket 1's dummy after version 2 (split
/// order: 0, 2 | 1) while another thread unlinks 2 (marks it, then sweeps
/// its bucket): the link and the unlink never lose each other, whichever
/// goes first.
#[test]
fn loom_dummy_link_races_the_unlink_of_its_predecessor() {
    let seen = explore(|| {
        let (c, old) = split_of(&[0, 2, 1]);
        let grower = spawn_grow_and_insert(&c, 3);
        let unlinker = {
            let (c, v) = (c.clone(), old[1]);
            thread::spawn(move || c.unlink(2, v))
        };
        let new = grower.join().expect("grower");
        unlinker.join().expect("unlinker");
        assert_eq!(split_walk(&c, 0), [0], "2 is still live");
        assert_eq!(split_walk(&c, 1), [1, 3]);
        // The sweep swung past 2: it is not even reachable.
        let mut reach = 0;
        let (w, mut cur) = c.first(2);
        while let Some(v) = cur {
            assert!(v != old[1], "2 is still reachable");
            reach += 1;
            cur = c.next(&w, v);
        }
        free(old.into_iter().chain([new]));
        reach
    });
    assert_eq!(seen, [1].into());
}

/// The first step of every update and delete (`Transaction::lock` under
/// SNAPSHOT): take the end field from INFINITY to our id, or fail if
/// another transaction holds it.
fn try_lock(v: VersionPtr, me: TxnId) -> bool {
    let raw = v.end().load(SeqCst);
    match Word::decode(raw) {
        Word::Ts(INFINITY) => v.end().compare_exchange(raw, me.raw(), SeqCst, SeqCst).is_ok(),
        _ => false,
    }
}

/// Two writers race for one version's end field: exactly one wins, and a
/// reader meanwhile sees INFINITY or the winner's id, never the loser's,
/// and never INFINITY again once it has seen the winner.
#[test]
fn loom_end_field_has_one_writer() {
    let ids = [TxnId::new(1, 1), TxnId::new(2, 2)];
    let seen = explore(move || {
        let v = version(0);
        let writers = ids.map(|id| thread::spawn(move || try_lock(v, id)));
        let reader = thread::spawn(move || [v.end().load(SeqCst), v.end().load(SeqCst)]);
        let reads = reader.join().expect("reader");
        let won = writers.map(|h| h.join().expect("writer"));
        assert_eq!(won.iter().filter(|&&w| w).count(), 1, "winners: {won:?}");
        let winner = if won[0] { ids[0] } else { ids[1] };
        assert_eq!(v.end().load(SeqCst), winner.raw());
        for r in reads {
            assert!(r == INFINITY || r == winner.raw(), "reader saw {r:#x}, winner {winner:?}");
        }
        assert!(reads[0] == INFINITY || reads[1] == winner.raw(), "end field went back: {reads:x?}");
        free([v]);
        (winner.raw(), reads)
    });
    let mut all = BTreeSet::new();
    for w in ids.map(TxnId::raw) {
        all.extend([(w, [INFINITY, INFINITY]), (w, [INFINITY, w]), (w, [w, w])]);
    }
    assert_eq!(seen, all);
}

/// An update as the engine does it: lock the old version, build the new one
/// (begin = our id, data written), point the old one at it, push it. A
/// walker that finds the new version finds it whole: begin set, data
/// written (checked byte by byte, and by loom through a shadow cell written
/// together with the data), and the old version already locked.
#[test]
fn loom_published_version_is_fully_written() {
    let me = TxnId::new(7, 3);
    let seen = explore(move || {
        let (c, vs) = chain_of(&[0]);
        let old = vs[0];
        let shadow = Arc::new(UnsafeCell::new(0u8));
        let writer = {
            let (c, shadow) = (c.clone(), shadow.clone());
            thread::spawn(move || {
                assert!(try_lock(old, me));
                let n = VersionPtr::new(me.raw(), 0, 0, 1, 4, |d| {
                    d.fill(5);
                    // SAFETY: nothing reads the cell before `n` is published.
                    shadow.with_mut(|s| unsafe { *s = 5 });
                });
                old.set_newer(Some(n));
                c.push(0, n);
                n
            })
        };
        let walker = {
            let c = c.clone();
            thread::spawn(move || {
                let walked = walk(&c);
                if walked.len() > 1 {
                    let n = c.first(0).expect("new version");
                    assert_eq!(n.begin().load(SeqCst), me.raw());
                    // SAFETY: loom reports this read unless it is ordered
                    // after the write.
                    assert_eq!(shadow.with(|s| unsafe { *s }), 5);
                    assert_eq!(old.end().load(SeqCst), me.raw(), "new version seen before old one locked");
                }
                walked
            })
        };
        let walked = walker.join().expect("walker");
        let n = writer.join().expect("writer");
        assert_eq!(reachable(&c), [n, old]);
        assert_eq!(old.newer(), Some(n));
        free([n, old]);
        walked
    });
    let all: BTreeSet<Vec<u8>> = [vec![0], vec![5, 0]].into();
    assert_eq!(seen, all);
}

// ---------------------------------------------------------------------------
// The range index's B+tree: node split and merge against concurrent readers.

use crate::index::btree::{BTree, Cursor, Direction};

fn key(k: u8) -> [u8; 1] {
    [k]
}

/// Every value in the tree, in key order, as a reader scans it.
fn scan_all(t: &BTree) -> Vec<u64> {
    scan_dir(t, Direction::Forward)
}

/// Every value in the tree, scanned in direction `dir`.
fn scan_dir(t: &BTree, dir: Direction) -> Vec<u64> {
    let mut c = Cursor::new(None, None, dir);
    let mut out = vec![];
    while t.next_batch(&mut c, |v| {
        out.push(v);
        true
    }) {}
    out
}

/// Like [`explore`] with at most one preemption: a tree operation makes
/// hundreds of atomic accesses, and one preemption already covers a reader
/// stopped at any step while a whole split or merge runs, and a writer
/// stopped at any step of a split or merge while a reader runs.
fn explore1<T>(f: impl Fn() -> T + Sync + Send + 'static) -> BTreeSet<T>
where
    T: Ord + Debug + Send + 'static,
{
    explore_bounded(Some(1), f)
}

/// Runs `f` on the tree in a new loom thread.
fn on<T: Send + 'static>(
    t: &Arc<BTree>,
    f: impl FnOnce(&BTree) -> T + Send + 'static,
) -> thread::JoinHandle<T> {
    let t = t.clone();
    thread::spawn(move || f(&t))
}

/// A full root leaf of four keys.
fn full_leaf() -> Arc<BTree> {
    let t = Arc::new(BTree::new());
    for k in [10u8, 20, 30, 40] {
        t.insert(&key(k), k as u64);
    }
    t
}

/// A root leaf splits (a new root above two leaves) while a reader looks
/// up the key that moves to the new leaf: it always finds it.
#[test]
fn loom_btree_split_under_lookup() {
    let outcomes = explore1(|| {
        let t = full_leaf();
        let w = on(&t, move |t| t.insert(&key(25), 25));
        let g = on(&t, move |t| t.get(&key(40)));
        assert!(w.join().expect("writer"));
        let got = g.join().expect("getter");
        assert_eq!(got, Some(40));
        t.check_invariants();
        assert_eq!(scan_all(&t), [10, 20, 25, 30, 40]);
        got
    });
    assert_eq!(outcomes, BTreeSet::from([Some(40)]));
}

/// Splits the full leaf [10, 20, 30, 40] into [10, 20] and [30, 40]: 25
/// goes in the middle, so the leaf splits in half, and is removed again.
fn halve_around_25(t: &BTree) {
    t.insert(&key(25), 25);
    assert!(t.remove(&key(25), 25));
    assert_eq!(t.stats().leaves, 2);
}

/// Two inserters into one full leaf under an inner root: one splits it,
/// the other's key belongs to the new right half. Whatever the
/// interleaving, both keys land in the leaf that covers them (an inserter
/// that read the leaf's address before the split must notice the split).
#[test]
fn loom_btree_split_under_insert() {
    let outcomes = explore1(|| {
        let t = Arc::new(BTree::new());
        for k in [10u8, 20, 30, 40] {
            t.insert(&key(k), k as u64);
        }
        // A key inside the full leaf splits it in half (one after every
        // key would leave the left leaf full); root over [10, 20] and
        // [30, 40, 50], then fill the right leaf.
        halve_around_25(&t);
        t.insert(&key(50), 50);
        t.insert(&key(60), 60);
        let a = on(&t, move |t| t.insert(&key(35), 35));
        let b = on(&t, move |t| t.insert(&key(55), 55));
        assert!(a.join().expect("a") && b.join().expect("b"));
        t.check_invariants();
        let all = scan_all(&t);
        assert_eq!(all, [10, 20, 30, 35, 40, 50, 55, 60]);
        t.stats().leaves
    });
    assert!(outcomes.contains(&3), "{outcomes:?}");
}

/// A root leaf splits while a reader scans: the scan sees the old keys in
/// order, with or without the new one, never one twice.
#[test]
fn loom_btree_split_under_scan() {
    let outcomes = explore1(|| {
        let t = full_leaf();
        let w = on(&t, move |t| t.insert(&key(25), 25));
        let s = on(&t, move |t| scan_all(t));
        assert!(w.join().expect("writer"));
        let seen = s.join().expect("scanner");
        assert!(seen == [10, 20, 30, 40] || seen == [10, 20, 25, 30, 40], "scan saw {seen:?}");
        seen.len()
    });
    // Both orders of the scan and the split were explored.
    assert_eq!(outcomes, BTreeSet::from([4, 5]));
}

/// Deleting the last entry of a leaf merges it into its neighbour (and
/// the root, left with one child, gives way to it) while a reader scans
/// backward across the two leaves.
#[test]
fn loom_btree_merge_under_scan() {
    let outcomes = explore1(|| {
        let t = full_leaf();
        halve_around_25(&t);
        t.insert(&key(50), 50);
        // Two leaves: [10, 20] and [30, 40, 50]; leave one key on the left.
        assert!(t.remove(&key(20), 20));
        let w = on(&t, move |t| t.remove(&key(10), 10));
        let s = on(&t, move |t| scan_dir(t, Direction::Backward));
        assert!(w.join().expect("writer"));
        let seen = s.join().expect("scanner");
        assert!(seen == [50, 40, 30, 10] || seen == [50, 40, 30], "scan saw {seen:?}");
        t.check_invariants();
        assert_eq!(scan_all(&t), [30, 40, 50]);
        assert_eq!(t.stats().leaves, 1, "the empty leaf was merged away");
        seen.len()
    });
    assert_eq!(outcomes, BTreeSet::from([3, 4]));
}
