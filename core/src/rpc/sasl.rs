//! SASL/PLAIN (RFC 4616) tokens, as sent in `AuthenticateRequest.token`.
//!
//! The token is `[authzid] NUL authcid NUL passwd` in UTF-8. A Fluss (Java) client sends no
//! authorization id, so its token is `\0user\0pass`. The parser follows the Fluss server's
//! rules: exactly three NUL-separated parts, non-empty user name and password, and an
//! authorization id that is either empty or equal to the user name.

use crate::{Error, ErrorKind, Result};

/// The mechanism name sent in `AuthenticateRequest.protocol`.
pub const PLAIN_MECHANISM: &str = "PLAIN";

/// The parts of a PLAIN token.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlainCredentials {
    /// Authorization id; empty when the client sent none.
    pub authzid: String,
    /// User name (the authentication id).
    pub username: String,
    /// Password.
    pub password: String,
}

fn auth_error(message: impl Into<String>) -> Error {
    Error::new(ErrorKind::Authentication, message)
}

fn check_part(what: &str, value: &str) -> Result<()> {
    if value.contains('\0') {
        return Err(Error::invalid(format!(
            "SASL/PLAIN {what} must not contain a NUL character"
        )));
    }
    Ok(())
}

/// The token a client sends for `username`/`password` without an authorization id.
pub fn encode_plain_token(username: &str, password: &str) -> Result<Vec<u8>> {
    encode_plain_token_with_authzid("", username, password)
}

/// The token for `username`/`password` with an explicit authorization id (may be empty).
pub fn encode_plain_token_with_authzid(
    authzid: &str,
    username: &str,
    password: &str,
) -> Result<Vec<u8>> {
    check_part("authorization id", authzid)?;
    check_part("username", username)?;
    check_part("password", password)?;
    if username.is_empty() {
        return Err(Error::invalid("SASL/PLAIN username must not be empty"));
    }
    if password.is_empty() {
        return Err(Error::invalid("SASL/PLAIN password must not be empty"));
    }
    let mut token = Vec::with_capacity(authzid.len() + username.len() + password.len() + 2);
    token.extend_from_slice(authzid.as_bytes());
    token.push(0);
    token.extend_from_slice(username.as_bytes());
    token.push(0);
    token.extend_from_slice(password.as_bytes());
    Ok(token)
}

/// Parses a token the way a Fluss server does; errors are [`ErrorKind::Authentication`] with
/// Fluss's wording.
pub fn parse_plain_token(token: &[u8]) -> Result<PlainCredentials> {
    let text = std::str::from_utf8(token)
        .map_err(|_| auth_error("Invalid SASL/PLAIN response: not valid UTF-8"))?;
    let parts: Vec<&str> = text.splitn(4, '\0').collect();
    if parts.len() != 3 {
        return Err(auth_error(format!(
            "Invalid SASL/PLAIN response: expected 3 tokens, got {}",
            parts.len()
        )));
    }
    let (authzid, username, password) = (parts[0], parts[1], parts[2]);
    if username.is_empty() {
        return Err(auth_error("Authentication failed: username not specified"));
    }
    if password.is_empty() {
        return Err(auth_error("Authentication failed: password not specified"));
    }
    if !authzid.is_empty() && authzid != username {
        return Err(auth_error(
            "Authentication failed: Client requested an authorization id that is different from username",
        ));
    }
    Ok(PlainCredentials {
        authzid: authzid.to_string(),
        username: username.to_string(),
        password: password.to_string(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn encode_matches_rfc4616_layout() {
        assert_eq!(encode_plain_token("admin", "pw").unwrap(), b"\0admin\0pw");
        assert_eq!(
            encode_plain_token_with_authzid("bob", "bob", "x").unwrap(),
            b"bob\0bob\0x"
        );
        assert!(encode_plain_token("", "pw").is_err());
        assert!(encode_plain_token("a", "").is_err());
        assert!(encode_plain_token("a\0b", "pw").is_err());
        assert!(encode_plain_token("a", "p\0w").is_err());
    }

    #[test]
    fn parse_round_trip_and_rejections() {
        let c = parse_plain_token(&encode_plain_token("admin", "pä ss").unwrap()).unwrap();
        assert_eq!(
            c,
            PlainCredentials {
                authzid: String::new(),
                username: "admin".into(),
                password: "pä ss".into()
            }
        );
        let c = parse_plain_token(b"admin\0admin\0pw").unwrap();
        assert_eq!(c.authzid, "admin");

        let err = |t: &[u8]| parse_plain_token(t).unwrap_err();
        assert_eq!(err(b"nonul").kind(), ErrorKind::Authentication);
        assert!(err(b"nonul").message().contains("expected 3 tokens, got 1"));
        assert!(err(b"\0a\0b\0c")
            .message()
            .contains("expected 3 tokens, got 4"));
        assert!(err(b"\0\0pw").message().contains("username not specified"));
        assert!(err(b"\0u\0").message().contains("password not specified"));
        assert!(err(b"other\0u\0pw").message().contains("authorization id"));
        assert!(err(&[0, 0xff, 0, b'p']).message().contains("UTF-8"));
    }

    proptest! {
        #[test]
        fn parse_never_panics(data in proptest::collection::vec(any::<u8>(), 0..40)) {
            let _ = parse_plain_token(&data);
        }

        #[test]
        fn round_trip(user in "[^\u{0}]{1,12}", pass in "[^\u{0}]{1,12}") {
            let token = encode_plain_token(&user, &pass).unwrap();
            let c = parse_plain_token(&token).unwrap();
            prop_assert_eq!(c.username, user);
            prop_assert_eq!(c.password, pass);
        }
    }
}
