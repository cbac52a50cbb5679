//! The begin and end fields of a row version.
//!
//! Both fields are one 64-bit word that holds either a timestamp or the id
//! of the transaction that currently owns the field (Hekaton's scheme). The
//! top bit tells which:
//!
//! ```text
//!   63  62                                   16 15            0
//!  +---+---------------------------------------+---------------+
//!  | 0 |              commit timestamp                         |  timestamp
//!  +---+---------------------------------------+---------------+
//!  | 1 |        sequence number                |  slot number  |  transaction id
//!  +---+---------------------------------------+---------------+
//! ```
//!
//! `INFINITY` (all ones below the top bit) is the end field of a version
//! nobody has deleted; as a begin field it marks a version whose creator
//! aborted, which no read timestamp ever reaches.

/// Top bit: the word holds a transaction id.
pub(crate) const TXN_BIT: u64 = 1 << 63;
/// End field of a live version; begin field of an aborted one.
pub(crate) const INFINITY: u64 = TXN_BIT - 1;
/// End field of a version whose creator aborted, once the one who frees it
/// has claimed it (see `transaction.rs` on aborts after early lock
/// release). No read timestamp reaches it.
pub(crate) const RETIRED: u64 = INFINITY - 1;
/// Bits of a transaction id that name its slot in the transaction table.
pub(crate) const SLOT_BITS: u32 = 16;
/// Most transactions that can be open at once.
pub(crate) const MAX_SLOTS: usize = 1 << SLOT_BITS;

/// A decoded begin or end field.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Word {
    /// A commit timestamp, or `INFINITY`.
    Ts(u64),
    /// Owned by this transaction.
    Txn(TxnId),
}

impl Word {
    /// Decodes a raw field.
    #[inline]
    pub(crate) fn decode(raw: u64) -> Word {
        if raw & TXN_BIT != 0 {
            Word::Txn(TxnId(raw))
        } else {
            Word::Ts(raw)
        }
    }
}

/// A transaction id: unique for the life of the process, and names the
/// slot in the transaction table where the transaction's state lives.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct TxnId(pub(crate) u64);

impl TxnId {
    /// Builds the id for sequence number `seq` in slot `slot`.
    pub(crate) fn new(seq: u64, slot: usize) -> TxnId {
        TxnId(TXN_BIT | (seq << SLOT_BITS) | slot as u64)
    }

    /// The slot in the transaction table.
    #[inline]
    pub(crate) fn slot(self) -> usize {
        (self.0 & (MAX_SLOTS as u64 - 1)) as usize
    }

    /// The raw word, as stored in begin/end fields.
    #[inline]
    pub fn raw(self) -> u64 {
        self.0
    }

    /// The id whose raw word is `raw` (as [`TxnId::raw`] gave it).
    #[inline]
    pub fn from_raw(raw: u64) -> TxnId {
        TxnId(raw)
    }
}

impl std::fmt::Display for TxnId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", (self.0 & !TXN_BIT) >> SLOT_BITS)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_and_timestamps_never_collide() {
        let id = TxnId::new(12345, 77);
        assert_eq!(id.slot(), 77);
        assert_eq!(Word::decode(id.raw()), Word::Txn(id));
        assert_eq!(Word::decode(INFINITY), Word::Ts(INFINITY));
        assert_eq!(Word::decode(42), Word::Ts(42));
    }
}
