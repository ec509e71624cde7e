//! Helpers the co-simulation tests share.

use super::stream::{Mismatch, RunStats};

/// Asserts that the run saw no mismatch; the message names `what` and the first mismatch.
pub fn assert_clean(st: &RunStats, what: &str) {
    assert!(
        st.first_mismatch.is_none(),
        "{what}: {}",
        st.first_mismatch
            .as_ref()
            .map(|m| m.to_string())
            .unwrap_or_default()
    );
}

/// The first mismatch of a run of a design with an injected fault, which the run must have
/// caught.
pub fn fault_caught(run: Result<RunStats, String>) -> Mismatch {
    run.unwrap()
        .first_mismatch
        .expect("the injected fault must be detected")
}
