//! One chat-completion request and its cache key.

use serde_json::{json, Value};
use sha2::{Digest, Sha256};
use std::hash::{BuildHasherDefault, Hash, Hasher};

/// A cache key: the SHA-256 of a request's canonical JSON. Written as lower-case hex where it
/// leaves the process (a Batch API line's `custom_id`).
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct Key(pub [u8; 32]);

impl Key {
    /// The key's first 8 bytes, little-endian: a SHA-256 is uniform, so they serve as its hash
    /// and as the cache's row id.
    pub fn head(&self) -> u64 {
        let mut head = [0u8; 8];
        head.copy_from_slice(&self.0[..8]);
        u64::from_le_bytes(head)
    }

    /// The key of `canonical` (the bytes of a request's canonical JSON).
    pub fn of(canonical: &[u8]) -> Key {
        Key(Sha256::digest(canonical).into())
    }

    /// The key written as `hex` (64 lower-case hex digits); `None` for any other text.
    pub fn from_hex(hex: &str) -> Option<Key> {
        let digit = |c: u8| match c {
            b'0'..=b'9' => Some(c - b'0'),
            b'a'..=b'f' => Some(c - b'a' + 10),
            _ => None,
        };
        let bytes = hex.as_bytes();
        if bytes.len() != 64 {
            return None;
        }
        let mut key = [0u8; 32];
        for (i, pair) in bytes.chunks_exact(2).enumerate() {
            key[i] = digit(pair[0])? << 4 | digit(pair[1])?;
        }
        Some(Key(key))
    }

    /// Lower-case hex, as Batch API lines carry it.
    pub fn hex(&self) -> String {
        self.to_string()
    }
}

impl std::fmt::Display for Key {
    /// Lower-case hex: sha2's digest type formats itself so, without allocating.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{:x}", sha2::digest::Output::<Sha256>::from(self.0))
    }
}

impl std::fmt::Debug for Key {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Key({self})")
    }
}

impl Hash for Key {
    /// A SHA-256 is already uniform: its first 8 bytes are a good hash (see [`KeyHasher`]).
    fn hash<H: Hasher>(&self, state: &mut H) {
        state.write_u64(self.head());
    }
}

/// The hasher of [`KeyMap`]: a [`Key`] hashes to its first 8 bytes, with nothing to compute.
#[derive(Debug, Default, Clone, Copy)]
pub struct KeyHasher(u64);

impl Hasher for KeyHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write_u64(&mut self, n: u64) {
        self.0 = n;
    }

    /// Not used by [`Key`]; FNV-1a, so that any other input still hashes soundly.
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0 ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
        }
    }
}

/// A map keyed by [`Key`] without rehashing the keys.
pub type KeyMap<V> = std::collections::HashMap<Key, V, BuildHasherDefault<KeyHasher>>;

/// A chat message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Message {
    pub role: String,
    pub content: String,
}

/// A request to an OpenAI-compatible `/chat/completions` endpoint.
#[derive(Debug, Clone, PartialEq)]
pub struct ChatRequest {
    /// The API root, such as `http://127.0.0.1:8080/v1`.
    pub base_url: String,
    pub model: String,
    pub messages: Vec<Message>,
    pub temperature: f64,
    pub seed: Option<i64>,
    pub max_tokens: Option<u64>,
    /// The version of the scorer's reply parser: a new parser must not reuse replies cached
    /// for an older one without saying so.
    pub parser_version: u32,
}

impl ChatRequest {
    /// The request body as sent (`model`, `messages`, sampling parameters; absent options are
    /// left out).
    pub fn body(&self) -> Value {
        let mut body = json!({
            "model": self.model,
            "messages": self
                .messages
                .iter()
                .map(|m| json!({"role": m.role, "content": m.content}))
                .collect::<Vec<_>>(),
            "temperature": self.temperature,
        });
        if let Some(seed) = self.seed {
            body["seed"] = json!(seed);
        }
        if let Some(max) = self.max_tokens {
            body["max_tokens"] = json!(max);
        }
        body
    }

    /// The cache key in lower-case hex: the SHA-256 of the canonical JSON of the base URL
    /// (without a trailing `/`), the body and the parser version. Canonical: object keys
    /// sorted, no whitespace, strings as serde_json writes them (the same bytes as Python's
    /// `json.dumps(x, sort_keys=True, separators=(",", ":"), ensure_ascii=False)` for these
    /// values; `scripts/golden/judge_key.py` computes the golden key of the tests that way).
    pub fn key(&self) -> String {
        self.cache_key().hex()
    }

    /// The cache key ([`ChatRequest::key`]) as bytes.
    pub fn cache_key(&self) -> Key {
        let pairs: Vec<(&str, &str)> = self
            .messages
            .iter()
            .map(|m| (m.role.as_str(), m.content.as_str()))
            .collect();
        ChatKeys::of(self).key(&pairs)
    }

    /// The canonical JSON built as a value tree, as the key was first defined; for the test
    /// that the streamed form is the same.
    #[cfg(test)]
    fn canonical_value(&self) -> String {
        json!({
            "base_url": self.base_url.trim_end_matches('/'),
            "body": self.body(),
            "parser_version": self.parser_version,
        })
        .to_string()
    }

    /// The request as JSON text, to hand it to another process (a Spark or Ray job's
    /// distinct requests, judged elsewhere): the base URL as given, the body as sent and the
    /// parser version. [`ChatRequest::from_json`] reads it back.
    pub fn to_json(&self) -> String {
        json!({
            "base_url": self.base_url,
            "body": self.body(),
            "parser_version": self.parser_version,
        })
        .to_string()
    }

    /// A request from its [`ChatRequest::to_json`] text; the error says which part is wrong.
    pub fn from_json(text: &str) -> Result<ChatRequest, String> {
        let v: Value =
            serde_json::from_str(text).map_err(|e| format!("not a judge request: {e}"))?;
        let text_at = |v: &Value, name: &str| -> Result<String, String> {
            v.as_str()
                .map(str::to_owned)
                .ok_or_else(|| format!("not a judge request: `{name}` is not a string"))
        };
        let body = &v["body"];
        let messages = body["messages"]
            .as_array()
            .ok_or("not a judge request: `body.messages` is not a list")?
            .iter()
            .map(|m| {
                Ok(Message {
                    role: text_at(&m["role"], "body.messages[].role")?,
                    content: text_at(&m["content"], "body.messages[].content")?,
                })
            })
            .collect::<Result<_, String>>()?;
        let seed = match &body["seed"] {
            Value::Null => None,
            n => Some(
                n.as_i64()
                    .ok_or("not a judge request: `body.seed` is not an integer")?,
            ),
        };
        let max_tokens = match &body["max_tokens"] {
            Value::Null => None,
            n => Some(
                n.as_u64()
                    .ok_or("not a judge request: `body.max_tokens` is not a count")?,
            ),
        };
        Ok(ChatRequest {
            base_url: text_at(&v["base_url"], "base_url")?,
            model: text_at(&body["model"], "body.model")?,
            messages,
            temperature: body["temperature"]
                .as_f64()
                .ok_or("not a judge request: `body.temperature` is not a number")?,
            seed,
            max_tokens,
            parser_version: v["parser_version"]
                .as_u64()
                .and_then(|n| u32::try_from(n).ok())
                .ok_or("not a judge request: `parser_version` is not a version number")?,
        })
    }

    /// One line of an OpenAI Batch API input file, without its newline.
    pub fn batch_line(&self) -> String {
        json!({
            "custom_id": self.key(),
            "method": "POST",
            "url": "/v1/chat/completions",
            "body": self.body(),
        })
        .to_string()
    }
}

/// The keys of many chat requests that differ only in their messages (one scorer's requests
/// to one model), computed from borrowed message texts without building the requests: the
/// canonical JSON (as [`ChatRequest::key`] defines it: the same bytes as the value tree,
/// tested) is written into one reused buffer, and the hash state after a first message that
/// repeats from one request to the next (a fixed system prompt) is reused.
#[derive(Clone)]
pub struct ChatKeys {
    /// The canonical JSON up to the first message: base URL, `max_tokens`, `"messages":[`.
    head: Vec<u8>,
    /// The canonical JSON after the messages: model, seed, temperature, parser version.
    tail: Vec<u8>,
    buf: Vec<u8>,
    /// The last first message (role, content) and the hash state after it.
    first: Option<(String, String, Sha256)>,
}

impl ChatKeys {
    /// The keys of requests like `request` (its messages are not read).
    pub fn of(request: &ChatRequest) -> ChatKeys {
        ChatKeys::new(
            &request.base_url,
            &request.model,
            request.temperature,
            request.seed,
            request.max_tokens,
            request.parser_version,
        )
    }

    pub fn new(
        base_url: &str,
        model: &str,
        temperature: f64,
        seed: Option<i64>,
        max_tokens: Option<u64>,
        parser_version: u32,
    ) -> ChatKeys {
        use std::io::Write as _;
        let mut head = b"{\"base_url\":".to_vec();
        json_str(&mut head, base_url.trim_end_matches('/'));
        head.extend_from_slice(b",\"body\":{");
        if let Some(max) = max_tokens {
            let _ = write!(head, "\"max_tokens\":{max},");
        }
        head.extend_from_slice(b"\"messages\":[");
        let mut tail = b"],\"model\":".to_vec();
        json_str(&mut tail, model);
        if let Some(seed) = seed {
            let _ = write!(tail, ",\"seed\":{seed}");
        }
        tail.extend_from_slice(b",\"temperature\":");
        let _ = serde_json::to_writer(&mut tail, &temperature);
        let _ = write!(tail, "}},\"parser_version\":{parser_version}}}");
        ChatKeys {
            head,
            tail,
            buf: Vec::new(),
            first: None,
        }
    }

    /// The key of the request whose messages are `messages` (role, content).
    pub fn key(&mut self, messages: &[(&str, &str)]) -> Key {
        let Some(((role, content), rest)) = messages.split_first() else {
            self.buf.clear();
            self.buf.extend_from_slice(&self.head);
            self.buf.extend_from_slice(&self.tail);
            return Key::of(&self.buf);
        };
        let mut h = match &mut self.first {
            Some((r, c, state)) if r.as_str() == *role && c.as_str() == *content => state.clone(),
            first => {
                self.buf.clear();
                self.buf.extend_from_slice(&self.head);
                write_message(&mut self.buf, role, content);
                let state = Sha256::new_with_prefix(&self.buf);
                match first {
                    Some((r, c, s)) => {
                        r.clear();
                        r.push_str(role);
                        c.clear();
                        c.push_str(content);
                        *s = state.clone();
                    }
                    None => {
                        *first = Some(((*role).to_owned(), (*content).to_owned(), state.clone()))
                    }
                }
                state
            }
        };
        self.buf.clear();
        for (role, content) in rest {
            self.buf.push(b',');
            write_message(&mut self.buf, role, content);
        }
        self.buf.extend_from_slice(&self.tail);
        h.update(&self.buf);
        Key(h.finalize().into())
    }
}

/// `s` as a JSON string, escaped as serde_json escapes it (quotes, backslashes and the control
/// characters below U+0020; everything else as it is), skipping eight bytes at a time where
/// none needs escaping. A test checks it against serde_json.
fn json_str(out: &mut Vec<u8>, s: &str) {
    const ONES: u64 = u64::from_le_bytes([1; 8]);
    const HIGHS: u64 = ONES << 7;
    // Whether a byte of `w` is zero (exact as a yes or no).
    let zero = |w: u64| w.wrapping_sub(ONES) & !w & HIGHS != 0;
    // Whether a byte of `w` is below 0x20, a quote or a backslash.
    let special = |w: u64| {
        w.wrapping_sub(ONES * 0x20) & !w & HIGHS != 0
            || zero(w ^ (ONES * u64::from(b'"')))
            || zero(w ^ (ONES * u64::from(b'\\')))
    };
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let bytes = s.as_bytes();
    out.reserve(bytes.len() + 2);
    out.push(b'"');
    let (mut copied, mut i) = (0, 0);
    while i < bytes.len() {
        if let Some(chunk) = bytes.get(i..i + 8) {
            let mut word = [0u8; 8];
            word.copy_from_slice(chunk);
            if !special(u64::from_le_bytes(word)) {
                i += 8;
                continue;
            }
        }
        let b = bytes[i];
        let short: &[u8] = match b {
            b'"' => b"\\\"",
            b'\\' => b"\\\\",
            b'\n' => b"\\n",
            b'\r' => b"\\r",
            b'\t' => b"\\t",
            0x08 => b"\\b",
            0x0c => b"\\f",
            0x00..=0x1f => b"",
            _ => {
                i += 1;
                continue;
            }
        };
        out.extend_from_slice(&bytes[copied..i]);
        if short.is_empty() {
            out.extend_from_slice(b"\\u00");
            out.push(HEX[usize::from(b >> 4)]);
            out.push(HEX[usize::from(b & 15)]);
        } else {
            out.extend_from_slice(short);
        }
        i += 1;
        copied = i;
    }
    out.extend_from_slice(&bytes[copied..]);
    out.push(b'"');
}

/// One message of the canonical JSON: its keys sorted (`content`, `role`).
fn write_message(out: &mut Vec<u8>, role: &str, content: &str) {
    out.extend_from_slice(b"{\"content\":");
    json_str(out, content);
    out.extend_from_slice(b",\"role\":");
    json_str(out, role);
    out.push(b'}');
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request() -> ChatRequest {
        ChatRequest {
            base_url: "http://h/v1/".to_owned(),
            model: "m \"q\" é".to_owned(),
            messages: vec![
                Message {
                    role: "system".to_owned(),
                    content: "line\n\ttab \u{1} \\ ünï".to_owned(),
                },
                Message {
                    role: "user".to_owned(),
                    content: String::new(),
                },
            ],
            temperature: 0.0,
            seed: Some(-7),
            max_tokens: Some(256),
            parser_version: 3,
        }
    }

    fn tree_key(r: &ChatRequest) -> Key {
        Key::of(r.canonical_value().as_bytes())
    }

    #[test]
    fn the_streamed_canonical_json_is_the_value_trees() {
        let mut r = request();
        for (temperature, seed, max) in [
            (0.0, Some(-7), Some(256)),
            (0.7, None, None),
            (1e-3, Some(i64::MAX), None),
        ] {
            (r.temperature, r.seed, r.max_tokens) = (temperature, seed, max);
            assert_eq!(r.cache_key(), tree_key(&r));
            assert_eq!(r.key(), tree_key(&r).hex());
        }
    }

    /// One `ChatKeys` over requests whose first message repeats, changes and comes back, with
    /// one, two, three and no messages: each key is the value tree's.
    #[test]
    fn reused_hash_states_give_the_same_keys() {
        let mut r = request();
        let mut keys = ChatKeys::of(&r);
        let message = |role: &str, content: &str| Message {
            role: role.to_owned(),
            content: content.to_owned(),
        };
        let cases = [
            vec![message("system", "S"), message("user", "a")],
            vec![message("system", "S"), message("user", "b \"q\"")],
            vec![message("system", "T"), message("user", "b \"q\"")],
            vec![message("user", "S"), message("user", "b \"q\"")],
            vec![message("system", "S"), message("user", "b \"q\"")],
            vec![message("system", "S")],
            vec![
                message("system", "S"),
                message("user", "x"),
                message("assistant", "y"),
            ],
            vec![],
            vec![message("system", "S"), message("user", "a")],
        ];
        let mut seen = std::collections::HashSet::new();
        for messages in cases {
            r.messages = messages;
            let pairs: Vec<(&str, &str)> = r
                .messages
                .iter()
                .map(|m| (m.role.as_str(), m.content.as_str()))
                .collect();
            let key = keys.key(&pairs);
            assert_eq!(key, tree_key(&r), "{:?}", r.messages);
            seen.insert(key);
        }
        // The fifth case repeats the second, the last the first.
        assert_eq!(seen.len(), 7);
    }

    /// Every character below U+0080 (and some beyond) alone, and at every offset of a longer
    /// text (so in every position of an eight-byte word), is escaped as serde_json does.
    #[test]
    fn strings_are_escaped_as_serde_json_escapes_them() {
        let check = |t: &str| {
            let mut out = Vec::new();
            json_str(&mut out, t);
            assert_eq!(
                String::from_utf8(out).unwrap(),
                serde_json::to_string(t).unwrap(),
                "{t:?}"
            );
        };
        let mut chars: Vec<char> = (0u8..0x80).map(char::from).collect();
        chars.extend(['é', '«', '\u{2028}', '\u{fffd}', '😀', '\u{7f}', '\u{85}']);
        for &c in &chars {
            check(&c.to_string());
            for at in 0..17 {
                let mut t: String = "abcdefghijklmnopq".chars().take(at).collect();
                t.push(c);
                t.push_str("rstuvwxyz0123456");
                check(&t);
            }
        }
        check("");
        check("Row 17. Question: \"Which?\"\nResponse: C\\D\t\u{1}end");
    }

    /// A request read back from its JSON text is the same request, with the same key, with
    /// and without its optional parameters; broken texts say what is wrong.
    #[test]
    fn requests_travel_as_json_text() {
        let mut r = request();
        for (temperature, seed, max) in [(0.0, Some(-7), Some(256)), (0.7, None, None)] {
            (r.temperature, r.seed, r.max_tokens) = (temperature, seed, max);
            let back = ChatRequest::from_json(&r.to_json()).unwrap();
            assert_eq!(back, r);
            assert_eq!(back.key(), r.key());
        }
        assert_eq!(
            r.to_json(),
            r#"{"base_url":"http://h/v1/","body":{"messages":[{"content":"line\n\ttab \u0001 \\ ünï","role":"system"},{"content":"","role":"user"}],"model":"m \"q\" é","temperature":0.7},"parser_version":3}"#
        );
        let bad = |text: &str| ChatRequest::from_json(text).unwrap_err();
        assert_eq!(
            bad("{"),
            "not a judge request: EOF while parsing an object at line 1 column 1"
        );
        assert_eq!(
            bad(
                r#"{"base_url":"u","body":{"model":"m","messages":[{"role":"user"}],"temperature":0},"parser_version":1}"#
            ),
            "not a judge request: `body.messages[].content` is not a string"
        );
        assert_eq!(
            bad(
                r#"{"base_url":"u","body":{"model":"m","messages":[],"temperature":0,"seed":1.5},"parser_version":1}"#
            ),
            "not a judge request: `body.seed` is not an integer"
        );
        assert_eq!(
            bad(
                r#"{"base_url":"u","body":{"model":"m","messages":[],"temperature":0},"parser_version":-1}"#
            ),
            "not a judge request: `parser_version` is not a version number"
        );
    }

    #[test]
    fn keys_print_as_lower_case_hex_and_hash_by_their_head() {
        let mut k = Key([0; 32]);
        k.0[0] = 0xab;
        k.0[31] = 0x0f;
        let hex = format!("ab{}0f", "00".repeat(30));
        assert_eq!(k.hex(), hex);
        assert_eq!(k.to_string(), hex);
        assert_eq!(format!("{k:?}"), format!("Key({hex})"));
        let mut h = KeyHasher::default();
        k.hash(&mut h);
        assert_eq!(h.finish(), 0xab);
    }
}
