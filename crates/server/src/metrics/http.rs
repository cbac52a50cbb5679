//! The HTTP side of the metrics endpoint: `GET /metrics` over HTTP/1.1.
//!
//! It runs as a task of the listener's thread, so a scrape never takes a
//! worker from the sessions. Each connection serves one request and is
//! closed (a scraper opens another next time); at most
//! [`MAX_CONNECTIONS`] are served at once, a connection more is closed at
//! once, and one that has not finished within [`CONNECTION_TIMEOUT`] is
//! closed: a client that connects and says nothing holds nothing for long.

use http_body_util::Full;
use hyper::body::{Bytes, Incoming};
use hyper::header::{HeaderValue, ALLOW, CONTENT_TYPE};
use hyper::{Method, Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use prometheus_client::encoding::prometheus_text;
use prometheus_client::registry::Registry;
use std::convert::Infallible;
use std::sync::Arc;
use std::time::Duration;
use tokio::net::TcpListener;
use tokio::sync::{watch, Semaphore};

/// Scrapes served at once.
const MAX_CONNECTIONS: usize = 16;
/// How long one connection may take, from accept to the end of its reply.
const CONNECTION_TIMEOUT: Duration = Duration::from_secs(10);

/// Serves the figures of `registry` on `listener` until `stop` turns true
/// (or its sender goes).
pub(crate) async fn serve(listener: TcpListener, registry: Registry, mut stop: watch::Receiver<bool>) {
    let registry = Arc::new(registry);
    let permits = Arc::new(Semaphore::new(MAX_CONNECTIONS));
    loop {
        let accepted = tokio::select! {
            a = listener.accept() => a,
            _ = stop.changed() => return,
        };
        let tcp = match accepted {
            Ok((tcp, _)) => tcp,
            Err(e) => {
                tracing::warn!(error = %e, "metrics endpoint: accept failed");
                tokio::time::sleep(Duration::from_millis(10)).await;
                continue;
            }
        };
        let Ok(permit) = permits.clone().try_acquire_owned() else { continue };
        let registry = registry.clone();
        tokio::spawn(async move {
            let _permit = permit;
            let service = hyper::service::service_fn(move |req| {
                let reply = respond(&registry, &req);
                async move { Ok::<_, Infallible>(reply) }
            });
            let conn = hyper::server::conn::http1::Builder::new()
                .keep_alive(false)
                .serve_connection(TokioIo::new(tcp), service);
            if let Ok(Err(e)) = tokio::time::timeout(CONNECTION_TIMEOUT, conn).await {
                tracing::debug!(error = %e, "metrics endpoint: connection failed");
            }
        });
    }
}

/// The reply to one request: the figures for `GET /metrics` (and `HEAD`),
/// 404 elsewhere, 405 for another method.
fn respond(registry: &Registry, req: &Request<Incoming>) -> Response<Full<Bytes>> {
    if req.uri().path() != "/metrics" {
        return reply(StatusCode::NOT_FOUND, "the metrics are at /metrics\n".into());
    }
    if req.method() != Method::GET && req.method() != Method::HEAD {
        let mut r = reply(StatusCode::METHOD_NOT_ALLOWED, "only GET\n".into());
        r.headers_mut().insert(ALLOW, HeaderValue::from_static("GET, HEAD"));
        return r;
    }
    let mut text = String::with_capacity(16 << 10);
    match prometheus_text::encode(&mut text, registry) {
        Ok(()) => {
            let mut r = Response::new(Full::new(Bytes::from(text)));
            r.headers_mut().insert(CONTENT_TYPE, HeaderValue::from_static(prometheus_text::CONTENT_TYPE));
            r
        }
        Err(_) => reply(StatusCode::INTERNAL_SERVER_ERROR, "the figures could not be written\n".into()),
    }
}

fn reply(status: StatusCode, text: String) -> Response<Full<Bytes>> {
    let mut r = Response::new(Full::new(Bytes::from(text)));
    *r.status_mut() = status;
    r.headers_mut().insert(CONTENT_TYPE, HeaderValue::from_static("text/plain; charset=utf-8"));
    r
}
