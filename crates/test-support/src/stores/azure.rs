//! Azurite's Blob service, and the one call the tests make on it directly (a container).

use super::{free_port, installed, wait_listening, Server};
use sha2::{Digest, Sha256};
use std::io::{Read, Write};
use std::net::TcpStream;
use std::process::{Command, Stdio};

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
