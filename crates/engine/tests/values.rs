//! Every SQL type through the engine: stored and read back exactly, NULLs,
//! values of any size kept in the row, keys of every type, assignment
//! conversion on insert, and a clear error with the right SQLSTATE for
//! values that do not fit.

use centum_engine::{Database, IndexDef, Isolation, Options, TableDef};
use centum_types::{DataType, Date, Decimal, Timestamp, TimestampTz, Uuid, Value};

fn all_types() -> Vec<(&'static str, DataType, Value)> {
    vec![
        ("b", DataType::Boolean, Value::Boolean(true)),
        ("i2", DataType::SmallInt, Value::SmallInt(-32768)),
        ("i4", DataType::Integer, Value::Integer(i32::MAX)),
        ("i8", DataType::BigInt, Value::BigInt(i64::MIN)),
        ("f8", DataType::Double, Value::Double(-1.5e300)),
        ("n", DataType::numeric(Some(12), Some(3)).unwrap(), Value::Numeric(Decimal::new(-123_456_789, 3))),
        ("vc", DataType::Varchar(Some(10)), Value::Text("héllo".into())),
        ("c", DataType::Char(4), Value::Text("ab  ".into())),
        ("t", DataType::Text, Value::Text("".into())),
        ("by", DataType::Bytea, Value::Bytea(vec![0, 255, 7])),
        ("d", DataType::Date, Value::Date(Date(-730_000))),
        ("ts", DataType::Timestamp, Value::Timestamp(Timestamp(1_234_567_890_123))),
        ("tz", DataType::TimestampTz, Value::TimestampTz(TimestampTz(-42))),
        ("u", DataType::Uuid, Value::Uuid(Uuid::from_u128(0x0123_4567_89ab_cdef_0123_4567_89ab_cdef))),
    ]
}

fn wide_table(db: &Database) -> std::sync::Arc<centum_engine::Table> {
    let mut def = TableDef::new("wide").column_not_null("id", DataType::BigInt);
    for (name, ty, _) in all_types() {
        def = def.column(name, ty);
    }
    def = def.index(IndexDef::hash("wide_pkey", &["id"], 64).unique());
    // A key of every type at once.
    let names: Vec<&str> = all_types().iter().map(|(n, _, _)| *n).collect();
    def = def.index(IndexDef::hash("wide_all", &names, 64));
    db.create_table(def).unwrap()
}

#[test]
fn every_type_round_trips_and_serves_as_a_key() {
    let db = Database::open(Options::default()).unwrap();
    let t = wide_table(&db);
    let mut row = vec![Value::BigInt(1)];
    row.extend(all_types().into_iter().map(|(_, _, v)| v));
    let mut nulls = vec![Value::BigInt(2)];
    nulls.extend(all_types().iter().map(|_| Value::Null));
    db.run(Isolation::Snapshot, 1, |txn| {
        txn.insert(&t, row.clone())?;
        txn.insert(&t, nulls.clone())
    })
    .unwrap();
    let txn = db.begin(Isolation::Snapshot).unwrap();
    assert_eq!(txn.get(&t, "wide_pkey", &[Value::BigInt(1)]).unwrap().unwrap().values(), row);
    assert_eq!(txn.get(&t, "wide_pkey", &[Value::BigInt(2)]).unwrap().unwrap().values(), nulls);
    assert_eq!(txn.get(&t, "wide_all", &row[1..]).unwrap().unwrap().int(0), Some(1));
    // NULL keys equal nothing.
    assert!(txn.get(&t, "wide_all", &nulls[1..]).unwrap().is_none());
}

#[test]
fn large_values_stay_in_the_row() {
    let db = Database::open(Options::default()).unwrap();
    let t = db
        .create_table(
            TableDef::new("blobs")
                .column_not_null("id", DataType::Integer)
                .column("body", DataType::Text)
                .column("raw", DataType::Bytea)
                .index(IndexDef::hash("blobs_pkey", &["id"], 16).unique()),
        )
        .unwrap();
    let body = "x".repeat(1 << 20);
    let raw: Vec<u8> = (0..1 << 20).map(|i| (i % 251) as u8).collect();
    db.run(Isolation::Snapshot, 1, |txn| {
        txn.insert(&t, vec![Value::Integer(1), Value::Text(body.clone()), Value::Bytea(raw.clone())])
    })
    .unwrap();
    let txn = db.begin(Isolation::Snapshot).unwrap();
    let r = txn.get(&t, "blobs_pkey", &[Value::Integer(1)]).unwrap().unwrap();
    assert_eq!(r.get(1), Value::Text(body));
    assert_eq!(r.get(2), Value::Bytea(raw));
    assert!(t.stats().row_bytes > 2 << 20);
}

#[test]
fn values_are_converted_as_an_assignment_would() {
    let db = Database::open(Options::default()).unwrap();
    let t = db
        .create_table(
            TableDef::new("conv")
                .column_not_null("id", DataType::BigInt)
                .column("price", DataType::numeric(Some(6), Some(2)).unwrap())
                .column("code", DataType::Char(3))
                .index(IndexDef::hash("conv_pkey", &["id"], 16).unique()),
        )
        .unwrap();
    db.run(Isolation::Snapshot, 1, |txn| {
        txn.insert(&t, vec![Value::Integer(7), Value::Text("19.999".into()), Value::Text("a".into())])
    })
    .unwrap();
    let txn = db.begin(Isolation::Snapshot).unwrap();
    // An integer key finds the bigint row; the stored values were converted.
    let r = txn.get(&t, "conv_pkey", &[Value::SmallInt(7)]).unwrap().unwrap();
    assert_eq!(r.get(0), Value::BigInt(7));
    assert_eq!(r.get(1).to_string(), "20.00");
    assert_eq!(r.get(2), Value::Text("a  ".into()));
}

#[test]
fn values_that_do_not_fit_fail_with_their_sqlstate() {
    let db = Database::open(Options::default()).unwrap();
    let t = db
        .create_table(
            TableDef::new("strict")
                .column_not_null("id", DataType::SmallInt)
                .column("name", DataType::Varchar(Some(3)))
                .column("n", DataType::numeric(Some(3), Some(1)).unwrap())
                .index(IndexDef::hash("strict_pkey", &["id"], 16).unique()),
        )
        .unwrap();
    let txn = db.begin(Isolation::Snapshot).unwrap();
    let cases = [
        (vec![Value::Null, Value::Null, Value::Null], "23502"),
        (vec![Value::BigInt(70_000), Value::Null, Value::Null], "22003"),
        (vec![Value::SmallInt(1), Value::Text("toolong".into()), Value::Null], "22001"),
        (vec![Value::SmallInt(1), Value::Null, Value::Numeric(Decimal::new(1000, 0))], "22003"),
        (vec![Value::SmallInt(1), Value::Null, Value::Text("abc".into())], "22P02"),
        (vec![Value::SmallInt(1), Value::Null, Value::Boolean(true)], "42804"),
        (vec![Value::SmallInt(1)], "42601"),
    ];
    for (row, state) in cases {
        let e = txn.insert(&t, row.clone()).unwrap_err();
        assert_eq!(e.sqlstate(), state, "{row:?}: {e}");
        assert!(!e.is_retryable());
    }
    // None of that harmed the transaction.
    txn.insert(&t, vec![Value::SmallInt(1), Value::Text("ok".into()), Value::Null]).unwrap();
    txn.commit().unwrap();
}

#[test]
fn handles_are_shareable_across_threads() {
    fn send_sync<T: Send + Sync>() {}
    fn send<T: Send>() {}
    send_sync::<Database>();
    send_sync::<centum_engine::Table>();
    send::<centum_engine::Transaction>();
}
