//! Dates and timestamps, stored as PostgreSQL stores them.
//!
//! ```text
//!   Date(i32)          days since 2000-01-01
//!   Timestamp(i64)     microseconds since 2000-01-01 00:00:00 (no time zone)
//!   TimestampTz(i64)   microseconds since 2000-01-01 00:00:00 UTC
//!   Time(i64)          microseconds since midnight, 0 ..= 24:00:00
//!
//!   i32::MIN / i64::MIN  = -infinity      i32::MAX / i64::MAX  = infinity
//! ```
//!
//! Using PostgreSQL's representation keeps comparisons and sorting a plain
//! integer comparison (the derived `Ord`), makes the fixed-width row
//! encoding trivial, and lets the infinities sort correctly for free.
//!
//! Centum's session time zone is always UTC, so a `timestamptz` prints with
//! `+00` and a `timestamp` converts to and from `timestamptz` without shifting.
//! Output is PostgreSQL's `DateStyle = ISO`: `2024-03-05`,
//! `2024-03-05 14:07:09.123456` (trailing zero digits of the fraction, and
//! the dot, dropped), `2024-03-05 14:07:09+00`, with ` BC` after the value for
//! years before 1 AD. Input is described on [`Date::parse`].
//!
//! Every value of the `i32`/`i64` field formats without panicking, even
//! outside PostgreSQL's range; constructors and parsing keep values inside it.

pub(crate) mod calendar;
mod parse;

use std::fmt;
use std::str::FromStr;

use chrono::{DateTime, NaiveDate, NaiveDateTime, NaiveTime, Utc};

use self::calendar::{
    days_from_ymd, split_timestamp, ymd_from_days, END_DATE, END_TIMESTAMP, MIN_DATE, MIN_TIMESTAMP,
    USECS_PER_DAY,
};
use self::parse::Parsed;
use crate::error::TypeError;

/// Days since 2000-01-01 (PostgreSQL's epoch).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Date(pub i32);

/// Microseconds since 2000-01-01 00:00:00 (no time zone).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Timestamp(pub i64);

/// Microseconds since 2000-01-01 00:00:00 UTC.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct TimestampTz(pub i64);

/// Microseconds since midnight, `00:00:00` to `24:00:00` inclusive
/// (`time without time zone`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Time(pub i64);

/// chrono's day number ("days from CE", 0001-01-01 is day 1) of 2000-01-01.
const CE_TO_PG_DAYS: i32 = 730_120;

impl Date {
    /// `infinity`, later than every other date.
    pub const INFINITY: Date = Date(i32::MAX);
    /// `-infinity`, earlier than every other date.
    pub const NEG_INFINITY: Date = Date(i32::MIN);

    /// The date of a proleptic Gregorian `(year, month, day)`, where year 0 is
    /// 1 BC. Fails with 22008 for a day that does not exist or lies outside
    /// PostgreSQL's date range (4714-11-24 BC to 5874897-12-31).
    pub fn from_ymd(year: i32, month: u32, day: u32) -> Result<Date, TypeError> {
        let year = i64::from(year);
        if !calendar::is_valid_ymd(year, month, day) {
            return Err(TypeError::DatetimeOverflow(format!(
                "date field value out of range: {year}-{month:02}-{day:02}"
            )));
        }
        finite_date(days_from_ymd(year, month, day))
            .ok_or_else(|| TypeError::DatetimeOverflow("date out of range".to_string()))
    }

    /// `(year, month, day)` with year 0 meaning 1 BC; `None` for the infinities.
    pub fn ymd(self) -> Option<(i32, u32, u32)> {
        if !self.is_finite() {
            return None;
        }
        let (y, m, d) = ymd_from_days(i64::from(self.0));
        // Any i32 day number is within ±6 million years.
        Some((y as i32, m, d))
    }

    /// False for `infinity` and `-infinity`.
    pub fn is_finite(self) -> bool {
        self != Date::INFINITY && self != Date::NEG_INFINITY
    }

    /// Parses PostgreSQL date input; a time of day or time zone after the
    /// date is accepted and ignored. The forms accepted by all three
    /// date/time parsers:
    ///
    /// ```text
    ///   2024-03-05                         date (time part optional)
    ///   2024-03-05 14:07:09.123456         space or 'T' before the time
    ///   2024-03-05T14:07                   seconds optional
    ///   2024-03-05 14:07:09+05:30          offsets: Z, UTC, GMT, +hh, +hhmm, +hh:mm[:ss]
    ///   0044-03-15 BC                      era suffix (AD accepted and ignored)
    ///   infinity  -infinity  epoch  now  today  tomorrow  yesterday
    /// ```
    ///
    /// Two-digit years mean 1970..2069, `24:00:00` is the end of the day and
    /// fractions finer than a microsecond are rounded. Errors: 22007 for text
    /// that is not a date, 22008 for a field or result out of range, 22023
    /// for a time zone name other than UTC/GMT/Z.
    pub fn parse(text: &str) -> Result<Date, TypeError> {
        let overflow = || TypeError::DatetimeOverflow(format!("date out of range: \"{text}\""));
        match parse::parse(text, "date")? {
            Parsed::Infinity => Ok(Date::INFINITY),
            Parsed::NegInfinity => Ok(Date::NEG_INFINITY),
            Parsed::Now => Ok(TimestampTz::now().to_timestamp().date()),
            Parsed::Today(delta) => Ok(Date(TimestampTz::now().to_timestamp().date().0 + delta as i32)),
            Parsed::Fields(f) => finite_date(days_from_ymd(f.year, f.month, f.day)).ok_or_else(overflow),
        }
    }

    /// Midnight at the start of this date. Fails with 22008 for dates past
    /// the end of the timestamp range.
    pub fn to_timestamp(self) -> Result<Timestamp, TypeError> {
        match self {
            Date::INFINITY => Ok(Timestamp::INFINITY),
            Date::NEG_INFINITY => Ok(Timestamp::NEG_INFINITY),
            Date(days) => i64::from(days)
                .checked_mul(USECS_PER_DAY)
                .and_then(finite_timestamp)
                .ok_or_else(|| TypeError::DatetimeOverflow("date out of range for timestamp".to_string())),
        }
    }
}

impl Timestamp {
    /// `infinity`, later than every other timestamp.
    pub const INFINITY: Timestamp = Timestamp(i64::MAX);
    /// `-infinity`, earlier than every other timestamp.
    pub const NEG_INFINITY: Timestamp = Timestamp(i64::MIN);

    /// False for `infinity` and `-infinity`.
    pub fn is_finite(self) -> bool {
        self != Timestamp::INFINITY && self != Timestamp::NEG_INFINITY
    }

    /// Parses PostgreSQL `timestamp` input (the forms listed on
    /// [`Date::parse`]); a time zone in the text is ignored, as PostgreSQL
    /// does for `timestamp without time zone`.
    pub fn parse(text: &str) -> Result<Timestamp, TypeError> {
        parse_timestamp(text, "timestamp", false).map(Timestamp)
    }

    /// The date part (rounding down, so times before 2000 land on the right day).
    pub fn date(self) -> Date {
        match self {
            Timestamp::INFINITY => Date::INFINITY,
            Timestamp::NEG_INFINITY => Date::NEG_INFINITY,
            // |i64| / USECS_PER_DAY is about ±1e8, well inside i32.
            Timestamp(usecs) => Date(split_timestamp(usecs).0 as i32),
        }
    }

    /// The same wall-clock time read as UTC (Centum's session time zone).
    pub fn to_timestamptz(self) -> TimestampTz {
        TimestampTz(self.0)
    }
}

impl TimestampTz {
    /// `infinity`, later than every other timestamp.
    pub const INFINITY: TimestampTz = TimestampTz(i64::MAX);
    /// `-infinity`, earlier than every other timestamp.
    pub const NEG_INFINITY: TimestampTz = TimestampTz(i64::MIN);

    /// The current time from the system clock, to the microsecond. Read
    /// as an offset from the Unix epoch, with no calendar arithmetic: every
    /// statement takes it.
    pub fn now() -> TimestampTz {
        /// 1970-01-01 to 2000-01-01, in microseconds.
        const UNIX_TO_PG_MICROS: i64 = 946_684_800_000_000;
        let micros = match std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH) {
            Ok(d) => d.as_micros() as i64,
            // A clock set before 1970.
            Err(e) => -(e.duration().as_micros() as i64),
        };
        TimestampTz(micros - UNIX_TO_PG_MICROS)
    }

    /// False for `infinity` and `-infinity`.
    pub fn is_finite(self) -> bool {
        self != TimestampTz::INFINITY && self != TimestampTz::NEG_INFINITY
    }

    /// Parses PostgreSQL `timestamptz` input (the forms listed on
    /// [`Date::parse`]); without an explicit offset the time is taken as
    /// UTC, Centum's session time zone.
    pub fn parse(text: &str) -> Result<TimestampTz, TypeError> {
        parse_timestamp(text, "timestamp with time zone", true).map(TimestampTz)
    }

    /// The UTC wall-clock time.
    pub fn to_timestamp(self) -> Timestamp {
        Timestamp(self.0)
    }
}

impl Time {
    /// Parses PostgreSQL `time` input: `14:07`, `14:07:09.5`, `2:07 pm`,
    /// `14:07+02` (the zone is ignored), a whole timestamp (its time of day),
    /// `allballs` and `now`. 22007 for text that is not a time, 22008 for a
    /// field out of range.
    pub fn parse(text: &str) -> Result<Time, TypeError> {
        if text.trim().eq_ignore_ascii_case("now") {
            return Ok(Time::of(TimestampTz::now().to_timestamp()));
        }
        parse::parse_time_of_day(text).map(Time)
    }

    /// The time of day of a timestamp.
    pub fn of(ts: Timestamp) -> Time {
        Time(split_timestamp(ts.0).1)
    }

    /// `time + interval`: the time part added, wrapping around midnight;
    /// the interval's days and months do not move a time of day.
    pub fn add_micros(self, micros: i64) -> Time {
        Time((i128::from(self.0) + i128::from(micros)).rem_euclid(i128::from(USECS_PER_DAY)) as i64)
    }
}

impl fmt::Display for Time {
    /// `14:07:09`, `14:07:09.5`, `24:00:00`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let secs = self.0 / 1_000_000;
        let micros = self.0 % 1_000_000;
        write!(f, "{:02}:{:02}:{:02}", secs / 3600, secs / 60 % 60, secs % 60)?;
        if micros != 0 {
            let digits = format!("{micros:06}");
            write!(f, ".{}", digits.trim_end_matches('0'))?;
        }
        Ok(())
    }
}

/// `Some(Date)` when `days` is inside PostgreSQL's finite date range.
fn finite_date(days: i64) -> Option<Date> {
    (i64::from(MIN_DATE)..i64::from(END_DATE)).contains(&days).then_some(Date(days as i32))
}

/// `Some(usecs)` when inside PostgreSQL's finite timestamp range.
fn finite_timestamp(usecs: i64) -> Option<Timestamp> {
    (MIN_TIMESTAMP..END_TIMESTAMP).contains(&usecs).then_some(Timestamp(usecs))
}

/// Shared body of the two timestamp parsers; `use_offset` applies a zone
/// offset in the text (timestamptz) instead of ignoring it (timestamp).
fn parse_timestamp(text: &str, ty: &str, use_offset: bool) -> Result<i64, TypeError> {
    let overflow = || TypeError::DatetimeOverflow(format!("timestamp out of range: \"{text}\""));
    match parse::parse(text, ty)? {
        Parsed::Infinity => Ok(i64::MAX),
        Parsed::NegInfinity => Ok(i64::MIN),
        Parsed::Now => Ok(TimestampTz::now().0),
        Parsed::Today(delta) => {
            let today = TimestampTz::now().to_timestamp().date().0;
            Ok((i64::from(today) + delta) * USECS_PER_DAY)
        }
        Parsed::Fields(f) => {
            // The parser allows 9-digit years, whose microsecond count
            // overflows i64; compute in i128 and range-check once.
            let days = i128::from(days_from_ymd(f.year, f.month, f.day));
            let offset = if use_offset { f.offset_secs.unwrap_or(0) } else { 0 };
            let usecs =
                days * i128::from(USECS_PER_DAY) + i128::from(f.time_usecs) - i128::from(offset) * 1_000_000;
            i64::try_from(usecs).ok().and_then(finite_timestamp).map(|t| t.0).ok_or_else(overflow)
        }
    }
}

/// Writes `YYYY-MM-DD` (at least four year digits) for a day number and
/// returns whether the year is BC, so the caller can append ` BC` after
/// whatever follows the date.
fn write_date(f: &mut fmt::Formatter<'_>, days: i64) -> Result<bool, fmt::Error> {
    let (year, month, day) = ymd_from_days(days);
    let (shown, bc) = if year <= 0 { (1 - year, true) } else { (year, false) };
    write!(f, "{shown:04}-{month:02}-{day:02}")?;
    Ok(bc)
}

/// Writes a timestamp in ISO style; `zone` is appended after the time
/// (`+00` for timestamptz) and before ` BC`.
fn write_timestamp(f: &mut fmt::Formatter<'_>, usecs: i64, zone: &str) -> fmt::Result {
    match usecs {
        i64::MAX => return f.write_str("infinity"),
        i64::MIN => return f.write_str("-infinity"),
        _ => {}
    }
    let (days, time) = split_timestamp(usecs);
    let bc = write_date(f, days)?;
    write!(f, " {}", Time(time))?;
    f.write_str(zone)?;
    if bc {
        f.write_str(" BC")?;
    }
    Ok(())
}

impl fmt::Display for Date {
    /// ISO style: `2024-03-05`, `0044-03-15 BC`, `infinity`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Date::INFINITY => f.write_str("infinity"),
            Date::NEG_INFINITY => f.write_str("-infinity"),
            Date(days) => {
                if write_date(f, i64::from(days))? {
                    f.write_str(" BC")?;
                }
                Ok(())
            }
        }
    }
}

impl fmt::Display for Timestamp {
    /// ISO style: `2024-03-05 14:07:09.123456`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write_timestamp(f, self.0, "")
    }
}

impl fmt::Display for TimestampTz {
    /// ISO style in UTC: `2024-03-05 14:07:09+00`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write_timestamp(f, self.0, "+00")
    }
}

impl FromStr for Date {
    type Err = TypeError;
    /// Same as [`Date::parse`].
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Date::parse(s)
    }
}

impl FromStr for Timestamp {
    type Err = TypeError;
    /// Same as [`Timestamp::parse`].
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Timestamp::parse(s)
    }
}

impl FromStr for TimestampTz {
    type Err = TypeError;
    /// Same as [`TimestampTz::parse`].
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        TimestampTz::parse(s)
    }
}

impl From<NaiveDate> for Date {
    /// Every chrono date (±262,143 years) is a valid day number.
    fn from(date: NaiveDate) -> Date {
        use chrono::Datelike;
        Date(date.num_days_from_ce() - CE_TO_PG_DAYS)
    }
}

impl TryFrom<Date> for NaiveDate {
    type Error = TypeError;
    /// Fails (22008) for the infinities and dates beyond chrono's range.
    fn try_from(date: Date) -> Result<NaiveDate, TypeError> {
        date.is_finite()
            .then(|| date.0.checked_add(CE_TO_PG_DAYS))
            .flatten()
            .and_then(NaiveDate::from_num_days_from_ce_opt)
            .ok_or_else(|| TypeError::DatetimeOverflow(format!("date out of range: \"{date}\"")))
    }
}

impl From<NaiveDateTime> for Timestamp {
    /// Exact to the microsecond (nanoseconds are truncated); chrono's range
    /// fits in `i64` microseconds.
    fn from(dt: NaiveDateTime) -> Timestamp {
        use chrono::Timelike;
        let days = i64::from(Date::from(dt.date()).0);
        let time = dt.time();
        let micros =
            i64::from(time.num_seconds_from_midnight()) * 1_000_000 + i64::from(time.nanosecond() / 1000);
        Timestamp(days.saturating_mul(USECS_PER_DAY).saturating_add(micros))
    }
}

impl TryFrom<Timestamp> for NaiveDateTime {
    type Error = TypeError;
    /// Fails (22008) for the infinities and values beyond chrono's range.
    fn try_from(ts: Timestamp) -> Result<NaiveDateTime, TypeError> {
        let overflow = || TypeError::DatetimeOverflow(format!("timestamp out of range: \"{ts}\""));
        if !ts.is_finite() {
            return Err(overflow());
        }
        let (days, micros) = split_timestamp(ts.0);
        let date = i32::try_from(days)
            .map_err(|_| overflow())
            .and_then(|d| NaiveDate::try_from(Date(d)))
            .map_err(|_| overflow())?;
        // micros is in 0..USECS_PER_DAY, so both parts fit u32.
        let time = NaiveTime::from_num_seconds_from_midnight_opt(
            (micros / 1_000_000) as u32,
            (micros % 1_000_000) as u32 * 1000,
        )
        .ok_or_else(overflow)?;
        Ok(date.and_time(time))
    }
}

impl From<DateTime<Utc>> for TimestampTz {
    /// Exact to the microsecond (nanoseconds are truncated).
    fn from(dt: DateTime<Utc>) -> TimestampTz {
        TimestampTz(Timestamp::from(dt.naive_utc()).0)
    }
}

impl TryFrom<TimestampTz> for DateTime<Utc> {
    type Error = TypeError;
    /// Fails (22008) for the infinities and values beyond chrono's range.
    fn try_from(ts: TimestampTz) -> Result<DateTime<Utc>, TypeError> {
        NaiveDateTime::try_from(ts.to_timestamp()).map(|naive| naive.and_utc())
    }
}

#[cfg(test)]
mod tests;
