//! The one error renderer of the CLI, in uv's shape: `error:`, an indented `Caused by:` line
//! per cause, `hint:`.

use evalscore_engine::Error;

/// The lines printed on stderr for `e`.
pub fn render(e: &Error) -> String {
    let mut s = format!("error: {}\n", e.message);
    let mut cause = std::error::Error::source(e);
    while let Some(c) = cause {
        s.push_str(&format!("  Caused by: {c}\n"));
        cause = c.source();
    }
    if let Some(h) = &e.hint {
        s.push_str(&format!("hint: {h}\n"));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn message_then_causes_then_hint() {
        assert_eq!(render(&Error::new("no")), "error: no\n");
        let e = Error::new("cannot read `a.parquet`")
            .caused_by("bad footer")
            .caused_by("EOF")
            .hint("check the file");
        assert_eq!(
            render(&e),
            "error: cannot read `a.parquet`\n  Caused by: bad footer\n  Caused by: EOF\n\
             hint: check the file\n"
        );
    }
}
