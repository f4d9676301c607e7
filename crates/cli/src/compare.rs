//! `evalscore compare`: writes compare.parquet and compare.json, prints the table and the
//! gate; exit 1 when the gate fails. Two suites' folders are compared whole
//! ([`crate::compare_suite`]).

use crate::args::CompareArgs;
use crate::compare_rows::{cells, is_number, HEADER};
use crate::table;
use evalscore_compare::{CompareOptions, Compared, Comparison};
use evalscore_engine::Error;
use std::process::ExitCode;

pub fn compare(a: CompareArgs) -> Result<ExitCode, Error> {
    // Runs of a Delta root are read back into local folders first (kept until the end): a
    // run folder for a task's run, a suite folder for a suite's.
    let (_held, base, new) = match (&a.base_run, &a.new_run, a.new) {
        (Some(b), Some(n), _) => {
            let held = crate::tables::Held::new()?;
            let base = held.run(&a.base, b)?;
            let new = held.run(&a.base, n)?;
            (Some(held), base, new)
        }
        (_, _, Some(new)) => (None, a.base, new),
        _ => return Err(Error::new("compare takes two run folders, or a Delta table root with --base RUN_ID and --new RUN_ID")),
    };
    let compared = evalscore_compare::compare_folders(&CompareOptions {
        base,
        new,
        key: a.key,
        cluster: a.cluster,
        group_by: a.group_by,
        confidence: a.confidence,
        max_drop: a.max_drop,
    })?;
    let c = match compared {
        Compared::Runs(c) => c,
        Compared::Suites(s) => return crate::compare_suite::finish(&s, &a.out, a.overwrite),
    };
    evalscore_compare::write(&c, &a.out, a.overwrite)?;
    print!("{}", render(&c));
    Ok(ExitCode::from(if c.gate_failed() { 1 } else { 0 }))
}

/// The stdout table: one line per comparison, the row counts, then the gate.
fn render(c: &Comparison) -> String {
    let right: Vec<bool> = (0..HEADER.len()).map(is_number).collect();
    let rows: Vec<Vec<String>> = c.rows.iter().map(cells).collect();
    let mut out = table::render(&HEADER, &rows, &right);
    out.push_str(&format!(
        "\n{} rows in base, {} in new; {} only in base, {} only in new\n",
        c.base_rows,
        c.new_rows,
        c.rows.first().map_or(0, |r| r.only_base),
        c.rows.first().map_or(0, |r| r.only_new),
    ));
    match c.options.max_drop {
        None => out.push_str("gate: off (pass --max-drop to turn it on)\n"),
        Some(x) => {
            let regressed = c.rows.iter().filter(|r| r.verdict == "regressed").count();
            if regressed > 0 {
                out.push_str(&format!(
                    "gate: FAILED, {regressed} comparison(s) regressed by more than {x}\n"
                ));
            } else {
                out.push_str(&format!("gate: passed (max drop {x})\n"));
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use evalscore_compare::CompareRow;

    fn row(
        group: Option<&str>,
        diff: Option<f64>,
        p: Option<f64>,
        verdict: &'static str,
    ) -> CompareRow {
        CompareRow {
            column: "exact__is_correct".to_owned(),
            group: group.map(str::to_owned),
            test: "mcnemar",
            n_pairs: 143,
            missing_pairs: 0,
            only_base: 7,
            only_new: 10,
            n_clusters: None,
            base_mean: Some(0.7483),
            new_mean: diff.map(|d| 0.7483 + d),
            diff,
            diff_se: None,
            ci_low: diff.map(|d| d - 0.05),
            ci_high: diff.map(|d| d + 0.05),
            p_value: p,
            p_value_holm: p.map(|p| (p * 2.0).min(1.0)),
            pass_to_fail: 0,
            fail_to_pass: 0,
            min_detectable_diff: None,
            verdict,
            pass_to_fail_keys: Vec::new(),
            fail_to_pass_keys: Vec::new(),
        }
    }

    #[test]
    fn the_table_then_the_counts_then_the_gate() {
        let mut options = CompareOptions::new("base", "new");
        options.max_drop = Some(0.05);
        let mut c = Comparison {
            options,
            rows: vec![
                row(None, Some(-0.1119), Some(0.000763), "regressed"),
                row(Some("chemistry"), None, None, "tied"),
            ],
            only_base_keys: Vec::new(),
            only_new_keys: Vec::new(),
            base_rows: 150,
            new_rows: 153,
        };
        assert_eq!(
            render(&c),
            "column             group      pairs    base     new     diff            interval        p  p_holm  verdict\n\
             -----------------  ---------  -----  ------  ------  -------  ------------------  -------  ------  ---------\n\
             exact__is_correct  (all)        143  0.7483  0.6364  -0.1119  [-0.1619, -0.0619]  7.63e-4  0.0015  regressed\n\
             exact__is_correct  chemistry    143  0.7483       -        -                   -        -       -  tied\n\
             \n\
             150 rows in base, 153 in new; 7 only in base, 10 only in new\n\
             gate: FAILED, 1 comparison(s) regressed by more than 0.05\n"
        );
        c.rows.truncate(0);
        c.options.max_drop = None;
        assert!(render(&c).ends_with(
            "\n150 rows in base, 153 in new; 0 only in base, 0 only in new\n\
             gate: off (pass --max-drop to turn it on)\n"
        ));
    }
}
