//! sacrebleu's sentence BLEU: the `13a` tokenizer written out as the four byte passes its
//! regular expressions make (no regex, no per-token allocation), tokens with dense ids, and
//! the clipped n-gram matches counted by [`Scratch::shared`].

use super::ngrams::{with_scratch, Scratch};
use super::{py_space, py_split};
use std::borrow::Cow;

const BLEU_ORDER: usize = 4;

/// The first part of sacrebleu's `13a` tokenizer, after BLEU's `rstrip()`: `<skipped>` and
/// `-\n` removed, newlines made spaces, four HTML entities decoded (in sacrebleu's order).
fn unescape(s: &str) -> Cow<'_, str> {
    let s = s.trim_end_matches(py_space);
    if !s.bytes().any(|b| matches!(b, b'<' | b'\n' | b'&')) {
        return Cow::Borrowed(s);
    }
    let mut line = s
        .replace("<skipped>", "")
        .replace("-\n", "")
        .replace('\n', " ");
    if line.contains('&') {
        line = line
            .replace("&quot;", "\"")
            .replace("&amp;", "&")
            .replace("&lt;", "<")
            .replace("&gt;", ">");
    }
    Cow::Owned(line)
}

/// `([\{-~\[-` -&\(-\+:-@/])` of sacrebleu's `TokenizerRegexp`.
fn symbol(b: u8) -> bool {
    matches!(b, b'{'..=b'~' | b'['..=b'`' | b' '..=b'&' | b'('..=b'+' | b':'..=b'@' | b'/')
}

/// sacrebleu's four `re.sub` passes of `TokenizerRegexp`, in its order, on ` line `:
///
/// 1. `([\{-~\[-` -&\(-\+:-@/])` → ` \1 `
/// 2. `([^0-9])([\.,])` → `\1 \2 `
/// 3. `([\.,])([^0-9])` → ` \1 \2`
/// 4. `([0-9])(-)` → `\1 \2 `
///
/// Each pass scans left to right and resumes after a match, as `re.sub` does. Every byte
/// a pattern names is ASCII, so a pattern position is never inside a multi-byte character:
/// `[^0-9]` next to `.` or `,` is the last or the first byte of whatever character is
/// there, and the text is copied in slices between those positions.
fn regexp_passes(line: &str, a: &mut String, b: &mut String) {
    a.clear();
    a.reserve(line.len() + 2);
    a.push(' ');
    a.push_str(line);
    a.push(' ');
    // Pass 1.
    b.clear();
    let mut start = 0;
    for (i, &c) in a.as_bytes().iter().enumerate() {
        if symbol(c) && c != b' ' {
            b.push_str(&a[start..i]);
            b.push(' ');
            b.push(c as char);
            b.push(' ');
            start = i + 1;
        }
    }
    b.push_str(&a[start..]);
    // Pass 2.
    a.clear();
    let (bytes, mut start, mut i) = (b.as_bytes(), 0, 0);
    while i + 1 < bytes.len() {
        let d = bytes[i + 1];
        if (d == b'.' || d == b',') && !bytes[i].is_ascii_digit() {
            a.push_str(&b[start..i + 1]);
            a.push(' ');
            a.push(d as char);
            a.push(' ');
            start = i + 2;
            i += 2;
        } else {
            i += 1;
        }
    }
    a.push_str(&b[start..]);
    // Pass 3.
    b.clear();
    let (bytes, mut start, mut i) = (a.as_bytes(), 0, 0);
    while i + 1 < bytes.len() {
        let d = bytes[i];
        if (d == b'.' || d == b',') && !bytes[i + 1].is_ascii_digit() {
            b.push_str(&a[start..i]);
            b.push(' ');
            b.push(d as char);
            b.push(' ');
            start = i + 1;
            i += 2;
        } else {
            i += 1;
        }
    }
    b.push_str(&a[start..]);
    // Pass 4.
    a.clear();
    let (bytes, mut start, mut i) = (b.as_bytes(), 0, 0);
    while i + 1 < bytes.len() {
        if bytes[i].is_ascii_digit() && bytes[i + 1] == b'-' {
            a.push_str(&b[start..i + 1]);
            a.push_str(" - ");
            start = i + 2;
            i += 2;
        } else {
            i += 1;
        }
    }
    a.push_str(&b[start..]);
}

/// sacrebleu's `13a` tokenizer (mteval-v13a), after BLEU's `rstrip()`: the tokens, as the
/// tokenized line's `split()` gives them.
pub fn tokenize_13a(s: &str) -> Vec<String> {
    let (mut a, mut b) = (String::new(), String::new());
    regexp_passes(&unescape(s), &mut a, &mut b);
    py_split(&a).map(str::to_owned).collect()
}

/// sacrebleu's `sentence_bleu(hypothesis, references)` with its defaults (13a tokenizer, `exp`
/// smoothing, effective order), divided by 100. Several references: each n-gram's count is
/// clipped by its largest count in any reference, and the brevity penalty uses the closest
/// reference length (the shorter on a tie).
pub fn sentence_bleu<S: AsRef<str>>(hypothesis: &str, references: &[S]) -> f64 {
    with_scratch(|s| bleu_in(s, hypothesis, references))
}

fn bleu_in<S: AsRef<str>>(s: &mut Scratch, hypothesis: &str, references: &[S]) -> f64 {
    // Every text tokenized into `all`, one after the other; `ends` marks where each stops.
    let [mut a, mut b, mut all] = std::mem::take(&mut s.text);
    all.clear();
    let mut ends = std::mem::take(&mut s.ends);
    ends.clear();
    for t in std::iter::once(hypothesis).chain(references.iter().map(AsRef::as_ref)) {
        regexp_passes(&unescape(t), &mut a, &mut b);
        all.push_str(&a);
        ends.push(all.len());
    }
    let vocab = {
        let (mut strings, ids, starts) = s.strings();
        let mut from = 0;
        for &end in &ends {
            starts.push(ids.len());
            ids.extend(py_split(&all[from..end]).map(|t| strings.id(t)));
            from = end;
        }
        starts.push(ids.len());
        strings.len()
    };
    s.text = [a, b, all];
    s.ends = ends;
    let lens = s.starts.windows(2).map(|w| w[1] - w[0]);
    let sys_len = s.starts[1] - s.starts[0];
    let mut ref_len: Option<(usize, usize)> = None;
    for r in lens.skip(1) {
        let diff = r.abs_diff(sys_len);
        ref_len = match ref_len {
            None => Some((diff, r)),
            Some((d, _)) if diff < d => Some((diff, r)),
            Some((d, l)) if diff == d && r < l => Some((diff, r)),
            keep => keep,
        };
    }
    let ref_len = ref_len.map_or(0, |(_, l)| l);
    let mut correct = [0u64; BLEU_ORDER];
    s.shared(vocab, &mut correct);
    let mut total = [0u64; BLEU_ORDER];
    for (n, t) in total.iter_mut().enumerate() {
        *t = (sys_len + 1).saturating_sub(n + 1) as u64;
    }
    let mut bp = 1.0;
    if sys_len < ref_len {
        bp = if sys_len > 0 {
            (1.0 - ref_len as f64 / sys_len as f64).exp()
        } else {
            0.0
        };
    }
    if correct.iter().all(|&c| c == 0) {
        return 0.0;
    }
    let mut precisions = [0.0f64; BLEU_ORDER];
    let mut smooth = 1.0f64;
    let mut eff_order = BLEU_ORDER;
    for n in 1..=BLEU_ORDER {
        if total[n - 1] == 0 {
            break;
        }
        eff_order = n;
        if correct[n - 1] == 0 {
            smooth *= 2.0;
            precisions[n - 1] = 100.0 / (smooth * total[n - 1] as f64);
        } else {
            precisions[n - 1] = 100.0 * correct[n - 1] as f64 / total[n - 1] as f64;
        }
    }
    let logs = precisions[..eff_order]
        .iter()
        .map(|&p| if p == 0.0 { -9_999_999_999.0 } else { p.ln() })
        .fold(0.0, |a, b| a + b);
    bp * (logs / eff_order as f64).exp() / 100.0
}

#[cfg(test)]
mod tests {
    use super::*;
    use regex::Regex;

    /// The tokenizer as sacrebleu writes it, with Rust's `regex`.
    fn with_regex(s: &str) -> Vec<String> {
        let mut line = format!(" {} ", unescape(s));
        for (re, rep) in [
            (r"([\{-~\[-` -&\(-\+:-@/])", " $1 "),
            (r"([^0-9])([\.,])", "$1 $2 "),
            (r"([\.,])([^0-9])", " $1 $2"),
            (r"([0-9])(-)", "$1 $2 "),
        ] {
            line = Regex::new(re).unwrap().replace_all(&line, rep).into_owned();
        }
        py_split(&line).map(str::to_owned).collect()
    }

    #[test]
    fn byte_passes_equal_the_regular_expressions() {
        let pieces = [
            "a",
            "1",
            "9",
            ".",
            ",",
            "-",
            " ",
            "é",
            "東",
            "ß",
            "&",
            "(",
            "'",
            "\u{a0}",
            "/",
            "_",
            "~",
            "x.",
            "3.5",
            "..",
            ",,",
            "-\n",
            "\n",
            "&amp;",
            "<skipped>",
            "\u{1c}",
        ];
        let mut seed = 3u64;
        for _ in 0..20_000 {
            let mut s = String::new();
            for _ in 0..(seed % 9) {
                seed = seed
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                s.push_str(pieces[(seed >> 33) as usize % pieces.len()]);
            }
            seed = seed.wrapping_add(0x9E37_79B9);
            assert_eq!(tokenize_13a(&s), with_regex(&s), "{s:?}");
        }
        assert_eq!(
            tokenize_13a("Hello, world. 3.5-4 a..b"),
            ["Hello", ",", "world", ".", "3.5", "-", "4", "a", ".", ".", "b"]
        );
    }
}
