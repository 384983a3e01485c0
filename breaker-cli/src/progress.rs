//! A progress bar on stderr for long runs only (indicatif; hidden when stderr is not a
//! terminal).

use indicatif::{ProgressBar, ProgressStyle};

/// Runs with more simulated calls than this show a bar (about a second of work).
pub const LONG_RUN_CALLS: f64 = 5e6;

/// Progress through `len` steps, drawn only when the run simulates more than
/// [`LONG_RUN_CALLS`] calls.
pub struct Progress {
    bar: Option<ProgressBar>,
    last: u64,
}

impl Progress {
    /// A bar over `len` steps named `what` (e.g. `virtual s`), shown when `calls` (the
    /// expected number of simulated calls) makes the run long.
    pub fn new(calls: f64, len: u64, what: &str) -> Self {
        let bar = (calls > LONG_RUN_CALLS).then(|| {
            let b = ProgressBar::new(len);
            if let Ok(style) = ProgressStyle::with_template(&format!(
                "{{spinner}} simulating [{{bar:40}}] {{pos}}/{{len}} {what} (eta {{eta}})"
            )) {
                b.set_style(style);
            }
            b
        });
        Progress { bar, last: 0 }
    }

    /// Moves the bar to `pos` (cheap when `pos` has not changed).
    #[inline]
    pub fn set(&mut self, pos: u64) {
        if pos != self.last {
            self.last = pos;
            if let Some(b) = &self.bar {
                b.set_position(pos);
            }
        }
    }

    /// Removes the bar.
    pub fn finish(self) {
        if let Some(b) = self.bar {
            b.finish_and_clear();
        }
    }
}
