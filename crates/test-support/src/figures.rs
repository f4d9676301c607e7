//! Figures computed by evalscore against golden ones made by reference libraries.

use serde_json::Value;

/// Checks `got` against the golden `want` (a JSON number, or null for none): p-values
/// (`relative`) to a relative 1e-12, other figures to 1e-12 absolute up to 1, relative above.
pub fn close(what: &str, got: Option<f64>, want: &Value, relative: bool) {
    match (got, want.as_f64()) {
        (None, None) => {}
        (Some(g), Some(w)) => {
            let tol = if relative {
                1e-12 * w.abs()
            } else {
                1e-12 * w.abs().max(1.0)
            };
            assert!((g - w).abs() <= tol, "{what}: got {g:e}, want {w:e}");
        }
        (g, _) => panic!("{what}: got {g:?}, want {want}"),
    }
}
