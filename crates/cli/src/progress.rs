//! The run's progress line on stderr (indicatif): until the first rows are scored, how
//! listing and opening the inputs go (a large prefix takes minutes); then rows
//! scored and their rate and, with model-graded scorers, the judge's counters. `run` shows
//! it only when stderr is a terminal and `--quiet` is not given.

use evalscore_engine::{JudgeProgress, OpenStep};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressState, ProgressStyle};
use std::fmt::Write as _;
use std::sync::{Arc, Mutex, Once};
use std::time::Duration;

/// A run shorter than this prints no progress line.
const SHOW_AFTER: Duration = Duration::from_secs(1);
/// Redraws a second (indicatif allows a short burst above it).
const REDRAWS_PER_SECOND: u8 = 5;

/// The progress line; clones draw the same line (the engine reports from several threads).
#[derive(Clone)]
pub struct Progress {
    bar: ProgressBar,
    /// Draws on stderr from [`SHOW_AFTER`] on: the bar starts hidden.
    target: Arc<dyn Fn() -> ProgressDrawTarget + Send + Sync>,
    show_after: Duration,
    shown: Arc<Once>,
    /// What opening the inputs has got to, drawn instead of the rows until they start. Held
    /// only to read or change it, never while the line is drawn (drawing reads it).
    opening: Arc<Mutex<Option<String>>>,
    /// Held by [`Progress::clear`] and by a listing's timer while they draw: the timer never
    /// draws the line again once it is cleared.
    gate: Arc<Mutex<()>>,
}

impl Progress {
    /// A line on stderr, drawn from the first second on.
    pub fn stderr() -> Progress {
        Progress::new(
            || ProgressDrawTarget::stderr_with_hz(REDRAWS_PER_SECOND),
            SHOW_AFTER,
        )
    }

    fn new(
        target: impl Fn() -> ProgressDrawTarget + Send + Sync + 'static,
        show_after: Duration,
    ) -> Progress {
        let bar = ProgressBar::with_draw_target(Some(0), ProgressDrawTarget::hidden());
        let opening: Arc<Mutex<Option<String>>> = Arc::default();
        let drawn = Arc::clone(&opening);
        // The template is fixed: parsing cannot fail (the tests draw it).
        if let Ok(style) = ProgressStyle::with_template("{rows}{msg}") {
            bar.set_style(style.with_key(
                "rows",
                move |s: &ProgressState, w: &mut dyn std::fmt::Write| {
                    let text = match &*drawn.lock().unwrap_or_else(|e| e.into_inner()) {
                        Some(opening) => opening.clone(),
                        None => rows_text(s.pos(), s.len().unwrap_or(0), s.elapsed()),
                    };
                    let _ = w.write_str(&text);
                },
            ));
        }
        Progress {
            bar,
            target: Arc::new(target),
            show_after,
            shown: Arc::new(Once::new()),
            opening,
            gate: Arc::default(),
        }
    }

    /// How listing and opening the inputs go. A listing says so once, so the line is drawn
    /// after the delay by a timer of its own if nothing else has drawn it by then.
    pub fn opening(&self, step: OpenStep) {
        let listing = matches!(step, OpenStep::Listing(_));
        *self.opening.lock().unwrap_or_else(|e| e.into_inner()) = Some(opening_text(&step));
        self.show_when_due();
        self.bar.tick();
        if listing {
            let p = self.clone();
            std::thread::spawn(move || {
                std::thread::sleep(p.show_after.saturating_sub(p.bar.elapsed()));
                let _gate = p.gate.lock().unwrap_or_else(|e| e.into_inner());
                let opening = p
                    .opening
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .is_some();
                if opening && !p.bar.is_finished() {
                    p.show_when_due();
                    p.bar.tick();
                }
            });
        }
    }

    /// Rows scored so far, of all rows.
    pub fn rows(&self, done: u64, total: u64) {
        self.opening
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .take();
        self.show_when_due();
        if self.bar.length() != Some(total) {
            self.bar.set_length(total);
        }
        self.bar.set_position(done);
    }

    /// The judge's live counters (a task with model-graded scorers), about four times a second.
    pub fn judge(&self, j: JudgeProgress) {
        self.show_when_due();
        self.bar.set_message(judge_text(&j));
    }

    /// Prints a warning on its own line on stderr, the progress line (if shown) below it.
    pub fn warn(&self, warning: &str) {
        let warning = evalscore_engine::printable(warning);
        self.bar.suspend(|| eprintln!("warning: {warning}"));
    }

    /// Removes the line, if it was drawn.
    pub fn clear(&self) {
        let _gate = self.gate.lock().unwrap_or_else(|e| e.into_inner());
        self.opening
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .take();
        self.bar.finish_and_clear();
    }

    fn show_when_due(&self) {
        if self.bar.elapsed() >= self.show_after {
            self.shown
                .call_once(|| self.bar.set_draw_target((self.target)()));
        }
    }
}

/// Rows scored, of all, and the rate since the start.
fn rows_text(done: u64, total: u64, elapsed: Duration) -> String {
    let rate = done as f64 / elapsed.as_secs_f64().max(1e-9);
    let pct = if total > 0 {
        100.0 * done as f64 / total as f64
    } else {
        100.0
    };
    format!("{done} / {total} rows ({pct:.0}%), {} rows/s", human(rate))
}

/// Listing an input, or files opened of all.
fn opening_text(step: &OpenStep) -> String {
    match step {
        OpenStep::Listing(input) => format!("listing {} ...", evalscore_engine::printable(input)),
        OpenStep::Opened { done, total } => {
            let pct = 100.0 * *done as f64 / (*total).max(1) as f64;
            format!("opened {done} / {total} files ({pct:.0}%)")
        }
    }
}

/// The judge's part: rows judged, requests in flight, requests sent, cache hits, retries and
/// tokens.
fn judge_text(j: &JudgeProgress) -> String {
    let mut s = String::new();
    let _ = write!(
        s,
        "; judge: {} rows judged, {} in flight, {} sent, {} cache hits, {} retries, {} tokens",
        j.rows_judged, j.in_flight, j.requests_sent, j.cache_hits, j.retries, j.tokens
    );
    s
}

fn human(rate: f64) -> String {
    if rate >= 1e6 {
        format!("{:.2}M", rate / 1e6)
    } else if rate >= 1e3 {
        format!("{:.1}k", rate / 1e3)
    } else {
        format!("{rate:.0}")
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use indicatif::TermLike;
    use std::io;
    use std::sync::Mutex;

    const JUDGE: JudgeProgress = JudgeProgress {
        rows_judged: 1500,
        in_flight: 8,
        requests_sent: 1200,
        cache_hits: 300,
        retries: 2,
        tokens: 45_000,
    };

    #[test]
    fn the_line_shows_rows_rate_and_the_judge_counters() {
        assert_eq!(
            rows_text(2000, 10_000, Duration::from_secs(2)) + &judge_text(&JUDGE),
            "2000 / 10000 rows (20%), 1.0k rows/s; judge: 1500 rows judged, 8 in flight, \
             1200 sent, 300 cache hits, 2 retries, 45000 tokens"
        );
        assert_eq!(
            rows_text(5, 10, Duration::from_secs(1)),
            "5 / 10 rows (50%), 5 rows/s"
        );
        assert_eq!(
            rows_text(0, 0, Duration::ZERO),
            "0 / 0 rows (100%), 0 rows/s"
        );
        assert_eq!(human(2_500_000.0), "2.50M");
    }

    /// A terminal that keeps its one line and counts the writes to it.
    #[derive(Debug, Clone, Default)]
    struct Screen(Arc<Mutex<(String, usize)>>);

    impl Screen {
        fn line(&self) -> String {
            self.0.lock().unwrap().0.clone()
        }
        fn writes(&self) -> usize {
            self.0.lock().unwrap().1
        }
    }

    impl TermLike for Screen {
        fn width(&self) -> u16 {
            500
        }
        fn move_cursor_up(&self, _: usize) -> io::Result<()> {
            Ok(())
        }
        fn move_cursor_down(&self, _: usize) -> io::Result<()> {
            Ok(())
        }
        fn move_cursor_right(&self, _: usize) -> io::Result<()> {
            Ok(())
        }
        fn move_cursor_left(&self, _: usize) -> io::Result<()> {
            Ok(())
        }
        fn write_line(&self, s: &str) -> io::Result<()> {
            self.write_str(s)
        }
        fn write_str(&self, s: &str) -> io::Result<()> {
            let mut screen = self.0.lock().unwrap();
            screen.0.push_str(s);
            screen.1 += 1;
            Ok(())
        }
        fn clear_line(&self) -> io::Result<()> {
            self.0.lock().unwrap().0.clear();
            Ok(())
        }
        fn flush(&self) -> io::Result<()> {
            Ok(())
        }
    }

    fn progress(screen: &Screen, show_after: Duration) -> Progress {
        let s = screen.clone();
        Progress::new(
            move || ProgressDrawTarget::term_like(Box::new(s.clone())),
            show_after,
        )
    }

    #[test]
    fn the_bar_draws_the_line_and_clears_it() {
        let screen = Screen::default();
        let p = progress(&screen, Duration::ZERO);
        p.judge(JUDGE);
        p.rows(5, 10);
        // indicatif pads the line to the terminal's width. The rate depends on the time
        // taken; the rest does not.
        let line = screen.line().trim_end().to_owned();
        assert!(line.starts_with("5 / 10 rows (50%), "), "{line:?}");
        assert!(
            line.ends_with(
                " rows/s; judge: 1500 rows judged, 8 in flight, 1200 sent, 300 cache hits, \
                 2 retries, 45000 tokens"
            ),
            "{line:?}"
        );
        p.clear();
        assert_eq!(screen.line(), "");
    }

    #[test]
    fn opening_is_drawn_until_the_rows_start() {
        assert_eq!(
            opening_text(&OpenStep::Listing("s3://lake/evals/".into())),
            "listing s3://lake/evals/ ..."
        );
        let screen = Screen::default();
        let p = progress(&screen, Duration::ZERO);
        p.opening(OpenStep::Opened {
            done: 64,
            total: 20_000,
        });
        assert_eq!(screen.line().trim_end(), "opened 64 / 20000 files (0%)");
        p.opening(OpenStep::Opened {
            done: 15_000,
            total: 20_000,
        });
        assert_eq!(screen.line().trim_end(), "opened 15000 / 20000 files (75%)");
        p.rows(5, 10);
        let line = screen.line().trim_end().to_owned();
        assert!(line.starts_with("5 / 10 rows (50%), "), "{line:?}");
        p.clear();
        assert_eq!(screen.line(), "");
    }

    /// A listing, which says so once, is drawn after the delay without another call; not
    /// once the line is cleared.
    #[test]
    fn a_long_listing_is_drawn_after_the_delay() {
        let screen = Screen::default();
        let p = progress(&screen, Duration::from_millis(50));
        p.opening(OpenStep::Listing("data/".into()));
        assert_eq!(screen.writes(), 0);
        let t = std::time::Instant::now();
        while screen.line().is_empty() && t.elapsed() < Duration::from_secs(10) {
            std::thread::sleep(Duration::from_millis(10));
        }
        assert_eq!(screen.line().trim_end(), "listing data/ ...");
        p.clear();

        let screen = Screen::default();
        let p = progress(&screen, Duration::from_millis(50));
        p.opening(OpenStep::Listing("data/".into()));
        p.clear();
        std::thread::sleep(Duration::from_millis(200));
        assert_eq!(screen.writes(), 0);
    }

    #[test]
    fn nothing_is_drawn_before_the_delay() {
        let screen = Screen::default();
        let p = progress(&screen, Duration::from_secs(3600));
        p.rows(5, 10);
        p.judge(JUDGE);
        p.clear();
        assert_eq!(screen.writes(), 0);
    }
}
