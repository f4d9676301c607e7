//! A panic guard around parquet-rs: some damaged inputs make it panic (an index out of
//! bounds, an overflow) instead of returning an error (UPSTREAM-PROPOSALS.md, "Errors, not
//! panics"). Every call into it on bytes from a file runs under [`guarded`].

/// Runs the Parquet decoder on damaged bytes without letting a panic in it escape: a panic
/// becomes `Err` with its message, reported as a damaged file rather than an internal error.
pub fn guarded<T>(f: impl FnOnce() -> T) -> Result<T, String> {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)).map_err(|p| {
        let what = p
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| p.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "unknown failure".to_owned());
        format!("the Parquet decoder failed: {what}")
    })
}
