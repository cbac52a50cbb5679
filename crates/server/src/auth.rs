//! Authentication: proving that a start-up message's user is who it says,
//! and answering a failure without telling who exists.
//!
//! ```text
//!  trust          AuthenticationOk, then: role missing   ─▶ FATAL 28000 does not exist
//!                                         role NOLOGIN   ─▶ FATAL 28000 not permitted
//!  scram-sha-256  SASL ─▶ client-first ─▶ server-first (salt, iterations)
//!                      ─▶ client-final ─▶ proof checked against a verifier:
//!                            the role's, if it exists and has a password,
//!                            else a mock one ─▶ the proof fails
//!                 proof wrong or mock   ─▶ FATAL 28P01 password authentication
//!                                          failed for user "<name as given>"
//!                 proof right: SASLFinal, AuthenticationOk, then
//!                                role NOLOGIN   ─▶ FATAL 28000 not permitted
//! ```
//!
//! This is what PostgreSQL 15 answers. Under SCRAM a role that does not
//! exist, one without a password and a wrong password are one answer, and
//! the exchange before it has the same shape: the mock verifier of a name
//! is derived from the name and a key kept in the data directory
//! (`auth-nonce`, 32 random bytes made with the directory, as PostgreSQL
//! keeps a mock nonce in `pg_control`), so an unknown role is offered the
//! same 16-byte salt and 4,096 iterations on every try and across
//! restarts, as a real role is. Whether a role may log in is asked only
//! after its password was proven, so NOLOGIN tells nothing to someone who
//! does not know the password.

use crate::server::{Shared, StartupSocket};
use async_trait::async_trait;
use futures::{SinkExt, StreamExt};
use pgwire::api::auth::mechanism::AuthMechanismFactory;
use pgwire::api::auth::sasl::scram::{ScramAuth, ScramSecret};
use pgwire::api::auth::{
    self, AuthDriver, AuthOutcome, AuthSource, LoginInfo, Password, ServerParameterProvider,
};
use pgwire::api::ClientInfo;
use pgwire::error::{ErrorInfo, PgWireError, PgWireResult};
use pgwire::messages::startup::{Authentication, SecretKey};
use pgwire::messages::{PgWireBackendMessage, PgWireFrontendMessage};
use ring::hmac;
use std::collections::HashMap;
use std::path::Path;
use std::sync::atomic::Ordering::SeqCst;
use std::sync::Arc;

/// The file in the data directory that keys the mock verifiers.
const MOCK_KEY_FILE: &str = "auth-nonce";
/// Salt length of a mock verifier: that of the verifiers CREATE ROLE makes.
const MOCK_SALT_LEN: usize = 16;

/// The key of the mock verifiers: read from the data directory, or made
/// and written there (once, by a new data directory's first start).
pub(crate) fn mock_key(data_dir: &Path) -> Result<hmac::Key, String> {
    use ring::rand::SecureRandom;
    let path = data_dir.join(MOCK_KEY_FILE);
    match std::fs::read(&path) {
        Ok(bytes) if bytes.len() == 32 => return Ok(hmac::Key::new(hmac::HMAC_SHA256, &bytes)),
        // Written by something else: a new key only changes the mock salts.
        Ok(_) => {
            tracing::warn!(file = %path.display(), "malformed mock authentication key; making a new one")
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => return Err(format!("cannot read {}: {e}", path.display())),
    }
    let mut bytes = [0u8; 32];
    ring::rand::SystemRandom::new()
        .fill(&mut bytes)
        .map_err(|_| "cannot generate the mock authentication key".to_string())?;
    // Written whole or not at all: a crash before the rename leaves no
    // file, and the next start makes another key.
    let tmp = path.with_extension("tmp");
    let write = || -> std::io::Result<()> {
        use std::io::Write;
        let mut opts = std::fs::OpenOptions::new();
        opts.write(true).create(true).truncate(true);
        #[cfg(unix)]
        std::os::unix::fs::OpenOptionsExt::mode(&mut opts, 0o600);
        let mut f = opts.open(&tmp)?;
        f.write_all(&bytes)?;
        f.sync_all()?;
        std::fs::rename(&tmp, &path)
    };
    write().map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    Ok(hmac::Key::new(hmac::HMAC_SHA256, &bytes))
}

/// A role's verifier for a name that has none: fixed for the name and the
/// key, and shaped like a real one, but no password matches it.
fn mock_secret(key: &hmac::Key, user: &str) -> ScramSecret {
    let derive = |what: &[u8]| {
        let mut ctx = hmac::Context::with_key(key);
        ctx.update(what);
        ctx.update(user.as_bytes());
        ctx.sign().as_ref().to_vec()
    };
    let mut salt = derive(b"salt\0");
    salt.truncate(MOCK_SALT_LEN);
    ScramSecret::Verifier {
        salt,
        iterations: centum_sql::auth::SCRAM_ITERATIONS as usize,
        stored_key: derive(b"stored-key\0"),
        server_key: derive(b"server-key\0"),
    }
}

/// FATAL 28P01, naming the user as the client gave it.
fn password_failed(user: &str) -> PgWireError {
    PgWireError::UserError(Box::new(ErrorInfo::new(
        "FATAL".into(),
        "28P01".into(),
        format!("password authentication failed for user \"{user}\""),
    )))
}

fn fatal_28000(message: String) -> PgWireError {
    PgWireError::UserError(Box::new(ErrorInfo::new("FATAL".into(), "28000".into(), message)))
}

/// The role may open a session: it exists and has LOGIN. Asked once the
/// client is authenticated (by trust or by its password).
fn may_log_in(shared: &Shared, user: &str) -> PgWireResult<()> {
    match shared.db.catalog().role(user) {
        Some(r) if r.login => Ok(()),
        Some(_) => Err(fatal_28000(format!("role \"{user}\" is not permitted to log in"))),
        None => Err(fatal_28000(format!("role \"{user}\" does not exist"))),
    }
}

/// Protocol version and start-up parameters of a start-up message; the
/// user it names.
async fn read_startup(socket: &mut StartupSocket, first: PgWireFrontendMessage) -> PgWireResult<String> {
    let PgWireFrontendMessage::Startup(startup) = first else {
        return Err(PgWireError::InvalidStartupMessage);
    };
    auth::protocol_negotiation(socket, &startup).await?;
    auth::save_startup_parameters_to_metadata(socket, &startup);
    socket.metadata().get("user").cloned().ok_or(PgWireError::UserNameRequired)
}

/// Refuses an authenticated client: AuthenticationOk, then `error`, as
/// PostgreSQL refuses after authentication.
async fn refuse_after_authentication(socket: &mut StartupSocket, error: PgWireError) -> PgWireResult<()> {
    socket.send(PgWireBackendMessage::Authentication(Authentication::Ok)).await?;
    Err(error)
}

/// Trust: any existing role that may log in.
pub(crate) async fn trust(
    shared: &Arc<Shared>,
    socket: &mut StartupSocket,
    first: PgWireFrontendMessage,
    provider: &Arc<Parameters>,
) -> PgWireResult<()> {
    let user = read_startup(socket, first).await?;
    if let Err(e) = may_log_in(shared, &user) {
        return refuse_after_authentication(socket, e).await;
    }
    let pid = shared.next_pid.fetch_add(1, SeqCst) & 0x7fff_ffff;
    socket.set_pid_and_secret_key(pid, SecretKey::I32(random_i32()));
    auth::finish_authentication(socket, provider.as_ref()).await
}

/// SCRAM-SHA-256 against the role's verifier, or a mock one (see the
/// module header).
pub(crate) async fn scram(
    shared: &Arc<Shared>,
    socket: &mut StartupSocket,
    first: PgWireFrontendMessage,
    provider: Arc<Parameters>,
) -> PgWireResult<()> {
    let user = read_startup(socket, first).await?;
    let driver = AuthDriver::<_, Against>::new(provider);
    let mechanism = ScramAuth::new(Arc::new(Verifiers { shared: shared.clone() })).create();
    let mut outcome = driver.begin_authentication(socket, mechanism).await?;
    let (against, final_message) = loop {
        if let AuthOutcome::Authenticated { identity, final_message } = outcome {
            break (identity, final_message);
        }
        let message = match socket.next().await {
            Some(Ok(PgWireFrontendMessage::PasswordMessageFamily(m))) => m,
            Some(Ok(_)) => {
                return Err(PgWireError::UserError(Box::new(ErrorInfo::new(
                    "FATAL".into(),
                    "08P01".into(),
                    "expected SASL response".into(),
                ))))
            }
            Some(Err(e)) => return Err(e),
            None => return Ok(()),
        };
        outcome = driver.advance_authentication(socket, message).await.map_err(|e| match e {
            PgWireError::InvalidPassword(_) => password_failed(&user),
            e => e,
        })?;
    };
    // A proof that matched a mock verifier (never expected) is no proof.
    if !matches!(against, Some(Against::Role)) {
        return Err(password_failed(&user));
    }
    if let Err(e) = may_log_in(shared, &user) {
        if let Some(m) = final_message {
            socket.send(PgWireBackendMessage::Authentication(m)).await?;
        }
        return refuse_after_authentication(socket, e).await;
    }
    driver.complete_authentication(socket, final_message).await
}

fn random_i32() -> i32 {
    use ring::rand::SecureRandom;
    let mut b = [0u8; 4];
    let _ = ring::rand::SystemRandom::new().fill(&mut b);
    i32::from_ne_bytes(b)
}

/// Which verifier a SCRAM exchange ran against.
enum Against {
    /// The role's own.
    Role,
    /// A mock one: the role does not exist or has no password.
    Mock,
}

/// Password verifiers from the catalog, for SCRAM.
struct Verifiers {
    shared: Arc<Shared>,
}

impl std::fmt::Debug for Verifiers {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Verifiers")
    }
}

#[async_trait]
impl AuthSource<Against> for Verifiers {
    async fn get_password(&self, login: &LoginInfo) -> PgWireResult<Password> {
        Err(PgWireError::InvalidPassword(login.user().unwrap_or_default().to_owned()))
    }

    async fn get_scram_secret(&self, login: &LoginInfo) -> PgWireResult<(ScramSecret, Option<Against>)> {
        let user = login.user().unwrap_or_default();
        let verifier = self
            .shared
            .db
            .catalog()
            .role(user)
            .and_then(|r| r.verifier)
            .and_then(|v| centum_sql::auth::ScramVerifier::parse(&v));
        Ok(match verifier {
            Some(v) => (
                ScramSecret::Verifier {
                    salt: v.salt,
                    iterations: v.iterations as usize,
                    stored_key: v.stored_key,
                    server_key: v.server_key,
                },
                Some(Against::Role),
            ),
            None => (mock_secret(&self.shared.mock_key, user), Some(Against::Mock)),
        })
    }
}

/// The ParameterStatus messages of a new session.
pub(crate) struct Parameters {
    /// Whether this server is a standby now: `in_hot_standby` and
    /// `default_transaction_read_only` say so, which is how libpq's
    /// `target_session_attrs` tells a primary from a standby.
    pub(crate) standby: bool,
}

impl ServerParameterProvider for Parameters {
    fn server_parameters<C: ClientInfo>(&self, client: &C) -> Option<HashMap<String, String>> {
        let meta = client.metadata();
        let user = meta.get("user").cloned().unwrap_or_default();
        let mut p = HashMap::new();
        for (k, v) in [
            ("server_version", "15.0"),
            ("server_encoding", "UTF8"),
            ("client_encoding", "UTF8"),
            ("DateStyle", "ISO, MDY"),
            ("TimeZone", "UTC"),
            ("IntervalStyle", "postgres"),
            ("integer_datetimes", "on"),
            ("standard_conforming_strings", "on"),
            ("is_superuser", "on"),
        ] {
            p.insert(k.to_string(), v.to_string());
        }
        let on = if self.standby { "on" } else { "off" };
        p.insert("default_transaction_read_only".into(), on.into());
        p.insert("in_hot_standby".into(), on.into());
        p.insert("application_name".into(), meta.get("application_name").cloned().unwrap_or_default());
        p.insert("session_authorization".into(), user);
        Some(p)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn salt(s: &ScramSecret) -> (&[u8], usize) {
        match s {
            ScramSecret::Verifier { salt, iterations, .. } => (salt, *iterations),
            ScramSecret::SaltedPassword { salt, .. } => (salt, 0),
        }
    }

    #[test]
    fn mock_verifiers_are_fixed_per_name_and_shaped_like_real_ones() {
        let dir = std::env::temp_dir().join(format!("centum-mock-key-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let key = mock_key(&dir).unwrap();
        let again = mock_key(&dir).unwrap();
        let (a, b) = (mock_secret(&key, "alice"), mock_secret(&again, "alice"));
        assert_eq!(salt(&a), salt(&b), "the key survives a restart");
        assert_ne!(salt(&a), salt(&mock_secret(&key, "bob")));
        let real = centum_sql::auth::ScramVerifier::new("pw").unwrap();
        assert_eq!((salt(&a).0.len(), salt(&a).1), (real.salt.len(), real.iterations as usize));
        let _ = std::fs::remove_dir_all(dir);
    }
}
