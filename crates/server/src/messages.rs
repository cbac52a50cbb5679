//! The extended protocol's per-statement messages, read in place.
//!
//! A prepared statement's every execution sends Bind, Describe (libpq and
//! most drivers describe the portal each time), Execute and Sync or Flush.
//! These are the messages a busy server reads most, so they are not turned
//! into owned message objects: the frame (type, length, body) stays in the
//! buffer it arrived in, a Bind's fields are found once, checked against
//! the frame's length, and read as borrowed slices (names, parameter
//! bytes), with no allocation for the common parameter counts. Every other
//! message is decoded by pgwire as before.
//!
//! ```text
//!  Bind      'B' len  portal\0 statement\0
//!                     n:i16 format:i16 * n
//!                     m:i16 (len:i32, bytes[len] | -1 = NULL) * m
//!                     r:i16 result format:i16 * r
//!  Describe  'D' len  'S' | 'P'  name\0
//!  Execute   'E' len  portal\0 max_rows:i32
//!  Sync      'S' 4            Flush  'H' 4
//! ```
//!
//! A body whose fields run past its length, or stop short of it, is a
//! protocol violation, as for the messages pgwire decodes.

use bytes::Bytes;
use pgwire::messages::PgWireFrontendMessage;
use smallvec::SmallVec;
use std::borrow::Cow;

/// A message from the client.
pub(crate) enum Message {
    Bind(BindFrame),
    Describe(DescribeFrame),
    Execute(ExecuteFrame),
    Sync,
    Flush,
    /// Any other message, as pgwire decodes it (boxed: the hot messages
    /// above stay small as they are passed along).
    Other(Box<PgWireFrontendMessage>),
}

impl Message {
    /// A simple-protocol Query.
    pub(crate) fn is_query(&self) -> bool {
        matches!(self, Message::Other(m) if matches!(**m, PgWireFrontendMessage::Query(_)))
    }
}

/// Why a frame cannot be read: its fields do not fit its length.
#[derive(Debug)]
pub(crate) enum Malformed {
    /// The fields end before the body does.
    TooLong,
    /// The fields need more bytes than the body has, or a count is
    /// negative.
    TooShort,
}

/// A byte range of a frame.
#[derive(Clone, Copy, Default)]
struct Span {
    at: u32,
    len: u32,
}

impl Span {
    /// Its bytes in `frame`.
    fn of(self, frame: &[u8]) -> &[u8] {
        &frame[self.at as usize..(self.at + self.len) as usize]
    }
}

/// A parameter's length word that stands for NULL.
const NULL: u32 = u32::MAX;

/// Reads a body front to back; every read is bounds-checked.
struct Reader<'a> {
    body: &'a [u8],
    at: usize,
}

impl<'a> Reader<'a> {
    /// A reader of `frame`'s body (after its type byte and length).
    fn new(frame: &'a [u8]) -> Reader<'a> {
        Reader { body: &frame[5..], at: 0 }
    }

    fn take(&mut self, n: usize) -> Result<&'a [u8], Malformed> {
        let end = self.at.checked_add(n).filter(|&e| e <= self.body.len()).ok_or(Malformed::TooShort)?;
        let s = &self.body[self.at..end];
        self.at = end;
        Ok(s)
    }

    fn i16(&mut self) -> Result<i16, Malformed> {
        let b = self.take(2)?;
        Ok(i16::from_be_bytes([b[0], b[1]]))
    }

    fn i32(&mut self) -> Result<i32, Malformed> {
        let b = self.take(4)?;
        Ok(i32::from_be_bytes([b[0], b[1], b[2], b[3]]))
    }

    fn count(&mut self) -> Result<usize, Malformed> {
        usize::try_from(self.i16()?).map_err(|_| Malformed::TooShort)
    }

    /// A count, then that many format codes.
    fn formats(&mut self) -> Result<Formats, Malformed> {
        let n = self.count()?;
        (0..n).map(|_| self.i16()).collect()
    }

    /// A NUL-terminated string, without its NUL, as a span of the frame
    /// (the body starts at frame offset 5).
    fn cstr(&mut self) -> Result<Span, Malformed> {
        let rest = &self.body[self.at..];
        let len = rest.iter().position(|&b| b == 0).ok_or(Malformed::TooShort)?;
        let span = Span { at: (5 + self.at) as u32, len: len as u32 };
        self.at += len + 1;
        Ok(span)
    }

    fn span(&mut self, n: usize) -> Result<Span, Malformed> {
        let at = 5 + self.at;
        self.take(n)?;
        Ok(Span { at: at as u32, len: n as u32 })
    }

    fn end(&self) -> Result<(), Malformed> {
        if self.at == self.body.len() {
            Ok(())
        } else {
            Err(Malformed::TooLong)
        }
    }
}

/// A name as the maps of statements and portals hold it (pgwire read names
/// leniently: bytes that are not UTF-8 become replacement characters).
fn name(bytes: &[u8]) -> Cow<'_, str> {
    String::from_utf8_lossy(bytes)
}

/// Parameters and format codes held without allocating, up to these
/// counts.
pub(crate) type Formats = SmallVec<[i16; 4]>;
/// Each parameter's bytes, a `len` of [`NULL`] for NULL.
type Params = SmallVec<[Span; 4]>;

/// A Bind, read in place.
pub(crate) struct BindFrame {
    frame: Bytes,
    portal: Span,
    statement: Span,
    formats: Formats,
    params: Params,
    results: Formats,
}

impl BindFrame {
    fn read(frame: Bytes) -> Result<BindFrame, Malformed> {
        let mut r = Reader::new(&frame);
        let portal = r.cstr()?;
        let statement = r.cstr()?;
        let formats = r.formats()?;
        let m = r.count()?;
        let mut params = Params::new();
        for _ in 0..m {
            let len = r.i32()?;
            params.push(match len {
                -1 => Span { at: 0, len: NULL },
                n => r.span(usize::try_from(n).map_err(|_| Malformed::TooShort)?)?,
            });
        }
        let results = r.formats()?;
        r.end()?;
        Ok(BindFrame { frame, portal, statement, formats, params, results })
    }

    pub(crate) fn portal(&self) -> Cow<'_, str> {
        name(self.portal.of(&self.frame))
    }

    pub(crate) fn statement(&self) -> Cow<'_, str> {
        name(self.statement.of(&self.frame))
    }

    /// The parameters' format codes (none: all text; one: all alike).
    pub(crate) fn formats(&self) -> &[i16] {
        &self.formats
    }

    pub(crate) fn param_count(&self) -> usize {
        self.params.len()
    }

    /// Parameter `i`'s bytes, `None` for NULL.
    pub(crate) fn param(&self, i: usize) -> Option<&[u8]> {
        let s = self.params[i];
        (s.len != NULL).then(|| s.of(&self.frame))
    }

    /// The result columns' format codes.
    pub(crate) fn results(&self) -> &[i16] {
        &self.results
    }
}

/// A Describe, read in place.
pub(crate) struct DescribeFrame {
    frame: Bytes,
    name: Span,
}

impl DescribeFrame {
    fn read(frame: Bytes) -> Result<DescribeFrame, Malformed> {
        let mut r = Reader::new(&frame);
        r.take(1)?;
        let name = r.cstr()?;
        r.end()?;
        Ok(DescribeFrame { frame, name })
    }

    /// `b'S'` (a statement) or `b'P'` (a portal).
    pub(crate) fn target(&self) -> u8 {
        self.frame[5]
    }

    pub(crate) fn name(&self) -> Cow<'_, str> {
        name(self.name.of(&self.frame))
    }
}

/// An Execute, read in place.
pub(crate) struct ExecuteFrame {
    frame: Bytes,
    portal: Span,
    max_rows: i32,
}

impl ExecuteFrame {
    fn read(frame: Bytes) -> Result<ExecuteFrame, Malformed> {
        let mut r = Reader::new(&frame);
        let portal = r.cstr()?;
        let max_rows = r.i32()?;
        r.end()?;
        Ok(ExecuteFrame { frame, portal, max_rows })
    }

    pub(crate) fn portal(&self) -> Cow<'_, str> {
        name(self.portal.of(&self.frame))
    }

    /// Rows to send at most (0: all).
    pub(crate) fn max_rows(&self) -> i32 {
        self.max_rows
    }
}

/// Reads a whole frame of one of the kinds this module handles; `None`
/// for any other kind (pgwire decodes those).
pub(crate) fn read(frame: &mut bytes::BytesMut) -> Option<Result<Message, Malformed>> {
    let kind = frame[0];
    let empty = |m: Message| if frame.len() == 5 { Ok(m) } else { Err(Malformed::TooLong) };
    Some(match kind {
        b'S' => empty(Message::Sync),
        b'H' => empty(Message::Flush),
        b'B' => BindFrame::read(frame.split().freeze()).map(Message::Bind),
        b'D' => DescribeFrame::read(frame.split().freeze()).map(Message::Describe),
        b'E' => ExecuteFrame::read(frame.split().freeze()).map(Message::Execute),
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use bytes::{BufMut, BytesMut};

    fn frame(kind: u8, body: &[u8]) -> BytesMut {
        let mut f = BytesMut::new();
        f.put_u8(kind);
        f.put_i32(4 + body.len() as i32);
        f.put_slice(body);
        f
    }

    fn bind_body(params: &[Option<&[u8]>]) -> Vec<u8> {
        let mut b = Vec::new();
        b.extend_from_slice(b"portal\0stmt\0");
        b.extend_from_slice(&1i16.to_be_bytes());
        b.extend_from_slice(&1i16.to_be_bytes());
        b.extend_from_slice(&(params.len() as i16).to_be_bytes());
        for p in params {
            match p {
                None => b.extend_from_slice(&(-1i32).to_be_bytes()),
                Some(p) => {
                    b.extend_from_slice(&(p.len() as i32).to_be_bytes());
                    b.extend_from_slice(p);
                }
            }
        }
        b.extend_from_slice(&2i16.to_be_bytes());
        b.extend_from_slice(&0i16.to_be_bytes());
        b.extend_from_slice(&1i16.to_be_bytes());
        b
    }

    #[test]
    fn a_bind_is_read_in_place() {
        let params: Vec<Option<&[u8]>> =
            (0..12).map(|i| if i == 3 { None } else { Some(&b"12345"[..i % 5]) }).collect();
        let Some(Ok(Message::Bind(b))) = read(&mut frame(b'B', &bind_body(&params))) else {
            panic!("not a bind")
        };
        assert_eq!((b.portal().as_ref(), b.statement().as_ref()), ("portal", "stmt"));
        assert_eq!((b.formats(), b.results()), (&[1][..], &[0, 1][..]));
        assert_eq!(b.param_count(), 12);
        for (i, p) in params.iter().enumerate() {
            assert_eq!(b.param(i), *p);
        }
    }

    #[test]
    fn fields_must_fill_the_body_exactly() {
        let body = bind_body(&[Some(b"7")]);
        for cut in 0..body.len() {
            assert!(
                matches!(read(&mut frame(b'B', &body[..cut])), Some(Err(Malformed::TooShort))),
                "cut at {cut}"
            );
        }
        let mut long = body.clone();
        long.push(0);
        assert!(matches!(read(&mut frame(b'B', &long)), Some(Err(Malformed::TooLong))));
        // A parameter that claims more bytes than there are, or a negative
        // length other than NULL's.
        for len in [i32::MAX, -2] {
            let mut b = b"\0\0\0\0\0\x01".to_vec();
            b.extend_from_slice(&len.to_be_bytes());
            assert!(matches!(read(&mut frame(b'B', &b)), Some(Err(Malformed::TooShort))));
        }
        assert!(matches!(read(&mut frame(b'E', b"p\0\0\0\0\x05\0")), Some(Err(Malformed::TooLong))));
        assert!(matches!(read(&mut frame(b'E', b"p\0\0\0")), Some(Err(Malformed::TooShort))));
        assert!(matches!(read(&mut frame(b'D', b"P")), Some(Err(Malformed::TooShort))));
        assert!(matches!(read(&mut frame(b'S', b"x")), Some(Err(Malformed::TooLong))));
        assert!(read(&mut frame(b'Q', b"select 1\0")).is_none());
    }

    #[test]
    fn describe_and_execute() {
        let Some(Ok(Message::Describe(d))) = read(&mut frame(b'D', b"Pname\0")) else { panic!() };
        assert_eq!((d.target(), d.name().as_ref()), (b'P', "name"));
        let Some(Ok(Message::Execute(e))) = read(&mut frame(b'E', b"\0\0\0\0\x05")) else { panic!() };
        assert_eq!((e.portal().as_ref(), e.max_rows()), ("", 5));
        assert!(matches!(read(&mut frame(b'H', b"")), Some(Ok(Message::Flush))));
    }
}
