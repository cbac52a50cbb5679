//! COPY: moving rows in bulk between a table and a client's stream.
//!
//! `COPY t [(cols)] FROM STDIN` and `COPY t [(cols)] | (query) TO STDOUT`,
//! in PostgreSQL's text format (tab-separated, `\N` for NULL, backslash
//! escapes) or CSV (`FORMAT csv`, with DELIMITER, NULL, HEADER, QUOTE and
//! ESCAPE). The protocol around it (CopyInResponse, CopyData, CopyDone)
//! belongs to the server; this module only turns bytes into rows and back.
//!
//! Rows coming in are inserted through an ordinary prepared INSERT, so
//! defaults, constraints, foreign keys and unique indexes hold exactly as
//! for INSERT. Lines are parsed into a batch of up to `BATCH` (1,024) rows, and
//! the INSERT runs once per batch, taking the batch's rows in place of its
//! VALUES: one statement's set-up per batch, not per line. The whole COPY
//! is one transaction: the open block's, or one of its own that commits
//! when the stream ends and aborts if it fails.
//! Bytes are processed as they arrive (a partial line waits for the next
//! chunk), so a COPY of any size needs memory only for its transaction's
//! rows, not for the stream.

use crate::error::{Error, Result};
use crate::execution::Bulk;
use crate::session::{Prepared, QueryResult, Session, TxnStatus};
use centum_types::{DataType, Value};
use sqlparser::ast;
use std::borrow::Cow;

/// Rows a COPY FROM inserts per statement.
const BATCH: usize = 1024;

/// How the rows are written.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Format {
    csv: bool,
    delimiter: u8,
    null: String,
    header: bool,
    quote: u8,
    escape: u8,
}

impl Format {
    fn new(options: &[ast::CopyOption]) -> Result<Format> {
        let mut csv = false;
        let (mut delimiter, mut null, mut header, mut quote, mut escape) = (None, None, false, None, None);
        let byte = |c: char, what: &str| -> Result<u8> {
            u8::try_from(c as u32).ok().filter(|b| b.is_ascii()).ok_or_else(|| {
                Error::other("0A000", format!("COPY {what} must be a single one-byte character"))
            })
        };
        for o in options {
            match o {
                ast::CopyOption::Format(f) => match f.value.to_lowercase().as_str() {
                    "text" => csv = false,
                    "csv" => csv = true,
                    "binary" => return Err(Error::unsupported("COPY in binary format")),
                    other => {
                        return Err(Error::other("22023", format!("COPY format \"{other}\" not recognized")))
                    }
                },
                ast::CopyOption::Freeze(_) | ast::CopyOption::Encoding(_) => {}
                ast::CopyOption::Delimiter(c) => delimiter = Some(byte(*c, "delimiter")?),
                ast::CopyOption::Null(s) => null = Some(s.clone()),
                ast::CopyOption::Header(h) => header = *h,
                ast::CopyOption::Quote(c) => quote = Some(byte(*c, "quote")?),
                ast::CopyOption::Escape(c) => escape = Some(byte(*c, "escape")?),
                other => return Err(Error::unsupported(format!("COPY option {other}"))),
            }
        }
        if !csv && (quote.is_some() || escape.is_some() || header) {
            return Err(Error::other(
                "0A000",
                "COPY QUOTE, ESCAPE and HEADER are available only in CSV mode",
            ));
        }
        let quote = quote.unwrap_or(b'"');
        Ok(Format {
            csv,
            delimiter: delimiter.unwrap_or(if csv { b',' } else { b'\t' }),
            null: null.unwrap_or_else(|| if csv { String::new() } else { "\\N".into() }),
            header,
            quote,
            escape: escape.unwrap_or(quote),
        })
    }

    /// Splits one complete line (text) or record (CSV), without its line
    /// end, into fields; `None` fields are NULL.
    fn fields<'l>(&self, line: &'l [u8]) -> Result<Vec<Option<Cow<'l, str>>>> {
        if self.csv {
            Ok(self.csv_fields(line)?.into_iter().map(|f| f.map(Cow::Owned)).collect())
        } else {
            line.split(|&b| b == self.delimiter)
                .map(|f| if f == self.null.as_bytes() { Ok(None) } else { unescape(f).map(Some) })
                .collect()
        }
    }

    fn csv_fields(&self, line: &[u8]) -> Result<Vec<Option<String>>> {
        let mut out = Vec::new();
        let mut field = Vec::new();
        let mut quoted = false; // inside quotes now
        let mut was_quoted = false; // the field had quotes at all
        let mut i = 0;
        loop {
            let at_end = i >= line.len();
            if at_end || (!quoted && line[i] == self.delimiter) {
                let text = utf8(std::mem::take(&mut field))?;
                let is_null = !was_quoted && text == self.null;
                out.push(if is_null { None } else { Some(text) });
                was_quoted = false;
                if at_end {
                    break;
                }
                i += 1;
                continue;
            }
            let b = line[i];
            if quoted {
                // `""` (or ESCAPE then quote, or ESCAPE twice) is one literal.
                let next = line.get(i + 1).copied();
                if b == self.escape
                    && (next == Some(self.quote) || (self.escape != self.quote && next == Some(b)))
                {
                    field.push(line[i + 1]);
                    i += 2;
                    continue;
                }
                if b == self.quote {
                    quoted = false;
                } else {
                    field.push(b);
                }
            } else if b == self.quote {
                quoted = true;
                was_quoted = true;
            } else {
                field.push(b);
            }
            i += 1;
        }
        if quoted {
            return Err(Error::other("22P04", "unterminated CSV quoted field"));
        }
        Ok(out)
    }

    /// Appends one row, with its line end, to `out`.
    fn write_row(&self, row: &[Value], out: &mut Vec<u8>) {
        for (i, v) in row.iter().enumerate() {
            if i > 0 {
                out.push(self.delimiter);
            }
            if v.is_null() {
                out.extend_from_slice(self.null.as_bytes());
                continue;
            }
            let text = v.to_string();
            if self.csv {
                let needs = text.is_empty() && self.null.is_empty()
                    || text == self.null
                    || text
                        .bytes()
                        .any(|b| b == self.delimiter || b == self.quote || b == b'\n' || b == b'\r');
                if needs {
                    out.push(self.quote);
                    for b in text.bytes() {
                        if b == self.quote || b == self.escape {
                            out.push(self.escape);
                        }
                        out.push(b);
                    }
                    out.push(self.quote);
                } else {
                    out.extend_from_slice(text.as_bytes());
                }
            } else {
                for b in text.bytes() {
                    match b {
                        b'\\' => out.extend_from_slice(b"\\\\"),
                        b'\n' => out.extend_from_slice(b"\\n"),
                        b'\r' => out.extend_from_slice(b"\\r"),
                        b'\t' => out.extend_from_slice(b"\\t"),
                        b if b == self.delimiter => {
                            out.push(b'\\');
                            out.push(b);
                        }
                        b => out.push(b),
                    }
                }
            }
        }
        out.push(b'\n');
    }
}

fn utf8(bytes: Vec<u8>) -> Result<String> {
    String::from_utf8(bytes).map_err(|_| bad_utf8())
}

fn bad_utf8() -> Error {
    Error::other("22021", "invalid byte sequence for encoding \"UTF8\"")
}

/// Undoes the text format's backslash escapes (a field without any is
/// borrowed as it is).
fn unescape(f: &[u8]) -> Result<Cow<'_, str>> {
    if !f.contains(&b'\\') {
        return std::str::from_utf8(f).map(Cow::Borrowed).map_err(|_| bad_utf8());
    }
    let mut out = Vec::with_capacity(f.len());
    let mut i = 0;
    while i < f.len() {
        if f[i] != b'\\' || i + 1 == f.len() {
            out.push(f[i]);
            i += 1;
            continue;
        }
        let c = f[i + 1];
        i += 2;
        match c {
            b'b' => out.push(8),
            b'f' => out.push(12),
            b'n' => out.push(b'\n'),
            b'r' => out.push(b'\r'),
            b't' => out.push(b'\t'),
            b'v' => out.push(11),
            b'0'..=b'7' => {
                let mut v = u32::from(c - b'0');
                for _ in 0..2 {
                    match f.get(i) {
                        Some(d @ b'0'..=b'7') => {
                            v = v * 8 + u32::from(d - b'0');
                            i += 1;
                        }
                        _ => break,
                    }
                }
                out.push(v as u8);
            }
            b'x' if f.get(i).is_some_and(u8::is_ascii_hexdigit) => {
                let mut v = 0u32;
                for _ in 0..2 {
                    match f.get(i).and_then(|d| (*d as char).to_digit(16)) {
                        Some(d) => {
                            v = v * 16 + d;
                            i += 1;
                        }
                        None => break,
                    }
                }
                out.push(v as u8);
            }
            other => out.push(other),
        }
    }
    utf8(out).map(Cow::Owned)
}

/// What a COPY statement starts.
pub enum CopyStart {
    /// Rows from the client: feed them to [`CopyIn::data`].
    In(Box<CopyIn>),
    /// Rows to the client, already formatted.
    Out(CopyOut),
}

/// A COPY ... TO STDOUT's output.
pub struct CopyOut {
    /// Columns per row.
    pub columns: usize,
    /// Whether the format is CSV (else text).
    pub csv: bool,
    /// Every row, each with its line end (a header first when asked).
    pub data: Vec<Vec<u8>>,
    /// The command tag (`COPY n`).
    pub tag: String,
}

/// A COPY ... FROM STDIN in progress.
pub struct CopyIn {
    format: Format,
    types: Vec<DataType>,
    insert: Prepared,
    /// Rows parsed and not yet inserted, and the line each came from.
    batch: Bulk,
    batch_lines: Vec<u64>,
    /// Bytes of an incomplete line from the previous chunk.
    partial: Vec<u8>,
    rows: u64,
    /// Lines seen (for error messages).
    line: u64,
    /// Whether this COPY opened its own transaction.
    own_transaction: bool,
    /// `\.` was seen: the rest is ignored.
    ended: bool,
}

impl CopyIn {
    /// Columns per row.
    pub fn columns(&self) -> usize {
        self.types.len()
    }

    /// Whether the format is CSV (else text).
    pub fn csv(&self) -> bool {
        self.format.csv
    }

    /// Takes the next chunk of the stream and inserts every row it
    /// completes.
    pub fn data(&mut self, session: &mut Session, bytes: &[u8]) -> Result<()> {
        self.partial.extend_from_slice(bytes);
        let buf = std::mem::take(&mut self.partial);
        let mut start = 0;
        let mut quoted = false;
        for i in 0..buf.len() {
            let b = buf[i];
            if self.format.csv && b == self.format.quote {
                quoted = !quoted;
            }
            if b == b'\n' && !quoted {
                let mut line = &buf[start..i];
                if line.last() == Some(&b'\r') {
                    line = &line[..line.len() - 1];
                }
                self.line(session, line)?;
                start = i + 1;
            }
        }
        self.partial = buf[start..].to_vec();
        Ok(())
    }

    fn line(&mut self, session: &mut Session, line: &[u8]) -> Result<()> {
        self.line += 1;
        if self.ended {
            return Ok(());
        }
        if line == b"\\." {
            self.ended = true;
            return Ok(());
        }
        if self.format.header && self.line == 1 {
            return Ok(());
        }
        let values = match self.parse(line) {
            Ok(v) => v,
            Err(e) => {
                // The rows before this line go first: an error among them
                // is the one to report.
                self.flush(session)?;
                return Err(context(e, self.line));
            }
        };
        self.batch.rows.get_mut().push(values);
        self.batch_lines.push(self.line);
        if self.batch_lines.len() >= BATCH {
            self.flush(session)?;
        }
        Ok(())
    }

    /// The values of one line. A text line is split in place, with no
    /// list of its fields made first.
    fn parse(&self, line: &[u8]) -> Result<Vec<Value>> {
        let value = |f: Option<&str>, ty: &DataType| match f {
            None => Ok(Value::Null),
            Some(text) => Ok(Value::parse(text, ty)?),
        };
        if self.format.csv {
            let fields = self.format.fields(line)?;
            self.fits(fields.len())?;
            return fields.iter().zip(&self.types).map(|(f, ty)| value(f.as_deref(), ty)).collect();
        }
        let d = self.format.delimiter;
        self.fits(line.iter().filter(|&&b| b == d).count() + 1)?;
        let null = self.format.null.as_bytes();
        let mut values = Vec::with_capacity(self.types.len());
        for (f, ty) in line.split(|&b| b == d).zip(&self.types) {
            let text = if f == null { None } else { Some(unescape(f)?) };
            values.push(value(text.as_deref(), ty)?);
        }
        Ok(values)
    }

    /// A line of `fields` fields fits the columns copied.
    fn fits(&self, fields: usize) -> Result<()> {
        if fields == self.types.len() {
            return Ok(());
        }
        let what = if fields < self.types.len() {
            "missing data for a column"
        } else {
            "extra data after last expected column"
        };
        Err(Error::other("22P04", what))
    }

    /// Inserts the rows of the batch.
    fn flush(&mut self, session: &mut Session) -> Result<()> {
        if self.batch_lines.is_empty() {
            return Ok(());
        }
        self.batch.done.set(0);
        let r = session.execute_bulk(&mut self.insert, &self.batch);
        let lines = std::mem::take(&mut self.batch_lines);
        self.batch.rows.get_mut().clear();
        match r {
            Ok(_) => {
                self.rows += lines.len() as u64;
                Ok(())
            }
            Err(e) => Err(context(e, lines.get(self.batch.done.get()).copied().unwrap_or(self.line))),
        }
    }

    /// Ends the stream: a last line without a line end counts; commits the
    /// COPY's own transaction. Returns the `COPY n` result.
    pub fn finish(mut self, session: &mut Session) -> Result<QueryResult> {
        let rest = std::mem::take(&mut self.partial);
        let last = if rest.is_empty() { Ok(()) } else { self.line(session, &rest) };
        if let Err(e) = last.and_then(|()| self.flush(session)) {
            return Err(self.abort(session, e));
        }
        let tag = format!("COPY {}", self.rows);
        if self.own_transaction {
            session.execute("COMMIT")?;
        }
        Ok(QueryResult { tag, ..QueryResult::empty() })
    }

    /// Abandons the COPY after `e` (an error of the stream or the client's
    /// CopyFail): the COPY's own transaction is rolled back, an open block
    /// is failed. Returns `e`.
    pub fn abort(self, session: &mut Session, e: Error) -> Error {
        if self.own_transaction {
            let _ = session.execute("ROLLBACK");
        } else {
            session.fail_block();
        }
        e
    }
}

/// `e` with the COPY line it concerns, its SQLSTATE kept.
fn context(e: Error, line: u64) -> Error {
    match e {
        Error::Other { code, message } => {
            Error::Other { code, message: format!("{message} (COPY line {line})") }
        }
        e => Error::other(e.sqlstate(), format!("{e} (COPY line {line})")),
    }
}

/// The table and column list of a COPY, as a SELECT or INSERT names them.
fn target(table: &ast::ObjectName, columns: &[ast::Ident]) -> (String, String) {
    let cols = columns.iter().map(|c| c.to_string()).collect::<Vec<_>>().join(", ");
    (table.to_string(), cols)
}

/// Whether `sql` starts with the word COPY (a cheap test before parsing).
pub fn is_copy(sql: &str) -> bool {
    let first = sql.trim_start().split(|c: char| c.is_whitespace() || c == '(').next().unwrap_or("");
    first.eq_ignore_ascii_case("copy")
}

impl Session {
    /// Starts `sql` if it is one COPY statement (`Ok(None)` otherwise).
    pub fn copy(&mut self, sql: &str) -> Result<Option<CopyStart>> {
        if !is_copy(sql) {
            return Ok(None);
        }
        self.publish(sql);
        self.guarded(|s| s.copy_unguarded(sql))
    }

    fn copy_unguarded(&mut self, sql: &str) -> Result<Option<CopyStart>> {
        if self.status() == TxnStatus::Failed {
            return Err(Error::InFailedTransaction);
        }
        let mut stmts = crate::parser::parse(&boolean_options(sql))?;
        if stmts.len() != 1 {
            return Ok(None);
        }
        let ast::Statement::Copy { source, to, target: dest, options, legacy_options, .. } = stmts.remove(0)
        else {
            return Ok(None);
        };
        if !legacy_options.is_empty() {
            return Err(Error::unsupported("COPY's pre-9.0 options; write WITH (FORMAT csv, ...)"));
        }
        let format = Format::new(&options)?;
        match (to, &dest) {
            (false, ast::CopyTarget::Stdin) => {}
            (true, ast::CopyTarget::Stdout) => {}
            _ => return Err(Error::other(
                "42501",
                "COPY to or from a file on the server is not allowed; use STDIN or STDOUT (psql's \\copy)",
            )),
        }
        if to {
            let query = match &source {
                ast::CopySource::Table { table_name, columns } => {
                    let (t, cols) = target(table_name, columns);
                    format!("SELECT {} FROM {t}", if cols.is_empty() { "*".into() } else { cols })
                }
                ast::CopySource::Query(q) => q.to_string(),
            };
            let mut results = self.execute(&query)?;
            let r = results.pop().unwrap_or_else(QueryResult::empty);
            let mut data = Vec::with_capacity(r.rows.len() + 1);
            if format.header {
                let names: Vec<Value> = r.columns.iter().map(|c| Value::Text(c.name.clone())).collect();
                let mut line = Vec::new();
                format.write_row(&names, &mut line);
                data.push(line);
            }
            for row in &r.rows {
                let mut line = Vec::new();
                format.write_row(row, &mut line);
                data.push(line);
            }
            return Ok(Some(CopyStart::Out(CopyOut {
                columns: r.columns.len(),
                csv: format.csv,
                data,
                tag: format!("COPY {}", r.rows.len()),
            })));
        }
        let ast::CopySource::Table { table_name, columns } = &source else {
            return Err(Error::Syntax("COPY FROM needs a table, not a query".into()));
        };
        let (t, cols) = target(table_name, columns);
        // The column list and types, through the catalog.
        let probe =
            self.prepare(&format!("SELECT {} FROM {t}", if cols.is_empty() { "*" } else { &cols }), &[])?;
        // Refused once the table is known to exist, as in PostgreSQL.
        if self.read_only_now() {
            self.fail_block();
            return Err(Error::read_only("COPY FROM"));
        }
        // Enum columns parse against their type's labels as they are now.
        let types: Vec<DataType> = probe
            .columns()
            .iter()
            .map(|c| crate::enums::fresh(&self.catalog, c.ty.as_ref().unwrap_or(&DataType::Text)))
            .collect();
        let names = probe.columns().iter().map(|c| quote_ident(&c.name)).collect::<Vec<_>>().join(", ");
        let placeholders = (1..=types.len()).map(|i| format!("${i}")).collect::<Vec<_>>().join(", ");
        let declared: Vec<Option<DataType>> = types.iter().cloned().map(Some).collect();
        let insert =
            // COPY writes identity columns GENERATED ALWAYS too, as
            // PostgreSQL's does (pg_dump's data has their values).
            self.prepare(&format!("INSERT INTO {t} ({names}) OVERRIDING SYSTEM VALUE VALUES ({placeholders})"), &declared)?;
        let own_transaction = self.status() == TxnStatus::Idle;
        if own_transaction {
            self.execute("BEGIN")?;
        }
        Ok(Some(CopyStart::In(Box::new(CopyIn {
            format,
            types,
            insert,
            batch: Bulk::default(),
            batch_lines: Vec::new(),
            partial: Vec::new(),
            rows: 0,
            line: 0,
            own_transaction,
            ended: false,
        }))))
    }
}

/// PostgreSQL accepts `on`/`off` for COPY's boolean options (pgbench
/// writes `with (freeze on)`); sqlparser wants `true`/`false`.
fn boolean_options(sql: &str) -> String {
    let mut out = sql.to_string();
    for opt in ["freeze", "header"] {
        for (from, to) in [(" on", " true"), (" off", " false")] {
            let lower = out.to_lowercase();
            let pat = format!("{opt}{from}");
            if let Some(at) = lower.find(&pat) {
                let end = at + pat.len();
                if !lower[end..].starts_with(|c: char| c.is_alphanumeric() || c == '_') {
                    out.replace_range(at..end, &format!("{opt}{to}"));
                }
            }
        }
    }
    out
}

fn quote_ident(name: &str) -> String {
    format!("\"{}\"", name.replace('"', "\"\""))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fmt(opts: &str) -> Format {
        let sql = format!("COPY t FROM STDIN {opts}");
        let ast::Statement::Copy { options, .. } = crate::parser::parse(&sql).unwrap().remove(0) else {
            panic!()
        };
        Format::new(&options).unwrap()
    }

    #[test]
    fn text_fields_unescape_and_null() {
        let f = fmt("");
        assert_eq!(
            f.fields(b"1\t\\N\ta\\tb\\\\c\\101\\x41").unwrap(),
            vec![Some("1".into()), None, Some("a\tb\\cAA".into())]
        );
    }

    #[test]
    fn csv_fields_quotes_and_null() {
        let f = fmt("WITH (FORMAT csv)");
        assert_eq!(
            f.fields(b"1,,\"\",\"a,\"\"b\"\"\",x").unwrap(),
            vec![Some("1".into()), None, Some("".into()), Some("a,\"b\"".into()), Some("x".into())]
        );
        assert!(f.fields(b"\"open").is_err());
    }

    #[test]
    fn rows_round_trip_through_both_formats() {
        let row = vec![
            Value::Integer(1),
            Value::Null,
            Value::Text("a,\"b\"\t\\\n".into()),
            Value::Text(String::new()),
        ];
        for opts in ["", "WITH (FORMAT csv)"] {
            let f = fmt(opts);
            let mut out = Vec::new();
            f.write_row(&row, &mut out);
            assert_eq!(out.last(), Some(&b'\n'));
            out.pop();
            let back = f.fields(&out).unwrap();
            let want: Vec<Option<Cow<str>>> = row
                .iter()
                .map(|v| if v.is_null() { None } else { Some(Cow::Owned(v.to_string())) })
                .collect();
            assert_eq!(back, want, "{opts}");
        }
    }
}
