//! moto's S3 server (`moto_server` from PyPI, `tests/requirements-moto.txt`) on a free port for
//! one test: the S3 endpoint of the tiering and lake tests. Included with
//! `#[path = "common/moto.rs"] mod moto;` by the tests that use it.

use std::time::Duration;

/// A running moto server, killed on drop.
pub struct Moto {
    child: std::process::Child,
    /// `http://127.0.0.1:PORT`.
    pub endpoint: String,
}

impl Drop for Moto {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A free TCP port on 127.0.0.1.
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// `RIVERLET_MOTO_SERVER` (a path) or `moto_server` on the PATH, with extra environment
/// variables; None when neither runs.
pub fn start(env: &[(&str, &str)]) -> Option<Moto> {
    let bin = std::env::var("RIVERLET_MOTO_SERVER").unwrap_or_else(|_| "moto_server".into());
    let port = free_port();
    let child = std::process::Command::new(&bin)
        .args(["-H", "127.0.0.1", "-p", &port.to_string()])
        .envs(env.iter().copied())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .ok()?;
    let mut moto = Moto {
        child,
        endpoint: format!("http://127.0.0.1:{port}"),
    };
    for _ in 0..300 {
        if std::net::TcpStream::connect(("127.0.0.1", port)).is_ok() {
            return Some(moto);
        }
        // a launcher without moto behind it (e.g. a pyenv shim) exits at once
        if let Ok(Some(_)) = moto.child.try_wait() {
            return None;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    panic!("moto_server ({bin}) did not start listening on port {port}");
}
