//! No password reaches a log line: the client and the embedded server log at TRACE into a
//! buffer while SASL/PLAIN logins (right and wrong password, over plain TCP and TLS) run, their
//! configurations are logged with `{:?}`, and the buffer is then searched for the passwords.

use std::collections::BTreeMap;
use std::io::Write;
use std::sync::{Arc, Mutex};

use riverlet::blocking::Connection;
use riverlet::client::ClientConfig;
use riverlet_server::{LocalServer, ServerConfig};

#[derive(Clone, Default)]
struct Buffer(Arc<Mutex<Vec<u8>>>);

impl Write for Buffer {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

const SERVER_PASSWORD: &str = "srv-pw-7f3a";
const WRONG_PASSWORD: &str = "wrong-pw-91c2";

fn login(bootstrap: &str, password: &str) -> riverlet::Result<Vec<String>> {
    let props = BTreeMap::from([
        ("bootstrap.servers".to_string(), bootstrap.to_string()),
        ("client.security.protocol".to_string(), "SASL".to_string()),
        (
            "client.security.sasl.username".to_string(),
            "alice".to_string(),
        ),
        (
            "client.security.sasl.password".to_string(),
            password.to_string(),
        ),
    ]);
    let mut config = ClientConfig::from_properties(&props)?;
    config.retries = 0;
    tracing::debug!("client configuration: {config:?}");
    let conn = Connection::connect(config)?;
    let dbs = conn.admin().list_databases();
    let _ = conn.close();
    dbs
}

#[test]
fn passwords_never_reach_the_logs() {
    let buffer = Buffer::default();
    let writer = buffer.clone();
    tracing_subscriber::fmt()
        .with_max_level(tracing::Level::TRACE)
        .with_ansi(false)
        .with_writer(move || writer.clone())
        .init();

    let data = tempfile::tempdir().unwrap();
    let config = ServerConfig::new(data.path())
        .with_port(0)
        .with_sasl_user("alice", SERVER_PASSWORD);
    tracing::debug!("server configuration: {config:?}");
    let server = LocalServer::start(config).unwrap();
    let bootstrap = server.bootstrap_servers();

    login(&bootstrap, SERVER_PASSWORD).unwrap();
    let e = login(&bootstrap, WRONG_PASSWORD).unwrap_err();
    assert!(!e.to_string().contains(WRONG_PASSWORD), "{e}");
    // a JAAS line carries the password too
    let jaas = BTreeMap::from([
        ("bootstrap.servers".to_string(), bootstrap.clone()),
        ("client.security.protocol".to_string(), "SASL".to_string()),
        (
            "client.security.sasl.jaas.config".to_string(),
            format!(
                "org.apache.fluss.security.auth.sasl.plain.PlainLoginModule required \
                 username=\"alice\" password=\"{SERVER_PASSWORD}\";"
            ),
        ),
    ]);
    let jaas_config = ClientConfig::from_properties(&jaas).unwrap();
    tracing::debug!("jaas configuration: {jaas_config:?}");
    Connection::connect(jaas_config)
        .unwrap()
        .admin()
        .list_databases()
        .unwrap();
    drop(server);

    let logs = String::from_utf8_lossy(&buffer.0.lock().unwrap()).into_owned();
    // The capture worked: the configurations and the connections were logged.
    assert!(
        logs.contains("server configuration"),
        "nothing was captured"
    );
    assert!(logs.contains("client configuration"));
    assert!(
        logs.contains("alice"),
        "the user name is expected in the logs"
    );
    for secret in [SERVER_PASSWORD, WRONG_PASSWORD] {
        assert!(
            !logs.contains(secret),
            "a password was logged:\n{}",
            logs.lines()
                .filter(|l| l.contains(secret))
                .collect::<Vec<_>>()
                .join("\n")
        );
    }
}
