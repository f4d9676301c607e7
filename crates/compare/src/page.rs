//! `evalscore report`'s page: a run's ([`crate::report`]) or, when the folder is a suite's
//! (its suite.json), a suite's with one section per task ([`crate::report_suite`]).

use crate::report::{render, run_report, ReportOptions};
use crate::report_suite;
use crate::suite::{self, Kind};
use evalscore_error::Error;

/// The report's HTML: of a run, or of a suite when `o.run` is a suite's folder (its
/// suite.json). With a baseline, both folders are runs or both suites.
pub fn report(o: &ReportOptions) -> Result<String, Error> {
    let suite = match &o.baseline {
        Some(base) => suite::kind_named(base, &o.run, ["baseline", "report's"])? == Kind::Suites,
        None => suite::is_suite(&o.run),
    };
    if suite {
        return render(report_suite::context(o)?);
    }
    run_report(o)
}
