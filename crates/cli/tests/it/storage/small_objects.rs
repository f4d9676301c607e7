//! Small objects read whole: one GET each, pinned to the ETag the listing gave.

use super::*;
use std::sync::atomic::Ordering;

/// Objects in the test's Hive tree: `exports/date=2026-01-0D/part-I.parquet`.
const OBJECTS: usize = 12;

/// The keys of the tree, each holding the example `qa.parquet` (9,389 bytes: more than the
/// 8 KiB tail a larger object's footer is fetched with).
fn keys() -> Vec<String> {
    (0..OBJECTS)
        .map(|i| format!("exports/date=2026-01-0{}/part-{i:02}.parquet", 1 + i % 3))
        .collect()
}

/// moto with the tree in bucket `many`, and a local copy of it in a temporary folder.
fn small_tree() -> (Server, tempfile::TempDir) {
    let s3 = moto();
    create_bucket(s3.port, "many");
    let qa = std::fs::read(examples().join("qa.parquet")).unwrap();
    let dir = tempfile::tempdir().unwrap();
    for key in keys() {
        put_object(s3.port, "many", &key, &qa);
        let local = dir.path().join("tree").join(&key);
        std::fs::create_dir_all(local.parent().unwrap()).unwrap();
        std::fs::write(local, &qa).unwrap();
    }
    (s3, dir)
}

const GLOB: &str = "s3://many/exports/**/*.parquet";

#[test]
fn each_small_object_is_fetched_once_whole() {
    let (s3, dir) = small_tree();
    let proxy = proxy(s3.port);
    let env = s3_env(&proxy.endpoint());
    succeeded(run_task(&env, "qa.yaml", GLOB, "out", &[], dir.path()));

    // One GET per object, and the listing's; no HEAD (the listing gave sizes and ETags).
    let requests = proxy.requests.lock().unwrap().clone();
    let mut objects: Vec<String> = requests
        .iter()
        .filter(|r| r.starts_with("GET /many/"))
        .map(|r| r.split(' ').nth(1).unwrap().replace("%3D", "="))
        .collect();
    objects.sort();
    let mut want: Vec<String> = keys().iter().map(|k| format!("/many/{k}")).collect();
    want.sort();
    assert_eq!(objects, want, "{requests:?}");
    let others: Vec<&String> = requests
        .iter()
        .filter(|r| !r.starts_with("GET /many/"))
        .collect();
    // The listing: the prefix and its three folders, one page each.
    assert_eq!(others.len(), 4, "{others:?}");
    assert!(
        others
            .iter()
            .all(|r| r.starts_with("GET /many?") && r.contains("list-type=2")),
        "{others:?}"
    );

    // The same figures as the local copy of the tree.
    let glob = dir.path().join("tree/exports/**/*.parquet");
    let local = local_run(dir.path(), "qa.yaml", &[&glob]);
    let lines = |out: &Path| metric_lines(&read_parquet(&out.join("metrics.parquet")));
    assert_eq!(lines(&dir.path().join("out")), lines(&local));
}

/// An object replaced after the listing, before its one GET: the GET, pinned to the ETag the
/// listing gave, is refused, and the run fails naming the object.
#[test]
fn a_small_object_replaced_after_the_listing_is_an_error() {
    let (s3, dir) = small_tree();
    let proxy = proxy(s3.port);
    let key = &keys()[3];
    // Held until the client gives up on it (`timeout`) and asks again.
    proxy.rules.lock().unwrap().hold = Some("part-03.parquet".into());
    let env = s3_env(&proxy.endpoint());
    let cwd = dir.path().to_owned();
    let run = std::thread::spawn(move || {
        run_task(
            &env,
            "qa.yaml",
            GLOB,
            "out",
            &["--storage-option", "timeout=3s"],
            &cwd,
        )
    });
    evalscore_test_support::wait::until(
        std::time::Duration::from_secs(60),
        "the GET of part-03 reaches the proxy",
        || proxy.held.load(Ordering::SeqCst),
    );
    put_object(s3.port, "many", key, b"a new object, not Parquet");
    proxy.rules.lock().unwrap().hold = None;
    let o = run.join().unwrap();
    failure(
        &o,
        &format!("error: s3://many/{key}: the object was replaced while it was being read (its ETag changed since it was opened)"),
        "run again once nothing writes the input; its bytes were not mixed with the new object's",
    );
}
