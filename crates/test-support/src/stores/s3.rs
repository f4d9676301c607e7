//! moto's S3 server, and what the tests do on it directly: buckets, objects, listings.

use super::{free_port, installed, wait_listening, Server};
use std::io::{Read, Write};
use std::net::TcpStream;
use std::process::{Command, Stdio};

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
