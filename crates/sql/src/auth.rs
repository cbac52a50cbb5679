//! Roles and their passwords.
//!
//! A role is a name that may log in, kept in the SQL catalog (see
//! `catalog.rs`, "CSG2"). Its password is never stored: CREATE ROLE and
//! ALTER ROLE ... PASSWORD keep a SCRAM-SHA-256 verifier in PostgreSQL's
//! text form, `SCRAM-SHA-256$<iterations>:<salt>$<StoredKey>:<ServerKey>`
//! (base64), from which the server can check a client's proof and prove
//! itself to the client, but from which the password cannot be recovered.
//! A password given already in that form (psql's `\password` sends one) is
//! kept as it is.

use crate::catalog::{Catalog, Role};
use crate::error::{Error, Result};
use base64::engine::general_purpose::STANDARD as B64;
use base64::Engine as _;
use ring::{digest, hmac, pbkdf2, rand::SecureRandom};
use sqlparser::ast;
use std::num::NonZeroU32;

/// PBKDF2 iterations for new verifiers (PostgreSQL's default).
pub const SCRAM_ITERATIONS: u32 = 4096;

/// A parsed SCRAM-SHA-256 verifier.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ScramVerifier {
    /// PBKDF2 iterations.
    pub iterations: u32,
    /// The salt.
    pub salt: Vec<u8>,
    /// SHA-256(HMAC(SaltedPassword, "Client Key")).
    pub stored_key: Vec<u8>,
    /// HMAC(SaltedPassword, "Server Key").
    pub server_key: Vec<u8>,
}

impl ScramVerifier {
    /// Derives the verifier of `password` with a fresh random salt.
    pub fn new(password: &str) -> Result<ScramVerifier> {
        let mut salt = vec![0u8; 16];
        ring::rand::SystemRandom::new()
            .fill(&mut salt)
            .map_err(|_| Error::other("58000", "could not generate a random salt"))?;
        Ok(ScramVerifier::with_salt(password, salt, SCRAM_ITERATIONS))
    }

    /// Derives the verifier of `password` with `salt`.
    pub fn with_salt(password: &str, salt: Vec<u8>, iterations: u32) -> ScramVerifier {
        let mut salted = [0u8; 32];
        let iters = NonZeroU32::new(iterations.max(1)).expect("at least one");
        pbkdf2::derive(pbkdf2::PBKDF2_HMAC_SHA256, iters, &salt, password.as_bytes(), &mut salted);
        let key = hmac::Key::new(hmac::HMAC_SHA256, &salted);
        let client_key = hmac::sign(&key, b"Client Key");
        let stored_key = digest::digest(&digest::SHA256, client_key.as_ref()).as_ref().to_vec();
        let server_key = hmac::sign(&key, b"Server Key").as_ref().to_vec();
        ScramVerifier { iterations, salt, stored_key, server_key }
    }

    /// Parses PostgreSQL's text form; `None` if `text` is not one.
    pub fn parse(text: &str) -> Option<ScramVerifier> {
        let rest = text.strip_prefix("SCRAM-SHA-256$")?;
        let (params, keys) = rest.split_once('$')?;
        let (iters, salt) = params.split_once(':')?;
        let (stored, server) = keys.split_once(':')?;
        let v = ScramVerifier {
            iterations: iters.parse().ok().filter(|&n| n > 0)?,
            salt: B64.decode(salt).ok()?,
            stored_key: B64.decode(stored).ok()?,
            server_key: B64.decode(server).ok()?,
        };
        (v.stored_key.len() == 32 && v.server_key.len() == 32).then_some(v)
    }

    /// PostgreSQL's text form.
    pub fn to_text(&self) -> String {
        format!(
            "SCRAM-SHA-256${}:{}${}:{}",
            self.iterations,
            B64.encode(&self.salt),
            B64.encode(&self.stored_key),
            B64.encode(&self.server_key)
        )
    }
}

/// What CREATE/ALTER ROLE options ask for.
#[derive(Default)]
struct Options {
    superuser: Option<bool>,
    login: Option<bool>,
    /// `Some(None)`: PASSWORD NULL.
    password: Option<Option<String>>,
}

fn password(p: &ast::Password) -> Result<Option<String>> {
    match p {
        ast::Password::NullPassword => Ok(None),
        ast::Password::Password(ast::Expr::Value(v)) => match &v.value {
            ast::Value::SingleQuotedString(s) => {
                let verifier = match ScramVerifier::parse(s) {
                    Some(v) => v,
                    None if s.starts_with("SCRAM-SHA-256$") || s.starts_with("md5") => {
                        return Err(Error::other("22023", "unsupported or malformed password verifier"))
                    }
                    None => ScramVerifier::new(s)?,
                };
                Ok(Some(verifier.to_text()))
            }
            ast::Value::Null => Ok(None),
            other => Err(Error::Syntax(format!("a password must be a string literal, not {other}"))),
        },
        ast::Password::Password(other) => {
            Err(Error::Syntax(format!("a password must be a string literal, not {other}")))
        }
    }
}

fn apply(o: &mut Options, opt: &ast::RoleOption) -> Result<()> {
    match opt {
        ast::RoleOption::SuperUser(b) => o.superuser = Some(*b),
        ast::RoleOption::Login(b) => o.login = Some(*b),
        ast::RoleOption::Password(p) => o.password = Some(password(p)?),
        // Accepted and not enforced: Centum has one privilege level.
        ast::RoleOption::CreateDB(_)
        | ast::RoleOption::CreateRole(_)
        | ast::RoleOption::Inherit(_)
        | ast::RoleOption::Replication(_)
        | ast::RoleOption::BypassRLS(_)
        | ast::RoleOption::ConnectionLimit(_) => {}
        ast::RoleOption::ValidUntil(_) => return Err(Error::unsupported("VALID UNTIL")),
    }
    Ok(())
}

/// CREATE ROLE.
pub(crate) fn create_role(catalog: &Catalog, cr: &ast::CreateRole) -> Result<String> {
    let mut o = Options::default();
    let flags = [
        (cr.superuser.map(ast::RoleOption::SuperUser)),
        (cr.login.map(ast::RoleOption::Login)),
        (cr.password.clone().map(ast::RoleOption::Password)),
    ];
    for f in flags.iter().flatten() {
        apply(&mut o, f)?;
    }
    if cr.valid_until.is_some() {
        return Err(Error::unsupported("VALID UNTIL"));
    }
    for n in &cr.names {
        let name = crate::names::object_parts(n)?.join(".");
        let role = Role {
            name: name.clone(),
            superuser: o.superuser.unwrap_or(false),
            login: o.login.unwrap_or(false),
            verifier: o.password.clone().flatten(),
        };
        match catalog.create_role(role) {
            Err(Error::Duplicate { .. }) if cr.if_not_exists => {}
            r => r?,
        }
    }
    Ok("CREATE ROLE".into())
}

/// ALTER ROLE name [WITH] options / RENAME TO.
pub(crate) fn alter_role(
    catalog: &Catalog,
    name: &ast::Ident,
    op: &ast::AlterRoleOperation,
) -> Result<String> {
    let name = crate::names::ident(name);
    match op {
        ast::AlterRoleOperation::WithOptions { options } => {
            let mut o = Options::default();
            for opt in options {
                apply(&mut o, opt)?;
            }
            catalog.alter_role(&name, |r| {
                if let Some(s) = o.superuser {
                    r.superuser = s;
                }
                if let Some(l) = o.login {
                    r.login = l;
                }
                if let Some(p) = o.password.clone() {
                    r.verifier = p;
                }
                Ok(())
            })?;
        }
        ast::AlterRoleOperation::RenameRole { role_name } => {
            let to = crate::names::ident(role_name);
            if catalog.role(&to).is_some() {
                return Err(Error::Duplicate {
                    code: "42710",
                    message: format!("role \"{to}\" already exists"),
                });
            }
            catalog.alter_role(&name, |r| {
                r.name = to.clone();
                // PostgreSQL clears an MD5 password on rename; a SCRAM
                // verifier does not depend on the name, so it stays.
                Ok(())
            })?;
        }
        ast::AlterRoleOperation::Set { .. } | ast::AlterRoleOperation::Reset { .. } => {
            return Err(Error::unsupported("ALTER ROLE ... SET"))
        }
        other => return Err(Error::unsupported(format!("ALTER ROLE {other}"))),
    }
    Ok("ALTER ROLE".into())
}

/// DROP ROLE [IF EXISTS] names. `current` is the session's role, which
/// cannot drop itself.
pub(crate) fn drop_roles(
    catalog: &Catalog,
    names: &[ast::ObjectName],
    if_exists: bool,
    current: &str,
) -> Result<(String, Vec<String>)> {
    let mut notices = Vec::new();
    for n in names {
        let name = crate::names::object_parts(n)?.join(".");
        if name == current {
            return Err(Error::other("55006", "current user cannot be dropped"));
        }
        if let Some(what) = catalog.role_dependent(&name) {
            return Err(Error::Raised {
                code: "2BP01",
                message: format!("role \"{name}\" cannot be dropped because some objects depend on it"),
                detail: Some(what),
                hint: None,
            });
        }
        if !catalog.drop_role(&name)? {
            if !if_exists {
                return Err(Error::UndefinedObject(format!("role \"{name}\" does not exist")));
            }
            notices.push(format!("role \"{name}\" does not exist, skipping"));
        }
    }
    Ok(("DROP ROLE".into(), notices))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn verifier_matches_an_independent_computation() {
        // RFC 7677's example salt and password; the StoredKey was computed
        // independently with Python's hashlib.pbkdf2_hmac and hmac.
        let salt = B64.decode("W22ZaJ0SNY7soEsUEjb6gQ==").unwrap();
        let v = ScramVerifier::with_salt("pencil", salt, 4096);
        let text = v.to_text();
        assert_eq!(ScramVerifier::parse(&text).unwrap(), v);
        assert!(text.starts_with("SCRAM-SHA-256$4096:W22ZaJ0SNY7soEsUEjb6gQ==$"));
        assert_eq!(B64.encode(&v.stored_key), "WG5d8oPm3OtcPnkdi4Uo7BkeZkBFzpcXkuLmtbsT4qY=");
    }

    #[test]
    fn malformed_verifiers_are_not_parsed() {
        for t in
            ["", "SCRAM-SHA-256$", "SCRAM-SHA-256$0:AA==$AA==:AA==", "md5abc", "SCRAM-SHA-256$4096:%%$a:b"]
        {
            assert!(ScramVerifier::parse(t).is_none(), "{t}");
        }
    }
}
