//! Real client drivers against the real `centum serve` binary.
//!
//! psql and pgbench speak mostly the simple protocol in text; applications
//! use drivers, and each driver leans on a different corner of the wire
//! protocol. So each one here runs the same small scenario (create, insert
//! with parameters, select, update, delete, a committed and a rolled-back
//! transaction, a unique violation that must leave the connection usable)
//! and checks every answer:
//!
//! ```text
//!  tokio-postgres  extended protocol, parameter types taken from the
//!                  server's ParameterDescription, parameters AND results in
//!                  BINARY (int4/int8/bool/float8/numeric/timestamptz/
//!                  bytea/uuid), simple_query, COPY through the extended
//!                  protocol
//!  psycopg 3       libpq: text parameters over the extended protocol,
//!                  conn.transaction(), COPY via the simple protocol
//!                  (tests/clients/psycopg_crud.py); LISTEN/NOTIFY
//!                  through conn.notifies() (tests/clients/psycopg_notify.py)
//!  node-postgres   its own protocol code: unnamed statements with text
//!                  parameters, Parse/Bind/Describe/Execute/Sync pipelined
//!                  (tests/clients/node_pg_crud.js); LISTEN/NOTIFY as
//!                  'notification' events (tests/clients/node_pg_notify.js)
//! ```
//!
//! Applications mostly reach the database through an ORM or a migration
//! tool, which add their own SQL (catalog introspection, savepoints, DDL in
//! transactions, batched inserts with RETURNING). Each of these runs a
//! small app of its own (tables with foreign keys and indexes, inserts,
//! joins, updates, deletes, nested transactions, rollbacks) against Centum
//! and against a throw-away PostgreSQL, each on a fresh database, and the
//! two transcripts the app prints must be equal:
//!
//! ```text
//!  SQLAlchemy 2    the ORM on the psycopg and on the asyncpg dialect
//!                  (AsyncSession): create_all, relationships and eager
//!                  loading, begin_nested() savepoints, a rollback,
//!                  inspect() (tests/clients/sqlalchemy_app.py)
//!  Alembic         migrations up, down and up again, one failing and
//!                  rolling back whole, autogenerate's comparison with the
//!                  models (tests/clients/alembic_app)
//!  Django 5.2      migrations in transactions (tables, foreign keys,
//!                  unique constraints, indexes, a many-to-many table),
//!                  its catalog introspection, the ORM with savepoints,
//!                  migrating back to zero (tests/clients/django_app)
//!  knex 3          migrations (batches, its lock table), the query
//!                  builder, nested transactions as savepoints,
//!                  information_schema (tests/clients/knex_app)
//! ```
//!
//! The Python and Node packages are installed on demand (pip, npm). When
//! that is impossible the test is skipped with a message, and without
//! PostgreSQL's server the apps run against Centum alone, except under CI
//! (`CI` set), where a missing tool is a failure.

mod common;
#[path = "../../sql/tests/pg/mod.rs"]
mod pg;

use common::Server;
use rust_decimal::Decimal;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};
use tokio_postgres::error::SqlState;
use tokio_postgres::types::{ToSql, Type};
use tokio_postgres::{Client, NoTls, SimpleQueryMessage};
use uuid::Uuid;

/// How long one driver scenario may take, start to end.
const SCENARIO_LIMIT: Duration = Duration::from_secs(120);

/// A numeric from its decimal text. rust_decimal's own tokio-postgres
/// support sends and reads it in PostgreSQL's binary format, independently
/// of the server's encoder.
fn num(text: &str) -> Decimal {
    text.parse().unwrap()
}

async fn connect(server: &Server) -> Client {
    let conninfo = server.conninfo("centum");
    let connecting = tokio_postgres::connect(&conninfo, NoTls);
    let (client, connection) = tokio::time::timeout(Duration::from_secs(10), connecting)
        .await
        .expect("connect in time")
        .expect("connect");
    tokio::spawn(async move {
        let _ = connection.await;
    });
    client
}

fn sqlstate(e: &tokio_postgres::Error) -> Option<&SqlState> {
    e.code()
}

/// 2024-01-02 03:04:05.123456 UTC.
fn a_moment() -> SystemTime {
    UNIX_EPOCH + Duration::from_micros(1_704_164_645_123_456)
}

const UUID: Uuid = Uuid::from_bytes([
    0xa0, 0xee, 0xbc, 0x99, 0x9c, 0x0b, 0x4e, 0xf8, 0xbb, 0x6d, 0x6b, 0xb9, 0xbd, 0x38, 0x0a, 0x11,
]);

#[tokio::test]
async fn tokio_postgres_crud_in_binary() {
    let server = Server::start(&[]);
    tokio::time::timeout(SCENARIO_LIMIT, tokio_postgres_scenario(&server)).await.expect("scenario in time");
}

async fn tokio_postgres_scenario(server: &Server) {
    let client = connect(server).await;
    let other = connect(server).await;
    client
        .batch_execute(
            "CREATE TABLE items (id int4 PRIMARY KEY, qty int8, name text, active bool, price float8, \
             amount numeric(12,3), at timestamptz, blob bytea, tag uuid)",
        )
        .await
        .unwrap();

    // The driver takes every parameter's type from the server's
    // ParameterDescription and sends the value in binary.
    let insert = client
        .prepare("INSERT INTO items (id, qty, name, active, price, amount, at, blob, tag) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)")
        .await
        .unwrap();
    assert_eq!(
        insert.params(),
        &[
            Type::INT4,
            Type::INT8,
            Type::TEXT,
            Type::BOOL,
            Type::FLOAT8,
            Type::NUMERIC,
            Type::TIMESTAMPTZ,
            Type::BYTEA,
            Type::UUID
        ]
    );
    let blob: Vec<u8> = vec![0, 1, 0x7f, 0x80, 0xff, b'\\', 0];
    let n = client
        .execute(
            &insert,
            &[
                &1i32,
                &5_000_000_000i64,
                &"héllo ✓ 'quoted'",
                &true,
                &3.25f64,
                &num("-12345.678"),
                &a_moment(),
                &blob,
                &UUID,
            ],
        )
        .await
        .unwrap();
    assert_eq!(n, 1);
    let none: [&(dyn ToSql + Sync); 9] = [
        &2i32,
        &None::<i64>,
        &None::<String>,
        &None::<bool>,
        &None::<f64>,
        &None::<Decimal>,
        &None::<SystemTime>,
        &None::<Vec<u8>>,
        &None::<Uuid>,
    ];
    assert_eq!(client.execute(&insert, &none).await.unwrap(), 1);
    assert_eq!(
        client
            .execute(
                &insert,
                &[
                    &3i32,
                    &-1i64,
                    &"",
                    &false,
                    &-0.5f64,
                    &num("0.005"),
                    &UNIX_EPOCH,
                    &Vec::<u8>::new(),
                    &Uuid::from_bytes([0; 16])
                ]
            )
            .await
            .unwrap(),
        1
    );

    // Results come back in binary: every typed read below decodes it.
    let select = client
        .prepare("SELECT id, qty, name, active, price, amount, at, blob, tag FROM items WHERE id = $1")
        .await
        .unwrap();
    assert_eq!(select.params(), &[Type::INT4]);
    let types: Vec<Type> = select.columns().iter().map(|c| c.type_().clone()).collect();
    assert_eq!(types, insert.params());
    let row = client.query_one(&select, &[&1i32]).await.unwrap();
    assert_eq!(row.get::<_, i32>(0), 1);
    assert_eq!(row.get::<_, i64>(1), 5_000_000_000);
    assert_eq!(row.get::<_, String>(2), "héllo ✓ 'quoted'");
    assert!(row.get::<_, bool>(3));
    assert_eq!(row.get::<_, f64>(4), 3.25);
    assert_eq!(row.get::<_, Decimal>(5), num("-12345.678"));
    assert_eq!(row.get::<_, SystemTime>(6), a_moment());
    assert_eq!(row.get::<_, Vec<u8>>(7), blob);
    assert_eq!(row.get::<_, Uuid>(8), UUID);

    let row = client.query_one(&select, &[&2i32]).await.unwrap();
    assert_eq!(row.get::<_, i32>("id"), 2);
    assert_eq!(row.get::<_, Option<i64>>("qty"), None);
    assert_eq!(row.get::<_, Option<String>>("name"), None);
    assert_eq!(row.get::<_, Option<bool>>("active"), None);
    assert_eq!(row.get::<_, Option<f64>>("price"), None);
    assert_eq!(row.get::<_, Option<Decimal>>("amount"), None);
    assert_eq!(row.get::<_, Option<SystemTime>>("at"), None);
    assert_eq!(row.get::<_, Option<Vec<u8>>>("blob"), None);
    assert_eq!(row.get::<_, Option<Uuid>>("tag"), None);

    let row = client.query_one(&select, &[&3i32]).await.unwrap();
    assert_eq!(row.get::<_, i64>(1), -1);
    assert_eq!(row.get::<_, String>(2), "");
    assert!(!row.get::<_, bool>(3));
    assert_eq!(row.get::<_, f64>(4), -0.5);
    assert_eq!(row.get::<_, Decimal>(5), num("0.005"));
    assert_eq!(row.get::<_, SystemTime>(6), UNIX_EPOCH);
    assert_eq!(row.get::<_, Vec<u8>>(7), Vec::<u8>::new());
    assert_eq!(row.get::<_, Uuid>(8), Uuid::from_bytes([0; 16]));

    // The binary values the driver sent are the values the server stored:
    // its text rendering agrees.
    let text =
        client.simple_query("SELECT amount, at, blob, tag, qty FROM items WHERE id = 1").await.unwrap();
    let SimpleQueryMessage::Row(r) = &text[1] else { panic!("expected a row, got {text:?}") };
    assert_eq!(r.get(0), Some("-12345.678"));
    assert_eq!(r.get(1), Some("2024-01-02 03:04:05.123456+00"));
    assert_eq!(r.get(2), Some("\\x00017f80ff5c00"));
    assert_eq!(r.get(3), Some("a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11"));
    assert_eq!(r.get(4), Some("5000000000"));

    // Expressions over parameters, with inferred and declared types.
    let row = client
        .query_one(
            "SELECT $1::int8 * 2, $2::text || '!', $3::float8 / 4, $4::bool AND true",
            &[&21i64, &"hi", &1.0f64, &true],
        )
        .await
        .unwrap();
    assert_eq!(
        (row.get::<_, i64>(0), row.get::<_, String>(1), row.get::<_, f64>(2), row.get::<_, bool>(3)),
        (42, "hi!".into(), 0.25, true)
    );
    let typed =
        client.prepare_typed("SELECT count(*) FROM items WHERE qty > $1", &[Type::INT8]).await.unwrap();
    assert_eq!(client.query_one(&typed, &[&0i64]).await.unwrap().get::<_, i64>(0), 1);

    // Update and delete report their row counts.
    let n = client
        .execute("UPDATE items SET qty = qty + $1, name = $2 WHERE id = $3", &[&10i64, &"renamed", &1i32])
        .await
        .unwrap();
    assert_eq!(n, 1);
    let row = client.query_one("SELECT qty, name FROM items WHERE id = 1", &[]).await.unwrap();
    assert_eq!((row.get::<_, i64>(0), row.get::<_, String>(1)), (5_000_000_010, "renamed".into()));
    assert_eq!(client.execute("DELETE FROM items WHERE id = $1", &[&3i32]).await.unwrap(), 1);
    assert_eq!(client.execute("DELETE FROM items WHERE id = $1", &[&3i32]).await.unwrap(), 0);

    // A committed transaction is visible to another session; a rolled-back
    // one is visible to nobody.
    let count = "SELECT count(*) FROM items";
    let mut client = client;
    let tx = client.transaction().await.unwrap();
    tx.execute("INSERT INTO items (id, name) VALUES ($1, $2)", &[&10i32, &"ten"]).await.unwrap();
    tx.execute("INSERT INTO items (id, name) VALUES ($1, $2)", &[&11i32, &"eleven"]).await.unwrap();
    assert_eq!(
        other.query_one(count, &[]).await.unwrap().get::<_, i64>(0),
        2,
        "uncommitted rows are invisible"
    );
    tx.commit().await.unwrap();
    assert_eq!(other.query_one(count, &[]).await.unwrap().get::<_, i64>(0), 4);

    let tx = client.transaction().await.unwrap();
    tx.execute("INSERT INTO items (id, name) VALUES ($1, $2)", &[&20i32, &"twenty"]).await.unwrap();
    tx.execute("DELETE FROM items WHERE id = $1", &[&10i32]).await.unwrap();
    assert_eq!(tx.query_one(count, &[]).await.unwrap().get::<_, i64>(0), 4);
    tx.rollback().await.unwrap();
    assert_eq!(client.query_one(count, &[]).await.unwrap().get::<_, i64>(0), 4);
    assert_eq!(other.query_one(count, &[]).await.unwrap().get::<_, i64>(0), 4);
    let ids: Vec<i32> = client
        .query("SELECT id FROM items ORDER BY id", &[])
        .await
        .unwrap()
        .iter()
        .map(|r| r.get(0))
        .collect();
    assert_eq!(ids, [1, 2, 10, 11]);

    // A unique violation is SQLSTATE 23505 and the connection goes on.
    let err = client.execute(&insert, &none).await.expect_err("duplicate key");
    assert_eq!(sqlstate(&err), Some(&SqlState::UNIQUE_VIOLATION), "{err:?}");
    assert_eq!(client.query_one(count, &[]).await.unwrap().get::<_, i64>(0), 4);

    // Inside a block the error aborts the block: 25P02 until ROLLBACK.
    let tx = client.transaction().await.unwrap();
    tx.execute("INSERT INTO items (id) VALUES (30)", &[]).await.unwrap();
    let err = tx.execute("INSERT INTO items (id) VALUES (1)", &[]).await.expect_err("duplicate key");
    assert_eq!(sqlstate(&err), Some(&SqlState::UNIQUE_VIOLATION), "{err:?}");
    let err = tx.query_one(count, &[]).await.expect_err("the block has failed");
    assert_eq!(sqlstate(&err), Some(&SqlState::IN_FAILED_SQL_TRANSACTION), "{err:?}");
    tx.rollback().await.unwrap();
    assert_eq!(client.query_one(count, &[]).await.unwrap().get::<_, i64>(0), 4);

    // Errors of other kinds, each followed by a working statement.
    let err = client.query("SELECT * FROM no_such_table", &[]).await.expect_err("undefined table");
    assert_eq!(sqlstate(&err), Some(&SqlState::UNDEFINED_TABLE), "{err:?}");
    let err = client.query_one("SELECT 1 / $1", &[&0i32]).await.expect_err("division by zero");
    assert_eq!(sqlstate(&err), Some(&SqlState::DIVISION_BY_ZERO), "{err:?}");
    let err = client.execute("INSERT INTO items (id) VALUES (NULL)", &[]).await.expect_err("not null");
    assert_eq!(sqlstate(&err), Some(&SqlState::NOT_NULL_VIOLATION), "{err:?}");
    assert_eq!(client.query_one("SELECT 7::int4", &[]).await.unwrap().get::<_, i32>(0), 7);

    // The simple protocol: several statements in one message, text results.
    let msgs = client
        .simple_query("INSERT INTO items (id, name) VALUES (40, 'forty'); SELECT id, name, qty FROM items WHERE id >= 11 ORDER BY id")
        .await
        .unwrap();
    let rows: Vec<(String, Option<String>, Option<String>)> = msgs
        .iter()
        .filter_map(|m| match m {
            SimpleQueryMessage::Row(r) => {
                Some((r.get(0).unwrap().to_string(), r.get(1).map(String::from), r.get(2).map(String::from)))
            }
            _ => None,
        })
        .collect();
    assert_eq!(rows, [("11".into(), Some("eleven".into()), None), ("40".into(), Some("forty".into()), None)]);
    let completions: Vec<u64> = msgs
        .iter()
        .filter_map(|m| match m {
            SimpleQueryMessage::CommandComplete(n) => Some(*n),
            _ => None,
        })
        .collect();
    assert_eq!(completions, [1, 2]);

    // A prepared statement is reusable many times over one connection.
    let by_id = client.prepare("SELECT name FROM items WHERE id = $1").await.unwrap();
    for (id, name) in [(10, "ten"), (11, "eleven"), (40, "forty"), (1, "renamed")] {
        let row = client.query_one(&by_id, &[&id]).await.unwrap();
        assert_eq!(row.get::<_, String>(0), name);
    }
    assert!(client.query_opt(&by_id, &[&999i32]).await.unwrap().is_none());
}

/// COPY through tokio-postgres: the driver sends `COPY ... FROM STDIN` /
/// `TO STDOUT` as Parse/Bind/Execute, not as a simple Query.
#[tokio::test]
async fn tokio_postgres_copy_in_and_out() {
    use futures::{SinkExt, StreamExt};
    let server = Server::start(&[]);
    let run = async {
        let client = connect(&server).await;
        client.batch_execute("CREATE TABLE c (id int4 PRIMARY KEY, name text)").await.unwrap();
        let sink = client.copy_in("COPY c (id, name) FROM STDIN").await.expect("COPY FROM STDIN starts");
        futures::pin_mut!(sink);
        sink.send(bytes::Bytes::from_static(b"1\tone\n2\ttwo\n")).await.unwrap();
        sink.send(bytes::Bytes::from_static(b"3\t\\N\n")).await.unwrap();
        assert_eq!(sink.finish().await.unwrap(), 3);
        let rows = client.query("SELECT id, name FROM c ORDER BY id", &[]).await.unwrap();
        let got: Vec<(i32, Option<String>)> = rows.iter().map(|r| (r.get(0), r.get(1))).collect();
        assert_eq!(got, [(1, Some("one".into())), (2, Some("two".into())), (3, None)]);

        let stream = client
            .copy_out("COPY (SELECT id, name FROM c ORDER BY id) TO STDOUT")
            .await
            .expect("COPY TO STDOUT starts");
        futures::pin_mut!(stream);
        let mut out = Vec::new();
        while let Some(chunk) = stream.next().await {
            out.extend_from_slice(&chunk.unwrap());
        }
        assert_eq!(String::from_utf8(out).unwrap(), "1\tone\n2\ttwo\n3\t\\N\n");
        assert_eq!(client.query_one("SELECT count(*) FROM c", &[]).await.unwrap().get::<_, i64>(0), 3);
    };
    tokio::time::timeout(SCENARIO_LIMIT, run).await.expect("scenario in time");
}

/// PostgreSQL's binary `interval` (i64 microseconds, i32 days, i32
/// months) and `time` (i64 microseconds), written here from the protocol's
/// description, independently of the server's encoder.
#[derive(Debug, PartialEq, Clone, Copy)]
struct PgInterval {
    micros: i64,
    days: i32,
    months: i32,
}

#[derive(Debug, PartialEq, Clone, Copy)]
struct PgTime(i64);

impl ToSql for PgInterval {
    fn to_sql(
        &self,
        _: &Type,
        out: &mut bytes::BytesMut,
    ) -> Result<tokio_postgres::types::IsNull, Box<dyn std::error::Error + Sync + Send>> {
        out.extend_from_slice(&self.micros.to_be_bytes());
        out.extend_from_slice(&self.days.to_be_bytes());
        out.extend_from_slice(&self.months.to_be_bytes());
        Ok(tokio_postgres::types::IsNull::No)
    }
    tokio_postgres::types::accepts!(INTERVAL);
    tokio_postgres::types::to_sql_checked!();
}

impl<'a> tokio_postgres::types::FromSql<'a> for PgInterval {
    fn from_sql(_: &Type, raw: &'a [u8]) -> Result<Self, Box<dyn std::error::Error + Sync + Send>> {
        let b: [u8; 16] = raw.try_into()?;
        Ok(PgInterval {
            micros: i64::from_be_bytes(b[..8].try_into()?),
            days: i32::from_be_bytes(b[8..12].try_into()?),
            months: i32::from_be_bytes(b[12..].try_into()?),
        })
    }
    tokio_postgres::types::accepts!(INTERVAL);
}

impl ToSql for PgTime {
    fn to_sql(
        &self,
        _: &Type,
        out: &mut bytes::BytesMut,
    ) -> Result<tokio_postgres::types::IsNull, Box<dyn std::error::Error + Sync + Send>> {
        out.extend_from_slice(&self.0.to_be_bytes());
        Ok(tokio_postgres::types::IsNull::No)
    }
    tokio_postgres::types::accepts!(TIME);
    tokio_postgres::types::to_sql_checked!();
}

impl<'a> tokio_postgres::types::FromSql<'a> for PgTime {
    fn from_sql(_: &Type, raw: &'a [u8]) -> Result<Self, Box<dyn std::error::Error + Sync + Send>> {
        Ok(PgTime(i64::from_be_bytes(raw.try_into()?)))
    }
    tokio_postgres::types::accepts!(TIME);
}

/// Intervals and times through the extended protocol in binary, both ways,
/// and the same values read back as text.
#[tokio::test]
async fn tokio_postgres_intervals_and_times_in_binary() {
    let server = Server::start(&[]);
    let run = async {
        let client = connect(&server).await;
        client
            .batch_execute("CREATE TABLE slots (id int4 PRIMARY KEY, starts time, span interval)")
            .await
            .unwrap();
        let insert = client.prepare("INSERT INTO slots VALUES ($1, $2, $3)").await.unwrap();
        assert_eq!(insert.params(), &[Type::INT4, Type::TIME, Type::INTERVAL]);
        let span = PgInterval { micros: -3_723_000_500, days: 3, months: 14 };
        client.execute(&insert, &[&1i32, &PgTime(37_800_250_000), &span]).await.unwrap();
        client
            .execute(
                &insert,
                &[&2i32, &PgTime(86_400_000_000), &PgInterval { micros: 0, days: 0, months: 0 }],
            )
            .await
            .unwrap();
        let bad = client.execute(&insert, &[&3i32, &PgTime(86_400_000_001), &span]).await.unwrap_err();
        let message = bad.as_db_error().map(|e| e.message().to_string()).unwrap_or_default();
        assert!(message.contains("time out of range"), "{bad:?}");

        let row =
            client.query_one("SELECT starts, span, span * 2 FROM slots WHERE id = 1", &[]).await.unwrap();
        assert_eq!(row.columns()[1].type_(), &Type::INTERVAL);
        assert_eq!(row.get::<_, PgTime>(0), PgTime(37_800_250_000));
        assert_eq!(row.get::<_, PgInterval>(1), span);
        assert_eq!(row.get::<_, PgInterval>(2), PgInterval { micros: -7_446_001_000, days: 6, months: 28 });
        // An interval parameter compares by span: 30 days is one month.
        let month = PgInterval { micros: 0, days: 30, months: 0 };
        let found = client.query("SELECT id FROM slots WHERE span > $1", &[&month]).await.unwrap();
        assert_eq!(found.len(), 1);

        let text = client.simple_query("SELECT starts, span FROM slots ORDER BY id").await.unwrap();
        let rows: Vec<(String, String)> = text
            .iter()
            .filter_map(|m| match m {
                SimpleQueryMessage::Row(r) => {
                    Some((r.get(0).unwrap().to_string(), r.get(1).unwrap().to_string()))
                }
                _ => None,
            })
            .collect();
        assert_eq!(
            rows,
            [
                ("10:30:00.25".to_string(), "1 year 2 mons 3 days -01:02:03.0005".to_string()),
                ("24:00:00".to_string(), "00:00:00".to_string())
            ]
        );
    };
    tokio::time::timeout(SCENARIO_LIMIT, run).await.expect("scenario in time");
}

/// `jsonb` in PostgreSQL's binary form (a version byte, 1, then the text)
/// and `json` (the text), written here from the protocol's description.
#[derive(Debug, PartialEq, Clone)]
struct PgJson(String);

impl ToSql for PgJson {
    fn to_sql(
        &self,
        ty: &Type,
        out: &mut bytes::BytesMut,
    ) -> Result<tokio_postgres::types::IsNull, Box<dyn std::error::Error + Sync + Send>> {
        if ty == &Type::JSONB {
            out.extend_from_slice(&[1]);
        }
        out.extend_from_slice(self.0.as_bytes());
        Ok(tokio_postgres::types::IsNull::No)
    }
    tokio_postgres::types::accepts!(JSON, JSONB);
    tokio_postgres::types::to_sql_checked!();
}

impl<'a> tokio_postgres::types::FromSql<'a> for PgJson {
    fn from_sql(ty: &Type, raw: &'a [u8]) -> Result<Self, Box<dyn std::error::Error + Sync + Send>> {
        let text = if ty == &Type::JSONB {
            match raw.split_first() {
                Some((1, rest)) => rest,
                _ => return Err("jsonb version byte is not 1".into()),
            }
        } else {
            raw
        };
        Ok(PgJson(std::str::from_utf8(text)?.to_string()))
    }
    tokio_postgres::types::accepts!(JSON, JSONB);
}

#[tokio::test]
async fn tokio_postgres_json_in_binary() {
    let server = Server::start(&[]);
    let run = async {
        let client = connect(&server).await;
        client
            .batch_execute("CREATE TABLE events (id int4 PRIMARY KEY, body jsonb, raw json)")
            .await
            .unwrap();
        let insert = client.prepare("INSERT INTO events VALUES ($1, $2, $3)").await.unwrap();
        assert_eq!(insert.params(), &[Type::INT4, Type::JSONB, Type::JSON]);
        let body = PgJson(r#"{"kind": "click", "at": [1, 2.50], "who": {"id": 7}}"#.into());
        let raw = PgJson(r#"{"b":  1, "a": 2}"#.into());
        client.execute(&insert, &[&1i32, &body, &raw]).await.unwrap();
        let bad = client.execute(&insert, &[&2i32, &PgJson("{oops".into()), &raw]).await.unwrap_err();
        // A bad binary parameter is 22P03 (PostgreSQL's jsonb_recv says 22P02).
        assert_eq!(bad.code().map(|c| c.code()), Some("22P03"), "{bad:?}");

        // Binary results: jsonb prints with its keys sorted, json as written.
        let row = client
            .query_one("SELECT body, raw, body -> 'who', body ->> 'kind' FROM events WHERE id = 1", &[])
            .await
            .unwrap();
        assert_eq!(row.columns()[0].type_(), &Type::JSONB);
        assert_eq!(row.columns()[1].type_(), &Type::JSON);
        assert_eq!(row.get::<_, PgJson>(0).0, r#"{"at": [1, 2.50], "who": {"id": 7}, "kind": "click"}"#);
        assert_eq!(row.get::<_, PgJson>(1), raw);
        assert_eq!(row.get::<_, PgJson>(2).0, r#"{"id": 7}"#);
        assert_eq!(row.get::<_, String>(3), "click");

        // A containment parameter, bound in binary.
        let want = PgJson(r#"{"who": {"id": 7.0}}"#.into());
        let found = client.query("SELECT id FROM events WHERE body @> $1", &[&want]).await.unwrap();
        assert_eq!(found.len(), 1);
        let missing = PgJson(r#"{"who": {"id": 8}}"#.into());
        let found = client.query("SELECT id FROM events WHERE body @> $1", &[&missing]).await.unwrap();
        assert!(found.is_empty());
    };
    tokio::time::timeout(SCENARIO_LIMIT, run).await.expect("scenario in time");
}

/// A `tsvector` or `tsquery` in its binary form (`tsvectorsend`,
/// `tsquerysend`), kept as bytes.
#[derive(Debug, PartialEq, Clone)]
struct PgTs(Vec<u8>);

impl ToSql for PgTs {
    fn to_sql(
        &self,
        _: &Type,
        out: &mut bytes::BytesMut,
    ) -> Result<tokio_postgres::types::IsNull, Box<dyn std::error::Error + Sync + Send>> {
        out.extend_from_slice(&self.0);
        Ok(tokio_postgres::types::IsNull::No)
    }
    tokio_postgres::types::accepts!(TS_VECTOR, TSQUERY);
    tokio_postgres::types::to_sql_checked!();
}

impl<'a> tokio_postgres::types::FromSql<'a> for PgTs {
    fn from_sql(_: &Type, raw: &'a [u8]) -> Result<Self, Box<dyn std::error::Error + Sync + Send>> {
        Ok(PgTs(raw.to_vec()))
    }
    tokio_postgres::types::accepts!(TS_VECTOR, TSQUERY);
}

fn unhex(s: &str) -> Vec<u8> {
    (0..s.len()).step_by(2).map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap()).collect()
}

#[tokio::test]
async fn tokio_postgres_text_search_in_binary() {
    let server = Server::start(&[]);
    let run = async {
        let client = connect(&server).await;
        client
            .batch_execute("CREATE TABLE docs (id int4 PRIMARY KEY, tsv tsvector, q tsquery)")
            .await
            .unwrap();
        let insert = client.prepare("INSERT INTO docs VALUES ($1, $2, $3)").await.unwrap();
        assert_eq!(insert.params(), &[Type::INT4, Type::TS_VECTOR, Type::TSQUERY]);
        // PostgreSQL 15's tsvectorsend('a:1,3B b c:2') and
        // tsquerysend('a <2> b:*A'), byte for byte.
        let tsv = PgTs(unhex("00000003610000020001800362000000630000010002"));
        let q = PgTs(unhex("000000030204000201080162000100006100"));
        client.execute(&insert, &[&1i32, &tsv, &q]).await.unwrap();
        let bad = client.execute(&insert, &[&2i32, &PgTs(vec![0, 0, 0, 1, b'a']), &q]).await.unwrap_err();
        assert_eq!(bad.code().map(|c| c.code()), Some("22P03"), "{bad:?}");

        let row = client
            .query_one("SELECT tsv, q, tsv::text, q::text, to_tsvector('english', 'fat rats') FROM docs", &[])
            .await
            .unwrap();
        assert_eq!(row.columns()[0].type_(), &Type::TS_VECTOR);
        assert_eq!(row.columns()[1].type_(), &Type::TSQUERY);
        assert_eq!(row.columns()[4].type_(), &Type::TS_VECTOR);
        assert_eq!(row.get::<_, PgTs>(0), tsv);
        assert_eq!(row.get::<_, PgTs>(1), q);
        assert_eq!(row.get::<_, String>(2), "'a':1,3B 'b' 'c':2");
        assert_eq!(row.get::<_, String>(3), "'a' <2> 'b':*A");

        // A query parameter bound in binary: 'a & b'.
        let a_and_b = PgTs(unhex("00000003020201000062000100006100"));
        let found = client.query("SELECT id FROM docs WHERE tsv @@ $1", &[&a_and_b]).await.unwrap();
        assert_eq!(found.len(), 1);
        let types = client
            .query_one("SELECT oid::int4 FROM pg_type WHERE typname IN ('tsvector', 'tsquery', 'regconfig') ORDER BY oid", &[])
            .await;
        assert!(types.is_err(), "three rows, not one");
        let oids: Vec<i32> = client
            .query("SELECT oid::int4 FROM pg_type WHERE typname IN ('tsvector', 'tsquery', 'regconfig') ORDER BY oid", &[])
            .await
            .unwrap()
            .iter()
            .map(|r| r.get(0))
            .collect();
        assert_eq!(oids, [3614, 3615, 3734]);
    };
    tokio::time::timeout(SCENARIO_LIMIT, run).await.expect("scenario in time");
}

/// OIDs go as `oid` (unsigned on the wire), arrays of them as `oid[]`, and
/// the catalogs' vectors as `int2vector` / `oidvector`, which a driver
/// looks up (its own catalog query, itself typed `oid`) and reads as
/// arrays counted from 0.
#[tokio::test]
async fn tokio_postgres_oids_and_vectors_in_binary() {
    let server = Server::start(&[]);
    let run = async {
        let client = connect(&server).await;
        client.batch_execute("CREATE TABLE pairs (a int2, b int4, PRIMARY KEY (b, a))").await.unwrap();
        let stmt =
            client.prepare("SELECT oid, typelem, $1::oid[] FROM pg_type WHERE oid = $2").await.unwrap();
        assert_eq!(stmt.params(), &[Type::OID_ARRAY, Type::OID]);
        assert_eq!(stmt.columns()[0].type_(), &Type::OID);
        let row = client.query_one(&stmt, &[&vec![23u32, 25u32], &1007u32]).await.unwrap();
        assert_eq!(row.get::<_, u32>(0), 1007);
        assert_eq!(row.get::<_, u32>(1), 23);
        assert_eq!(row.get::<_, Vec<u32>>(2), [23, 25]);
        let bad = client.query_one("SELECT '4294967296'::oid", &[]).await.unwrap_err();
        assert_eq!(bad.code().map(|c| c.code()), Some("22003"), "{bad:?}");

        let row = client
            .query_one(
                "SELECT indkey, indclass, indkey::text FROM pg_index WHERE indrelid = 'pairs'::regclass",
                &[],
            )
            .await
            .unwrap();
        assert_eq!(row.columns()[0].type_().name(), "int2vector");
        assert_eq!(row.columns()[1].type_().name(), "oidvector");
        assert_eq!(row.get::<_, Vec<i16>>(0), [2, 1]);
        assert_eq!(row.get::<_, Vec<u32>>(1).len(), 2);
        assert_eq!(row.get::<_, String>(2), "2 1");
    };
    tokio::time::timeout(SCENARIO_LIMIT, run).await.expect("scenario in time");
}

// --- the scripted drivers --------------------------------------------

/// Under CI a missing tool fails the test; elsewhere it skips with a note.
fn skip(why: &str) {
    if std::env::var_os("CI").is_some() {
        panic!("{why}");
    }
    eprintln!("{why}: test skipped");
}

fn clients_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests").join("clients")
}

/// What a program printed, and whether it exited with success.
struct Ran {
    ok: bool,
    stdout: String,
    stderr: String,
}

/// Runs `cmd` with a time limit, its stdout and stderr kept apart. `None`
/// when it could not be started.
fn run_split(cmd: &mut Command, limit: Duration) -> Option<Ran> {
    let out = tempfile::NamedTempFile::new().unwrap();
    let err = tempfile::NamedTempFile::new().unwrap();
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::from(out.reopen().unwrap()))
        .stderr(Stdio::from(err.reopen().unwrap()))
        .spawn()
        .ok()?;
    let deadline = Instant::now() + limit;
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break Some(s);
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            break None;
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let stdout = std::fs::read_to_string(out.path()).unwrap_or_default();
    let mut stderr = std::fs::read_to_string(err.path()).unwrap_or_default();
    if status.is_none() {
        stderr = format!("{cmd:?} ran past {limit:?}\n{stderr}");
    }
    Some(Ran { ok: status.is_some_and(|s| s.success()), stdout, stderr })
}

/// Runs `cmd` with a time limit; its exit status and its output (stdout
/// then stderr). `None` when it could not be started.
fn run_bounded(cmd: &mut Command, limit: Duration) -> Option<(bool, String)> {
    run_split(cmd, limit).map(|r| (r.ok, format!("{}{}", r.stdout, r.stderr)))
}

/// One installation at a time: the tests run on parallel threads, and
/// two pip (or npm) runs into the same place at once can break both.
static INSTALLING: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// A python3 that can `import psycopg`, installing it with pip if needed.
fn python_with_psycopg() -> Option<&'static str> {
    python_with("psycopg", &["psycopg[binary]"])
}

/// A python3 that can `import {modules}` (one module, or several with
/// commas between), installing `packages` with pip if needed. Where the
/// system's Python refuses pip its packages (PEP 668, "externally
/// managed"), they go in with `--break-system-packages`.
fn python_with(modules: &str, packages: &[&str]) -> Option<&'static str> {
    let importable = || {
        run_bounded(
            Command::new("python3").args(["-c", &format!("import {modules}")]),
            Duration::from_secs(60),
        )
        .is_some_and(|(ok, _)| ok)
    };
    if run_bounded(Command::new("python3").arg("--version"), Duration::from_secs(30)).is_none() {
        skip("python3 is not installed");
        return None;
    }
    let _one_at_a_time = INSTALLING.lock().unwrap_or_else(|e| e.into_inner());
    if importable() {
        return Some("python3");
    }
    let pip = |extra: &[&str]| {
        run_bounded(
            Command::new("python3").args(["-m", "pip", "install", "--quiet"]).args(extra).args(packages),
            Duration::from_secs(300),
        )
    };
    let mut install = pip(&[]);
    if install.as_ref().is_some_and(|(ok, text)| !ok && text.contains("externally-managed-environment")) {
        install = pip(&["--break-system-packages"]);
    }
    if importable() {
        return Some("python3");
    }
    skip(&format!("cannot install {packages:?} for `import {modules}`: {:?}", install.map(|(_, text)| text)));
    None
}

/// A directory whose `node_modules` holds `packages` (`name@version`),
/// installed with npm once and kept under the target directory; `None`
/// (after `skip`) without node or npm.
fn node_modules_with(packages: &[&str]) -> Option<PathBuf> {
    if run_bounded(Command::new("node").arg("--version"), Duration::from_secs(30)).is_none_or(|(ok, _)| !ok) {
        skip("node is not installed");
        return None;
    }
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("node-clients");
    let installed = || {
        packages.iter().all(|p| {
            let name = p.rsplit_once('@').map_or(*p, |(name, _)| name);
            dir.join("node_modules").join(name).join("package.json").is_file()
        })
    };
    let _one_at_a_time = INSTALLING.lock().unwrap_or_else(|e| e.into_inner());
    if installed() {
        return Some(dir);
    }
    std::fs::create_dir_all(&dir).unwrap();
    let install = run_bounded(
        Command::new("npm")
            .args(["install", "--silent", "--no-audit", "--no-fund"])
            .args(packages)
            .current_dir(&dir),
        Duration::from_secs(300),
    );
    if installed() {
        return Some(dir);
    }
    skip(&format!("cannot install {packages:?} with npm: {:?}", install.map(|(_, text)| text)));
    None
}

/// A directory with `node_modules/pg`.
fn node_pg() -> Option<PathBuf> {
    node_modules_with(&["pg@8"])
}

/// A throw-away PostgreSQL cluster (tests/pg, shared with the SQL crate's
/// comparison test). Where PostgreSQL's server is not installed: under CI
/// a failure, elsewhere `None` and a note.
fn postgresql() -> Option<pg::Server> {
    pg::required_bin("the app's comparison (it runs against Centum alone, its transcript unchecked)")
        .map(pg::Server::start)
}

/// Where two transcripts differ: the lines only Centum printed (`-`) and
/// only PostgreSQL printed (`+`), with a line of context either side, from
/// a longest-common-subsequence alignment of the lines.
fn transcript_diff(centum: &str, postgres: &str) -> String {
    let a: Vec<&str> = centum.lines().collect();
    let b: Vec<&str> = postgres.lines().collect();
    // lcs[i][j]: the longest common subsequence of a[i..] and b[j..].
    let mut lcs = vec![vec![0u32; b.len() + 1]; a.len() + 1];
    for i in (0..a.len()).rev() {
        for j in (0..b.len()).rev() {
            lcs[i][j] = if a[i] == b[j] { lcs[i + 1][j + 1] + 1 } else { lcs[i + 1][j].max(lcs[i][j + 1]) };
        }
    }
    let mut lines: Vec<(char, &str)> = Vec::new();
    let (mut i, mut j) = (0, 0);
    while i < a.len() || j < b.len() {
        if i < a.len() && j < b.len() && a[i] == b[j] {
            lines.push((' ', a[i]));
            (i, j) = (i + 1, j + 1);
        } else if j == b.len() || (i < a.len() && lcs[i + 1][j] >= lcs[i][j + 1]) {
            lines.push(('-', a[i]));
            i += 1;
        } else {
            lines.push(('+', b[j]));
            j += 1;
        }
    }
    let near_change =
        |k: usize| lines[k.saturating_sub(1)..(k + 2).min(lines.len())].iter().any(|(m, _)| *m != ' ');
    let mut out = String::new();
    let mut skipped = false;
    for (k, (mark, line)) in lines.iter().enumerate() {
        if near_change(k) {
            if skipped {
                out.push_str("  ...\n");
                skipped = false;
            }
            out.push_str(&format!("{mark} {line}\n"));
        } else {
            skipped = true;
        }
    }
    out
}

/// Runs a client program against Centum and against PostgreSQL, each on
/// a fresh database (a new server; a new database in a new cluster), and
/// checks that both runs succeed, end with `done`, and print the same
/// transcript on stdout. `client(url, scratch)` makes the command for one
/// run, with an empty scratch directory of its own. (Without PostgreSQL,
/// outside CI, only Centum's run, which must end with `done`.)
fn same_as_postgresql(what: &str, done: &str, client: impl Fn(&str, &Path) -> Command, compare: bool) {
    let run = |url: &str| {
        let scratch = tempfile::tempdir().unwrap();
        let started = Instant::now();
        // (No __pycache__ left in the source tree by the apps' modules.)
        let mut cmd = client(url, scratch.path());
        cmd.env("PYTHONDONTWRITEBYTECODE", "1");
        let ran = run_split(&mut cmd, SCENARIO_LIMIT).expect("start the client");
        (ran, started.elapsed())
    };
    let finished = |ran: &Ran| ran.ok && ran.stdout.ends_with(&format!("{done}\n"));
    let postgres = if compare { postgresql() } else { None };
    let expected = postgres.as_ref().map(|postgres| {
        let database = "client_app";
        postgres
            .connect("postgres")
            .expect("connect to PostgreSQL")
            .batch_execute(&format!("CREATE DATABASE {database}"))
            .expect("create a database in PostgreSQL");
        let (expected, took) = run(&format!("postgresql://postgres@127.0.0.1:{}/{database}", postgres.port));
        assert!(
            finished(&expected),
            "{what} fails against PostgreSQL itself (a fault of the scenario):\n{}{}\nPostgreSQL's log:\n{}",
            expected.stdout,
            expected.stderr,
            postgres.log()
        );
        eprintln!("{what}: {took:.1?} against PostgreSQL");
        expected
    });
    let server = Server::start(&[]);
    let (got, took) = run(&server.url("centum"));
    eprintln!("{what}: {took:.1?} against Centum");
    let log = server.log_text();
    let from = (log.len().saturating_sub(8_000)..log.len()).find(|&i| log.is_char_boundary(i));
    let log_tail = &log[from.unwrap_or(log.len())..];
    let Some(expected) = expected else {
        assert!(finished(&got), "{what} failed:\n{}{}\nserver log:\n{log_tail}", got.stdout, got.stderr);
        return;
    };
    if !got.ok {
        // What PostgreSQL's run printed up to where Centum's stopped, and
        // a few lines on.
        let upto: String =
            expected.stdout.lines().take(got.stdout.lines().count() + 3).map(|l| format!("{l}\n")).collect();
        panic!(
            "{what} failed against Centum.\ntranscript, where it parts from PostgreSQL's (- Centum, + PostgreSQL):\n{}\n\
             its stderr:\n{}\nserver log:\n{log_tail}",
            transcript_diff(&got.stdout, &upto),
            got.stderr
        );
    }
    assert!(
        got.stdout == expected.stdout,
        "{what}: Centum's transcript differs from PostgreSQL's (- Centum, + PostgreSQL):\n{}\nstderr:\n{}",
        transcript_diff(&got.stdout, &expected.stdout),
        got.stderr
    );
}

/// `python script URL`, for [`same_as_postgresql`].
fn python_script<'a>(python: &'a str, script: &'a Path) -> impl Fn(&str, &Path) -> Command + 'a {
    move |url, _| {
        let mut cmd = Command::new(python);
        cmd.arg(script).arg(url);
        cmd
    }
}

/// `node script URL` with the packages installed in `dir`, for
/// [`same_as_postgresql`].
fn node_script<'a>(dir: &'a Path, script: &'a Path) -> impl Fn(&str, &Path) -> Command + 'a {
    move |url, _| {
        let mut cmd = Command::new("node");
        cmd.arg(script).arg(url).env("NODE_PATH", dir.join("node_modules"));
        cmd
    }
}

/// Django's migrations run each migration in one transaction, DDL and
/// all; its ORM nests transactions with savepoints.
/// (tests/clients/django_app/run.py: migrate, the models in use, migrate
/// to zero and back.)
#[test]
fn django_migrates_and_uses_its_models() {
    if python_with_psycopg().is_none() {
        return;
    }
    let Some(python) = python_with("django", &["django>=5.2,<5.3"]) else { return };
    let app = clients_dir().join("django_app");
    same_as_postgresql("the Django app", "django scenario: ok", django(python, &app, "run.py"), false);
}

/// The Django app with a transcript of what Django's introspection finds
/// (columns with their type modifiers, constraints, indexes, sequences),
/// an aggregate grouped by primary key, and the table and constraint of
/// each error, compared with PostgreSQL's (tests/clients/django_app/
/// compare.py).
#[test]
fn django_same_as_postgresql() {
    if python_with_psycopg().is_none() {
        return;
    }
    let Some(python) = python_with("django", &["django>=5.2,<5.3"]) else { return };
    let app = clients_dir().join("django_app");
    same_as_postgresql("the Django app", "django scenario: ok", django(python, &app, "compare.py"), true);
}

/// A command running Django script `script` of the app in `app` on a
/// scratch copy of the app's files.
fn django<'a>(python: &'a str, app: &'a Path, script: &'a str) -> impl Fn(&str, &Path) -> Command + 'a {
    move |url, work| {
        for f in ["settings.py", "shop/__init__.py", "shop/models.py"] {
            let to = work.join(f);
            std::fs::create_dir_all(to.parent().unwrap()).unwrap();
            std::fs::copy(app.join(f), to).unwrap();
        }
        let mut cmd = Command::new(python);
        cmd.arg(app.join(script)).arg(work).arg(url);
        cmd
    }
}

/// The SQLAlchemy 2 ORM app (tests/clients/sqlalchemy_app.py) on one
/// dialect, the same against Centum and PostgreSQL.
fn sqlalchemy_app(dialect: &str, modules: &str, packages: &[&str]) {
    let Some(python) = python_with(modules, packages) else { return };
    let script = clients_dir().join("sqlalchemy_app.py");
    same_as_postgresql(
        &format!("the SQLAlchemy app on {dialect}"),
        &format!("sqlalchemy {dialect} scenario: ok"),
        |url, _| {
            let mut cmd = Command::new(python);
            cmd.arg(&script).arg(dialect).arg(url);
            cmd
        },
        true,
    );
}

/// SQLAlchemy's sync `postgresql+psycopg` dialect: libpq, text
/// parameters, psycopg's type lookups on connect.
#[test]
fn sqlalchemy_orm_on_psycopg_same_as_postgresql() {
    sqlalchemy_app("psycopg", "sqlalchemy, psycopg", &["sqlalchemy>=2,<3", "psycopg[binary]"]);
}

/// SQLAlchemy's `postgresql+asyncpg` dialect with an AsyncSession:
/// asyncpg's own protocol code (named statements prepared with
/// Parse/Describe/Flush, binary parameters and results).
#[test]
fn sqlalchemy_orm_on_asyncpg_same_as_postgresql() {
    sqlalchemy_app("asyncpg", "sqlalchemy, asyncpg, greenlet", &["sqlalchemy[asyncio]>=2,<3", "asyncpg"]);
}

/// Alembic's migrations up, down and up again, one failing and rolling
/// back whole; autogenerate finds the database as the models describe it
/// (tests/clients/alembic_app).
#[test]
fn alembic_migrations_same_as_postgresql() {
    let packages = ["alembic>=1.13,<2", "sqlalchemy>=2,<3", "psycopg[binary]"];
    let Some(python) = python_with("alembic, sqlalchemy, psycopg", &packages) else { return };
    let script = clients_dir().join("alembic_app").join("run.py");
    same_as_postgresql(
        "the Alembic migrations",
        "alembic scenario: ok",
        python_script(python, &script),
        true,
    );
}

/// knex (over node-postgres): its migrations and lock table, queries,
/// nested transactions as savepoints, information_schema lookups
/// (tests/clients/knex_app).
#[test]
fn knex_migrations_and_transactions_same_as_postgresql() {
    let Some(dir) = node_modules_with(&["pg@8", "knex@3"]) else { return };
    let script = clients_dir().join("knex_app").join("app.js");
    same_as_postgresql("the knex app", "knex scenario: ok", node_script(&dir, &script), true);
}

#[test]
fn psycopg3_crud() {
    let Some(python) = python_with_psycopg() else { return };
    let server = Server::start(&[]);
    let script = clients_dir().join("psycopg_crud.py");
    let (ok, text) = run_bounded(Command::new(python).arg(&script).arg(server.url("centum")), SCENARIO_LIMIT)
        .expect("run python3");
    assert!(ok, "psycopg scenario failed:\n{text}\nserver log:\n{}", server.log_text());
    assert!(text.contains("psycopg scenario: ok"), "{text}");
}

#[test]
fn node_postgres_crud() {
    let Some(dir) = node_pg() else { return };
    let server = Server::start(&[]);
    let script = clients_dir().join("node_pg_crud.js");
    let (ok, text) = run_bounded(
        Command::new("node")
            .arg(&script)
            .arg(server.url("centum"))
            .env("NODE_PATH", dir.join("node_modules")),
        SCENARIO_LIMIT,
    )
    .expect("run node");
    assert!(ok, "node-postgres scenario failed:\n{text}\nserver log:\n{}", server.log_text());
    assert!(text.contains("node-postgres scenario: ok"), "{text}");
}

/// LISTEN/NOTIFY through psycopg (tests/clients/psycopg_notify.py):
/// delivery at commit, duplicates once, nothing on rollback or failure, a
/// busy listener hearing at the end of its transaction, UNLISTEN, and 500
/// in order; the transcript equal to PostgreSQL's.
#[test]
fn psycopg_notifications_same_as_postgresql() {
    let Some(python) = python_with_psycopg() else { return };
    let script = clients_dir().join("psycopg_notify.py");
    same_as_postgresql("psycopg's notifications", "psycopg notify: ok", python_script(python, &script), true);
}

/// The same through node-postgres, which reads notifications as they
/// arrive, also between pipelined queries (tests/clients/node_pg_notify.js).
#[test]
fn node_postgres_notifications_same_as_postgresql() {
    let Some(dir) = node_pg() else { return };
    let script = clients_dir().join("node_pg_notify.js");
    same_as_postgresql(
        "node-postgres's notifications",
        "node-postgres notify: ok",
        node_script(&dir, &script),
        true,
    );
}

/// Results far larger than one socket write arrive whole and in order:
/// through the simple protocol, through Execute with no row limit, and
/// through a portal read a few hundred rows at a time (PortalSuspended
/// between the reads), with NULLs, integers of every width and text.
#[tokio::test]
async fn large_results_stream_whole_and_in_order() {
    let server = Server::start(&[]);
    let run = async {
        let client = connect(&server).await;
        const ROWS: i64 = 60_000;
        let sql = format!(
            "SELECT (g % 1000)::int2 AS s, g::int4 AS i, g * 3000000000 AS b, \
             CASE WHEN g % 7 = 0 THEN NULL ELSE repeat('x', (g % 50)::int) || g END AS t \
             FROM generate_series(1, {ROWS}) g"
        );
        let expect_text = |g: i64| (g % 7 != 0).then(|| format!("{}{g}", "x".repeat((g % 50) as usize)));

        // Simple protocol: every value in text.
        let mut g = 0;
        for m in client.simple_query(&sql).await.unwrap() {
            if let SimpleQueryMessage::Row(r) = m {
                g += 1;
                assert_eq!(r.get(0), Some((g % 1000).to_string().as_str()));
                assert_eq!(r.get(1), Some(g.to_string().as_str()));
                assert_eq!(r.get(2), Some((g * 3_000_000_000).to_string().as_str()));
                assert_eq!(r.get(3).map(String::from), expect_text(g));
            }
        }
        assert_eq!(g, ROWS);

        // Extended protocol, results in binary, all rows at once.
        let rows = client.query(&sql, &[]).await.unwrap();
        assert_eq!(rows.len() as i64, ROWS);
        for (i, r) in rows.iter().enumerate() {
            let g = i as i64 + 1;
            assert_eq!(r.get::<_, i16>(0) as i64, g % 1000);
            assert_eq!(r.get::<_, i32>(1) as i64, g);
            assert_eq!(r.get::<_, i64>(2), g * 3_000_000_000);
            assert_eq!(r.get::<_, Option<String>>(3), expect_text(g));
        }

        // A portal read 700 rows at a time.
        let mut client = client;
        let txn = client.transaction().await.unwrap();
        let portal = txn.bind(sql.as_str(), &[]).await.unwrap();
        let mut g = 0;
        loop {
            let batch = txn.query_portal(&portal, 700).await.unwrap();
            if batch.is_empty() {
                break;
            }
            assert!(batch.len() <= 700);
            for r in batch {
                g += 1;
                assert_eq!(r.get::<_, i32>(1) as i64, g);
                assert_eq!(r.get::<_, Option<String>>(3), expect_text(g));
            }
        }
        assert_eq!(g, ROWS);
        txn.commit().await.unwrap();
    };
    tokio::time::timeout(SCENARIO_LIMIT, run).await.expect("scenario in time");
}
