//! A raw protocol connection, for tests that look at the messages
//! themselves: pipelines, binary forms, ParameterStatus.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::Duration;

/// A raw protocol connection.
pub struct Wire {
    pub stream: TcpStream,
    /// The ParameterStatus messages received, in order.
    pub parameters: Vec<(String, String)>,
}

pub fn message(kind: u8, body: &[u8]) -> Vec<u8> {
    let mut m = vec![kind];
    m.extend_from_slice(&(body.len() as i32 + 4).to_be_bytes());
    m.extend_from_slice(body);
    m
}

pub fn cstr(out: &mut Vec<u8>, s: &str) {
    out.extend_from_slice(s.as_bytes());
    out.push(0);
}

/// Parse (unnamed statement, no parameter types), Bind (unnamed portal,
/// no parameters, text results), Execute (all rows).
pub fn statement(sql: &str) -> Vec<u8> {
    parse_bind_execute(sql, &[0, 0, 0, 0, 0, 0])
}

/// Parse `sql` unnamed with no parameter types, Bind the unnamed portal
/// with `bind_rest` (what follows the portal and statement names), and
/// Execute it for all rows.
pub fn parse_bind_execute(sql: &str, bind_rest: &[u8]) -> Vec<u8> {
    let mut parse = Vec::new();
    cstr(&mut parse, "");
    cstr(&mut parse, sql);
    parse.extend_from_slice(&0i16.to_be_bytes());
    let mut bind = Vec::new();
    cstr(&mut bind, "");
    cstr(&mut bind, "");
    bind.extend_from_slice(bind_rest);
    let mut execute = Vec::new();
    cstr(&mut execute, "");
    execute.extend_from_slice(&0i32.to_be_bytes());
    [message(b'P', &parse), message(b'B', &bind), message(b'E', &execute)].concat()
}

pub fn sync() -> Vec<u8> {
    message(b'S', &[])
}

impl Wire {
    pub fn connect(port: u16, user: &str) -> Wire {
        let mut stream = TcpStream::connect(("127.0.0.1", port)).expect("connect");
        stream.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
        let mut body = 196608i32.to_be_bytes().to_vec();
        for (k, v) in [("user", user), ("database", "postgres")] {
            cstr(&mut body, k);
            cstr(&mut body, v);
        }
        body.push(0);
        let mut startup = ((body.len() + 4) as i32).to_be_bytes().to_vec();
        startup.extend_from_slice(&body);
        stream.write_all(&startup).unwrap();
        let mut w = Wire { stream, parameters: Vec::new() };
        let hello = w.until_ready();
        assert_eq!(hello.last().map(String::as_str), Some("ReadyForQuery I"), "{hello:?}");
        w
    }

    /// Sends `bytes`, then reads until the ReadyForQuery of each Sync in
    /// them.
    pub fn round(&mut self, bytes: &[u8], syncs: usize) -> Vec<String> {
        self.stream.write_all(bytes).unwrap();
        (0..syncs).flat_map(|_| self.until_ready()).collect()
    }

    /// The messages up to and including the next ReadyForQuery, rendered.
    pub fn until_ready(&mut self) -> Vec<String> {
        let mut out = Vec::new();
        loop {
            let mut head = [0u8; 5];
            self.stream.read_exact(&mut head).expect("read a message");
            let len = i32::from_be_bytes([head[1], head[2], head[3], head[4]]) as usize - 4;
            let mut body = vec![0u8; len];
            self.stream.read_exact(&mut body).unwrap();
            let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
            let line = match head[0] {
                b'1' => "ParseComplete".to_string(),
                b'2' => "BindComplete".to_string(),
                b'3' => "CloseComplete".to_string(),
                b'n' => "NoData".to_string(),
                b's' => "PortalSuspended".to_string(),
                b'I' => "EmptyQueryResponse".to_string(),
                b'C' => format!("CommandComplete {}", text(&body[..body.len() - 1])),
                b'T' => "RowDescription".to_string(),
                b'D' => {
                    let n = i16::from_be_bytes([body[0], body[1]]) as usize;
                    let mut at = 2;
                    let mut values = Vec::new();
                    for _ in 0..n {
                        let l = i32::from_be_bytes(body[at..at + 4].try_into().unwrap());
                        at += 4;
                        if l < 0 {
                            values.push("NULL".to_string());
                        } else {
                            values.push(text(&body[at..at + l as usize]));
                            at += l as usize;
                        }
                    }
                    format!("DataRow {}", values.join("|"))
                }
                b'E' => {
                    let code = body
                        .split(|&b| b == 0)
                        .find(|f| f.first() == Some(&b'C'))
                        .map(|f| text(&f[1..]))
                        .unwrap_or_default();
                    format!("ErrorResponse {code}")
                }
                b'Z' => {
                    out.push(format!("ReadyForQuery {}", body[0] as char));
                    return out;
                }
                b'S' => {
                    let mut parts = body.split(|&b| b == 0).map(text);
                    let name = parts.next().unwrap_or_default();
                    self.parameters.push((name, parts.next().unwrap_or_default()));
                    continue;
                }
                // Start-up chatter, notices: not compared.
                b'R' | b'K' | b'N' => continue,
                other => format!("message {}", other as char),
            };
            out.push(line);
        }
    }
}
