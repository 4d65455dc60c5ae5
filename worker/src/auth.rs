//! The worker's side of challenge-response authentication: the tenants' tokens, a nonce per
//! session, and the constant-time check of a client's response
//! ([`proto_core::auth::auth_response`]).
//!
//! Tokens come from `--token` (one, tenant `default`) and `--token-file` (one `tenant:token`
//! per line; blank lines and `#` comments ignored). [`TokenStore::reload`] re-reads the file
//! (the worker calls it on SIGHUP): a tenant removed from it is refused at its next HELLO,
//! while sessions it already opened run on until they end.

use proto_core::auth::{auth_response, AuthContext, AUTH_NONCE_LEN};
use std::path::{Path, PathBuf};
use std::sync::{PoisonError, RwLock};
use subtle::ConstantTimeEq;

/// Tenant name of the token given with `--token` / `HIP_REMOTE_TOKEN`.
pub const DEFAULT_TENANT: &str = "default";

/// One tenant's credential.
#[derive(Clone)]
struct Tenant {
    name: String,
    token: Vec<u8>,
}

/// The tokens a worker accepts, one per tenant.
#[derive(Default)]
pub struct TokenStore {
    /// The token given on the command line (not reloaded).
    fixed: Option<Vec<u8>>,
    /// The token file, re-read by [`reload`](Self::reload).
    file: Option<PathBuf>,
    tenants: RwLock<Vec<Tenant>>,
}

impl std::fmt::Debug for TokenStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Never the tokens themselves.
        f.debug_struct("TokenStore").field("file", &self.file).field("tenants", &self.tenant_names()).finish()
    }
}

impl TokenStore {
    /// A store with `token` (tenant [`DEFAULT_TENANT`]) and the tenants of `file`.
    pub fn new(token: Option<&str>, file: Option<&Path>) -> Result<Self, String> {
        if token.is_some_and(str::is_empty) {
            return Err("the token is empty".into());
        }
        let store = Self { fixed: token.map(|t| t.as_bytes().to_vec()), file: file.map(Path::to_path_buf), tenants: RwLock::default() };
        store.reload()?;
        Ok(store)
    }

    /// Re-reads the token file; on error the tenants stay as they were. Returns how many
    /// tenants there are now.
    pub fn reload(&self) -> Result<usize, String> {
        let mut tenants: Vec<Tenant> = self.fixed.iter().map(|t| Tenant { name: DEFAULT_TENANT.into(), token: t.clone() }).collect();
        if let Some(path) = &self.file {
            let text = std::fs::read_to_string(path).map_err(|e| format!("cannot read token file {}: {e}", path.display()))?;
            tenants.extend(parse_token_file(&text).map_err(|e| format!("{}: {e}", path.display()))?);
        }
        let count = tenants.len();
        *self.tenants.write().unwrap_or_else(PoisonError::into_inner) = tenants;
        Ok(count)
    }

    /// Whether any token is configured (a worker without one needs no authentication).
    pub fn is_empty(&self) -> bool {
        self.tenants.read().unwrap_or_else(PoisonError::into_inner).is_empty()
    }

    /// The tenants' names, for logs.
    pub fn tenant_names(&self) -> Vec<String> {
        self.tenants.read().unwrap_or_else(PoisonError::into_inner).iter().map(|t| t.name.clone()).collect()
    }

    /// The tenant whose token produced `response` for `cx`, if any. Every tenant's expected
    /// response is computed and compared in constant time, with no early exit, so timing
    /// reveals neither which tenant matched nor how much of a response was right.
    pub fn verify(&self, cx: &AuthContext<'_>, response: &[u8]) -> Option<String> {
        let tenants = self.tenants.read().unwrap_or_else(PoisonError::into_inner);
        let mut matched = None;
        for tenant in tenants.iter() {
            let expected = auth_response(&tenant.token, cx);
            if bool::from(expected.as_slice().ct_eq(response)) {
                matched = Some(tenant.name.clone());
            }
        }
        matched
    }
}

/// Parses `tenant:token` lines; blank lines and lines starting with `#` are skipped.
fn parse_token_file(text: &str) -> Result<Vec<Tenant>, String> {
    let mut tenants: Vec<Tenant> = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let Some((name, token)) = line.split_once(':') else {
            return Err(format!("line {}: expected `tenant:token`", i + 1));
        };
        let (name, token) = (name.trim(), token.trim());
        if name.is_empty() || token.is_empty() {
            return Err(format!("line {}: empty tenant or token", i + 1));
        }
        if tenants.iter().any(|t| t.name == name) {
            return Err(format!("line {}: tenant {name} listed twice", i + 1));
        }
        tenants.push(Tenant { name: name.into(), token: token.as_bytes().to_vec() });
    }
    Ok(tenants)
}

/// A fresh random nonce for a WELCOME's challenge.
pub fn new_nonce() -> Result<[u8; AUTH_NONCE_LEN], getrandom::Error> {
    let mut nonce = [0u8; AUTH_NONCE_LEN];
    getrandom::fill(&mut nonce)?;
    Ok(nonce)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn token_file_lines() {
        let tenants = parse_token_file("# tenants\n\nalice: s3cret\nbob:tok:with:colons\n").unwrap();
        let parsed: Vec<_> = tenants.iter().map(|t| (t.name.as_str(), t.token.as_slice())).collect();
        assert_eq!(parsed, [("alice", b"s3cret".as_slice()), ("bob", b"tok:with:colons".as_slice())]);
        assert!(parse_token_file("alice\n").is_err());
        assert!(parse_token_file("alice:\n").is_err());
        assert!(parse_token_file("a:1\na:2\n").is_err());
    }

    #[test]
    fn verify_names_the_tenant_and_reload_revokes() {
        let path = std::env::temp_dir().join(format!("hip-worker-tokens-{}", std::process::id()));
        std::fs::write(&path, "alice:one\nbob:two\n").unwrap();
        let store = TokenStore::new(Some("cli"), Some(&path)).unwrap();
        let cx = AuthContext { nonce: &[7; AUTH_NONCE_LEN], session_id: 3, client_name: "c", version: 1, features: 0 };
        assert_eq!(store.verify(&cx, &auth_response(b"two", &cx)).as_deref(), Some("bob"));
        assert_eq!(store.verify(&cx, &auth_response(b"cli", &cx)).as_deref(), Some(DEFAULT_TENANT));
        assert_eq!(store.verify(&cx, &auth_response(b"three", &cx)), None);
        assert_eq!(store.verify(&cx, &auth_response(b"two", &cx)[..31]), None);
        std::fs::write(&path, "alice:one\n").unwrap();
        assert_eq!(store.reload(), Ok(2));
        assert_eq!(store.verify(&cx, &auth_response(b"two", &cx)), None);
        std::fs::write(&path, "broken line\n").unwrap();
        assert!(store.reload().is_err());
        assert_eq!(store.verify(&cx, &auth_response(b"one", &cx)).as_deref(), Some("alice"), "a bad file keeps the old tenants");
        let _ = std::fs::remove_file(&path);
    }
}
