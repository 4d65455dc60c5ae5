//! Challenge-response authentication (section 6 of `docs/PROTOCOL.md`): the client proves it
//! holds a token without sending it. The worker's WELCOME carries a random nonce; the client
//! answers AUTHENTICATE with an HMAC-SHA256, keyed by the token, over that nonce and the
//! session's parameters, so a response is good for one session only.

use hmac::{Hmac, KeyInit, Mac};
use sha2::Sha256;

/// Length of the worker's nonce in `Welcome.auth_challenge`.
pub const AUTH_NONCE_LEN: usize = 32;
/// Length of the client's response in `Authenticate.response` (an HMAC-SHA256).
pub const AUTH_RESPONSE_LEN: usize = 32;

/// What the response binds: the WELCOME the client answers, and the name it sent in HELLO.
#[derive(Debug, Clone, Copy)]
pub struct AuthContext<'a> {
    /// `Welcome.auth_challenge`.
    pub nonce: &'a [u8],
    /// `Welcome.session_id`.
    pub session_id: u64,
    /// `Hello.client_name`.
    pub client_name: &'a str,
    /// `Welcome.version`.
    pub version: u16,
    /// `Welcome.features`.
    pub features: u64,
}

/// `HMAC-SHA256(token, nonce || session_id || client_name_len || client_name || version ||
/// features)`, integers little-endian (`session_id`, `features`: u64; `client_name_len`:
/// u32; `version`: u16). The name's length prefix keeps two different names from feeding
/// the same bytes.
pub fn auth_response(token: &[u8], cx: &AuthContext<'_>) -> [u8; AUTH_RESPONSE_LEN] {
    // HMAC accepts keys of any length (longer ones are hashed first), so this cannot fail.
    let mut mac = <Hmac<Sha256> as KeyInit>::new_from_slice(token).expect("HMAC takes keys of any length");
    mac.update(cx.nonce);
    mac.update(&cx.session_id.to_le_bytes());
    mac.update(&(cx.client_name.len() as u32).to_le_bytes());
    mac.update(cx.client_name.as_bytes());
    mac.update(&cx.version.to_le_bytes());
    mac.update(&cx.features.to_le_bytes());
    mac.finalize().into_bytes().into()
}

/// Length of [`same_host_proof`].
pub const SAME_HOST_PROOF_LEN: usize = 32;

/// `HMAC-SHA256(machine, "hip-remote same-host" || session_id || nonce)`: what a client
/// shows (`SameHostOffer`) to say it runs on the worker's machine, `machine` being what both
/// read locally (machine id and boot id), `session_id` and `nonce` (empty when the worker
/// asks no authentication) from the WELCOME. Bound to the session, it says nothing about the
/// machine to anyone who is not on it.
pub fn same_host_proof(machine: &[u8], session_id: u64, nonce: &[u8]) -> [u8; SAME_HOST_PROOF_LEN] {
    let mut mac = <Hmac<Sha256> as KeyInit>::new_from_slice(machine).expect("HMAC takes keys of any length");
    mac.update(b"hip-remote same-host");
    mac.update(&session_id.to_le_bytes());
    mac.update(nonce);
    mac.finalize().into_bytes().into()
}

#[cfg(test)]
mod test {
    use super::*;

    const CX: AuthContext<'static> =
        AuthContext { nonce: &[0x11; AUTH_NONCE_LEN], session_id: 7, client_name: "app pid 1", version: 1, features: 0x1c };

    /// RFC 4231 test case 2, through the same MAC construction: the primitive is HMAC-SHA256.
    #[test]
    fn hmac_is_rfc_4231() {
        let mut mac = <Hmac<Sha256> as KeyInit>::new_from_slice(b"Jefe").unwrap();
        mac.update(b"what do ya want for nothing?");
        let expected = [
            0x5b, 0xdc, 0xc1, 0x46, 0xbf, 0x60, 0x75, 0x4e, 0x6a, 0x04, 0x24, 0x26, 0x08, 0x95, 0x75, 0xc7, 0x5a, 0x00, 0x3f, 0x08, 0x9d, 0x27, 0x39,
            0x83, 0x9d, 0xec, 0x58, 0xb9, 0x64, 0xec, 0x38, 0x43,
        ];
        assert_eq!(<[u8; 32]>::from(mac.finalize().into_bytes()), expected);
    }

    #[test]
    fn every_parameter_changes_the_response() {
        let base = auth_response(b"secret", &CX);
        assert_ne!(base, auth_response(b"secret2", &CX));
        assert_ne!(base, auth_response(b"secret", &AuthContext { nonce: &[0x12; AUTH_NONCE_LEN], ..CX }));
        assert_ne!(base, auth_response(b"secret", &AuthContext { session_id: 8, ..CX }));
        assert_ne!(base, auth_response(b"secret", &AuthContext { client_name: "app pid 2", ..CX }));
        assert_ne!(base, auth_response(b"secret", &AuthContext { version: 2, ..CX }));
        assert_ne!(base, auth_response(b"secret", &AuthContext { features: 0x0c, ..CX }));
        assert_eq!(base, auth_response(b"secret", &CX));
    }
}
