//! Compressed JSON Lines inputs (`.jsonl.gz`, `.jsonl.zst`, `.ndjson.*`): the same scores and
//! metrics as the uncompressed file, and clear errors for damaged ones.
#![allow(clippy::unwrap_used)]

use crate::common::*;
use std::io::Write;
use std::path::Path;

fn run(input: &Path, out: &Path) -> std::process::Output {
    evalscore()
        .arg("run")
        .arg(examples().join("qa.yaml"))
        .arg("--input")
        .arg(input)
        .arg("--out")
        .arg(out)
        .output()
        .expect("run")
}

fn gzip(data: &[u8]) -> Vec<u8> {
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    e.write_all(data).unwrap();
    e.finish().unwrap()
}

#[test]
fn compressed_jsonl_scores_as_the_plain_file() {
    let dir = tempfile::tempdir().unwrap();
    let text = std::fs::read(examples().join("qa.jsonl")).unwrap();
    let plain_out = dir.path().join("plain");
    let o = run(&examples().join("qa.jsonl"), &plain_out);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let want_scores = read_parquet(&plain_out.join("scores.parquet"));
    let want_metrics = metric_lines(&read_parquet(&plain_out.join("metrics.parquet")));
    let half = text.len() / 2;
    let cases: [(&str, Vec<u8>, &str); 4] = [
        ("qa.jsonl.gz", gzip(&text), "gzip"),
        // Two members, cut in the middle of a line.
        (
            "qa.ndjson.gz",
            [gzip(&text[..half]), gzip(&text[half..])].concat(),
            "gzip",
        ),
        (
            "qa.jsonl.zst",
            zstd::encode_all(&text[..], 3).unwrap(),
            "zstd",
        ),
        (
            "QA.NDJSON.ZST",
            [
                zstd::encode_all(&text[..half], 1).unwrap(),
                zstd::encode_all(&text[half..], 19).unwrap(),
            ]
            .concat(),
            "zstd",
        ),
    ];
    for (name, bytes, compression) in cases {
        let input = dir.path().join(name);
        std::fs::write(&input, bytes).unwrap();
        let out = dir.path().join(format!("out-{name}"));
        let o = run(&input, &out);
        assert!(
            o.status.success(),
            "{name}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        let scores = read_parquet(&out.join("scores.parquet"));
        assert_eq!(scores.num_rows(), 300, "{name}");
        assert_eq!(scores.columns(), want_scores.columns(), "{name}");
        assert_eq!(
            metric_lines(&read_parquet(&out.join("metrics.parquet"))),
            want_metrics,
            "{name}"
        );
        let rj: serde_json::Value =
            serde_json::from_slice(&std::fs::read(out.join("run.json")).unwrap()).unwrap();
        assert_eq!(rj["inputs"][0]["format"], "jsonl", "{name}");
        assert_eq!(rj["inputs"][0]["compression"], compression, "{name}");
        assert_eq!(rj["inputs"][0]["rows"], 300, "{name}");
        assert_eq!(rj["inputs"][0]["row_groups"], 1, "{name}");
    }
    let rj: serde_json::Value =
        serde_json::from_slice(&std::fs::read(plain_out.join("run.json")).unwrap()).unwrap();
    assert_eq!(rj["inputs"][0]["compression"], serde_json::Value::Null);
}

#[test]
fn a_damaged_compressed_file_is_an_error_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    let text = std::fs::read(examples().join("qa.jsonl")).unwrap();
    // Truncated gzip; plain text named .zst.
    let gz = dir.path().join("cut.jsonl.gz");
    let bytes = gzip(&text);
    std::fs::write(&gz, &bytes[..bytes.len() - 100]).unwrap();
    let zst = dir.path().join("plain.jsonl.zst");
    std::fs::write(&zst, &text).unwrap();
    for (input, kind) in [(&gz, "gzip"), (&zst, "zstd")] {
        let out = dir.path().join("out");
        let o = run(input, &out);
        assert_eq!(o.status.code(), Some(2));
        let stderr = String::from_utf8_lossy(&o.stderr);
        let head = format!("error: {}, line ", input.display());
        assert!(stderr.starts_with(&head), "{stderr}");
        assert!(stderr.contains(": cannot read: "), "{stderr}");
        assert!(
            stderr.ends_with(&format!("hint: the file is named as {kind} JSON Lines; it may be damaged, truncated or not compressed that way\n")),
            "{stderr}"
        );
        assert!(!out.exists());
    }
}
