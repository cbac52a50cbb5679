//! A list that grows a chunk at a time.
//!
//! A transaction's write set and its collector items can hold millions of
//! entries. A `Vec` grows by doubling: each growth allocates twice the
//! memory and copies everything, so memory jumps by the size of the list at
//! once, past any limit checked between two rows. A `Chunked` list keeps
//! its first chunk as an ordinary growing `Vec` (a small transaction pays
//! one allocation, as before) and adds fixed chunks after it, so memory
//! grows smoothly and nothing is copied.

/// Entries per chunk after the first.
const CHUNK: usize = 16 * 1024;

/// A list of `T` in chunks of [`CHUNK`] entries.
#[derive(Debug)]
pub(crate) struct Chunked<T> {
    first: Vec<T>,
    rest: Vec<Vec<T>>,
    len: usize,
}

impl<T> Default for Chunked<T> {
    fn default() -> Self {
        Chunked { first: Vec::new(), rest: Vec::new(), len: 0 }
    }
}

impl<T> Chunked<T> {
    /// Appends `x`.
    #[inline]
    pub(crate) fn push(&mut self, x: T) {
        self.len += 1;
        if self.rest.is_empty() && self.first.len() < CHUNK {
            self.first.push(x);
            return;
        }
        match self.rest.last_mut() {
            Some(c) if c.len() < CHUNK => c.push(x),
            _ => {
                let mut c = Vec::with_capacity(CHUNK);
                c.push(x);
                self.rest.push(c);
            }
        }
    }

    /// Number of entries.
    pub(crate) fn len(&self) -> usize {
        self.len
    }

    /// Whether there are none.
    pub(crate) fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The entries in order.
    pub(crate) fn iter(&self) -> impl Iterator<Item = &T> {
        self.first.iter().chain(self.rest.iter().flatten())
    }

    /// Removes the entries from position `at` on and returns them, in
    /// order.
    pub(crate) fn split_off(&mut self, at: usize) -> Vec<T> {
        let mut tail = Vec::new();
        if at >= self.len {
            return tail;
        }
        if at < self.first.len() {
            tail.extend(self.first.drain(at..));
            tail.extend(self.rest.drain(..).flatten());
        } else {
            let mut skip = at - self.first.len();
            let chunk = self
                .rest
                .iter()
                .position(|c| {
                    let here = skip < c.len();
                    if !here {
                        skip -= c.len();
                    }
                    here
                })
                .unwrap_or(self.rest.len());
            let mut later = self.rest.split_off(chunk).into_iter();
            if let Some(mut c) = later.next() {
                tail.extend(c.drain(skip..));
                if !c.is_empty() {
                    self.rest.push(c);
                }
            }
            tail.extend(later.flatten());
        }
        self.len = at;
        tail
    }

    /// Keeps the entries for which `keep` says true, in order.
    pub(crate) fn retain(&mut self, mut keep: impl FnMut(&T) -> bool) {
        self.first.retain(&mut keep);
        for c in &mut self.rest {
            c.retain(&mut keep);
        }
        self.rest.retain(|c| !c.is_empty());
        self.len = self.first.len() + self.rest.iter().map(Vec::len).sum::<usize>();
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    #[test]
    fn split_off_returns_the_tail_and_keeps_the_head() {
        for at in [0, 5, CHUNK - 1, CHUNK, CHUNK + 3, 2 * CHUNK, 3 * CHUNK + 6, 3 * CHUNK + 7, 4 * CHUNK] {
            let mut c = Chunked::default();
            let n = 3 * CHUNK + 7;
            (0..n).for_each(|i| c.push(i));
            let tail = c.split_off(at);
            assert_eq!(tail, (at.min(n)..n).collect::<Vec<_>>(), "at {at}");
            assert_eq!(c.len(), at.min(n));
            assert!(c.iter().copied().eq(0..at.min(n)), "at {at}");
            c.push(usize::MAX);
            assert_eq!(c.iter().last(), Some(&usize::MAX));
            assert_eq!(c.len(), at.min(n) + 1);
        }
    }

    #[test]
    fn keeps_order_across_chunks() {
        let mut c = Chunked::default();
        let n = 3 * CHUNK + 7;
        (0..n).for_each(|i| c.push(i));
        assert_eq!(c.len(), n);
        assert!(c.iter().copied().eq(0..n));
        assert_eq!(c.rest.len(), 3);
        assert!(c.first.len() == CHUNK && c.rest.iter().all(|c| c.len() <= CHUNK));
    }

    #[test]
    fn retain_keeps_order_and_count() {
        let mut c = Chunked::default();
        let n = 2 * CHUNK + 5;
        (0..n).for_each(|i| c.push(i));
        c.retain(|&i| i % 3 == 0 || (CHUNK..2 * CHUNK).contains(&i));
        let want: Vec<usize> = (0..n).filter(|&i| i % 3 == 0 || (CHUNK..2 * CHUNK).contains(&i)).collect();
        assert_eq!(c.len(), want.len());
        assert!(c.iter().copied().eq(want.iter().copied()));
        c.push(n);
        assert_eq!(c.iter().last(), Some(&n));
    }
}
