//! Calendar arithmetic on PostgreSQL's day numbers.
//!
//! PostgreSQL counts dates as days since 2000-01-01 in the proleptic
//! Gregorian calendar (the Gregorian rules extended backwards, with no
//! Julian switch) and timestamps as microseconds since 2000-01-01 00:00.
//! The conversions here are Howard Hinnant's `days_from_civil` /
//! `civil_from_days`, done in `i64` so they are exact and cannot overflow
//! or panic for any `i32` day number or any `i64` timestamp.
//!
//! Years are astronomical: year 0 is 1 BC, year -1 is 2 BC, which makes the
//! arithmetic uniform; only parsing and formatting deal in BC.
//!
//! The ranges are PostgreSQL's:
//!
//! ```text
//!   date       4714-11-24 BC  ..  5874897-12-31
//!   timestamp  4714-11-24 BC  ..   294276-12-31 23:59:59.999999
//! ```
//!
//! The extreme `i32`/`i64` values stand for `-infinity` and `infinity`, as
//! in PostgreSQL, so they sort before and after every finite value.

/// Days between 1970-01-01 (Hinnant's origin) and 2000-01-01 (PostgreSQL's).
const UNIX_TO_PG_DAYS: i64 = 10_957;

/// Microseconds in a day.
pub(crate) const USECS_PER_DAY: i64 = 86_400_000_000;

/// First valid date, 4714-11-24 BC (Julian day 0).
pub(crate) const MIN_DATE: i32 = -2_451_545;
/// One past the last valid date: 5874898-01-01.
pub(crate) const END_DATE: i32 = 2_145_031_949;

/// First valid timestamp, 4714-11-24 BC 00:00:00.
pub(crate) const MIN_TIMESTAMP: i64 = -211_813_488_000_000_000;
/// One past the last valid timestamp: 294277-01-01 00:00:00.
pub(crate) const END_TIMESTAMP: i64 = 9_223_371_331_200_000_000;

/// True when `(year, month, day)` names a real day; `year` is astronomical.
pub(crate) fn is_valid_ymd(year: i64, month: u32, day: u32) -> bool {
    (1..=12).contains(&month) && day >= 1 && day <= days_in_month(year, month)
}

/// Number of days in `month` of `year` (astronomical year).
pub(crate) fn days_in_month(year: i64, month: u32) -> u32 {
    match month {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        2 if is_leap_year(year) => 29,
        2 => 28,
        _ => 0,
    }
}

/// Gregorian leap-year rule, extended to all astronomical years.
fn is_leap_year(year: i64) -> bool {
    year.rem_euclid(4) == 0 && (year.rem_euclid(100) != 0 || year.rem_euclid(400) == 0)
}

/// Days since 2000-01-01 of a valid `(year, month, day)`.
///
/// Exact for any year that fits comfortably in `i64`; callers bound the
/// year to a few million before calling.
pub fn days_from_ymd(year: i64, month: u32, day: u32) -> i64 {
    let (m, d) = (i64::from(month), i64::from(day));
    let y = if m <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = if m > 2 { m - 3 } else { m + 9 };
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468 - UNIX_TO_PG_DAYS
}

/// `(year, month, day)` of a day number counted from 2000-01-01.
pub fn ymd_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + UNIX_TO_PG_DAYS + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    // Both are small positive numbers by construction (1..=31, 1..=12).
    let day = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let month = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let year = yoe + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

/// Splits microseconds since 2000-01-01 into a day number and the
/// microseconds into that day (always `0..USECS_PER_DAY`).
pub(crate) fn split_timestamp(usecs: i64) -> (i64, i64) {
    (usecs.div_euclid(USECS_PER_DAY), usecs.rem_euclid(USECS_PER_DAY))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_days() {
        assert_eq!(days_from_ymd(2000, 1, 1), 0);
        assert_eq!(days_from_ymd(1970, 1, 1), -10_957);
        assert_eq!(days_from_ymd(2024, 3, 5), 8830);
        assert_eq!(days_from_ymd(-4713, 11, 24), i64::from(MIN_DATE));
        assert_eq!(days_from_ymd(5_874_898, 1, 1), i64::from(END_DATE));
        assert_eq!(days_from_ymd(294_277, 1, 1) * USECS_PER_DAY, END_TIMESTAMP);
        assert_eq!(i64::from(MIN_DATE) * USECS_PER_DAY, MIN_TIMESTAMP);
    }

    #[test]
    fn round_trips_over_a_wide_span() {
        let mut days = i64::from(i32::MIN);
        while days < i64::from(i32::MAX) {
            let (y, m, d) = ymd_from_days(days);
            assert!(is_valid_ymd(y, m, d), "{days}: {y}-{m}-{d}");
            assert_eq!(days_from_ymd(y, m, d), days);
            days += 9_973;
        }
    }

    #[test]
    fn leap_years() {
        assert!(is_leap_year(2000));
        assert!(is_leap_year(2024));
        assert!(!is_leap_year(1900));
        assert!(is_leap_year(0));
        assert!(is_leap_year(-4));
        assert!(!is_valid_ymd(2023, 2, 29));
        assert!(is_valid_ymd(2024, 2, 29));
        assert!(!is_valid_ymd(2024, 13, 1));
        assert!(!is_valid_ymd(2024, 4, 31));
        assert!(!is_valid_ymd(2024, 4, 0));
    }

    #[test]
    fn splits_negative_timestamps_downwards() {
        assert_eq!(split_timestamp(-1), (-1, USECS_PER_DAY - 1));
        assert_eq!(split_timestamp(USECS_PER_DAY), (1, 0));
        let (d, t) = split_timestamp(i64::MIN);
        assert!(d < 0 && (0..USECS_PER_DAY).contains(&t));
    }
}
