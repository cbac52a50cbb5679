//! Intervals and times of day: their operators and functions.
//!
//! ```text
//!   operators  timestamp ± interval   date ± interval -> timestamp
//!              timestamp - timestamp -> interval (days and time)
//!              interval ± interval    interval * number   interval / number
//!              time ± interval        time - time -> interval   date + time
//!   functions  age(a, b)  age(a)  justify_days  justify_hours
//!              justify_interval  make_interval  localtime
//!              extract / date_part / date_trunc over interval and time
//! ```
//!
//! The calendar arithmetic itself (month ends, borrowing in `age`, the
//! fractions of `*` and `/`) lives with the type, in
//! `centum_types::interval`; this module picks the operation for the
//! operand types the binder resolved and shapes results as PostgreSQL's
//! functions do (numeric scales of `extract`, its errors for units a type
//! has no field for).

use centum_types::interval::{age as age_between, IntervalParts};
use centum_types::{Decimal, Interval, Time, Value};

use super::{
    arg, flt, instant, int, text, unit, unit_unknown, unit_unsupported, FnContext, Unit, USECS_PER_DAY,
};
use crate::error::{Error, Result};

/// `age(a, b)`: the calendar difference in years, months and days.
pub(super) fn age(a: &[Value], ctx: &FnContext) -> Result<Value> {
    let later = match a.get(1) {
        Some(_) => instant(arg(a, 0))?.0,
        // age(t) counts from midnight of the transaction's date.
        None => ctx.transaction_time.to_timestamp().date().to_timestamp()?.0,
    };
    // An unknown literal reads as timestamptz.
    let earlier = instant(arg(a, a.len() - 1))?.0;
    Ok(Value::Interval(age_between(later, earlier)?))
}

/// An interval argument; an unknown literal is read as one.
fn interval(v: &Value) -> Result<Interval> {
    match v {
        Value::Interval(i) => Ok(*i),
        Value::Text(s) => Ok(Interval::parse(s)?),
        v => Err(super::unexpected(v)),
    }
}

/// `justify_days(interval)`.
pub(super) fn justify_days(a: &[Value], _: &FnContext) -> Result<Value> {
    Ok(Value::Interval(interval(arg(a, 0))?.justify_days()?))
}

/// `justify_hours(interval)`.
pub(super) fn justify_hours(a: &[Value], _: &FnContext) -> Result<Value> {
    Ok(Value::Interval(interval(arg(a, 0))?.justify_hours()?))
}

/// `justify_interval(interval)`.
pub(super) fn justify_interval(a: &[Value], _: &FnContext) -> Result<Value> {
    Ok(Value::Interval(interval(arg(a, 0))?.justify_interval()?))
}

/// `make_interval(years, months, weeks, days, hours, mins, secs)`, every
/// argument 0 when left out.
pub(super) fn make_interval(a: &[Value], _: &FnContext) -> Result<Value> {
    let field = |i: usize| a.get(i).map_or(Ok(0), int).map(i128::from);
    let out = || Error::other("22008", "interval out of range");
    let months = field(0)? * 12 + field(1)?;
    let days = field(2)? * 7 + field(3)?;
    let secs = a.get(6).map_or(Ok(0.0), flt)?;
    if !secs.is_finite() {
        return Err(out());
    }
    let micros = field(4)? * 3_600_000_000 + field(5)? * 60_000_000 + (secs * 1e6).round_ties_even() as i128;
    Ok(Value::Interval(Interval::new(
        i32::try_from(months).map_err(|_| out())?,
        i32::try_from(days).map_err(|_| out())?,
        i64::try_from(micros).map_err(|_| out())?,
    )))
}

/// `localtime([precision])`: the transaction's time of day.
pub(super) fn localtime(a: &[Value], ctx: &FnContext) -> Result<Value> {
    let t = Time::of(ctx.transaction_time.to_timestamp()).0;
    let t = match a.first() {
        Some(p) => {
            let p = int(p)?.clamp(0, 6);
            let unit = 10i64.pow(6 - p as u32);
            (t + unit / 2) / unit * unit % USECS_PER_DAY
        }
        None => t,
    };
    Ok(Value::Time(Time(t)))
}

/// A field of an interval or time for `extract` / `date_part`; `None`
/// when `source` is neither (a date or timestamp).
pub(super) fn part(field: &Value, source: &Value) -> Result<Option<Decimal>> {
    match source {
        Value::Interval(iv) => interval_part(&text(field)?.to_lowercase(), *iv).map(Some),
        Value::Time(t) => time_part(&text(field)?.to_lowercase(), *t).map(Some),
        _ => Ok(None),
    }
}

/// The seconds-and-below fields both types share, in the scales EXTRACT
/// gives them.
fn sub_minute(u: Unit, in_minute: i64) -> Option<Decimal> {
    Some(match u {
        Unit::Micro => Decimal::from(in_minute),
        Unit::Milli => Decimal::new(in_minute, 3),
        Unit::Second => Decimal::new(in_minute, 6),
        _ => return None,
    })
}

fn interval_part(low: &str, iv: Interval) -> Result<Decimal> {
    let ty = "interval";
    let u = unit(low).ok_or_else(|| unit_unknown(low, ty))?;
    let p = iv.parts();
    if let Some(d) = sub_minute(u, p.seconds * 1_000_000 + p.micros) {
        return Ok(d);
    }
    Ok(match u {
        Unit::Minute => Decimal::from(p.minutes),
        Unit::Hour => Decimal::from(p.hours),
        Unit::Day => Decimal::from(p.days),
        Unit::Month => Decimal::from(p.months),
        Unit::Quarter => Decimal::from(p.months / 3 + 1),
        Unit::Year => Decimal::from(p.years),
        Unit::Decade => Decimal::from(p.years / 10),
        Unit::Century => Decimal::from(p.years / 100),
        Unit::Millennium => Decimal::from(p.years / 1000),
        Unit::Epoch => Decimal::from_i128_with_scale(iv.epoch_micros(), 6),
        _ => return Err(unit_unsupported(low, ty)),
    })
}

fn time_part(low: &str, t: Time) -> Result<Decimal> {
    let ty = "time without time zone";
    let u = unit(low).ok_or_else(|| unit_unknown(low, ty))?;
    if let Some(d) = sub_minute(u, t.0 % 60_000_000) {
        return Ok(d);
    }
    Ok(match u {
        Unit::Minute => Decimal::from(t.0 / 60_000_000 % 60),
        Unit::Hour => Decimal::from(t.0 / 3_600_000_000),
        Unit::Epoch => Decimal::new(t.0, 6),
        _ => return Err(unit_unsupported(low, ty)),
    })
}

/// `date_trunc(field, interval)`: the fields below `field` set to zero.
pub(super) fn trunc(a: &[Value], _: &FnContext) -> Result<Value> {
    let low = text(arg(a, 0))?.to_lowercase();
    let iv = interval(arg(a, 1))?;
    let u = unit(&low).ok_or_else(|| unit_unknown(&low, "interval"))?;
    let p = iv.parts();
    let keep = |years: i64, months: i64, days: i64, hours: i64, minutes: i64, seconds: i64, micros: i64| {
        IntervalParts { years, months, days, hours, minutes, seconds, micros }
    };
    let t = match u {
        Unit::Millennium => keep(p.years / 1000 * 1000, 0, 0, 0, 0, 0, 0),
        Unit::Century => keep(p.years / 100 * 100, 0, 0, 0, 0, 0, 0),
        Unit::Decade => keep(p.years / 10 * 10, 0, 0, 0, 0, 0, 0),
        Unit::Year => keep(p.years, 0, 0, 0, 0, 0, 0),
        Unit::Quarter => keep(p.years, p.months / 3 * 3, 0, 0, 0, 0, 0),
        Unit::Month => keep(p.years, p.months, 0, 0, 0, 0, 0),
        Unit::Day => keep(p.years, p.months, p.days, 0, 0, 0, 0),
        Unit::Hour => keep(p.years, p.months, p.days, p.hours, 0, 0, 0),
        Unit::Minute => keep(p.years, p.months, p.days, p.hours, p.minutes, 0, 0),
        Unit::Second => keep(p.years, p.months, p.days, p.hours, p.minutes, p.seconds, 0),
        Unit::Milli => keep(p.years, p.months, p.days, p.hours, p.minutes, p.seconds, p.micros / 1000 * 1000),
        Unit::Micro => p,
        _ => return Err(unit_unsupported(&low, "interval")),
    };
    Ok(Value::Interval(Interval::from_parts(t)?))
}
