//! `synthetic`: large MCQA-style Parquet file, streamed batch by batch, in one of two
//! profiles: `default` (the bundled benchmark file) or `export` (see [`crate::export`]).

use std::fs::File;
use std::io::BufWriter;
use std::path::Path;
use std::sync::mpsc::sync_channel;

use arrow::datatypes::SchemaRef;
use arrow::error::ArrowError;
use arrow::record_batch::RecordBatch;
use parquet::arrow::ArrowWriter;
use parquet::schema::types::ColumnPath;

use crate::rng::Rng;
pub use crate::rows::schema;
use crate::rows::{
    append_words, mcqa_answer_and_choices, mcqa_prompt, Builders, PushStr, LETTERS, LOWER,
};
use crate::writer_props;

/// The shape of the generated rows; both have the same schema.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Profile {
    /// Every row multiple choice with a list of choices (the bundled benchmark file).
    Default,
    /// Rows shaped like a real evaluation export ([`crate::export`]).
    Export,
}

impl std::str::FromStr for Profile {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "default" => Ok(Profile::Default),
            "export" => Ok(Profile::Export),
            _ => Err("expected `default` or `export`".to_owned()),
        }
    }
}

/// Options of the `synthetic` subcommand.
#[derive(Debug, Clone)]
pub struct Options {
    pub rows: u64,
    pub row_group_size: usize,
    pub batch_size: usize,
    pub seed: u64,
    pub profile: Profile,
}

/// Generates row `id` of the default profile into the builders. Pure function of
/// `(seed, id)`.
fn gen_row(b: &mut Builders, seed: u64, id: u64) {
    let mut rng = Rng::for_row(seed, id);
    let n_choices: usize = if rng.chance(150) { 3 } else { 4 };
    let answer_null = rng.chance(1);
    let answer = rng.below(n_choices as u64) as usize;

    b.id.append_value(id as i64);

    mcqa_prompt(&mut b.prompt, &mut rng, id, n_choices);

    // output: correct letter with p=0.66, otherwise a different letter A-D.
    let letter = if answer_null || rng.chance(660) {
        answer
    } else {
        (answer + 1 + rng.below(3) as usize) % 4
    };
    let l = LETTERS[letter];
    let fmt = rng.below(1000);
    match fmt {
        0..480 => b.output.append_value(l),
        480..600 => {
            b.output.push_str(l);
            b.output.push_str(". because ");
            let start = b.output.values_slice().len();
            append_words(&mut b.output, &mut rng, start, 20);
            b.output.append_value("");
        }
        600..690 => {
            b.output.push_str("The answer is ");
            b.output.append_value(l);
        }
        690..770 => {
            b.output.push_str(" ");
            b.output.append_value(l);
        }
        770..840 => b.output.append_value(LOWER[letter]),
        840..900 => {
            b.output.push_str(l);
            b.output.push_str(") ");
            let start = b.output.values_slice().len();
            append_words(&mut b.output, &mut rng, start, 12);
            b.output.append_value("");
        }
        900..940 => {
            b.output.push_str("Answer: ");
            b.output.append_value(l);
        }
        940..980 => b.output.append_value(""),
        980..990 => b.output.append_value("I am not sure."),
        _ => b.output.append_null(),
    }

    mcqa_answer_and_choices(b, (!answer_null).then_some(answer), n_choices);

    let gt = rng.chance(450);
    b.label_gt.append_value(if gt { "yes" } else { "no" });
    match rng.below(1000) {
        0..5 => b.label_pred.append_null(),
        5..10 => b.label_pred.append_value("maybe"),
        x => {
            let agree = x < 10 + 850;
            b.label_pred
                .append_value(if gt == agree { "yes" } else { "no" });
        }
    }
}

/// Builds rows `start..start+len` of `profile` as one record batch.
pub fn build_batch(
    schema: SchemaRef,
    profile: Profile,
    seed: u64,
    start: u64,
    len: usize,
) -> Result<RecordBatch, ArrowError> {
    let mut b = Builders::new(len);
    let row = match profile {
        Profile::Default => gen_row,
        Profile::Export => crate::export::gen_row,
    };
    for id in start..start + len as u64 {
        row(&mut b, seed, id);
    }
    b.finish(schema)
}

/// Writes the synthetic file. Generation runs on a helper thread while the
/// main thread encodes; at most two batches are in flight.
pub fn run(opts: &Options, out: &Path) -> Result<(), Box<dyn std::error::Error>> {
    let schema = schema();
    let props = writer_props(opts.row_group_size)
        // prompts are high-cardinality: skip the dictionary attempt
        .set_column_dictionary_enabled(ColumnPath::from("prompt"), false)
        .build();
    let file = BufWriter::with_capacity(1 << 20, File::create(out)?);
    let mut writer = ArrowWriter::try_new(file, schema.clone(), Some(props))?;

    let (tx, rx) = sync_channel::<Result<RecordBatch, ArrowError>>(1);
    let rows = opts.rows;
    let batch = opts.batch_size.max(1) as u64;
    let (seed, profile) = (opts.seed, opts.profile);
    let gen_schema = schema.clone();
    std::thread::scope(|s| -> Result<(), Box<dyn std::error::Error>> {
        s.spawn(move || {
            let mut start = 0;
            while start < rows {
                let len = batch.min(rows - start) as usize;
                let b = build_batch(gen_schema.clone(), profile, seed, start, len);
                if tx.send(b).is_err() {
                    break;
                }
                start += len as u64;
            }
        });
        for b in rx {
            writer.write(&b?)?;
        }
        Ok(())
    })?;
    let meta = writer.close()?;
    eprintln!(
        "wrote {} rows in {} row groups to {}",
        meta.file_metadata().num_rows(),
        meta.num_row_groups(),
        out.display()
    );
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_independent_of_batching() -> Result<(), ArrowError> {
        let s = schema();
        for p in [Profile::Default, Profile::Export] {
            let whole = build_batch(s.clone(), p, 7, 0, 1000)?;
            let a = build_batch(s.clone(), p, 7, 0, 333)?;
            let b = build_batch(s.clone(), p, 7, 333, 667)?;
            let joined = arrow::compute::concat_batches(&s, [&a, &b])?;
            assert_eq!(whole, joined, "{p:?}");
        }
        Ok(())
    }

    /// The default profile's file for a fixed seed is the one it was before the export profile
    /// existed (checksum of `evalscore-gen inspect FILE --checksum true` at that commit).
    #[test]
    fn default_profile_unchanged() -> Result<(), Box<dyn std::error::Error>> {
        let path = std::env::temp_dir().join(format!(
            "evalscore-gen-default-{}.parquet",
            std::process::id()
        ));
        let opts = Options {
            rows: 20_000,
            row_group_size: 1_000_000,
            batch_size: 65_536,
            seed: 42,
            profile: Profile::Default,
        };
        let written = run(&opts, &path).and_then(|()| crate::content_checksum(&path));
        std::fs::remove_file(&path)?;
        assert_eq!(format!("{:016x}", written?), "b8c1a197bd32bb9b");
        Ok(())
    }

    #[test]
    fn profile_names() {
        assert_eq!("default".parse(), Ok(Profile::Default));
        assert_eq!("export".parse(), Ok(Profile::Export));
        assert_eq!(
            "Export".parse::<Profile>(),
            Err("expected `default` or `export`".to_owned())
        );
    }

    #[test]
    fn accuracy_in_range() -> Result<(), ArrowError> {
        use arrow::array::{Array, AsArray};
        let b = build_batch(schema(), Profile::Default, 42, 0, 20_000)?;
        let out = b.column(2).as_string::<i32>();
        let ans = b.column(3).as_string::<i32>();
        let prompt = b.column(1).as_string::<i32>();
        let mut correct = 0usize;
        for i in 0..b.num_rows() {
            if out.is_valid(i) && ans.is_valid(i) {
                let o = out.value(i).trim().to_ascii_uppercase();
                let o = o.strip_prefix("THE ANSWER IS ").unwrap_or(&o);
                let o = o.strip_prefix("ANSWER: ").unwrap_or(o);
                if o.starts_with(ans.value(i)) {
                    correct += 1;
                }
            }
            let p = prompt.value(i).len();
            assert!((200..=600).contains(&p), "prompt length {p}");
        }
        let acc = correct as f64 / b.num_rows() as f64;
        assert!((0.6..=0.7).contains(&acc), "accuracy {acc}");
        Ok(())
    }
}
