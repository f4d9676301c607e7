//! Real object stores for the storage tests, started on 127.0.0.1 by the test: `moto` in
//! server mode (S3) and `azurite` (Azure Blob), installed and cached by
//! `scripts/setup/storage-servers.sh` (run here; instant once installed). Beside them, a
//! TCP proxy in front of a store, for what a real server will not do on demand: it counts
//! the bytes the server sends, drops connections mid-response, refuses a request with 403,
//! or holds one forever.
#![allow(dead_code, clippy::unwrap_used)]

use sha2::{Digest, Sha256};
use std::io::{Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
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
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..");
    let out = Command::new("bash")
        .arg(root.join("scripts/setup/storage-servers.sh"))
        .stderr(Stdio::inherit())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "scripts/setup/storage-servers.sh failed"
    );
    let text = String::from_utf8(out.stdout).unwrap();
    let get = |name: &str| {
        text.lines()
            .find_map(|l| l.strip_prefix(&format!("{name}=")))
            .map(PathBuf::from)
            .unwrap_or_else(|| panic!("no {name} in the setup script's output: {text}"))
    };
    (get("MOTO_SERVER"), get("AZURITE_BLOB"))
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
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

/// moto's S3 server. It accepts any credentials (it does not check signatures).
pub fn moto() -> Server {
    moto_with(&[], &[])
}

/// moto with more arguments (`-s`: TLS, with a certificate it makes at start) and
/// environment (`INITIAL_NO_AUTH_ACTION_COUNT=N`: requests after the first N must be signed
/// with a key moto knows).
pub fn moto_with(args: &[&str], env: &[(&str, &str)]) -> Server {
    let (moto, _) = installed();
    let port = free_port();
    let dir = tempfile::tempdir().unwrap();
    let mut child = Command::new(moto)
        .args(["-H", "127.0.0.1", "-p", &port.to_string()])
        .args(args)
        .envs(env.iter().copied())
        .current_dir(dir.path())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    wait_listening(port, &mut child, "moto_server");
    Server {
        child,
        port,
        _dir: dir,
    }
}

/// Over TLS to a `moto_with(&["-s"], ..)` server: creates `bucket` (open to anonymous reads,
/// as [`create_bucket`] does) and puts `bytes` at `key`. Through the Python of moto's own
/// venv, which has an HTTP client with TLS; the server's certificate is not checked.
pub fn tls_bucket_with(port: u16, bucket: &str, key: &str, bytes: &[u8]) {
    let (moto, _) = installed();
    let python = moto.with_file_name("python");
    let dir = tempfile::tempdir().unwrap();
    let body = dir.path().join("body");
    std::fs::write(&body, bytes).unwrap();
    let policy = format!(
        r#"{{"Version":"2012-10-17","Statement":[{{"Effect":"Allow","Principal":"*","Action":"s3:*","Resource":["arn:aws:s3:::{bucket}","arn:aws:s3:::{bucket}/*"]}}]}}"#
    );
    let script = r#"
import sys, requests, urllib3
urllib3.disable_warnings()
base, bucket, key, body, policy = sys.argv[1:]
for path, data in [(bucket, b""), (bucket + "?policy", policy.encode()),
                   (bucket + "/" + key, open(body, "rb").read())]:
    r = requests.put(f"{base}/{path}", data=data, verify=False, timeout=60)
    assert r.status_code == 200, (path, r.status_code, r.text)
"#;
    let out = Command::new(python)
        .args([
            "-c",
            script,
            &format!("https://127.0.0.1:{port}"),
            bucket,
            key,
        ])
        .arg(&body)
        .arg(policy)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// The environment of an `evalscore` run against S3 at `endpoint`.
pub fn s3_env(endpoint: &str) -> Vec<(&'static str, String)> {
    vec![
        ("AWS_ACCESS_KEY_ID", "testing".into()),
        ("AWS_SECRET_ACCESS_KEY", "s3-secret-never-printed".into()),
        ("AWS_REGION", "us-east-1".into()),
        ("AWS_ENDPOINT_URL", endpoint.into()),
        ("AWS_ALLOW_HTTP", "true".into()),
    ]
}

/// A request to moto without a signature (it does not check them).
fn raw(method: &str, port: u16, path: &str, body: &[u8]) -> (u16, Vec<u8>) {
    let mut s = TcpStream::connect(("127.0.0.1", port)).unwrap();
    write!(
        s,
        "{method} {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    )
    .unwrap();
    s.write_all(body).unwrap();
    let mut out = Vec::new();
    s.read_to_end(&mut out).unwrap();
    let head_end = out.windows(4).position(|w| w == b"\r\n\r\n").unwrap();
    let status: u16 = String::from_utf8_lossy(&out[9..12]).parse().unwrap();
    let head = String::from_utf8_lossy(&out[..head_end]).to_ascii_lowercase();
    let body = out[head_end + 4..].to_vec();
    // moto answers with Content-Length; chunked replies are not expected from it.
    assert!(!head.contains("transfer-encoding: chunked"), "{head}");
    (status, body)
}

/// Creates a bucket whose policy lets anyone do anything: the tests' own unsigned requests
/// (moto refuses unsigned reads of private objects) and the anonymous `http://` input.
pub fn create_bucket(port: u16, bucket: &str) {
    let (status, body) = raw("PUT", port, &format!("/{bucket}"), b"");
    assert_eq!(status, 200, "{}", String::from_utf8_lossy(&body));
    let policy = format!(
        r#"{{"Version":"2012-10-17","Statement":[{{"Effect":"Allow","Principal":"*","Action":"s3:*","Resource":["arn:aws:s3:::{bucket}","arn:aws:s3:::{bucket}/*"]}}]}}"#
    );
    let (status, body) = raw("PUT", port, &format!("/{bucket}?policy"), policy.as_bytes());
    assert_eq!(status, 200, "{}", String::from_utf8_lossy(&body));
}

pub fn put_object(port: u16, bucket: &str, key: &str, bytes: &[u8]) {
    let (status, body) = raw("PUT", port, &format!("/{bucket}/{key}"), bytes);
    assert_eq!(status, 200, "{}", String::from_utf8_lossy(&body));
}

/// The object's bytes, or `None` when it is not there.
pub fn get_object(port: u16, bucket: &str, key: &str) -> Option<Vec<u8>> {
    let (status, body) = raw("GET", port, &format!("/{bucket}/{key}"), b"");
    match status {
        200 => Some(body),
        404 => None,
        s => panic!("GET {bucket}/{key}: {s} {}", String::from_utf8_lossy(&body)),
    }
}

/// Every key in the bucket under `prefix`, sorted.
pub fn list_keys(port: u16, bucket: &str, prefix: &str) -> Vec<String> {
    let (status, body) = raw("GET", port, &format!("/{bucket}?prefix={prefix}"), b"");
    assert_eq!(status, 200);
    let text = String::from_utf8(body).unwrap();
    let mut keys: Vec<String> = text
        .split("<Key>")
        .skip(1)
        .map(|s| s.split("</Key>").next().unwrap().to_owned())
        .collect();
    keys.sort();
    keys
}

/// The keys of the multipart uploads in the bucket that were begun and neither completed nor
/// aborted (their parts are stored, unseen, until then), sorted.
pub fn open_uploads(port: u16, bucket: &str) -> Vec<String> {
    let (status, body) = raw("GET", port, &format!("/{bucket}?uploads"), b"");
    assert_eq!(status, 200, "{}", String::from_utf8_lossy(&body));
    let text = String::from_utf8(body).unwrap();
    let mut keys: Vec<String> = text
        .split("<Upload>")
        .skip(1)
        .map(|u| {
            u.split("<Key>")
                .nth(1)
                .and_then(|k| k.split("</Key>").next())
                .unwrap()
                .to_owned()
        })
        .collect();
    keys.sort();
    keys
}

// --- Azurite ---

/// Azurite's well-known development account and key.
pub const AZ_ACCOUNT: &str = "devstoreaccount1";
pub const AZ_KEY: &str =
    "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==";

pub fn azurite() -> Server {
    let (_, azurite) = installed();
    let port = free_port();
    let dir = tempfile::tempdir().unwrap();
    let mut child = Command::new(azurite)
        .args([
            "--blobHost",
            "127.0.0.1",
            "--blobPort",
            &port.to_string(),
            "--location",
        ])
        .arg(dir.path())
        .args(["--skipApiVersionCheck", "--silent"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    wait_listening(port, &mut child, "azurite-blob");
    Server {
        child,
        port,
        _dir: dir,
    }
}

/// The environment of an `evalscore` run against azurite at `endpoint`.
pub fn az_env(endpoint: &str) -> Vec<(&'static str, String)> {
    vec![
        ("AZURE_STORAGE_USE_EMULATOR", "true".into()),
        ("AZURITE_BLOB_STORAGE_URL", endpoint.into()),
        ("AZURE_STORAGE_ACCOUNT_NAME", AZ_ACCOUNT.into()),
        ("AZURE_STORAGE_ACCOUNT_KEY", AZ_KEY.into()),
    ]
}

fn hmac_sha256(key: &[u8], msg: &[u8]) -> [u8; 32] {
    let mut k = [0u8; 64];
    k[..key.len()].copy_from_slice(key);
    let inner: Vec<u8> = k
        .iter()
        .map(|b| b ^ 0x36)
        .chain(msg.iter().copied())
        .collect();
    let ih = Sha256::digest(&inner);
    let outer: Vec<u8> = k
        .iter()
        .map(|b| b ^ 0x5c)
        .chain(ih.iter().copied())
        .collect();
    Sha256::digest(&outer).into()
}

const B64: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

fn b64_decode(s: &str) -> Vec<u8> {
    let mut out = Vec::new();
    let mut acc = 0u32;
    let mut bits = 0;
    for c in s.bytes().filter(|&c| c != b'=') {
        let v = B64.iter().position(|&b| b == c).unwrap() as u32;
        acc = (acc << 6) | v;
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((acc >> bits) as u8);
            acc &= (1 << bits) - 1;
        }
    }
    out
}

fn b64_encode(bytes: &[u8]) -> String {
    let mut out = String::new();
    for chunk in bytes.chunks(3) {
        let n = chunk.len();
        let v = (u32::from(chunk[0]) << 16)
            | (u32::from(*chunk.get(1).unwrap_or(&0)) << 8)
            | u32::from(*chunk.get(2).unwrap_or(&0));
        for i in 0..4 {
            if i <= n {
                out.push(B64[((v >> (18 - 6 * i)) & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

/// Creates a blob container in azurite: a Shared Key-signed `PUT ?restype=container`
/// (azurite checks signatures, and object_store has no call to create containers).
pub fn create_container(port: u16, container: &str) {
    let date = httpdate_now();
    let version = "2021-08-06";
    let to_sign = format!(
        "PUT\n\n\n\n\n\n\n\n\n\n\n\nx-ms-date:{date}\nx-ms-version:{version}\n/{AZ_ACCOUNT}/{AZ_ACCOUNT}/{container}\nrestype:container"
    );
    let sig = b64_encode(&hmac_sha256(&b64_decode(AZ_KEY), to_sign.as_bytes()));
    let mut s = TcpStream::connect(("127.0.0.1", port)).unwrap();
    write!(
        s,
        "PUT /{AZ_ACCOUNT}/{container}?restype=container HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nx-ms-date: {date}\r\nx-ms-version: {version}\r\nAuthorization: SharedKey {AZ_ACCOUNT}:{sig}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    let mut out = Vec::new();
    s.read_to_end(&mut out).unwrap();
    let text = String::from_utf8_lossy(&out);
    assert!(text.starts_with("HTTP/1.1 201"), "{text}");
}

/// The current time as an HTTP date (RFC 7231), without a date crate.
fn httpdate_now() -> String {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs() as i64;
    let days = secs.div_euclid(86_400);
    let rem = secs.rem_euclid(86_400);
    let (h, m, s) = (rem / 3600, rem % 3600 / 60, rem % 60);
    // Civil date from days since the epoch (Howard Hinnant's algorithm).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    let wd = ["Thu", "Fri", "Sat", "Sun", "Mon", "Tue", "Wed"][days.rem_euclid(7) as usize];
    let mon = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ][(month - 1) as usize];
    format!("{wd}, {d:02} {mon} {year} {h:02}:{m:02}:{s:02} GMT")
}

// --- The proxy ---

/// What the proxy does besides forwarding.
#[derive(Default)]
pub struct Rules {
    /// Connections still to cut: each is closed after it has sent this many response bytes.
    pub drop: Option<(u32, u64)>,
    /// A request whose line contains this is answered `403 Forbidden` and not forwarded.
    pub forbid: Option<String>,
    /// A request whose line contains this is never forwarded nor answered.
    pub hold: Option<String>,
}

pub struct Proxy {
    pub port: u16,
    /// Bytes the server sent through the proxy.
    pub sent: Arc<AtomicU64>,
    pub rules: Arc<Mutex<Rules>>,
    /// Set when a request matched `hold`.
    pub held: Arc<AtomicBool>,
    /// Request lines seen, in order.
    pub requests: Arc<Mutex<Vec<String>>>,
    /// The same requests' heads (request line and headers), in order.
    pub heads: Arc<Mutex<Vec<String>>>,
}

impl Proxy {
    pub fn endpoint(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }
}

/// A proxy on a free port in front of 127.0.0.1:`upstream`.
pub fn proxy(upstream: u16) -> Proxy {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let p = Proxy {
        port,
        sent: Arc::default(),
        rules: Arc::default(),
        held: Arc::default(),
        requests: Arc::default(),
        heads: Arc::default(),
    };
    let (sent, rules, held, requests, heads) = (
        Arc::clone(&p.sent),
        Arc::clone(&p.rules),
        Arc::clone(&p.held),
        Arc::clone(&p.requests),
        Arc::clone(&p.heads),
    );
    std::thread::spawn(move || {
        for client in listener.incoming().flatten() {
            let Ok(server) = TcpStream::connect(("127.0.0.1", upstream)) else {
                continue;
            };
            let cut_after = {
                let mut r = rules.lock().unwrap();
                match &mut r.drop {
                    Some((n, after)) if *n > 0 => {
                        *n -= 1;
                        Some(*after)
                    }
                    _ => None,
                }
            };
            let (c2, s2) = (client.try_clone().unwrap(), server.try_clone().unwrap());
            let (rules, held, requests, heads) = (
                Arc::clone(&rules),
                Arc::clone(&held),
                Arc::clone(&requests),
                Arc::clone(&heads),
            );
            // Client to server, watching request lines.
            std::thread::spawn(move || {
                let (mut client, mut server) = (client, server);
                let mut buf = vec![0u8; 64 << 10];
                loop {
                    let n = match client.read(&mut buf) {
                        Ok(0) | Err(_) => break,
                        Ok(n) => n,
                    };
                    let head_end = buf[..n]
                        .windows(4)
                        .position(|w| w == b"\r\n\r\n")
                        .unwrap_or(n.min(512));
                    let text = String::from_utf8_lossy(&buf[..head_end]).into_owned();
                    let line = text.lines().next().unwrap_or("").to_owned();
                    let is_request = ["GET ", "PUT ", "POST ", "HEAD ", "DELETE "]
                        .iter()
                        .any(|m| line.starts_with(m));
                    if is_request {
                        requests.lock().unwrap().push(line.clone());
                        heads.lock().unwrap().push(text);
                        let r = rules.lock().unwrap();
                        if r.hold.as_ref().is_some_and(|h| line.contains(h.as_str())) {
                            held.store(true, Ordering::SeqCst);
                            drop(r);
                            std::thread::sleep(Duration::from_secs(3600));
                            return;
                        }
                        if r.forbid.as_ref().is_some_and(|f| line.contains(f.as_str())) {
                            let body = "<Error><Code>AccessDenied</Code><Message>refused by the test proxy</Message></Error>";
                            let _ = client.write_all(
                                format!(
                                    "HTTP/1.1 403 Forbidden\r\nContent-Type: application/xml\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                                    body.len()
                                )
                                .as_bytes(),
                            );
                            let _ = client.shutdown(Shutdown::Both);
                            let _ = server.shutdown(Shutdown::Both);
                            return;
                        }
                    }
                    if server.write_all(&buf[..n]).is_err() {
                        break;
                    }
                }
                let _ = server.shutdown(Shutdown::Write);
            });
            // Server to client, counting, and cutting when told.
            let sent = Arc::clone(&sent);
            std::thread::spawn(move || {
                let (mut server, mut client) = (s2, c2);
                let mut buf = vec![0u8; 64 << 10];
                let mut total = 0u64;
                loop {
                    let n = match server.read(&mut buf) {
                        Ok(0) | Err(_) => break,
                        Ok(n) => n,
                    };
                    let mut n = n as u64;
                    if let Some(after) = cut_after {
                        if total + n >= after {
                            n = after.saturating_sub(total);
                            let _ = client.write_all(&buf[..n as usize]);
                            sent.fetch_add(n, Ordering::SeqCst);
                            let _ = client.shutdown(Shutdown::Both);
                            let _ = server.shutdown(Shutdown::Both);
                            return;
                        }
                    }
                    if client.write_all(&buf[..n as usize]).is_err() {
                        break;
                    }
                    total += n;
                    sent.fetch_add(n, Ordering::SeqCst);
                }
                let _ = client.shutdown(Shutdown::Write);
            });
        }
    });
    p
}
