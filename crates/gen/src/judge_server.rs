//! `evalscore-gen judge-server`: an OpenAI-compatible chat-completions server for the judge
//! benchmark. It answers every request at once (or after `--delay-ms`) with the same
//! classifier reply and token counts, on keep-alive connections, one thread per connection,
//! so that what is measured is evalscore's side of judging.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::time::Duration;

const REPLY: &str = r#"{"choices":[{"message":{"role":"assistant","content":"{\"prediction\": \"yes\", \"reasoning\": \"fine\", \"confidence\": 0.9}"}}],"usage":{"prompt_tokens":50,"completion_tokens":12}}"#;

/// Serves on 127.0.0.1:`port` (0: any free port) until killed; prints `URL=http://.../v1`.
pub fn serve(port: u16, delay: Duration) -> Result<(), Box<dyn std::error::Error>> {
    let listener = TcpListener::bind(("127.0.0.1", port))?;
    println!("URL=http://{}/v1", listener.local_addr()?);
    std::io::stdout().flush()?;
    for stream in listener.incoming() {
        let stream = stream?;
        std::thread::spawn(move || {
            let _ = connection(stream, delay);
        });
    }
    Ok(())
}

fn connection(stream: TcpStream, delay: Duration) -> std::io::Result<()> {
    stream.set_nodelay(true)?;
    let mut reader = BufReader::new(stream.try_clone()?);
    let mut out = stream;
    let mut line = String::new();
    let mut body = Vec::new();
    loop {
        let mut len = 0usize;
        let mut any = false;
        loop {
            line.clear();
            if reader.read_line(&mut line)? == 0 {
                return Ok(());
            }
            if line == "\r\n" {
                break;
            }
            any = true;
            if line.len() > 15 && line[..15].eq_ignore_ascii_case("content-length:") {
                len = line[15..].trim().parse().unwrap_or(0);
            }
        }
        if !any {
            return Ok(());
        }
        body.resize(len, 0);
        reader.read_exact(&mut body)?;
        if !delay.is_zero() {
            std::thread::sleep(delay);
        }
        write!(
            out,
            "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{REPLY}",
            REPLY.len()
        )?;
        out.flush()?;
    }
}
