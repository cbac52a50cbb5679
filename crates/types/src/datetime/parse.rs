//! Reading PostgreSQL date and timestamp input text.
//!
//! Centum accepts the ISO 8601 forms PostgreSQL documents and prints, plus
//! its special words:
//!
//! ```text
//!   2024-03-05                         date (time part optional)
//!   2024-03-05 14:07:09.123456         space or 'T' before the time
//!   2024-03-05T14:07                   seconds optional
//!   2024-03-05 14:07:09+05:30          offsets: Z, UTC, GMT, +hh, +hhmm, +hh:mm[:ss]
//!   0044-03-15 BC                      era suffix (AD accepted and ignored)
//!   infinity  -infinity  epoch  now  today  tomorrow  yesterday
//! ```
//!
//! As in PostgreSQL, `timestamp` input silently ignores a time zone, `date`
//! input ignores the time of day, two-digit years mean 1970..2069, `24:00:00`
//! is midnight at the end of the day, and a fraction finer than a
//! microsecond is rounded. Other spellings PostgreSQL understands (month
//! names, `MDY` orders, named zones other than UTC) are refused: a clear
//! error beats a silently different reading.
//!
//! The parser produces [`Fields`]; turning them into a day number or
//! microsecond count, and checking the ranges, is the caller's job in
//! `datetime.rs`.

use crate::error::TypeError;

/// Seconds of the largest time zone offset PostgreSQL accepts (15:59:59).
const MAX_OFFSET_SECS: i64 = 15 * 3600 + 59 * 60 + 59;

/// What a date/time literal says, before range checks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Parsed {
    /// An ordinary date and time.
    Fields(Fields),
    /// `infinity` or `+infinity`.
    Infinity,
    /// `-infinity`.
    NegInfinity,
    /// `now`: the current transaction time (here: the current clock).
    Now,
    /// `today` (0), `tomorrow` (1), `yesterday` (-1): midnight, days from today.
    Today(i64),
}

/// The fields of an ordinary date/time literal.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Fields {
    /// Astronomical year (1 BC is 0).
    pub year: i64,
    /// Month, 1..=12.
    pub month: u32,
    /// Day of the month, valid for the month.
    pub day: u32,
    /// Microseconds since midnight, 0..=86_400_000_000 (24:00:00 allowed).
    pub time_usecs: i64,
    /// Offset east of UTC in seconds, if the text named one.
    pub offset_secs: Option<i64>,
}

/// Parses date/time input. `ty` is the SQL type name used in messages.
pub(crate) fn parse(input: &str, ty: &str) -> Result<Parsed, TypeError> {
    let text = input.trim();
    match text.to_ascii_lowercase().as_str() {
        "infinity" | "+infinity" => return Ok(Parsed::Infinity),
        "-infinity" => return Ok(Parsed::NegInfinity),
        "now" => return Ok(Parsed::Now),
        "today" => return Ok(Parsed::Today(0)),
        "tomorrow" => return Ok(Parsed::Today(1)),
        "yesterday" => return Ok(Parsed::Today(-1)),
        "epoch" => {
            return Ok(Parsed::Fields(Fields {
                year: 1970,
                month: 1,
                day: 1,
                time_usecs: 0,
                offset_secs: Some(0),
            }))
        }
        _ => {}
    }
    let syntax = || TypeError::InvalidDatetime(format!("invalid input syntax for type {ty}: \"{input}\""));
    let field_range =
        || TypeError::DatetimeOverflow(format!("date/time field value out of range: \"{input}\""));

    let mut cur = Cursor::new(text);
    let (year_digits, year) = cur.number(9).ok_or_else(syntax)?;
    if !cur.eat(b'-') {
        return Err(syntax());
    }
    let (_, month) = cur.number(2).ok_or_else(syntax)?;
    if !cur.eat(b'-') {
        return Err(syntax());
    }
    let (_, day) = cur.number(2).ok_or_else(syntax)?;

    let mut time: Option<i64> = None;
    let mut offset: Option<i64> = None;
    let (mut bc, mut era_seen) = (false, false);
    loop {
        let had_space = cur.skip_spaces();
        let Some(c) = cur.peek() else { break };
        if time.is_none() && (c == b'T' || c == b't') && cur.peek_at(1).is_some_and(|d| d.is_ascii_digit()) {
            cur.pos += 1;
            time = Some(parse_time(&mut cur).ok_or_else(syntax)?.map_err(|()| field_range())?);
        } else if time.is_none() && had_space && c.is_ascii_digit() {
            time = Some(parse_time(&mut cur).ok_or_else(syntax)?.map_err(|()| field_range())?);
        } else if offset.is_none() && (c == b'+' || c == b'-') {
            offset = Some(parse_offset(&mut cur).ok_or_else(syntax)?.map_err(|()| field_range())?);
        } else if c.is_ascii_alphabetic() {
            let word = cur.word().to_ascii_lowercase();
            match word.as_str() {
                "bc" | "ad" if era_seen => return Err(syntax()),
                "bc" | "ad" => (bc, era_seen) = (word == "bc", true),
                _ if offset.is_some() => return Err(syntax()),
                "z" | "utc" | "gmt" | "zulu" => offset = Some(0),
                _ => return Err(TypeError::InvalidParameter(format!("time zone \"{word}\" not recognized"))),
            }
        } else {
            return Err(syntax());
        }
    }

    let year = match (year_digits, bc) {
        // Two-digit years follow PostgreSQL's 70/30 split.
        (1..=2, false) if year < 70 => year + 2000,
        (1..=2, false) => year + 1900,
        (_, false) => year,
        (_, true) => 1 - year,
    };
    let (month, day) = (month as u32, day as u32);
    if (year <= 0 && !bc) || (bc && year > 0) || !super::calendar::is_valid_ymd(year, month, day) {
        return Err(field_range());
    }
    Ok(Parsed::Fields(Fields { year, month, day, time_usecs: time.unwrap_or(0), offset_secs: offset }))
}

/// Parses `time` input: `hh:mm[:ss[.ffff]]` (one-digit fields allowed),
/// then optionally `am`/`pm` and a zone, which is ignored as PostgreSQL
/// ignores it for `time`; or a whole timestamp, whose time of day is taken;
/// or `allballs` (midnight). `now` is the caller's. Returns microseconds
/// since midnight, 24:00:00 allowed.
pub(crate) fn parse_time_of_day(input: &str) -> Result<i64, TypeError> {
    let text = input.trim();
    let syntax = || TypeError::InvalidDatetime(format!("invalid input syntax for type time: \"{input}\""));
    let range = || TypeError::DatetimeOverflow(format!("date/time field value out of range: \"{input}\""));
    if text.eq_ignore_ascii_case("allballs") {
        return Ok(0);
    }
    let mut cur = Cursor::new(text);
    let looks_like_date = cur.number(9).is_some() && cur.peek() == Some(b'-');
    if looks_like_date {
        return match parse(text, "time")? {
            Parsed::Fields(f) => Ok(f.time_usecs),
            _ => Err(syntax()),
        };
    }
    let mut cur = Cursor::new(text);
    let (_, mut hour) = cur.number(2).ok_or_else(syntax)?;
    if !cur.eat(b':') {
        return Err(syntax());
    }
    let (_, minute) = cur.number(2).ok_or_else(syntax)?;
    let (mut second, mut micros) = (0, 0);
    if cur.eat(b':') {
        second = cur.number(2).ok_or_else(syntax)?.1;
        if cur.eat(b'.') {
            micros = cur.fraction_micros().ok_or_else(syntax)?;
        }
    }
    let (mut meridiem, mut zone) = (false, false);
    loop {
        cur.skip_spaces();
        let Some(c) = cur.peek() else { break };
        if !zone && (c == b'+' || c == b'-') {
            parse_offset(&mut cur).ok_or_else(syntax)?.map_err(|()| range())?;
            zone = true;
        } else if c.is_ascii_alphabetic() {
            let word = cur.word().to_ascii_lowercase();
            match word.as_str() {
                "am" | "pm" if !meridiem && !zone => {
                    if hour > 12 {
                        return Err(range());
                    }
                    hour = hour % 12 + if word == "pm" { 12 } else { 0 };
                    meridiem = true;
                }
                "z" | "utc" | "gmt" | "zulu" if !zone => zone = true,
                _ => return Err(syntax()),
            }
        } else {
            return Err(syntax());
        }
    }
    let valid = (hour < 24 && minute < 60 && second <= 60)
        || (hour == 24 && minute == 0 && second == 0 && micros == 0);
    if !valid {
        return Err(range());
    }
    Ok(((hour * 60 + minute) * 60 + second) * 1_000_000 + micros)
}

/// Parses `hh:mm[:ss[.ffff]]`. `None` is a syntax error, `Some(Err)` a
/// field out of range.
fn parse_time(cur: &mut Cursor<'_>) -> Option<Result<i64, ()>> {
    let (_, hour) = cur.number(2)?;
    if !cur.eat(b':') {
        return None;
    }
    let (mdigits, minute) = cur.number(2)?;
    let (mut second, mut micros) = (0, 0);
    if cur.eat(b':') {
        let (sdigits, s) = cur.number(2)?;
        if sdigits != 2 {
            return None;
        }
        second = s;
        if cur.eat(b'.') {
            micros = cur.fraction_micros()?;
        }
    }
    if mdigits != 2 {
        return None;
    }
    // 24:00:00 is the end of the day; seconds may be 60 (a leap second
    // rolls into the next minute, as in PostgreSQL).
    let valid = (hour < 24 && minute < 60 && second <= 60)
        || (hour == 24 && minute == 0 && second == 0 && micros == 0);
    if !valid {
        return Some(Err(()));
    }
    Some(Ok(((hour * 60 + minute) * 60 + second) * 1_000_000 + micros))
}

/// Parses a numeric time zone offset: `+h`, `+hh`, `+hhmm`, `+hh:mm`,
/// `+hh:mm:ss`, returning seconds east of UTC.
fn parse_offset(cur: &mut Cursor<'_>) -> Option<Result<i64, ()>> {
    let sign = if cur.eat(b'-') {
        -1
    } else {
        cur.eat(b'+');
        1
    };
    let (digits, value) = cur.number(4)?;
    let (hours, mut minutes, mut seconds) = match digits {
        1 | 2 => (value, 0, 0),
        4 => (value / 100, value % 100, 0),
        _ => return None,
    };
    if digits <= 2 && cur.eat(b':') {
        minutes = cur.number(2).filter(|(n, _)| *n == 2)?.1;
        if cur.eat(b':') {
            seconds = cur.number(2).filter(|(n, _)| *n == 2)?.1;
        }
    }
    let total = hours * 3600 + minutes * 60 + seconds;
    if minutes >= 60 || seconds >= 60 || total > MAX_OFFSET_SECS {
        return Some(Err(()));
    }
    Some(Ok(sign * total))
}

/// A byte cursor over ASCII-oriented input; non-ASCII bytes simply fail to
/// match anything, which surfaces as a syntax error.
struct Cursor<'a> {
    bytes: &'a [u8],
    pos: usize,
}

impl<'a> Cursor<'a> {
    fn new(text: &'a str) -> Self {
        Cursor { bytes: text.as_bytes(), pos: 0 }
    }

    fn peek(&self) -> Option<u8> {
        self.bytes.get(self.pos).copied()
    }

    fn peek_at(&self, ahead: usize) -> Option<u8> {
        self.bytes.get(self.pos + ahead).copied()
    }

    fn eat(&mut self, c: u8) -> bool {
        if self.peek() == Some(c) {
            self.pos += 1;
            true
        } else {
            false
        }
    }

    /// Skips spaces and tabs; true if any were skipped.
    fn skip_spaces(&mut self) -> bool {
        let start = self.pos;
        while self.peek().is_some_and(|c| c.is_ascii_whitespace()) {
            self.pos += 1;
        }
        self.pos > start
    }

    /// Reads 1..=`max_digits` decimal digits, returning how many and their value.
    /// More digits than allowed is a syntax error, not a silent split.
    fn number(&mut self, max_digits: usize) -> Option<(usize, i64)> {
        let start = self.pos;
        let mut value: i64 = 0;
        while let Some(c) = self.peek().filter(u8::is_ascii_digit) {
            value = value * 10 + i64::from(c - b'0');
            self.pos += 1;
            if self.pos - start > max_digits {
                return None;
            }
        }
        let n = self.pos - start;
        (n > 0).then_some((n, value))
    }

    /// Reads the digits after a decimal point as microseconds, rounding
    /// half up at the seventh digit.
    fn fraction_micros(&mut self) -> Option<i64> {
        let mut micros: i64 = 0;
        let mut n = 0;
        let mut round_up = false;
        while let Some(c) = self.peek().filter(u8::is_ascii_digit) {
            let digit = i64::from(c - b'0');
            if n < 6 {
                micros = micros * 10 + digit;
            } else if n == 6 {
                round_up = digit >= 5;
            }
            n += 1;
            self.pos += 1;
        }
        if n == 0 {
            return None;
        }
        for _ in n..6 {
            micros *= 10;
        }
        Some(micros + i64::from(round_up))
    }

    /// Reads a run of letters, digits, '/' and '_' (a zone name or era).
    fn word(&mut self) -> &'a str {
        let start = self.pos;
        while self.peek().is_some_and(|c| c.is_ascii_alphanumeric() || c == b'/' || c == b'_') {
            self.pos += 1;
        }
        // The run is ASCII, so slicing on these byte offsets is on char boundaries.
        std::str::from_utf8(&self.bytes[start..self.pos]).unwrap_or("")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fields(text: &str) -> Fields {
        match parse(text, "timestamp") {
            Ok(Parsed::Fields(f)) => f,
            other => panic!("{text}: {other:?}"),
        }
    }

    #[test]
    fn iso_forms() {
        let f = fields("2024-03-05");
        assert_eq!((f.year, f.month, f.day, f.time_usecs, f.offset_secs), (2024, 3, 5, 0, None));
        let f = fields(" 2024-03-05 14:07:09.123456 ");
        assert_eq!(f.time_usecs, (14 * 3600 + 7 * 60 + 9) * 1_000_000 + 123_456);
        let f = fields("2024-03-05T14:07");
        assert_eq!(f.time_usecs, (14 * 3600 + 7 * 60) * 1_000_000);
        assert_eq!(fields("2024-03-05 14:07:09.5").time_usecs % 1_000_000, 500_000);
        assert_eq!(fields("2024-03-05 00:00:00.0000005").time_usecs, 1);
        assert_eq!(fields("2024-03-05 00:00:00.0000004").time_usecs, 0);
        assert_eq!(fields("2024-03-05 24:00:00").time_usecs, 86_400_000_000);
        assert_eq!(fields("24-03-05").year, 2024);
        assert_eq!(fields("99-03-05").year, 1999);
        assert_eq!(fields("0044-03-15 BC").year, -43);
        assert_eq!(fields("0001-01-01 00:00:00 BC").year, 0);
        assert_eq!(fields("2024-03-05 AD").year, 2024);
    }

    #[test]
    fn offsets() {
        for (text, secs) in [
            ("2024-03-05 10:00+02", 7200),
            ("2024-03-05 10:00 -02", -7200),
            ("2024-03-05 10:00+05:30", 19_800),
            ("2024-03-05 10:00+0530", 19_800),
            ("2024-03-05 10:00-03:30:15", -(3 * 3600 + 30 * 60 + 15)),
            ("2024-03-05T10:00Z", 0),
            ("2024-03-05 10:00 UTC", 0),
            ("2024-03-05 10:00 gmt", 0),
            ("2024-03-05 10:00:00+00 BC", 0),
        ] {
            assert_eq!(fields(text).offset_secs, Some(secs), "{text}");
        }
    }

    #[test]
    fn special_words() {
        assert_eq!(parse(" Infinity ", "date"), Ok(Parsed::Infinity));
        assert_eq!(parse("-INFINITY", "date"), Ok(Parsed::NegInfinity));
        assert_eq!(parse("now", "date"), Ok(Parsed::Now));
        assert_eq!(parse("yesterday", "date"), Ok(Parsed::Today(-1)));
        assert_eq!(fields("epoch").year, 1970);
    }

    #[test]
    fn errors() {
        for text in [
            "",
            "abc",
            "2024",
            "2024-03",
            "2024/03/05",
            "2024-03-05 1",
            "2024-03-05 10:0",
            "2024-03-05 10:00:0",
            "2024-03-05 10:00:00.",
            "2024-03-05#",
            "2024-03-05 10:00+123",
            "2024-03-05 bc bc",
            "2024-03-05 AD BC",
            "2024-03-05 10:00+01 UTC",
            "2024-03-05 10:00 10:00",
            "1234567890-01-01",
            "2024-003-05",
        ] {
            let err = parse(text, "timestamp").unwrap_err();
            assert_eq!(err.sqlstate(), "22007", "{text}: {err}");
            assert_eq!(err.to_string(), format!("invalid input syntax for type timestamp: \"{text}\""));
        }
        for text in [
            "2024-13-01",
            "2024-02-30",
            "2023-02-29",
            "0000-01-01",
            "2024-03-05 25:00",
            "2024-03-05 24:00:01",
            "2024-03-05 10:60",
            "2024-03-05 10:00:61",
            "2024-03-05 10:00+16",
            "2024-03-05 10:00+05:60",
            "0000-01-01 BC",
        ] {
            let err = parse(text, "timestamp").unwrap_err();
            assert_eq!(err.sqlstate(), "22008", "{text}: {err}");
        }
        let err = parse("2024-03-05 10:00 Europe/Paris", "timestamp").unwrap_err();
        assert_eq!(err.to_string(), "time zone \"europe/paris\" not recognized");
        assert_eq!(err.sqlstate(), "22023");
    }
}
