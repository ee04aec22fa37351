//! A measurement stopped by Ctrl-C or by `timeout` keeps what it measured: while `roofline
//! machine` runs, SIGINT and SIGTERM only raise a flag, which the timing loops read ([`crate::Session`]'s phases fail with `DeviceError::Interrupted`); the run
//! then stops like a failed phase, and its bundle is written marked incomplete, naming the
//! interruption, before the command exits non-zero. The handler resets itself: a second signal
//! ends the process at once.

use std::sync::atomic::{AtomicBool, Ordering};

static REQUESTED: AtomicBool = AtomicBool::new(false);

#[cfg(unix)]
extern "C" fn on_signal(_: libc::c_int) {
    // An atomic store: async-signal-safe.
    REQUESTED.store(true, Ordering::SeqCst);
}

/// Routes SIGINT and SIGTERM to the flag for the rest of the process (once each).
pub fn watch() {
    #[cfg(unix)]
    for signal in [libc::SIGINT, libc::SIGTERM] {
        #[allow(unsafe_code)]
        // SAFETY: `sigaction` with a zeroed struct, an empty mask and a handler that only stores
        // to an atomic; SA_RESETHAND restores the default action once it has run.
        unsafe {
            let mut action: libc::sigaction = std::mem::zeroed();
            action.sa_sigaction = on_signal as extern "C" fn(libc::c_int) as libc::sighandler_t;
            action.sa_flags = libc::SA_RESETHAND;
            libc::sigemptyset(&raw mut action.sa_mask);
            libc::sigaction(signal, &raw const action, std::ptr::null_mut());
        }
    }
}

/// Whether an interruption was asked for.
pub fn requested() -> bool {
    REQUESTED.load(Ordering::SeqCst)
}

#[cfg(test)]
mod tests {
    /// A signal raises the flag instead of ending the process; the handler then resets.
    #[cfg(unix)]
    #[test]
    fn a_signal_raises_the_flag() {
        super::watch();
        #[allow(unsafe_code)]
        // SAFETY: sends SIGTERM to this process, whose handler was installed above.
        unsafe {
            libc::raise(libc::SIGTERM);
        }
        assert!(super::requested());
        super::REQUESTED.store(false, super::Ordering::SeqCst);
    }
}
