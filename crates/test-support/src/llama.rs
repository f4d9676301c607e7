//! Starts llama.cpp's `llama-server` with SmolLM2-135M on 127.0.0.1 for a test: built and
//! cached by `scripts/setup/llama-server.sh` (run here; instant once cached).

use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::{Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

/// One server at a time in a test binary, as when each test file was a binary of its own:
/// the other tests of the binary keep running beside it and need the other core.
static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

/// The running server; killed when dropped, which lets the next test start its own.
pub struct Server {
    child: Child,
    _turn: MutexGuard<'static, ()>,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Runs the setup script and returns (server binary, model file).
pub fn installed() -> (PathBuf, PathBuf) {
    let [server, model] =
        crate::setup::installed("llama-server.sh", ["LLAMA_SERVER", "LLAMA_MODEL"]);
    (server, model)
}

pub fn start() -> (Server, String) {
    start_with(&[])
}

/// [`start`] with more server arguments (`--embeddings`, ...).
pub fn start_with(extra: &[&str]) -> (Server, String) {
    // A test that failed while holding the turn has already given its server back.
    let turn = ONE_AT_A_TIME.lock().unwrap_or_else(PoisonError::into_inner);
    let (server, model) = installed();
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let child = Command::new(server)
        .args(["-m"])
        .arg(model)
        .args([
            "--host",
            "127.0.0.1",
            "--port",
            &port.to_string(),
            "-c",
            "2048",
            // One thread: llama.cpp's threads wait for each other at every step of a token, so
            // when another test (or program) takes a core, a second thread stalls the first
            // and a request takes many times longer (past the judge's timeout). One thread
            // alone never waits for another.
            "-t",
            "1",
        ])
        .args(extra)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let server = Server { child, _turn: turn };
    let base = format!("http://127.0.0.1:{port}");
    let started = Instant::now();
    loop {
        if healthy(port) {
            break;
        }
        assert!(
            started.elapsed() < Duration::from_secs(120),
            "llama-server did not start"
        );
        std::thread::sleep(Duration::from_millis(200));
    }
    (server, format!("{base}/v1"))
}

/// Whether `GET /health` answers 200 (the model is loaded); plain HTTP/1.0 over a socket, so
/// the tests need no HTTP client of their own.
fn healthy(port: u16) -> bool {
    use std::io::{Read, Write};
    let Ok(mut s) = std::net::TcpStream::connect(("127.0.0.1", port)) else {
        return false;
    };
    let _ = s.set_read_timeout(Some(Duration::from_secs(5)));
    if s.write_all(b"GET /health HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n")
        .is_err()
    {
        return false;
    }
    let mut head = [0u8; 12];
    s.read_exact(&mut head).is_ok() && head.ends_with(b" 200")
}
