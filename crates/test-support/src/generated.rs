//! Files generated from the code (docs/scorer-reference.md, docs/metric-reference.md): a
//! test compares the committed file with a fresh rendering, and rewrites it when
//! `EVALSCORE_UPDATE_REFERENCE` is set.

/// Checks that `path` holds `rendered` (or writes it under `EVALSCORE_UPDATE_REFERENCE`);
/// gives the committed text. `regenerate` is the command the failure message names.
pub fn check(path: &str, rendered: &str, regenerate: &str) -> String {
    if std::env::var_os("EVALSCORE_UPDATE_REFERENCE").is_some() {
        std::fs::write(path, rendered).expect("write the generated file");
        return rendered.to_owned();
    }
    let committed = std::fs::read_to_string(path).unwrap_or_default();
    let name = path.rsplit("/../../").next().unwrap_or(path);
    assert!(
        committed == rendered,
        "{name} is not the registry's rendering; regenerate it with `{regenerate}`"
    );
    committed
}
