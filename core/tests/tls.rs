//! TLS between the client and the embedded server, SASL/PLAIN over it, and the failures a user
//! meets: a client without TLS, a CA that did not issue the server's certificate, a wrong name.
//! (Apache Fluss has no TLS listener, so these run against the embedded server only.)

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use riverlet::blocking::Connection;
use riverlet::client::ClientConfig;
use riverlet::metadata::{DataType, Schema, TableDescriptor, TablePath};
use riverlet::row::Datum;
use riverlet::scan::ReadRequest;
use riverlet::ErrorKind;
use riverlet_server::{LocalServer, ServerConfig};

/// A CA and a server certificate it issued for `localhost` and `127.0.0.1`, as PEM files.
struct Pki {
    dir: tempfile::TempDir,
}

impl Pki {
    fn new() -> Pki {
        let dir = tempfile::tempdir().unwrap();
        let ca_key = rcgen::KeyPair::generate().unwrap();
        let mut ca_params = rcgen::CertificateParams::new(Vec::<String>::new()).unwrap();
        ca_params.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
        ca_params
            .distinguished_name
            .push(rcgen::DnType::CommonName, "riverlet test CA");
        let ca = rcgen::CertifiedIssuer::self_signed(ca_params, ca_key).unwrap();
        let key = rcgen::KeyPair::generate().unwrap();
        let params =
            rcgen::CertificateParams::new(vec!["localhost".to_string(), "127.0.0.1".to_string()])
                .unwrap();
        let cert = params.signed_by(&key, &ca).unwrap();
        std::fs::write(dir.path().join("ca.pem"), ca.pem()).unwrap();
        std::fs::write(dir.path().join("server.pem"), cert.pem()).unwrap();
        std::fs::write(dir.path().join("server.key"), key.serialize_pem()).unwrap();
        Pki { dir }
    }

    fn file(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }
}

fn tls_server(pki: &Pki, data: &Path, users: &[(&str, &str)]) -> LocalServer {
    let mut config = ServerConfig::new(data)
        .with_port(0)
        .with_tls(pki.file("server.pem"), pki.file("server.key"))
        .unwrap();
    for (u, p) in users {
        config = config.with_sasl_user(*u, *p);
    }
    LocalServer::start(config).unwrap()
}

fn props(bootstrap: &str, pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
    let mut p = BTreeMap::from([("bootstrap.servers".to_string(), bootstrap.to_string())]);
    for (k, v) in pairs {
        p.insert(k.to_string(), v.to_string());
    }
    p
}

fn connect(p: &BTreeMap<String, String>) -> riverlet::Result<Connection> {
    let mut config = ClientConfig::from_properties(p)?;
    config.retries = 0;
    config.connect_timeout = std::time::Duration::from_secs(5);
    Connection::connect(config)
}

#[test]
fn writes_and_reads_over_tls() {
    let pki = Pki::new();
    let data = tempfile::tempdir().unwrap();
    let server = tls_server(&pki, data.path(), &[]);
    let ca = pki.file("ca.pem");
    let conn = connect(&props(
        &server.bootstrap_servers(),
        &[
            ("client.security.protocol", "SSL"),
            ("client.security.ssl.ca-file", ca.to_str().unwrap()),
        ],
    ))
    .unwrap();
    let admin = conn.admin();
    admin.create_database("secure", false).unwrap();
    let schema = Schema::builder()
        .column("id", DataType::int())
        .build()
        .unwrap();
    let path = TablePath::new("secure", "t");
    admin
        .create_table(
            &path,
            &TableDescriptor::builder(schema).build().unwrap(),
            false,
        )
        .unwrap();
    let table = conn.table(&path).unwrap();
    let writer = table.new_append_writer().unwrap();
    let rows: Vec<Vec<Datum>> = (0..100).map(|i| vec![Datum::Int(i)]).collect();
    writer.append_rows(&rows).unwrap().wait().unwrap();
    writer.flush().unwrap();
    assert_eq!(table.count(&ReadRequest::default()).unwrap(), 100);
    conn.close().unwrap();
}

#[test]
fn sasl_plain_over_tls() {
    let pki = Pki::new();
    let data = tempfile::tempdir().unwrap();
    let server = tls_server(&pki, data.path(), &[("alice", "alice-secret")]);
    let ca = pki.file("ca.pem");
    let good = props(
        &server.bootstrap_servers(),
        &[
            ("client.security.protocol", "SASL_SSL"),
            ("client.security.ssl.ca-file", ca.to_str().unwrap()),
            ("client.security.sasl.username", "alice"),
            ("client.security.sasl.password", "alice-secret"),
        ],
    );
    let conn = connect(&good).unwrap();
    conn.admin().create_database("d", false).unwrap();
    conn.close().unwrap();

    let mut bad = good.clone();
    bad.insert(
        "client.security.sasl.password".into(),
        "not-her-password".into(),
    );
    let e = connect(&bad)
        .and_then(|c| c.admin().list_databases())
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Authentication, "{e}");
    assert!(!e.message().contains("not-her-password"), "{e}");

    // TLS without credentials: requests are refused until the client authenticates.
    let mut anonymous = good.clone();
    anonymous.insert("client.security.protocol".into(), "SSL".into());
    anonymous.remove("client.security.sasl.username");
    anonymous.remove("client.security.sasl.password");
    let e = connect(&anonymous)
        .and_then(|c| c.admin().list_databases())
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Authentication, "{e}");
    assert!(e.message().contains("authentication"), "{e}");
}

#[test]
fn a_certificate_from_another_ca_is_refused() {
    let pki = Pki::new();
    let other = Pki::new();
    let data = tempfile::tempdir().unwrap();
    let server = tls_server(&pki, data.path(), &[]);
    let wrong_ca = other.file("ca.pem");
    let e = connect(&props(
        &server.bootstrap_servers(),
        &[
            ("client.security.protocol", "SSL"),
            ("client.security.ssl.ca-file", wrong_ca.to_str().unwrap()),
        ],
    ))
    .and_then(|c| c.admin().list_databases())
    .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Authentication, "{e}");
    assert!(e.message().contains("TLS handshake"), "{e}");
    assert!(e.message().contains(wrong_ca.to_str().unwrap()), "{e}");
}

#[test]
fn a_name_the_certificate_does_not_hold_is_refused() {
    let pki = Pki::new();
    let data = tempfile::tempdir().unwrap();
    let server = tls_server(&pki, data.path(), &[]);
    let ca = pki.file("ca.pem");
    let e = connect(&props(
        &server.bootstrap_servers(),
        &[
            ("client.security.protocol", "SSL"),
            ("client.security.ssl.ca-file", ca.to_str().unwrap()),
            ("client.security.ssl.server-name", "fluss.example.com"),
        ],
    ))
    .and_then(|c| c.admin().list_databases())
    .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Authentication, "{e}");
    assert!(e.message().contains("fluss.example.com"), "{e}");
}

#[test]
fn a_plaintext_client_against_a_tls_server_fails_instead_of_hanging() {
    let pki = Pki::new();
    let data = tempfile::tempdir().unwrap();
    let server = tls_server(&pki, data.path(), &[]);
    let mut config = ClientConfig::new(server.bootstrap_servers());
    config.retries = 0;
    config.connect_timeout = std::time::Duration::from_secs(2);
    config.request_timeout = std::time::Duration::from_secs(2);
    let e = Connection::connect(config)
        .and_then(|c| c.admin().list_databases())
        .unwrap_err();
    assert!(
        matches!(
            e.kind(),
            ErrorKind::Network | ErrorKind::Timeout | ErrorKind::Corrupt
        ),
        "{e}"
    );
}

#[test]
fn tls_options_are_checked() {
    let e = ClientConfig::from_properties(&props(
        "localhost:9123",
        &[("client.security.protocol", "SSL")],
    ))
    .unwrap_err();
    assert!(e.message().contains("client.security.ssl.ca-file"), "{e}");
    let e = ClientConfig::from_properties(&props(
        "localhost:9123",
        &[("client.security.ssl.ca-file", "/tmp/ca.pem")],
    ))
    .unwrap_err();
    assert!(e.message().contains("SSL or SASL_SSL"), "{e}");
    let e = ClientConfig::from_properties(&props(
        "localhost:9123",
        &[
            ("client.security.protocol", "SSL"),
            ("client.security.ssl.ca-file", "/no/such/ca.pem"),
        ],
    ))
    .unwrap_err();
    assert!(e.message().contains("/no/such/ca.pem"), "{e}");
    let pki = Pki::new();
    let e = ServerConfig::new("/tmp/unused")
        .with_tls(pki.file("server.pem"), pki.file("nope.key"))
        .unwrap_err();
    assert!(e.message().contains("nope.key"), "{e}");
    // a key that does not belong to the certificate
    let e = ServerConfig::new("/tmp/unused")
        .with_tls(pki.file("server.pem"), pki.file("ca.pem"))
        .unwrap_err();
    assert!(e.message().contains("ca.pem"), "{e}");
}
