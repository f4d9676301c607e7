//! The programs the tests drive, installed by `scripts/setup/*.sh`: a script installs them
//! once into ~/.cache/evalscore, then prints `NAME=path` lines (instantly, once cached).

use std::path::PathBuf;
use std::process::{Command, Stdio};

/// Runs `scripts/setup/<script>` and returns the paths it printed for `names`, in order.
pub(crate) fn installed<const N: usize>(script: &str, names: [&str; N]) -> [PathBuf; N] {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..");
    let script = format!("scripts/setup/{script}");
    let out = Command::new("bash")
        .arg(root.join(&script))
        .stderr(Stdio::inherit())
        .output()
        .unwrap();
    assert!(out.status.success(), "{script} failed");
    let text = String::from_utf8(out.stdout).unwrap();
    names.map(|name| {
        text.lines()
            .find_map(|l| l.strip_prefix(&format!("{name}=")))
            .map(PathBuf::from)
            .unwrap_or_else(|| panic!("no {name} in the setup script's output: {text}"))
    })
}
