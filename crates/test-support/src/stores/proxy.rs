//! A TCP proxy in front of a store: it counts the bytes the server sends, drops connections
//! mid-response, refuses a request with 403, or holds one forever.

use std::io::{Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

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
