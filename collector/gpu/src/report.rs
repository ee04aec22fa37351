//! How the library tells its caller what it is doing: the caller hands a [`Report`] to the runs
//! ([`crate::machine::run`], [`crate::suite::run`]) and to [`crate::cudalibs::prepare`], and the
//! library asks it for progress counters and hands it one-line messages. The library never
//! writes to a terminal itself: the CLI implements [`Report`] with its progress bars and its one
//! writer of standard error; tests pass [`Silent`].

/// Where progress and messages go.
pub trait Report {
    /// A progress counter of `total` steps titled `label` (a run's phases, a sweep's points); it
    /// is finished, and may disappear, when the returned handle is dropped.
    fn progress(&self, total: u64, label: &str) -> Box<dyn Progress + '_>;

    /// One line for the person running the work (what was found, what is being done).
    fn message(&self, line: &str);
}

/// One progress counter of a [`Report`]; finished when dropped.
pub trait Progress {
    /// `steps` more steps are done.
    fn inc(&self, steps: u64);

    /// What is being done now (the phase's name).
    fn set_message(&self, what: &str);
}

/// A [`Report`] that shows nothing: no counter, no message.
#[derive(Debug, Clone, Copy, Default)]
pub struct Silent;

impl Report for Silent {
    fn progress(&self, _total: u64, _label: &str) -> Box<dyn Progress + '_> {
        Box::new(Silent)
    }

    fn message(&self, _line: &str) {}
}

impl Progress for Silent {
    fn inc(&self, _steps: u64) {}

    fn set_message(&self, _what: &str) {}
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A caller's report sees every step and message; `Silent` takes them all without a sound.
    #[test]
    fn a_report_receives_progress_and_messages() {
        use std::cell::RefCell;
        #[derive(Default)]
        struct Log(RefCell<Vec<String>>);
        struct Counter<'a>(&'a Log);
        impl Report for Log {
            fn progress(&self, total: u64, label: &str) -> Box<dyn Progress + '_> {
                self.0.borrow_mut().push(format!("{label}: 0/{total}"));
                Box::new(Counter(self))
            }
            fn message(&self, line: &str) {
                self.0.borrow_mut().push(line.to_owned());
            }
        }
        impl Progress for Counter<'_> {
            fn inc(&self, steps: u64) {
                self.0.0.borrow_mut().push(format!("+{steps}"));
            }
            fn set_message(&self, what: &str) {
                self.0.0.borrow_mut().push(format!("now {what}"));
            }
        }
        impl Drop for Counter<'_> {
            fn drop(&mut self) {
                self.0.0.borrow_mut().push("done".into());
            }
        }
        let log = Log::default();
        let report: &dyn Report = &log;
        {
            let bar = report.progress(2, "measuring");
            bar.set_message("HBM");
            bar.inc(1);
        }
        report.message("a note");
        assert_eq!(
            *log.0.borrow(),
            ["measuring: 0/2", "now HBM", "+1", "done", "a note"]
        );
        let silent: &dyn Report = &Silent;
        silent.progress(1, "x").inc(1);
        silent.message("unseen");
    }
}
