//! The Parquet input path on arbitrary bytes: the bytes are written to a temporary `.parquet`
//! file, then `Inputs::open` reads the footer and `read_unit` decodes every row group with
//! every column. Both must return Ok or a `ReadError`, never panic. (Panics inside the
//! Parquet decoder are caught by the reader and reported as a damaged file; this target
//! silences the panic hook so only panics that escape evalscore count as crashes.)
#![no_main]

use evalscore_reader::Inputs;
use libfuzzer_sys::fuzz_target;
use std::path::PathBuf;
use std::sync::OnceLock;

fn path() -> &'static PathBuf {
    static P: OnceLock<PathBuf> = OnceLock::new();
    P.get_or_init(|| {
        std::env::temp_dir().join(format!("evalscore-fuzz-{}.parquet", std::process::id()))
    })
}

fuzz_target!(
    init: {
        std::panic::set_hook(Box::new(|_| {}));
    },
    |data: &[u8]| {
        let p = path();
        if std::fs::write(p, data).is_err() {
            return;
        }
        let Ok(inputs) = Inputs::open(std::slice::from_ref(p)) else {
            return;
        };
        let columns: Vec<String> = inputs
            .schema
            .fields()
            .iter()
            .map(|f| f.name().clone())
            .collect();
        for unit in inputs.units() {
            if inputs
                .read_unit::<evalscore_reader::ReadError>(&unit, &columns, |_| Ok(()))
                .is_err()
            {
                break;
            }
        }
    }
);
