//! Real object stores for the storage tests, started on 127.0.0.1 by the test: `moto` in
//! server mode (S3, [`s3`]) and `azurite` (Azure Blob, [`azure`]), installed and cached by
//! `scripts/setup/storage-servers.sh` (run here; instant once installed). Beside them, a
//! TCP proxy in front of a store ([`proxy`]), for what a real server will not do on demand:
//! it counts the bytes the server sends, drops connections mid-response, refuses a request
//! with 403, or holds one forever.

pub mod azure;
pub mod proxy;
pub mod s3;

pub use azure::*;
pub use proxy::*;
pub use s3::*;

use std::net::{TcpListener, TcpStream};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// A running server; killed when dropped.
pub struct Server {
    child: Child,
    pub port: u16,
    _dir: tempfile::TempDir,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Runs the setup script and returns (moto_server, azurite-blob).
fn installed() -> (PathBuf, PathBuf) {
    let [moto, azurite] =
        crate::setup::installed("storage-servers.sh", ["MOTO_SERVER", "AZURITE_BLOB"]);
    (moto, azurite)
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// Starts `cmd` (its output dropped) as the server `what` on `port`, once it listens there;
/// `dir` is its data folder, removed with it.
fn start(mut cmd: Command, port: u16, dir: tempfile::TempDir, what: &str) -> Server {
    let mut child = cmd
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    wait_listening(port, &mut child, what);
    Server {
        child,
        port,
        _dir: dir,
    }
}

fn wait_listening(port: u16, child: &mut Child, what: &str) {
    let started = Instant::now();
    while TcpStream::connect(("127.0.0.1", port)).is_err() {
        if let Ok(Some(status)) = child.try_wait() {
            panic!("{what} exited at start: {status}");
        }
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "{what} did not listen on port {port} within 60 s"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}
