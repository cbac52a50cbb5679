//! `interval`: a span of time kept, as PostgreSQL keeps it, in three
//! separate fields.
//!
//! ```text
//!   Interval { months: i32, days: i32, micros: i64 }
//!     1 year 2 mons 3 days 04:05:06.5  =  { 14, 3, 14_706_500_000 }
//! ```
//!
//! The fields stay apart because their lengths are not fixed: a month has
//! 28 to 31 days and (with time zones) a day 23 to 25 hours, so
//! `timestamp '2024-01-31' + interval '1 month'` is 2024-02-29 while
//! `+ interval '30 days'` is 2024-03-01. Each field may carry its own sign
//! (`1 mon -1 days`).
//!
//! Comparison, sorting, hashing and index keys use one linear span instead,
//! counting a month as 30 days and a day as 24 hours ([`Interval::span`]),
//! so `interval '1 mon' = interval '30 days'` is true, as in PostgreSQL.
//!
//! Text output is PostgreSQL's default `IntervalStyle = postgres`
//! (`1 year 2 mons 3 days 04:05:06.5`, `-1 days +02:00:00`, `00:00:00`);
//! input is described on [`Interval::parse`] (in `interval/parse.rs`).
//! Arithmetic follows PostgreSQL's functions of the same meaning, fractions
//! and rounding included: `interval_mul`, `interval_div`, `timestamp_age`,
//! the `justify_*` family and `interval_part` (`extract`).

mod parse;

use std::fmt;

use crate::datetime::calendar::{
    days_from_ymd, days_in_month, split_timestamp, ymd_from_days, USECS_PER_DAY,
};
use crate::error::TypeError;

/// Microseconds in an hour and a minute, for breaking time fields down.
const USECS_PER_HOUR: i64 = 3_600_000_000;
const USECS_PER_MINUTE: i64 = 60_000_000;
const USECS_PER_SEC: i64 = 1_000_000;
/// PostgreSQL's fixed conversion factors between the fields.
const DAYS_PER_MONTH: i32 = 30;
const SECS_PER_DAY: f64 = 86_400.0;

/// A span of months, days and microseconds.
#[derive(Clone, Copy, Debug, Default)]
pub struct Interval {
    /// Whole months (a year is 12).
    pub months: i32,
    /// Whole days.
    pub days: i32,
    /// Microseconds, the time part (may exceed a day).
    pub micros: i64,
}

/// An interval broken into the fields `extract` and `date_trunc` read,
/// each with the sign of the field it comes from (C's truncating division,
/// as PostgreSQL's `interval2tm`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct IntervalParts {
    /// `months / 12`.
    pub years: i64,
    /// `months % 12`.
    pub months: i64,
    /// The day field.
    pub days: i64,
    /// Whole hours of the time part.
    pub hours: i64,
    /// Minutes, -59..=59.
    pub minutes: i64,
    /// Seconds, -59..=59.
    pub seconds: i64,
    /// Microseconds below the second, -999999..=999999.
    pub micros: i64,
}

fn out_of_range() -> TypeError {
    TypeError::DatetimeOverflow("interval out of range".to_string())
}

impl Interval {
    /// The zero interval, `00:00:00`.
    pub const ZERO: Interval = Interval { months: 0, days: 0, micros: 0 };

    /// An interval from its three fields.
    pub fn new(months: i32, days: i32, micros: i64) -> Interval {
        Interval { months, days, micros }
    }

    /// An interval of `micros` microseconds and nothing else.
    pub fn from_micros(micros: i64) -> Interval {
        Interval { months: 0, days: 0, micros }
    }

    /// The linear span in microseconds used to compare intervals: a month
    /// counts 30 days, a day 24 hours.
    pub fn span(self) -> i128 {
        let days = i128::from(self.months) * i128::from(DAYS_PER_MONTH) + i128::from(self.days);
        days * i128::from(USECS_PER_DAY) + i128::from(self.micros)
    }

    /// Builds an interval from wide fields, failing with 22008 when one
    /// does not fit.
    fn checked(months: i64, days: i64, micros: i128) -> Result<Interval, TypeError> {
        Ok(Interval {
            months: i32::try_from(months).map_err(|_| out_of_range())?,
            days: i32::try_from(days).map_err(|_| out_of_range())?,
            micros: i64::try_from(micros).map_err(|_| out_of_range())?,
        })
    }

    /// Field-wise sum (PostgreSQL's `interval_pl`); 22008 on overflow.
    pub fn checked_add(self, other: Interval) -> Result<Interval, TypeError> {
        Interval::checked(
            i64::from(self.months) + i64::from(other.months),
            i64::from(self.days) + i64::from(other.days),
            i128::from(self.micros) + i128::from(other.micros),
        )
    }

    /// Field-wise difference; 22008 on overflow.
    pub fn checked_sub(self, other: Interval) -> Result<Interval, TypeError> {
        self.checked_add(other.checked_neg()?)
    }

    /// Every field negated; 22008 for a field at its minimum.
    pub fn checked_neg(self) -> Result<Interval, TypeError> {
        Interval::checked(-i64::from(self.months), -i64::from(self.days), -i128::from(self.micros))
    }

    /// `interval * factor`, spilling fractions of months into days and of
    /// days into time as PostgreSQL's `interval_mul` does.
    pub fn mul_f64(self, factor: f64) -> Result<Interval, TypeError> {
        let months = f64::from(self.months) * factor;
        let days = f64::from(self.days) * factor;
        let micros = self.micros as f64 * factor;
        Interval::from_fractional(months, days, micros, false)
    }

    /// `interval / divisor` (PostgreSQL's `interval_div`); 22012 for zero.
    pub fn div_f64(self, divisor: f64) -> Result<Interval, TypeError> {
        if divisor == 0.0 {
            return Err(TypeError::DivisionByZero);
        }
        let months = f64::from(self.months) / divisor;
        let days = f64::from(self.days) / divisor;
        let micros = self.micros as f64 / divisor;
        Interval::from_fractional(months, days, micros, true)
    }

    /// The shared tail of multiplication and division: whole months, the
    /// month fraction as days (30 to a month), whole days, the day
    /// fractions as seconds rounded to the microsecond, then the time.
    /// Division also rounds the month fraction's days to a millionth, as
    /// PostgreSQL's `interval_div` does and its `interval_mul` does not.
    fn from_fractional(
        months: f64,
        days: f64,
        micros: f64,
        round_month_days: bool,
    ) -> Result<Interval, TypeError> {
        if !months.is_finite() || !days.is_finite() || !micros.is_finite() {
            return Err(out_of_range());
        }
        let whole_months = months.trunc();
        let mut month_days = (months - whole_months) * f64::from(DAYS_PER_MONTH);
        if round_month_days {
            month_days = (month_days * 1e6).round_ties_even() / 1e6;
        }
        let whole_days = days.trunc();
        let mut sec_remainder = (days - whole_days + month_days - month_days.trunc()) * SECS_PER_DAY;
        sec_remainder = (sec_remainder * 1e6).round_ties_even() / 1e6;
        let mut extra_days = 0.0;
        if sec_remainder.abs() >= SECS_PER_DAY {
            extra_days = (sec_remainder / SECS_PER_DAY).trunc();
            sec_remainder -= extra_days * SECS_PER_DAY;
        }
        let total_days = whole_days + extra_days + month_days.trunc();
        let time = (micros + sec_remainder * 1e6).round_ties_even();
        let fits = |v: f64, lo: f64, hi: f64| (lo..=hi).contains(&v);
        if !fits(whole_months, f64::from(i32::MIN), f64::from(i32::MAX))
            || !fits(total_days, f64::from(i32::MIN), f64::from(i32::MAX))
            || !fits(time, -9.223_372_036_854_775e18, 9.223_372_036_854_775e18)
        {
            return Err(out_of_range());
        }
        Ok(Interval { months: whole_months as i32, days: total_days as i32, micros: time as i64 })
    }

    /// Whole 24-hour days of the time part moved into the day field, with
    /// the signs of days and time made to agree (`justify_hours`).
    pub fn justify_hours(self) -> Result<Interval, TypeError> {
        let (days, time) = carry(i64::from(self.days), self.micros, USECS_PER_DAY);
        let (days, time) = agree(days, time, USECS_PER_DAY, time < 0, time > 0);
        Interval::checked(i64::from(self.months), days, i128::from(time))
    }

    /// Whole 30-day periods moved into the month field, with the signs of
    /// months and days made to agree (`justify_days`).
    pub fn justify_days(self) -> Result<Interval, TypeError> {
        let per = i64::from(DAYS_PER_MONTH);
        let (months, days) = carry(i64::from(self.months), i64::from(self.days), per);
        let (months, days) = agree(months, days, per, days < 0, days > 0);
        Interval::checked(months, days, i128::from(self.micros))
    }

    /// Both justifications, with every field's sign made to agree
    /// (`justify_interval`): a zero day count takes the time's sign.
    pub fn justify_interval(self) -> Result<Interval, TypeError> {
        let per = i64::from(DAYS_PER_MONTH);
        let (days, time) = carry(i64::from(self.days), self.micros, USECS_PER_DAY);
        let (months, days) = carry(i64::from(self.months), days, per);
        let negative = days < 0 || (days == 0 && time < 0);
        let positive = days > 0 || (days == 0 && time > 0);
        let (months, days) = agree(months, days, per, negative, positive);
        let (days, time) = agree(days, time, USECS_PER_DAY, time < 0, time > 0);
        Interval::checked(months, days, i128::from(time))
    }

    /// The interval broken into the fields `extract` reads.
    pub fn parts(self) -> IntervalParts {
        let t = self.micros;
        IntervalParts {
            years: i64::from(self.months / 12),
            months: i64::from(self.months % 12),
            days: i64::from(self.days),
            hours: t / USECS_PER_HOUR,
            minutes: t % USECS_PER_HOUR / USECS_PER_MINUTE,
            seconds: t % USECS_PER_MINUTE / USECS_PER_SEC,
            micros: t % USECS_PER_SEC,
        }
    }

    /// The interval made of `parts` again (the inverse of [`Interval::parts`]).
    pub fn from_parts(p: IntervalParts) -> Result<Interval, TypeError> {
        let time = i128::from(p.hours) * i128::from(USECS_PER_HOUR)
            + i128::from(p.minutes) * i128::from(USECS_PER_MINUTE)
            + i128::from(p.seconds) * i128::from(USECS_PER_SEC)
            + i128::from(p.micros);
        Interval::checked(p.years * 12 + p.months, p.days, time)
    }

    /// The number of seconds `extract(epoch from ...)` gives, in
    /// microseconds: a year counts 365.25 days, a month 30 days.
    pub fn epoch_micros(self) -> i128 {
        let secs_per_day = 86_400_i128;
        let year_secs = secs_per_day * 365 + secs_per_day / 4;
        let from_months = year_secs * i128::from(self.months / 12)
            + i128::from(DAYS_PER_MONTH) * secs_per_day * i128::from(self.months % 12);
        let secs = from_months + secs_per_day * i128::from(self.days);
        secs * i128::from(USECS_PER_SEC) + i128::from(self.micros)
    }
}

/// Whole `per`-sized units of `small` carried into `big` (truncating, so
/// each keeps its sign).
fn carry(big: i64, small: i64, per: i64) -> (i64, i64) {
    (big + small / per, small % per)
}

/// One unit of `big` lent to `small` (worth `per`) or taken back, so the
/// two agree in sign; `negative` and `positive` say the sign of what
/// `small` stands for.
fn agree(big: i64, small: i64, per: i64, negative: bool, positive: bool) -> (i64, i64) {
    if big > 0 && negative {
        (big - 1, small + per)
    } else if big < 0 && positive {
        (big + 1, small - per)
    } else {
        (big, small)
    }
}

/// `timestamp + interval` on microseconds since 2000-01-01 (UTC for
/// timestamptz): months first, clamping the day to the new month's last
/// (Jan 31 + 1 month is Feb 29 in a leap year), then days, then time.
/// Infinite timestamps stay as they are.
pub fn add_to_timestamp(usecs: i64, iv: Interval) -> Result<i64, TypeError> {
    if usecs == i64::MAX || usecs == i64::MIN {
        return Ok(usecs);
    }
    let range = || TypeError::DatetimeOverflow("timestamp out of range".to_string());
    let (mut days, time) = split_timestamp(usecs);
    if iv.months != 0 {
        let (year, month, day) = ymd_from_days(days);
        let m0 = year * 12 + i64::from(month) - 1 + i64::from(iv.months);
        let (year, month) = (m0.div_euclid(12), (m0.rem_euclid(12) + 1) as u32);
        let day = day.min(days_in_month(year, month));
        days = days_from_ymd(year, month, day);
    }
    let total = (i128::from(days) + i128::from(iv.days)) * i128::from(USECS_PER_DAY)
        + i128::from(time)
        + i128::from(iv.micros);
    let total = i64::try_from(total).map_err(|_| range())?;
    let (lo, hi) = (crate::datetime::calendar::MIN_TIMESTAMP, crate::datetime::calendar::END_TIMESTAMP);
    if !(lo..hi).contains(&total) {
        return Err(range());
    }
    Ok(total)
}

/// `age(a, b)`: `a - b` in years, months, days and time, borrowing from
/// the next larger field by the calendar (a month borrows the length of
/// the month it lands in), as PostgreSQL's `timestamp_age`.
pub fn age(a: i64, b: i64) -> Result<Interval, TypeError> {
    if a == i64::MAX || a == i64::MIN || b == i64::MAX || b == i64::MIN {
        return Err(out_of_range());
    }
    let fields = |usecs: i64| {
        let (days, time) = split_timestamp(usecs);
        let (y, m, d) = ymd_from_days(days);
        (y, i64::from(m), i64::from(d), time)
    };
    let (y1, m1, d1, t1) = fields(a);
    let (y2, m2, d2, t2) = fields(b);
    let (mut years, mut months, mut days, mut time) = (y1 - y2, m1 - m2, d1 - d2, t1 - t2);
    let flip = a < b;
    if flip {
        (years, months, days, time) = (-years, -months, -days, -time);
    }
    if time < 0 {
        let borrow = (-time + USECS_PER_DAY - 1) / USECS_PER_DAY;
        time += borrow * USECS_PER_DAY;
        days -= borrow;
    }
    // A negative day count borrows the length of one operand's month, as
    // PostgreSQL does: the first operand's when a < b, else the second's.
    let (by, bm) = if flip { (y1, m1) } else { (y2, m2) };
    while days < 0 {
        days += i64::from(days_in_month(by, bm as u32));
        months -= 1;
    }
    while months < 0 {
        months += 12;
        years -= 1;
    }
    if flip {
        (years, months, days, time) = (-years, -months, -days, -time);
    }
    Interval::checked(years * 12 + months, days, i128::from(time))
}

impl PartialEq for Interval {
    /// Equal spans are equal: `1 mon` = `30 days`.
    fn eq(&self, other: &Interval) -> bool {
        self.span() == other.span()
    }
}

impl Eq for Interval {}

impl PartialOrd for Interval {
    fn partial_cmp(&self, other: &Interval) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Interval {
    /// By span (see [`Interval::span`]).
    fn cmp(&self, other: &Interval) -> std::cmp::Ordering {
        self.span().cmp(&other.span())
    }
}

impl std::hash::Hash for Interval {
    /// Hashes the span, so equal intervals hash equally.
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.span().hash(state);
    }
}

/// Writes `value unit[s]` for one date field in postgres style: a space
/// before every field but the first, a `+` before a positive field that
/// follows a negative one, and the plural unless the value is exactly 1.
fn write_field(
    f: &mut fmt::Formatter<'_>,
    value: i64,
    unit: &str,
    first: &mut bool,
    negative_before: &mut bool,
) -> fmt::Result {
    if value == 0 {
        return Ok(());
    }
    let space = if *first { "" } else { " " };
    let plus = if *negative_before && value > 0 { "+" } else { "" };
    let plural = if value != 1 { "s" } else { "" };
    write!(f, "{space}{plus}{value} {unit}{plural}")?;
    *negative_before = value < 0;
    *first = false;
    Ok(())
}

impl fmt::Display for Interval {
    /// PostgreSQL's `IntervalStyle = postgres`: `1 year 2 mons 3 days
    /// 04:05:06.5`, `-1 days +02:00:00`, `00:00:00` for zero.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let p = self.parts();
        let (mut first, mut negative_before) = (true, false);
        write_field(f, p.years, "year", &mut first, &mut negative_before)?;
        write_field(f, p.months, "mon", &mut first, &mut negative_before)?;
        write_field(f, p.days, "day", &mut first, &mut negative_before)?;
        if first || self.micros != 0 {
            let minus = self.micros < 0;
            let space = if first { "" } else { " " };
            let sign = if minus {
                "-"
            } else if negative_before {
                "+"
            } else {
                ""
            };
            write!(f, "{space}{sign}{:02}:{:02}:{:02}", p.hours.abs(), p.minutes.abs(), p.seconds.abs())?;
            if p.micros != 0 {
                let digits = format!("{:06}", p.micros.abs());
                write!(f, ".{}", digits.trim_end_matches('0'))?;
            }
        }
        Ok(())
    }
}

impl std::str::FromStr for Interval {
    type Err = TypeError;
    /// Same as [`Interval::parse`].
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Interval::parse(s)
    }
}

#[cfg(test)]
mod tests;
