//! TLS around a connection: the client trusts the CA certificates of a PEM file and checks the
//! server's name; the server presents a PEM certificate chain and key. Through rustls (ring).
//!
//! Apache Fluss has no TLS option of its own: this wraps Fluss's protocol in standard TLS, so
//! the bytes inside are Fluss's, and both ends must be configured for it.

use std::fmt;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use rustls_pki_types::pem::PemObject;
use rustls_pki_types::{CertificateDer, PrivateKeyDer, ServerName};
use tokio_rustls::rustls;
use tokio_rustls::{TlsAcceptor, TlsConnector};

use crate::{Error, ErrorKind, Result};

fn provider() -> Arc<rustls::crypto::CryptoProvider> {
    // Named explicitly: the process-wide default would be ambiguous if another crate in the
    // program enabled a second provider.
    Arc::new(rustls::crypto::ring::default_provider())
}

/// Installs ring as the process's default rustls provider unless one is installed already:
/// the HTTPS client of remote storage (reqwest built without its own provider) takes the default.
pub fn install_default_crypto() {
    if rustls::crypto::CryptoProvider::get_default().is_none() {
        // Another thread may win the race; its provider is as good.
        let _ = rustls::crypto::ring::default_provider().install_default();
    }
}

fn read_certificates(file: &Path, what: &str) -> Result<Vec<CertificateDer<'static>>> {
    let certs = CertificateDer::pem_file_iter(file)
        .and_then(|it| it.collect::<std::result::Result<Vec<_>, _>>())
        .map_err(|e| Error::invalid(format!("{what} {}: {e}", file.display())))?;
    if certs.is_empty() {
        crate::bail_invalid!("{what} {} holds no PEM certificate", file.display());
    }
    Ok(certs)
}

/// What a client needs for TLS: the CA certificates it trusts and, optionally, the name to
/// verify instead of the host it connects to.
#[derive(Clone)]
pub struct TlsClientConfig {
    ca_file: PathBuf,
    server_name: Option<String>,
    connector: TlsConnector,
}

impl fmt::Debug for TlsClientConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TlsClientConfig")
            .field("ca_file", &self.ca_file)
            .field("server_name", &self.server_name)
            .finish()
    }
}

impl TlsClientConfig {
    /// Trusts the CA certificates in the PEM file `ca_file`; the server's certificate must be
    /// issued for `server_name`, or for the host of each address connected to when `None`.
    pub fn from_ca_file(ca_file: impl AsRef<Path>, server_name: Option<String>) -> Result<Self> {
        let ca_file = ca_file.as_ref().to_path_buf();
        let mut roots = rustls::RootCertStore::empty();
        for cert in read_certificates(&ca_file, "CA file")? {
            roots
                .add(cert)
                .map_err(|e| Error::invalid(format!("CA file {}: {e}", ca_file.display())))?;
        }
        let config = rustls::ClientConfig::builder_with_provider(provider())
            .with_safe_default_protocol_versions()
            .map_err(|e| Error::internal(format!("TLS protocol versions: {e}")))?
            .with_root_certificates(roots)
            .with_no_client_auth();
        Ok(TlsClientConfig {
            ca_file,
            server_name,
            connector: TlsConnector::from(Arc::new(config)),
        })
    }

    /// Wraps a connected stream to `addr` (`host:port`) in TLS, verifying the server.
    pub(crate) async fn connect<S>(
        &self,
        addr: &str,
        stream: S,
    ) -> Result<tokio_rustls::client::TlsStream<S>>
    where
        S: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin,
    {
        let host = match &self.server_name {
            Some(name) => name.clone(),
            None => host_of(addr).to_string(),
        };
        let name = ServerName::try_from(host.clone())
            .map_err(|e| Error::invalid(format!("TLS server name '{host}': {e}")))?;
        self.connector
            .connect(name, stream)
            .await
            .map_err(|e| self.handshake_error(addr, &host, e))
    }

    fn handshake_error(&self, addr: &str, host: &str, e: io::Error) -> Error {
        // A certificate the CA file does not vouch for is a failed authentication of the
        // server (not worth retrying); anything else is the network's.
        let kind = if e.kind() == io::ErrorKind::InvalidData {
            ErrorKind::Authentication
        } else {
            ErrorKind::Network
        };
        Error::new(
            kind,
            format!(
                "TLS handshake with {addr} failed (server name '{host}', CA file {}): {e}",
                self.ca_file.display()
            ),
        )
    }
}

/// The host part of `host:port` (`[v6]:port` gives `v6`).
fn host_of(addr: &str) -> &str {
    let host = addr.rsplit_once(':').map(|(h, _)| h).unwrap_or(addr);
    host.trim_start_matches('[').trim_end_matches(']')
}

/// What a server needs for TLS: its certificate chain and private key.
#[derive(Clone)]
pub struct TlsServerConfig {
    cert_file: PathBuf,
    acceptor: TlsAcceptor,
}

impl fmt::Debug for TlsServerConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TlsServerConfig")
            .field("cert_file", &self.cert_file)
            .finish()
    }
}

impl TlsServerConfig {
    /// Presents the certificate chain of the PEM file `cert_file` (server certificate first)
    /// with the private key of the PEM file `key_file` (PKCS#8, PKCS#1 or SEC1).
    pub fn from_pem_files(cert_file: impl AsRef<Path>, key_file: impl AsRef<Path>) -> Result<Self> {
        let cert_file = cert_file.as_ref().to_path_buf();
        let key_file = key_file.as_ref();
        let chain = read_certificates(&cert_file, "certificate file")?;
        let key = PrivateKeyDer::from_pem_file(key_file)
            .map_err(|e| Error::invalid(format!("key file {}: {e}", key_file.display())))?;
        let config = rustls::ServerConfig::builder_with_provider(provider())
            .with_safe_default_protocol_versions()
            .map_err(|e| Error::internal(format!("TLS protocol versions: {e}")))?
            .with_no_client_auth()
            .with_single_cert(chain, key)
            .map_err(|e| {
                Error::invalid(format!(
                    "certificate {} and key {} do not make a TLS identity: {e}",
                    cert_file.display(),
                    key_file.display()
                ))
            })?;
        Ok(TlsServerConfig {
            cert_file,
            acceptor: TlsAcceptor::from(Arc::new(config)),
        })
    }

    /// Runs the server side of the handshake on an accepted stream.
    pub async fn accept<S>(&self, stream: S) -> io::Result<tokio_rustls::server::TlsStream<S>>
    where
        S: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin,
    {
        self.acceptor.accept(stream).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn host_of_addresses() {
        assert_eq!(host_of("localhost:9123"), "localhost");
        assert_eq!(host_of("127.0.0.1:1"), "127.0.0.1");
        assert_eq!(host_of("[::1]:9123"), "::1");
    }

    #[test]
    fn a_missing_or_empty_ca_file_is_an_error_naming_it() {
        let e = TlsClientConfig::from_ca_file("/no/such/ca.pem", None).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::InvalidArgument);
        assert!(e.message().contains("/no/such/ca.pem"), "{e}");
        let empty = tempfile::NamedTempFile::new().unwrap();
        let e = TlsClientConfig::from_ca_file(empty.path(), None).unwrap_err();
        assert!(e.message().contains("no PEM certificate"), "{e}");
    }
}
