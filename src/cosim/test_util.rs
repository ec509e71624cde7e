//! Helpers the co-simulation tests share.

use super::stream::RunStats;

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
