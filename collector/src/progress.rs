//! The CLI's [`Report`], [`Terminal`]: the GPU library's progress as bars on standard error
//! (drawn only when it is a terminal) and its messages through [`crate::stderr::message`].

use std::io::IsTerminal;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use roofline_gpu::{Progress, Report};

/// A bar of `len` steps titled `what`; drawn only when standard error is a terminal.
pub fn bar(len: u64, what: &str) -> ProgressBar {
    let target = if std::io::stderr().is_terminal() {
        ProgressDrawTarget::stderr()
    } else {
        ProgressDrawTarget::hidden()
    };
    let bar = ProgressBar::with_draw_target(Some(len), target);
    if let Ok(style) =
        ProgressStyle::with_template("{prefix:>18} [{bar:30}] {pos}/{len} {msg} ({elapsed})")
    {
        bar.set_style(style.progress_chars("=> "));
    }
    bar.set_prefix(what.to_owned());
    bar
}

/// The terminal as the GPU library's [`Report`]: a [`bar`] per progress counter, cleared when
/// the counter is dropped, and every message a line of standard error.
#[derive(Debug, Clone, Copy, Default)]
pub struct Terminal;

impl Report for Terminal {
    fn progress(&self, total: u64, label: &str) -> Box<dyn Progress + '_> {
        Box::new(Bar(bar(total, label)))
    }

    fn message(&self, line: &str) {
        crate::stderr::message(line);
    }
}

/// One of [`Terminal`]'s bars.
struct Bar(ProgressBar);

impl Progress for Bar {
    fn inc(&self, steps: u64) {
        self.0.inc(steps);
    }

    fn set_message(&self, what: &str) {
        self.0.set_message(what.to_owned());
    }
}

impl Drop for Bar {
    fn drop(&mut self) {
        self.0.finish_and_clear();
    }
}
