//! The pairwise battle example (`data/examples/battles.jsonl`): four models answer the same
//! prompts two at a time, and each battle has a human verdict and a judge's (`A`, `B` or
//! `tie`). The models have fixed strengths, so the ratings a task computes from the file
//! are stable; the judge agrees with the human on most battles, and says `A` or `tie` on
//! some of the others (a position bias).

use crate::rng::Rng;
use std::fmt::Write as _;
use std::path::Path;

/// Battles in the file.
pub const BATTLES: u64 = 120;
/// The models and their strengths (win odds against a model of strength 1.0).
const MODELS: [(&str, f64); 4] = [
    ("atlas-7b", 1.0),
    ("borealis-13b", 1.8),
    ("cirrus-70b", 3.5),
    ("dune-1b", 0.4),
];
const PROMPTS: [&str; 6] = [
    "Explain why the sky is blue in two sentences.",
    "Write a haiku about autumn rain.",
    "What is 17 × 23? Show the steps.",
    "Summarise the plot of Hamlet in one paragraph.",
    "Give three tips for a first job interview.",
    "Translate 'good morning' into French, Spanish and German.",
];

/// Battle `i` as a JSON line.
fn battle(i: u64) -> String {
    let mut r = Rng::for_row(20_301, i);
    let a = r.below(4) as usize;
    let b = (a + 1 + r.below(3) as usize) % 4;
    let (ma, sa) = MODELS[a];
    let (mb, sb) = MODELS[b];
    let roll = r.below(1000) as f64 / 1000.0;
    let human = if roll < 0.12 {
        "tie"
    } else if roll < 0.12 + 0.88 * sa / (sa + sb) {
        "A"
    } else {
        "B"
    };
    let judge = match r.below(10) {
        0 => "A",
        1 => "tie",
        _ => human,
    };
    let prompt = PROMPTS[r.below(PROMPTS.len() as u64) as usize];
    serde_json::json!({
        "id": i,
        "prompt": prompt,
        "model_a": ma,
        "model_b": mb,
        "output_a": format!("[{ma}'s answer to: {prompt}]"),
        "output_b": format!("[{mb}'s answer to: {prompt}]"),
        "human": human,
        "judge": judge,
    })
    .to_string()
}

/// Writes `battles.jsonl` into `out`.
pub fn write(out: &Path) -> std::io::Result<()> {
    let mut text = String::new();
    for i in 0..BATTLES {
        text.push_str(&battle(i));
        text.push('\n');
    }
    std::fs::write(out.join("battles.jsonl"), text)?;
    eprintln!(
        "wrote {BATTLES} rows to {}",
        out.join("battles.jsonl").display()
    );
    Ok(())
}

/// The README's section on the file.
pub fn readme() -> String {
    let mut r = String::new();
    let _ = write!(
        r,
        "\n## `battles.jsonl` — pairwise battles, {BATTLES} rows\n\n\
         Four models (`{}`) answer the same prompts two at a time. `human` and `judge` are\n\
         verdicts `A`, `B` or `tie`; the judge agrees with the human on most battles and\n\
         says `A` or `tie` on some others. `battles.yaml` computes the win rate of answer A,\n\
         the Bradley-Terry ratings of the models and the judge's agreement with the human.\n\n\
         | column | type |\n|---|---|\n| `id` | integer |\n\
         | `prompt`, `model_a`, `model_b`, `output_a`, `output_b`, `human`, `judge` | text |\n",
        MODELS.map(|m| m.0).join("`, `")
    );
    r
}

#[cfg(test)]
mod tests {
    #[test]
    fn battles_are_deterministic_and_between_two_models() {
        assert_eq!(super::battle(7), super::battle(7));
        for i in 0..super::BATTLES {
            let v: serde_json::Value = serde_json::from_str(&super::battle(i)).unwrap();
            assert_ne!(v["model_a"], v["model_b"]);
        }
    }
}
