//! Date and time unit names, as PostgreSQL spells them.
//!
//! Interval input (`3 hours`, `1 mon`) and the functions that take a unit
//! (`extract`, `date_part`, `date_trunc`) read the same words: full names,
//! plurals and abbreviations, compared on their first 10 characters as
//! PostgreSQL compares them. Which units a use accepts is that use's
//! business: interval input has no `dow`, `date_trunc` no `epoch`.

/// A date or time unit.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DateUnit {
    /// `microseconds`, `us`, `usec`
    Micro,
    /// `milliseconds`, `ms`, `msec`
    Milli,
    /// `seconds`, `s`, `sec`
    Second,
    /// `minutes`, `m`, `min`
    Minute,
    /// `hours`, `h`, `hr`
    Hour,
    /// `days`, `d`
    Day,
    /// `weeks`, `w`
    Week,
    /// `months`, `mon`
    Month,
    /// `quarter`, `qtr`
    Quarter,
    /// `years`, `y`, `yr`
    Year,
    /// `decades`, `dec`
    Decade,
    /// `centuries`, `c`, `cent`
    Century,
    /// `millennia`, `mil`
    Millennium,
    /// `dow`: day of the week, Sunday 0.
    Dow,
    /// `isodow`: day of the week, Monday 1 to Sunday 7.
    IsoDow,
    /// `doy`: day of the year.
    Doy,
    /// `isoyear`: the ISO 8601 week-numbering year.
    IsoYear,
    /// `epoch`: seconds since 1970-01-01.
    Epoch,
    /// `julian`, `j`: the Julian day.
    Julian,
    /// `timezone`, `timezone_h`, `timezone_m`.
    Zone,
}

impl DateUnit {
    /// The unit a lower-case word names.
    pub fn named(low: &str) -> Option<DateUnit> {
        use DateUnit::*;
        let key: String = low.chars().take(10).collect();
        Some(match key.as_str() {
            "microsecon" | "us" | "usec" | "usecs" | "usecond" | "useconds" => Micro,
            "millisecon" | "ms" | "msec" | "msecs" | "msecond" | "mseconds" => Milli,
            "s" | "sec" | "secs" | "second" | "seconds" => Second,
            "m" | "min" | "mins" | "minute" | "minutes" => Minute,
            "h" | "hr" | "hrs" | "hour" | "hours" => Hour,
            "d" | "day" | "days" => Day,
            "w" | "week" | "weeks" => Week,
            "mon" | "mons" | "month" | "months" => Month,
            "qtr" | "quarter" => Quarter,
            "y" | "yr" | "yrs" | "year" | "years" => Year,
            "dec" | "decs" | "decade" | "decades" => Decade,
            "c" | "cent" | "century" | "centuries" => Century,
            "mil" | "mils" | "millennia" | "millennium" => Millennium,
            "dow" => Dow,
            "isodow" => IsoDow,
            "doy" => Doy,
            "isoyear" => IsoYear,
            "epoch" => Epoch,
            "j" | "jd" | "julian" => Julian,
            "timezone" | "timezone_h" | "timezone_m" => Zone,
            _ => return None,
        })
    }
}
