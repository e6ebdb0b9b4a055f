//! What every log subscriber Riverlet installs must keep out: the log targets of dependencies
//! that write secrets, as filter directives (`target=level`) to add after the user's own.
//!
//! reqsign-core 3.3 (the request signer under the paimon crate's S3 storage) logs its static
//! credential provider, secret key included, at DEBUG through the `log` crate (target
//! `reqsign_core::api`), so `RIVERLET_LOG=debug` would print a Paimon warehouse's S3 secret.
//! The binaries (`riverlet`, `riverlet-server`, `riverlet sql`/`flight`) add
//! [`SECRET_SAFE_DIRECTIVES`] to their filters; an application embedding the library with its
//! own subscriber should do the same.

/// Filter directives capping the targets that log secrets at INFO (added after the user's
/// filter, they win over a broader `debug` or `trace`).
pub const SECRET_SAFE_DIRECTIVES: &[&str] = &["reqsign_core=info"];
