//! `evalscore report`: one self-contained HTML file of a run.

use crate::args::ReportArgs;
use evalscore_compare::ReportOptions;
use evalscore_engine::Error;
use std::process::ExitCode;

pub fn report(a: ReportArgs) -> Result<ExitCode, Error> {
    let names = a.run_id.as_ref().map(|id| {
        let shown = a.run.display();
        (
            format!("{shown}, run {id}"),
            format!(
                "{shown}, run {}",
                a.baseline_run_id.as_deref().unwrap_or("")
            ),
        )
    });
    // Runs of a Delta root are read back into local folders first (kept until the end).
    let (_held, run, baseline) = match &a.run_id {
        Some(id) => {
            let held = crate::tables::Held::new()?;
            let run = held.run(&a.run, id)?;
            let baseline = match &a.baseline_run_id {
                Some(b) => Some(held.run(&a.run, b)?),
                None => None,
            };
            (Some(held), run, baseline)
        }
        None => (None, a.run, a.baseline),
    };
    let html = evalscore_compare::report(&ReportOptions {
        run,
        baseline,
        names,
        key: a.key,
    })?;
    evalscore_compare::report::write_report(&html, &a.output, a.overwrite)?;
    println!("wrote {}", a.output.display());
    Ok(ExitCode::SUCCESS)
}
