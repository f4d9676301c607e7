//! `--cache FOLDER/`: a shared judge cache in a folder, as machines that each have their own
//! home folder (`XDG_CACHE_HOME`) see it. The same on S3 is in `storage/shared_judge_cache.rs`.

use super::*;

/// `evalscore ARGS` on machine `machine` (its own `XDG_CACHE_HOME`), judging against the
/// test server.
fn on(s: &Setup, machine: &str, args: &[&str]) -> std::process::Command {
    let mut cmd = evalscore_process();
    cmd.args(args);
    if args[0] == "run" {
        cmd.arg("--set").arg(format!("url={}", s.url));
    }
    cmd.env("EVALSCORE_TEST_JUDGE_KEY", KEY);
    cmd.env("XDG_CACHE_HOME", s.path(machine));
    cmd.current_dir(s.dir.path());
    cmd
}

fn run_on(s: &Setup, machine: &str, rows: &str, out: &str, extra: &[&str]) -> std::process::Output {
    let mut args = vec![
        "run",
        "task.yaml",
        "--input",
        rows,
        "--out",
        out,
        "--cache",
        "shared/",
    ];
    args.extend_from_slice(extra);
    on(s, machine, &args).output().unwrap()
}

fn segments(s: &Setup) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(s.path("shared"))
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    names.sort();
    names
}

#[test]
fn a_fresh_machine_sends_nothing_for_rows_the_shared_cache_holds() {
    let s = Setup::new(ROWS);
    let o = run_on(&s, "m1", "rows.jsonl", "out1", &[]);
    ok(&o);
    assert_eq!(s.sent(), DISTINCT);
    assert_eq!(segments(&s).len(), 1);
    let judge = &run_json(&s.path("out1"))["judge"];
    assert_eq!(judge["cache"], "shared/");
    let shared = &judge["shared_cache"];
    assert_eq!(shared["segments_written"], 1);
    assert_eq!(shared["replies_written"], DISTINCT);
    assert_eq!(shared["replies_fetched"], 0);
    assert_eq!(
        shared["local"],
        s.path("m1/evalscore/judge.sqlite").display().to_string()
    );

    // Another machine, an empty home folder: every reply from the shared cache.
    let o = run_on(&s, "m2", "rows.jsonl", "out2", &[]);
    ok(&o);
    assert_eq!(s.sent(), DISTINCT, "the second machine sent nothing");
    let judge = &run_json(&s.path("out2"))["judge"];
    assert_eq!(judge["models"]["judge"]["requests_sent"], 0);
    assert_eq!(judge["models"]["judge"]["cache_hits"], DISTINCT);
    assert_eq!(judge["shared_cache"]["replies_fetched"], DISTINCT);
    assert_eq!(judge["shared_cache"]["segments_written"], 0);
    assert_eq!(segments(&s).len(), 1, "nothing new to upload");
    assert_eq!(
        std::fs::read(s.path("out1/scores.parquet")).unwrap(),
        std::fs::read(s.path("out2/scores.parquet")).unwrap()
    );
    // The figures too (the files differ in their run ids and times).
    let values = |out: &str| {
        column_text(
            &read_parquet(&s.path(&format!("{out}/metrics.parquet"))),
            "value",
        )
    };
    assert_eq!(values("out1"), values("out2"));
    // A third, offline.
    let o = run_on(&s, "m3", "rows.jsonl", "out3", &["--offline"]);
    ok(&o);
    assert_eq!(
        std::fs::read(s.path("out1/scores.parquet")).unwrap(),
        std::fs::read(s.path("out3/scores.parquet")).unwrap()
    );
}

/// Rows whose security-judge requests are all distinct: `n` rows of writer `w`.
fn rows_of(w: usize, n: usize) -> String {
    (0..n)
        .map(|j| {
            format!("{{\"id\": {j}, \"question\": \"q\", \"answer\": \"a\", \"output\": \"output {w}-{j}\", \"label\": \"no\"}}\n")
        })
        .collect()
}

#[test]
fn processes_writing_one_shared_cache_at_once_all_land_and_compact_merges_them() {
    let s = Setup::new(ROWS);
    std::fs::write(s.path("task.yaml"), only(SECURITY)).unwrap();
    let mut all = String::new();
    for w in 0..4 {
        std::fs::write(s.path(&format!("rows{w}.jsonl")), rows_of(w, 6)).unwrap();
        all.push_str(&rows_of(w, 6));
    }
    std::fs::write(s.path("all.jsonl"), &all).unwrap();
    let children: Vec<_> = (0..4)
        .map(|w| {
            let rows = format!("rows{w}.jsonl");
            let out = format!("out{w}");
            on(
                &s,
                &format!("w{w}"),
                &[
                    "run",
                    "task.yaml",
                    "--input",
                    &rows,
                    "--out",
                    &out,
                    "--cache",
                    "shared/",
                    "--quiet",
                ],
            )
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap()
        })
        .collect();
    for child in children {
        ok(&child.wait_with_output().unwrap());
    }
    assert_eq!(s.sent(), 24);
    assert_eq!(segments(&s).len(), 4);

    let stats = |s: &Setup| {
        let o = on(s, "admin", &["judge", "cache", "stats", "shared/"])
            .output()
            .unwrap();
        ok(&o);
        stdout(&o)
    };
    let text = stats(&s);
    let bytes: u64 = segments(&s)
        .iter()
        .map(|n| std::fs::metadata(s.path("shared").join(n)).unwrap().len())
        .sum();
    assert_eq!(
        text,
        format!("judge cache shared/\nsegments    4\nentries     24\nbytes       {bytes}\nrow groups  4\nunreadable  0\n")
    );
    let o = on(&s, "admin", &["judge", "cache", "compact", "shared/"])
        .output()
        .unwrap();
    ok(&o);
    assert_eq!(
        stdout(&o),
        "judge cache shared/: merged 4 segments into 1 (24 replies, 0 duplicates dropped); 0 segments kept\n"
    );
    assert_eq!(segments(&s).len(), 1);
    assert!(stats(&s).starts_with("judge cache shared/\nsegments    1\nentries     24\n"));

    // Every row, on a fresh machine: nothing sent, every reply from the merged segment.
    let o = run_on(&s, "fresh", "all.jsonl", "all", &[]);
    ok(&o);
    assert_eq!(s.sent(), 24);
    let judge = &run_json(&s.path("all"))["judge"];
    assert_eq!(judge["models"]["judge"]["cache_hits"], 24);
    assert_eq!(judge["shared_cache"]["segments_indexed"], 1);
}

#[test]
fn an_unreadable_segment_is_a_warning_and_its_rows_are_sent_again() {
    let s = Setup::new(ROWS);
    std::fs::create_dir_all(s.path("shared")).unwrap();
    let bad = "seg-9999999999999-0000000000000000.parquet";
    std::fs::write(s.path("shared").join(bad), b"PAR1 cut short").unwrap();
    let o = run_on(&s, "m1", "rows.jsonl", "out", &[]);
    ok(&o);
    assert_eq!(s.sent(), DISTINCT);
    let warning = format!("judge cache segment `shared/{bad}` is not readable (");
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(stderr.contains(&format!("warning: {warning}")), "{stderr}");
    let warnings = run_json(&s.path("out"))["warnings"].clone();
    let listed: Vec<&str> = warnings
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|w| w.as_str())
        .filter(|w| w.starts_with(&warning))
        .collect();
    assert_eq!(listed.len(), 1, "{warnings}");
    assert!(listed[0].ends_with("); skipped"), "{}", listed[0]);
}

#[test]
fn judge_import_uploads_to_a_shared_cache_as_one_segment() {
    let s = Setup::new(ROWS);
    let key = "1a".repeat(32);
    std::fs::write(
        s.path("results.jsonl"),
        format!(
            "{}\n",
            json!({"id": "b1", "custom_id": key, "error": null, "response": {"status_code": 200, "body": {"choices": [{"message": {"role": "assistant", "content": "Yes"}}], "usage": {"prompt_tokens": 20, "completion_tokens": 5}}}})
        ),
    )
    .unwrap();
    let o = on(
        &s,
        "m1",
        &["judge", "import", "results.jsonl", "--cache", "shared/"],
    )
    .output()
    .unwrap();
    ok(&o);
    assert_eq!(
        stdout(&o),
        "stored 1 replies in shared/ (0 failed requests left out)\n"
    );
    assert_eq!(segments(&s).len(), 1);
    let o = on(&s, "m2", &["judge", "cache", "stats", "shared/"])
        .output()
        .unwrap();
    assert!(stdout(&o).contains("\nentries     1\n"), "{}", stdout(&o));
}
