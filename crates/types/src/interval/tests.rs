//! Interval input, output and arithmetic, each expected value as
//! PostgreSQL 15 prints it.

use super::*;
use crate::datetime::Timestamp;

fn iv(text: &str) -> Interval {
    Interval::parse(text).unwrap_or_else(|e| panic!("{text}: {e}"))
}

fn show(text: &str) -> String {
    iv(text).to_string()
}

fn ts(text: &str) -> i64 {
    Timestamp::parse(text).unwrap().0
}

#[test]
fn input_and_output() {
    for (input, output) in [
        ("1 day", "1 day"),
        ("1 year 2 mons 3 days 04:05:06.5", "1 year 2 mons 3 days 04:05:06.5"),
        ("-1 day +02:00:00", "-1 days +02:00:00"),
        ("1.5 days", "1 day 12:00:00"),
        ("1.5 months", "1 mon 15 days"),
        ("@ 1 day ago", "-1 days"),
        ("P1Y2M3DT4H5M6S", "1 year 2 mons 3 days 04:05:06"),
        ("10:00", "10:00:00"),
        ("-10:00", "-10:00:00"),
        ("1 day -1 hour", "1 day -01:00:00"),
        ("-1 days -02:00:00", "-1 days -02:00:00"),
        ("1 mon -1 day", "1 mon -1 days"),
        ("-1 year -2 mons +3 days", "-1 years -2 mons +3 days"),
        ("0", "00:00:00"),
        ("1 week", "7 days"),
        ("1 decade 2 centuries", "210 years"),
        ("90 minutes", "01:30:00"),
        ("1.25 hours", "01:15:00"),
        ("3 s", "00:00:03"),
        ("100 ms", "00:00:00.1"),
        ("1 microsecond", "00:00:00.000001"),
        ("1 day 02:00:00.123456789", "1 day 02:00:00.123457"),
        ("-0.5 days", "-12:00:00"),
        ("1.5 years", "1 year 6 mons"),
        ("0.1 mon", "3 days"),
        ("1-2", "1 year 2 mons"),
        ("1 2:03", "1 day 02:03:00"),
        ("-1-2 +3 4:05:06", "-1 years -2 mons +3 days 04:05:06"),
        ("1:2:3.5", "01:02:03.5"),
        ("1 mon 2", "1 mon 00:00:02"),
        ("5", "00:00:05"),
        ("1.5", "00:00:01.5"),
        ("1 day 5", "1 day 00:00:05"),
        ("-1 day -1:00", "-1 days -01:00:00"),
        ("1 hour -30 minutes ago", "-00:30:00"),
        ("1:30:00 ago", "-01:30:00"),
        ("1.5 weeks", "10 days 12:00:00"),
        ("1 minute 30", "00:01:30"),
        ("2 h 3 m", "02:03:00"),
        ("1y 2mon", "1 year 2 mons"),
        ("PT1.5H", "01:30:00"),
        ("P1W", "7 days"),
        ("P0.5D", "12:00:00"),
        ("1 hour -1 minute", "00:59:00"),
        ("1 mon -00:00:01", "1 mon -00:00:01"),
        ("178956970 years", "178956970 years"),
        ("100000000 hours", "100000000:00:00"),
        ("-2147483648 days", "-2147483648 days"),
        ("2562047788:00:54.775807", "2562047788:00:54.775807"),
        ("1 millennium", "1000 years"),
        ("  1 day  ", "1 day"),
        ("1day", "1 day"),
        ("1 DAY", "1 day"),
        ("01:02", "01:02:00"),
        ("1 days 24:00", "1 day 24:00:00"),
        ("1 week 1 day", "8 days"),
        ("1 year 1 decade", "11 years"),
        ("1:30.5", "00:01:30.5"),
        ("1:2:60", "01:03:00"),
        ("-1 2:03", "-1 days +02:03:00"),
        ("- 1 day", "-1 days"),
        (".5 days", "12:00:00"),
        ("2 seconds 3 ms", "00:00:02.003"),
        ("1 s 500 ms", "00:00:01.5"),
        ("1 us 1 ms", "00:00:00.001001"),
        ("-01:00:00.5", "-01:00:00.5"),
        ("-1 mons +1 day", "-1 mons +1 day"),
    ] {
        assert_eq!(show(input), output, "{input}");
        // Output reads back as the same fields.
        let again = iv(output);
        let first = iv(input);
        assert_eq!(
            (again.months, again.days, again.micros),
            (first.months, first.days, first.micros),
            "{output}"
        );
    }
}

#[test]
fn input_errors() {
    for text in [
        "abc",
        "",
        "1 day 1 day",
        "1 hour 2 hours",
        "+1 -1",
        "1 2",
        "-1:-2",
        "1 hour 02:00",
        "ago",
        "1 fortnight",
        "1.5.5 days",
        "1 mon 1 mon",
        "infinity",
        "1e3 seconds",
        "P",
        "P1H",
        "PT1D",
    ] {
        let err = Interval::parse(text).unwrap_err();
        assert_eq!(err.sqlstate(), "22007", "{text}: {err}");
        assert_eq!(err.to_string(), format!("invalid input syntax for type interval: \"{text}\""));
    }
    for text in ["2147483648 days", "1:60"] {
        let err = Interval::parse(text).unwrap_err();
        assert_eq!(err.sqlstate(), "22015", "{text}: {err}");
        assert_eq!(err.to_string(), format!("interval field value out of range: \"{text}\""));
    }
    let err = Interval::parse("178956971 years").unwrap_err();
    assert_eq!((err.sqlstate(), err.to_string().as_str()), ("22008", "interval out of range"));
}

#[test]
fn comparison_counts_a_month_as_30_days() {
    assert_eq!(iv("1 mon"), iv("30 days"));
    assert!(iv("25 hours") > iv("1 day"));
    assert!(iv("-1 day") < iv("0"));
    let state = std::hash::RandomState::new();
    let hash = |i: Interval| std::hash::BuildHasher::hash_one(&state, i);
    assert_eq!(hash(iv("1 mon")), hash(iv("30 days")));
}

#[test]
fn arithmetic() {
    let mul = |text: &str, f: f64| iv(text).mul_f64(f).unwrap().to_string();
    let div = |text: &str, f: f64| iv(text).div_f64(f).unwrap().to_string();
    assert_eq!(mul("1 day", 1.5), "1 day 12:00:00");
    assert_eq!(mul("1 mon", 0.3), "9 days");
    assert_eq!(mul("10 days 3 hours", -1.7), "-17 days -05:06:00");
    assert_eq!(div("1 mon", 3.0), "10 days");
    assert_eq!(div("1 day", 2.0), "12:00:00");
    assert_eq!(div("1 mon 1 day", 7.0), "4 days 10:17:08.546743");
    assert_eq!(iv("1 day").div_f64(0.0).unwrap_err().sqlstate(), "22012");
    assert_eq!(iv("1 day").mul_f64(1e20).unwrap_err().to_string(), "interval out of range");
    assert_eq!(iv("1 mon").checked_sub(iv("1 day")).unwrap().to_string(), "1 mon -1 days");
    assert_eq!(iv("1 day").checked_add(iv("1 hour")).unwrap().to_string(), "1 day 01:00:00");
    assert_eq!(iv("1 day").checked_neg().unwrap().to_string(), "-1 days");
    let min = Interval::new(i32::MIN, 0, 0);
    assert_eq!(min.checked_neg().unwrap_err().sqlstate(), "22008");
}

#[test]
fn justify() {
    assert_eq!(iv("35 days").justify_days().unwrap().to_string(), "1 mon 5 days");
    assert_eq!(iv("50 hours").justify_hours().unwrap().to_string(), "2 days 02:00:00");
    assert_eq!(iv("1 mon -1 hour").justify_interval().unwrap().to_string(), "29 days 23:00:00");
}

#[test]
fn timestamps_and_intervals() {
    let add = |t: &str, i: &str| Timestamp(add_to_timestamp(ts(t), iv(i)).unwrap()).to_string();
    assert_eq!(add("2024-01-31", "1 month"), "2024-02-29 00:00:00");
    assert_eq!(add("2024-01-31", "1 day"), "2024-02-01 00:00:00");
    assert_eq!(add("2024-01-31 10:00", "-1 mon -1 day -1 hour"), "2023-12-30 09:00:00");
    assert_eq!(add("2024-03-31", "-1 mon"), "2024-02-29 00:00:00");
    assert_eq!(add_to_timestamp(i64::MAX, iv("1 day")).unwrap(), i64::MAX);
    assert_eq!(add_to_timestamp(ts("294276-12-31"), iv("1 year")).unwrap_err().sqlstate(), "22008");
    let age = |a: &str, b: &str| age(ts(a), ts(b)).unwrap().to_string();
    assert_eq!(age("2024-03-05", "2000-01-31"), "24 years 1 mon 5 days");
    assert_eq!(age("2000-01-31", "2024-03-05"), "-24 years -1 mons -5 days");
    assert_eq!(age("2024-02-29", "2023-02-28 12:00"), "1 year 12:00:00");
}

#[test]
fn parts_and_epoch() {
    let p = iv("-1 years -2 mons 3 days -04:05:06.5").parts();
    assert_eq!(
        (p.years, p.months, p.days, p.hours, p.minutes, p.seconds, p.micros),
        (-1, -2, 3, -4, -5, -6, -500_000)
    );
    assert_eq!(Interval::from_parts(p).unwrap(), iv("-1 years -2 mons 3 days -04:05:06.5"));
    assert_eq!(iv("1 day 2 hours").epoch_micros(), 93_600_000_000);
    assert_eq!(iv("1 year").epoch_micros(), 31_557_600_000_000);
    assert_eq!(iv("1 mon").epoch_micros(), 2_592_000_000_000);
}
