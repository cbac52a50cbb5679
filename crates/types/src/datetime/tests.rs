//! Tests of date/timestamp parsing, formatting and chrono conversions.

use super::*;

fn ts(text: &str) -> Timestamp {
    Timestamp::parse(text).unwrap_or_else(|e| panic!("{text}: {e}"))
}

fn tstz(text: &str) -> TimestampTz {
    TimestampTz::parse(text).unwrap_or_else(|e| panic!("{text}: {e}"))
}

#[test]
fn dates_parse_and_print() {
    assert_eq!(Date::parse("2000-01-01"), Ok(Date(0)));
    assert_eq!(Date::parse("2024-03-05"), Ok(Date(8830)));
    assert_eq!(Date::parse("1999-12-31"), Ok(Date(-1)));
    assert_eq!(Date::parse("2024-03-05 23:59:59+05"), Ok(Date(8830)));
    assert_eq!(Date::parse("epoch"), Ok(Date(-10_957)));
    assert_eq!(Date::parse("infinity"), Ok(Date::INFINITY));
    for text in [
        "2024-03-05",
        "0001-01-01",
        "0001-12-31 BC",
        "0044-03-15 BC",
        "4714-11-24 BC",
        "5874897-12-31",
        "infinity",
        "-infinity",
    ] {
        assert_eq!(Date::parse(text).map(|d| d.to_string()), Ok(text.to_string()));
    }
}

#[test]
fn date_range_errors() {
    for text in ["4714-11-23 BC", "5874898-01-01"] {
        let err = Date::parse(text).unwrap_err();
        assert_eq!(err.to_string(), format!("date out of range: \"{text}\""));
        assert_eq!(err.sqlstate(), "22008");
    }
    let err = Date::parse("2024-02-30").unwrap_err();
    assert_eq!(err.to_string(), "date/time field value out of range: \"2024-02-30\"");
    let err = Date::parse("yesterday-ish").unwrap_err();
    assert_eq!(err.to_string(), "invalid input syntax for type date: \"yesterday-ish\"");
    assert_eq!(err.sqlstate(), "22007");
}

#[test]
fn from_ymd() {
    assert_eq!(Date::from_ymd(2024, 3, 5), Ok(Date(8830)));
    assert_eq!(Date::from_ymd(-43, 3, 15).map(|d| d.to_string()).as_deref(), Ok("0044-03-15 BC"));
    assert_eq!(Date(8830).ymd(), Some((2024, 3, 5)));
    assert_eq!(Date::INFINITY.ymd(), None);
    assert_eq!(Date::from_ymd(2024, 2, 30).unwrap_err().sqlstate(), "22008");
    assert_eq!(Date::from_ymd(-5000, 1, 1).unwrap_err().sqlstate(), "22008");
}

#[test]
fn timestamps_parse_and_print() {
    assert_eq!(ts("2000-01-01"), Timestamp(0));
    assert_eq!(ts("2000-01-01 00:00:01"), Timestamp(1_000_000));
    assert_eq!(ts("1999-12-31 23:59:59.999999"), Timestamp(-1));
    assert_eq!(ts("2000-01-01 24:00:00"), Timestamp(USECS_PER_DAY));
    assert_eq!(ts("2000-01-01 23:59:60"), Timestamp(USECS_PER_DAY));
    // timestamp ignores a zone, as PostgreSQL does.
    assert_eq!(ts("2000-01-01 10:00+05"), ts("2000-01-01 10:00"));
    assert_eq!(ts("epoch"), Timestamp(-10_957 * USECS_PER_DAY));
    for text in [
        "2024-03-05 14:07:09",
        "2024-03-05 14:07:09.123456",
        "2024-03-05 14:07:09.1",
        "2024-03-05 14:07:09.00001",
        "0044-03-15 12:00:00 BC",
        "294276-12-31 23:59:59.999999",
        "4714-11-24 00:00:00 BC",
        "infinity",
        "-infinity",
    ] {
        assert_eq!(ts(text).to_string(), text);
    }
    assert_eq!(ts("2024-03-05T14:07").to_string(), "2024-03-05 14:07:00");
    assert_eq!(ts("2024-03-05").to_string(), "2024-03-05 00:00:00");
}

#[test]
fn timestamptz_applies_offsets_and_prints_utc() {
    assert_eq!(tstz("2024-03-05 14:07:09+00").to_string(), "2024-03-05 14:07:09+00");
    assert_eq!(tstz("2024-03-05 14:07:09").to_string(), "2024-03-05 14:07:09+00");
    assert_eq!(tstz("2024-03-05 16:07:09+02").to_string(), "2024-03-05 14:07:09+00");
    assert_eq!(tstz("2024-03-05 19:37:09.5+05:30").to_string(), "2024-03-05 14:07:09.5+00");
    assert_eq!(tstz("2024-03-05T14:07:09Z"), tstz("2024-03-05 14:07:09 UTC"));
    assert_eq!(tstz("2024-03-05 00:30-01").to_string(), "2024-03-05 01:30:00+00");
    assert_eq!(tstz("2024-03-05 00:30+01").to_string(), "2024-03-04 23:30:00+00");
    assert_eq!(tstz("0044-03-15 12:00:00+00 BC").to_string(), "0044-03-15 12:00:00+00 BC");
    assert_eq!(tstz("infinity"), TimestampTz::INFINITY);
}

#[test]
fn timestamp_range_errors() {
    for text in ["294277-01-01 00:00:00", "4714-11-23 23:59:59 BC", "100000000-01-01"] {
        let err = Timestamp::parse(text).unwrap_err();
        assert_eq!(err.to_string(), format!("timestamp out of range: \"{text}\""));
        assert_eq!(err.sqlstate(), "22008");
    }
    // The offset can push a value over the edge.
    assert!(TimestampTz::parse("294276-12-31 23:59:59-01").is_err());
    assert_eq!(
        TimestampTz::parse("bogus").unwrap_err().to_string(),
        "invalid input syntax for type timestamp with time zone: \"bogus\""
    );
}

#[test]
fn special_words_are_relative_to_now() {
    let now = TimestampTz::now();
    let today = now.to_timestamp().date();
    assert!(today.0 > 8000);
    let parsed_today = Date::parse("today").unwrap();
    assert!(parsed_today.0 - today.0 <= 1);
    assert_eq!(Date::parse("tomorrow").unwrap().0 - parsed_today.0, 1);
    assert!(ts("now").0 >= now.0);
    assert_eq!(ts("today").0 % USECS_PER_DAY, 0);
}

#[test]
fn conversions_between_kinds() {
    assert_eq!(Date(1).to_timestamp(), Ok(Timestamp(USECS_PER_DAY)));
    assert_eq!(Date::INFINITY.to_timestamp(), Ok(Timestamp::INFINITY));
    let err = Date::parse("5874897-12-31").unwrap().to_timestamp().unwrap_err();
    assert_eq!(err.to_string(), "date out of range for timestamp");
    assert_eq!(Timestamp(-1).date(), Date(-1));
    assert_eq!(Timestamp::NEG_INFINITY.date(), Date::NEG_INFINITY);
    assert_eq!(Timestamp(5).to_timestamptz(), TimestampTz(5));
    assert_eq!(TimestampTz(5).to_timestamp(), Timestamp(5));
}

#[test]
fn chrono_round_trips() {
    let nd = NaiveDate::from_ymd_opt(2024, 3, 5).unwrap();
    assert_eq!(Date::from(nd), Date(8830));
    assert_eq!(NaiveDate::try_from(Date(8830)), Ok(nd));
    assert_eq!(
        Date::from(NaiveDate::MIN).0,
        NaiveDate::MIN.signed_duration_since(NaiveDate::from_ymd_opt(2000, 1, 1).unwrap()).num_days() as i32
    );
    assert!(NaiveDate::try_from(Date::INFINITY).is_err());
    assert!(NaiveDate::try_from(Date(2_000_000_000)).is_err());

    let ndt = nd.and_hms_micro_opt(14, 7, 9, 123_456).unwrap();
    let t = Timestamp::from(ndt);
    assert_eq!(t, ts("2024-03-05 14:07:09.123456"));
    assert_eq!(NaiveDateTime::try_from(t), Ok(ndt));
    let early = NaiveDate::from_ymd_opt(1900, 1, 1).unwrap().and_hms_micro_opt(0, 0, 0, 1).unwrap();
    assert_eq!(NaiveDateTime::try_from(Timestamp::from(early)), Ok(early));
    assert!(NaiveDateTime::try_from(Timestamp::INFINITY).is_err());
    assert!(NaiveDateTime::try_from(Timestamp(i64::MAX - 1)).is_err());

    let utc = ndt.and_utc();
    assert_eq!(TimestampTz::from(utc), TimestampTz(t.0));
    assert_eq!(DateTime::<Utc>::try_from(TimestampTz(t.0)), Ok(utc));
    assert!(DateTime::<Utc>::try_from(TimestampTz::NEG_INFINITY).is_err());
}

#[test]
fn formatting_never_panics_outside_the_range() {
    for v in [i64::MIN + 1, i64::MAX - 1, -1, 0, 1] {
        let _ = Timestamp(v).to_string();
        let _ = TimestampTz(v).to_string();
    }
    for v in [i32::MIN + 1, i32::MAX - 1, -1, 0] {
        let _ = Date(v).to_string();
    }
    assert_eq!(Date(i32::MAX - 1).to_string(), "5881610-07-10");
}

#[test]
fn now_agrees_with_the_calendar_clock() {
    let calendar = TimestampTz::from(chrono::Utc::now());
    let now = TimestampTz::now();
    let again = TimestampTz::from(chrono::Utc::now());
    assert!(calendar <= now && now <= again, "{calendar:?} {now:?} {again:?}");
}
