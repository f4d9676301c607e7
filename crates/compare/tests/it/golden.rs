//! The statistics against statsmodels and scipy: `data/golden/compare.json`, made by
//! `scripts/golden/compare.py`. p-values agree to a relative 1e-12; every other figure
//! (means, differences, standard errors, interval bounds, minimum detectable differences,
//! all on the scale of the scores) to 1e-12 absolute for values up to 1, relative above.
#![allow(clippy::unwrap_used)]

use evalscore_compare::stats::paired;
use evalscore_compare::{compare, CompareOptions};
use serde_json::Value;
use std::collections::HashMap;
use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn golden() -> Value {
    let text = std::fs::read_to_string(root().join("data/golden/compare.json")).expect("golden");
    serde_json::from_str(&text).expect("json")
}

fn close(what: &str, got: Option<f64>, want: &Value, relative: bool) {
    match (got, want.as_f64()) {
        (None, None) => {}
        (Some(g), Some(w)) => {
            let tol = if relative {
                1e-12 * w.abs()
            } else {
                1e-12 * w.abs().max(1.0)
            };
            assert!((g - w).abs() <= tol, "{what}: got {g:e}, want {w:e}");
        }
        (g, _) => panic!("{what}: got {g:?}, want {want}"),
    }
}

fn floats(v: &Value) -> Vec<f64> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_f64().unwrap())
        .collect()
}

#[test]
fn paired_statistics_match_statsmodels_and_scipy() {
    let g = golden();
    let cases = g["cases"].as_array().unwrap();
    assert_eq!(cases.len(), 15);
    for c in cases {
        let name = c["name"].as_str().unwrap();
        let base = floats(&c["base"]);
        let new = floats(&c["new"]);
        let clusters: Option<Vec<u32>> = c["cluster"].as_array().map(|ids| {
            let mut map: HashMap<&str, u32> = HashMap::new();
            ids.iter()
                .map(|id| {
                    let n = map.len() as u32;
                    *map.entry(id.as_str().unwrap()).or_insert(n)
                })
                .collect()
        });
        let binary = base.iter().chain(&new).all(|x| *x == 0.0 || *x == 1.0);
        let s = paired(
            &base,
            &new,
            clusters.as_deref(),
            c["confidence"].as_f64().unwrap(),
            binary,
        );
        let e = &c["expected"];
        assert_eq!(s.test.name(), e["test"], "{name}");
        assert_eq!(s.n_pairs, e["n_pairs"].as_u64().unwrap(), "{name}");
        assert_eq!(s.n_clusters, e["n_clusters"].as_u64(), "{name}");
        assert_eq!(
            s.pass_to_fail,
            e["pass_to_fail"].as_u64().unwrap(),
            "{name}"
        );
        assert_eq!(
            s.fail_to_pass,
            e["fail_to_pass"].as_u64().unwrap(),
            "{name}"
        );
        for (field, got) in [
            ("base_mean", s.base_mean),
            ("new_mean", s.new_mean),
            ("diff", s.diff),
            ("diff_se", s.diff_se),
            ("ci_low", s.ci_low),
            ("ci_high", s.ci_high),
            ("min_detectable_diff", s.min_detectable_diff),
        ] {
            close(&format!("{name} {field}"), got, &e[field], false);
        }
        close(&format!("{name} p_value"), s.p_value, &e["p_value"], true);
    }
}

/// The whole comparison of the two fixture folders: pairing by key, per-group rows, Holm
/// across the run's comparisons, verdicts and the listed keys.
#[test]
fn folder_comparisons_match_the_golden_rows() {
    let g = golden();
    let dir = root().join("data/golden/compare");
    let runs = g["folders"]["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 3);
    for run in runs {
        let o = &run["options"];
        let mut opts = CompareOptions::new(dir.join("base"), dir.join("new"));
        opts.cluster = o["cluster"].as_str().map(str::to_owned);
        opts.group_by = o["group_by"].as_str().map(str::to_owned);
        opts.confidence = o["confidence"].as_f64().unwrap();
        opts.max_drop = o["max_drop"].as_f64();
        let c = compare(&opts).unwrap();
        let want = run["rows"].as_array().unwrap();
        assert_eq!(c.rows.len(), want.len(), "{o}");
        for (r, w) in c.rows.iter().zip(want) {
            let what = format!("{o} {} {:?}", r.column, r.group);
            assert_eq!(r.column, w["column"].as_str().unwrap(), "{what}");
            assert_eq!(r.group.as_deref(), w["group"].as_str(), "{what}");
            assert_eq!(r.test, w["test"].as_str().unwrap(), "{what}");
            for (field, got) in [
                ("n_pairs", Some(r.n_pairs)),
                ("missing_pairs", Some(r.missing_pairs)),
                ("only_base", Some(r.only_base)),
                ("only_new", Some(r.only_new)),
                ("pass_to_fail", Some(r.pass_to_fail)),
                ("fail_to_pass", Some(r.fail_to_pass)),
                ("n_clusters", r.n_clusters),
            ] {
                assert_eq!(got, w[field].as_u64(), "{what} {field}");
            }
            for (field, got) in [
                ("base_mean", r.base_mean),
                ("new_mean", r.new_mean),
                ("diff", r.diff),
                ("diff_se", r.diff_se),
                ("ci_low", r.ci_low),
                ("ci_high", r.ci_high),
                ("min_detectable_diff", r.min_detectable_diff),
            ] {
                close(&format!("{what} {field}"), got, &w[field], false);
            }
            close(&format!("{what} p_value"), r.p_value, &w["p_value"], true);
            close(
                &format!("{what} p_value_holm"),
                r.p_value_holm,
                &w["p_value_holm"],
                true,
            );
            assert_eq!(r.verdict, w["verdict"].as_str().unwrap(), "{what}");
            assert_eq!(
                Value::from(r.pass_to_fail_keys.clone()),
                w["pass_to_fail_keys"],
                "{what}"
            );
        }
        let only = &g["folders"]["only_keys"];
        // Listed in each run's row order; the golden lists them sorted.
        for (keys, name) in [
            (&c.only_base_keys, "only_base"),
            (&c.only_new_keys, "only_new"),
        ] {
            let mut k: Vec<i64> = keys.iter().map(|k| k.as_i64().unwrap()).collect();
            k.sort_unstable();
            assert_eq!(Value::from(k), only[name], "{name}");
        }
    }
}
