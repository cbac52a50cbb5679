//! Reading interval input text.
//!
//! The forms PostgreSQL reads and documents:
//!
//! ```text
//!   1 year 2 months 3 days 4 hours 5 minutes 6.5 seconds   units, any order
//!   1 yr 2 mons 3 d 4 h 5 min 6 s  1y 2mon                 abbreviations
//!   1.5 days  0.1 mon  1.5 years                           fractions spill down
//!   1 day 04:05:06.5   -1 2:03   1:30.5 (mm:ss.f)          a time of day part
//!   1-2  -1-2 +3 4:05:06                                   year-month part
//!   5   1 mon 2                                            a bare number: seconds
//!   @ 1 day ago                                            '@' prefix, 'ago' negates
//!   P1Y2M3DT4H5M6S   PT1.5H   P1W                          ISO 8601 durations
//! ```
//!
//! Each unit may be given once (`1 day 1 day` is 22007). A bare number is
//! seconds, unless a time part follows it, which makes it days (`1 2:03`).
//! Fractions spill into the next field down as PostgreSQL spills them: a
//! year's into whole months (rounded), a month's into days (30 to a month)
//! and on into seconds, a day's into seconds, and every second's fraction
//! is rounded to the microsecond.
//!
//! Errors: 22007 for text that is not an interval; 22015 for a number too
//! large for its field or a minute or second of 60 or more in a time part;
//! 22008 when the result does not fit the interval's fields.

use super::Interval;
use crate::error::TypeError;
use crate::units::DateUnit as Unit;

/// One bit per unit, to refuse a unit given twice.
const YEAR: u16 = 1;
const MONTH: u16 = 1 << 1;
const WEEK: u16 = 1 << 2;
const DAY: u16 = 1 << 3;
const HOUR: u16 = 1 << 4;
const MINUTE: u16 = 1 << 5;
const SECOND: u16 = 1 << 6;
const MILLISECOND: u16 = 1 << 7;
const MICROSECOND: u16 = 1 << 8;
const DECADE: u16 = 1 << 9;
const CENTURY: u16 = 1 << 10;
const MILLENNIUM: u16 = 1 << 11;

/// The units interval input takes, and the bit each claims.
fn bit(unit: Unit) -> Option<u16> {
    Some(match unit {
        Unit::Micro => MICROSECOND,
        Unit::Milli => MILLISECOND,
        Unit::Second => SECOND,
        Unit::Minute => MINUTE,
        Unit::Hour => HOUR,
        Unit::Day => DAY,
        Unit::Week => WEEK,
        Unit::Month => MONTH,
        Unit::Year => YEAR,
        Unit::Decade => DECADE,
        Unit::Century => CENTURY,
        Unit::Millennium => MILLENNIUM,
        _ => return None,
    })
}

/// The fields read so far, wide enough that only the final assembly can
/// overflow.
#[derive(Default)]
struct Fields {
    years: i64,
    months: i64,
    days: i64,
    hours: i64,
    minutes: i64,
    seconds: i64,
    micros: i64,
    seen: u16,
}

impl Fields {
    /// Marks `bits` as given; false if one was given before.
    fn claim(&mut self, bits: u16) -> bool {
        let fresh = self.seen & bits == 0;
        self.seen |= bits;
        fresh
    }

    /// `frac` of `scale` seconds: whole seconds, the rest in microseconds.
    fn fract_seconds(&mut self, frac: f64, scale: f64) {
        let secs = frac * scale;
        let whole = secs.trunc();
        self.seconds += whole as i64;
        self.micros += ((secs - whole) * 1e6).round_ties_even() as i64;
    }

    /// `frac` of `scale` days: whole days, the rest as seconds.
    fn fract_days(&mut self, frac: f64, scale: f64) {
        let days = frac * scale;
        let whole = days.trunc();
        self.days += whole as i64;
        self.fract_seconds(days - whole, 86_400.0);
    }

    /// Adds `whole` plus `frac` (the same sign) of `unit`.
    fn add(&mut self, unit: Unit, whole: i64, frac: f64) {
        match unit {
            Unit::Micro => self.micros += (whole as f64 + frac).round_ties_even() as i64,
            Unit::Milli => self.micros += ((whole as f64 + frac) * 1000.0).round_ties_even() as i64,
            Unit::Second => {
                self.seconds += whole;
                self.micros += (frac * 1e6).round_ties_even() as i64;
            }
            Unit::Minute => {
                self.minutes += whole;
                self.fract_seconds(frac, 60.0);
            }
            Unit::Hour => {
                self.hours += whole;
                self.fract_seconds(frac, 3600.0);
            }
            Unit::Day => {
                self.days += whole;
                self.fract_seconds(frac, 86_400.0);
            }
            Unit::Week => {
                self.days += whole * 7;
                self.fract_days(frac, 7.0);
            }
            Unit::Month => {
                self.months += whole;
                self.fract_days(frac, 30.0);
            }
            _ => {
                let years = match unit {
                    Unit::Year => 1,
                    Unit::Decade => 10,
                    Unit::Century => 100,
                    _ => 1000,
                };
                self.years += whole * years;
                self.months += (frac * 12.0 * years as f64).round_ties_even() as i64;
            }
        }
    }

    fn negate(&mut self) {
        for f in [
            &mut self.years,
            &mut self.months,
            &mut self.days,
            &mut self.hours,
            &mut self.minutes,
            &mut self.seconds,
            &mut self.micros,
        ] {
            *f = -*f;
        }
    }

    /// The interval these fields make; 22008 when one does not fit.
    fn interval(&self) -> Result<Interval, TypeError> {
        let months = i128::from(self.years) * 12 + i128::from(self.months);
        let time = ((i128::from(self.hours) * 60 + i128::from(self.minutes)) * 60 + i128::from(self.seconds))
            * 1_000_000
            + i128::from(self.micros);
        let out = || TypeError::DatetimeOverflow("interval out of range".to_string());
        Ok(Interval {
            months: i32::try_from(months).map_err(|_| out())?,
            days: i32::try_from(self.days).map_err(|_| out())?,
            micros: i64::try_from(time).map_err(|_| out())?,
        })
    }
}

/// A token of interval text.
#[derive(Debug, PartialEq)]
enum Token<'a> {
    /// A signed number, time part or year-month part, as written.
    Number { negative: bool, text: &'a str },
    /// A run of letters, lower-cased.
    Word(String),
}

/// Why input was refused, before the message is built.
enum Refusal {
    Syntax,
    FieldRange,
    Result(TypeError),
}

impl Interval {
    /// Parses PostgreSQL interval input (the forms listed in this module's
    /// header): 22007 for text that is not an interval, 22015 for a field
    /// out of range, 22008 for a result that does not fit.
    pub fn parse(input: &str) -> Result<Interval, TypeError> {
        parse(input).map_err(|why| match why {
            Refusal::Syntax => {
                TypeError::InvalidDatetime(format!("invalid input syntax for type interval: \"{input}\""))
            }
            Refusal::FieldRange => {
                TypeError::IntervalOverflow(format!("interval field value out of range: \"{input}\""))
            }
            Refusal::Result(e) => e,
        })
    }
}

fn parse(input: &str) -> Result<Interval, Refusal> {
    let text = input.trim();
    if let Some(rest) = text.strip_prefix(['P', 'p']) {
        return iso8601(rest);
    }
    let text = text.strip_prefix('@').unwrap_or(text);
    let tokens = tokenize(text)?;
    let mut f = Fields::default();
    let mut ago = false;
    let mut i = 0;
    while i < tokens.len() {
        match &tokens[i] {
            Token::Word(w) if w == "ago" && f.seen != 0 => ago = true,
            Token::Word(_) => return Err(Refusal::Syntax),
            Token::Number { negative, text } => {
                let negative = *negative;
                if text.contains(':') {
                    time_part(&mut f, negative, text)?;
                } else if text[1..].contains('-') {
                    year_month(&mut f, negative, text)?;
                } else {
                    let (whole, frac) = number(negative, text)?;
                    let unit = match tokens.get(i + 1) {
                        Some(Token::Word(w)) if w != "ago" => {
                            i += 1;
                            Unit::named(w).ok_or(Refusal::Syntax)?
                        }
                        Some(Token::Number { text, .. }) if text.contains(':') => Unit::Day,
                        _ => Unit::Second,
                    };
                    if !f.claim(bit(unit).ok_or(Refusal::Syntax)?) {
                        return Err(Refusal::Syntax);
                    }
                    f.add(unit, whole, frac);
                }
            }
        }
        i += 1;
    }
    if f.seen == 0 {
        return Err(Refusal::Syntax);
    }
    if ago {
        f.negate();
    }
    f.interval().map_err(Refusal::Result)
}

/// Splits interval text into signed numbers (with their `.`, `:` and
/// inner `-`) and words.
fn tokenize(text: &str) -> Result<Vec<Token<'_>>, Refusal> {
    let bytes = text.as_bytes();
    let mut tokens = Vec::new();
    let mut pos = 0;
    while pos < bytes.len() {
        let c = bytes[pos];
        if c.is_ascii_whitespace() {
            pos += 1;
        } else if c.is_ascii_alphabetic() {
            let start = pos;
            while pos < bytes.len() && bytes[pos].is_ascii_alphabetic() {
                pos += 1;
            }
            tokens.push(Token::Word(text[start..pos].to_ascii_lowercase()));
        } else if c == b'+' || c == b'-' || c.is_ascii_digit() || c == b'.' {
            let negative = c == b'-';
            if c == b'+' || c == b'-' {
                pos += 1;
                while pos < bytes.len() && bytes[pos].is_ascii_whitespace() {
                    pos += 1;
                }
            }
            let start = pos;
            while pos < bytes.len() {
                let b = bytes[pos];
                let inner_dash =
                    b == b'-' && pos > start && bytes.get(pos + 1).is_some_and(|n| n.is_ascii_digit());
                if b.is_ascii_digit() || b == b'.' || b == b':' || inner_dash {
                    pos += 1;
                } else {
                    break;
                }
            }
            if pos == start {
                return Err(Refusal::Syntax);
            }
            tokens.push(Token::Number { negative, text: &text[start..pos] });
        } else {
            return Err(Refusal::Syntax);
        }
    }
    Ok(tokens)
}

/// An unsigned decimal `digits[.digits]` with the sign applied: the whole
/// part (22015 past 32 bits, as PostgreSQL reads each field) and the
/// fraction.
fn number(negative: bool, text: &str) -> Result<(i64, f64), Refusal> {
    let (int, frac) = match text.split_once('.') {
        Some((i, f)) => (i, Some(f)),
        None => (text, None),
    };
    let digits_only = |s: &str| s.bytes().all(|b| b.is_ascii_digit());
    if !digits_only(int)
        || frac.is_some_and(|f| !digits_only(f))
        || (int.is_empty() && frac.is_none_or(str::is_empty))
    {
        return Err(Refusal::Syntax);
    }
    let whole: i64 = if int.is_empty() {
        0
    } else {
        int.parse::<i64>()
            .ok()
            .filter(|v| *v <= i64::from(i32::MAX) + i64::from(negative))
            .ok_or(Refusal::FieldRange)?
    };
    let fraction = match frac {
        Some(f) if !f.is_empty() => format!("0.{f}").parse::<f64>().map_err(|_| Refusal::Syntax)?,
        _ => 0.0,
    };
    Ok(if negative { (-whole, -fraction) } else { (whole, fraction) })
}

/// `h:m`, `h:m:s[.f]` or `m:s.f`, all taking the sign.
fn time_part(f: &mut Fields, negative: bool, text: &str) -> Result<(), Refusal> {
    if !f.claim(HOUR | MINUTE | SECOND) {
        return Err(Refusal::Syntax);
    }
    let parts: Vec<&str> = text.split(':').collect();
    // Hours may run past 32 bits (the time part holds 2562047788 of them).
    let int = |s: &str| -> Result<i64, Refusal> {
        if s.is_empty() || !s.bytes().all(|b| b.is_ascii_digit()) {
            return Err(Refusal::Syntax);
        }
        s.parse::<i64>().map_err(|_| Refusal::FieldRange)
    };
    let seconds = |s: &str| -> Result<(i64, i64), Refusal> {
        let (whole, frac) = number(false, s)?;
        Ok((whole, (frac * 1e6).round_ties_even() as i64))
    };
    let (hours, minutes, (secs, micros)) = match parts.as_slice() {
        [m, s] if s.contains('.') => (0, int(m)?, seconds(s)?),
        [h, m] => (int(h)?, int(m)?, (0, 0)),
        [h, m, s] => (int(h)?, int(m)?, seconds(s)?),
        _ => return Err(Refusal::Syntax),
    };
    if minutes > 59 || secs > 60 {
        return Err(Refusal::FieldRange);
    }
    let sign = if negative { -1 } else { 1 };
    f.hours += sign * hours;
    f.minutes += sign * minutes;
    f.seconds += sign * secs;
    f.micros += sign * micros;
    Ok(())
}

/// `y-m`, both taking the sign.
fn year_month(f: &mut Fields, negative: bool, text: &str) -> Result<(), Refusal> {
    if !f.claim(YEAR | MONTH) {
        return Err(Refusal::Syntax);
    }
    let (y, m) = text.split_once('-').ok_or(Refusal::Syntax)?;
    let (years, yfrac) = number(false, y)?;
    let (months, mfrac) = number(false, m)?;
    if yfrac != 0.0 || mfrac != 0.0 || y.contains('.') || m.contains('.') {
        return Err(Refusal::Syntax);
    }
    if months > 11 {
        return Err(Refusal::FieldRange);
    }
    let sign = if negative { -1 } else { 1 };
    f.years += sign * years;
    f.months += sign * months;
    Ok(())
}

/// The ISO 8601 duration after its `P`: `nY nM nW nD`, then after `T`
/// `nH nM nS`; each `n` may be signed and fractional.
fn iso8601(rest: &str) -> Result<Interval, Refusal> {
    let mut f = Fields::default();
    let mut in_time = false;
    let bytes = rest.as_bytes();
    let mut pos = 0;
    while pos < bytes.len() {
        if matches!(bytes[pos], b'T' | b't') && !in_time {
            in_time = true;
            pos += 1;
            continue;
        }
        let start = pos;
        if matches!(bytes[pos], b'+' | b'-') {
            pos += 1;
        }
        while pos < bytes.len() && (bytes[pos].is_ascii_digit() || bytes[pos] == b'.') {
            pos += 1;
        }
        let negative = bytes[start] == b'-';
        let digits = &rest[start + usize::from(matches!(bytes[start], b'+' | b'-'))..pos];
        let (whole, frac) = number(negative, digits)?;
        let unit = match (bytes.get(pos).map(u8::to_ascii_uppercase), in_time) {
            (Some(b'Y'), false) => Unit::Year,
            (Some(b'M'), false) => Unit::Month,
            (Some(b'W'), false) => Unit::Week,
            (Some(b'D'), false) => Unit::Day,
            (Some(b'H'), true) => Unit::Hour,
            (Some(b'M'), true) => Unit::Minute,
            (Some(b'S'), true) => Unit::Second,
            _ => return Err(Refusal::Syntax),
        };
        pos += 1;
        if !f.claim(bit(unit).ok_or(Refusal::Syntax)?) {
            return Err(Refusal::Syntax);
        }
        f.add(unit, whole, frac);
    }
    if f.seen == 0 {
        return Err(Refusal::Syntax);
    }
    f.interval().map_err(Refusal::Result)
}
