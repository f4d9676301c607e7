//! `evalscore report`: one self-contained HTML file of a run.

use crate::args::ReportArgs;
use evalscore_compare::ReportOptions;
use evalscore_engine::Error;
use std::process::ExitCode;

pub fn report(a: ReportArgs) -> Result<ExitCode, Error> {
    let html = evalscore_compare::report(&ReportOptions {
        run: a.run,
        baseline: a.baseline,
        key: a.key,
    })?;
    evalscore_compare::report::write_report(&html, &a.output, a.overwrite)?;
    println!("wrote {}", a.output.display());
    Ok(ExitCode::SUCCESS)
}
