#!/usr/bin/env python3
"""Golden scores for evalscore's lexical scorers (crates/kernels/src/lexical.rs), computed by
the reference libraries:

    f1           SQuAD v1.1 token F1 (normalize_answer, f1_score, best over references)
    rouge1/2/L   rouge-score RougeScorer defaults (no stemmer), F-measure, score_multi
    bleu         sacrebleu.sentence_bleu(hyp, refs).score / 100 (13a, exp smoothing)
    chrf         sacrebleu CHRF(word_order=2).sentence_score(hyp, refs).score / 100
    levenshtein  rapidfuzz Levenshtein.normalized_similarity, best over references

Hugging Face `evaluate`'s `squad` metric is a script fetched from the Hugging Face Hub at
run time, which this offline generator cannot reach; that script calls the official SQuAD
v1.1 evaluation functions, which are reproduced below unchanged (normalize_answer,
f1_score, metric_max_over_ground_truths).

Writes crates/kernels/tests/golden/lexical.jsonl: one case per line, with `prediction`
(null: a null value), `references` (null: a null expected cell) and each scorer's expected
score. Null sides score 0.0 by evalscore's null rule (the libraries take no nulls).

Deterministic: hand-written cases plus pairs drawn by random.Random(SEED).

    pip install -r scripts/golden/requirements-lexical.txt
    python3 scripts/golden/lexical.py
"""

from __future__ import annotations

import json
import random
import re
import string
from collections import Counter
from pathlib import Path

import rapidfuzz
import rouge_score
import sacrebleu
from rapidfuzz.distance import Levenshtein
from rouge_score import rouge_scorer
from sacrebleu.metrics import CHRF

SEED = 20261125
ROOT = Path(__file__).resolve().parents[2]
OUT = ROOT / "crates" / "kernels" / "tests" / "golden" / "lexical.jsonl"


# --- SQuAD v1.1 official evaluation script (unchanged) ---------------------------------
def normalize_answer(s):
    """Lower text and remove punctuation, articles and extra whitespace."""

    def remove_articles(text):
        return re.sub(r"\b(a|an|the)\b", " ", text)

    def white_space_fix(text):
        return " ".join(text.split())

    def remove_punc(text):
        exclude = set(string.punctuation)
        return "".join(ch for ch in text if ch not in exclude)

    def lower(text):
        return text.lower()

    return white_space_fix(remove_articles(remove_punc(lower(s))))


def f1_score(prediction, ground_truth):
    prediction_tokens = normalize_answer(prediction).split()
    ground_truth_tokens = normalize_answer(ground_truth).split()
    common = Counter(prediction_tokens) & Counter(ground_truth_tokens)
    num_same = sum(common.values())
    if num_same == 0:
        return 0
    precision = 1.0 * num_same / len(prediction_tokens)
    recall = 1.0 * num_same / len(ground_truth_tokens)
    f1 = (2 * precision * recall) / (precision + recall)
    return f1


def metric_max_over_ground_truths(metric_fn, prediction, ground_truths):
    scores_for_ground_truths = []
    for ground_truth in ground_truths:
        score = metric_fn(prediction, ground_truth)
        scores_for_ground_truths.append(score)
    return max(scores_for_ground_truths)


# ----------------------------------------------------------------------------------------

ROUGE = rouge_scorer.RougeScorer(["rouge1", "rouge2", "rougeL"])
CHRF_PP = CHRF(word_order=2)


def scores(prediction, references):
    if prediction is None or references is None or not references:
        return {k: 0.0 for k in ("f1", "rouge1", "rouge2", "rougeL", "bleu", "chrf", "levenshtein")}
    r = ROUGE.score_multi(references, prediction)
    return {
        "f1": float(metric_max_over_ground_truths(f1_score, prediction, references)),
        "rouge1": r["rouge1"].fmeasure,
        "rouge2": r["rouge2"].fmeasure,
        "rougeL": r["rougeL"].fmeasure,
        "bleu": sacrebleu.sentence_bleu(prediction, references).score / 100,
        "chrf": CHRF_PP.sentence_score(prediction, references).score / 100,
        "levenshtein": max(Levenshtein.normalized_similarity(prediction, x) for x in references),
    }


HAND = [
    ("Paris", ["Paris"]),
    ("The capital of France is Paris.", ["Paris is the capital of France."]),
    ("the cat sat on the mat", ["the cat is on the mat"]),
    ("a an the", ["the"]),
    ("", [""]),
    ("", ["something"]),
    ("something", [""]),
    ("   ", ["\t\n"]),
    (None, ["x"]),
    ("x", None),
    (None, None),
    ("x", []),
    ("Hello, world!", ["Hello world"]),
    ("It costs $1,234.50 - or 3.5-4 units.", ["It costs 1234.50 dollars, or 3.5 to 4 units."]),
    ("Tom &amp; Jerry &lt;3 &quot;cartoon&quot;", ['Tom & Jerry <3 "cartoon"']),
    ("line one-\nline two\nline three", ["line oneline two line three"]),
    ("<skipped> text here", ["text here"]),
    ("Ünïcödé façade café naïve", ["Unicode facade cafe naive"]),
    ("東京は日本の首都です。", ["日本の首都は東京です。"]),
    ("Москва — столица России.", ["Столица России — Москва."]),
    ("emoji 🙂 test 🙂🙂", ["emoji test 🙂"]),
    ("İstanbul ΣΊΣΥΦΟΣ straße", ["istanbul σίσυφος strasse"]),
    ("the answer is (B)", ["B", "(B)", "the answer is B"]),
    ("New York City", ["NYC", "New York", "new york city"]),
    ("42", ["forty two", "42.0", "42"]),
    ("(hi) there.", ["hi there"]),
    ("a.b,c d...e", ["a. b, c d ... e"]),
    ("x\x1cy\u00a0z\u3000w", ["x y z w"]),
    ("the the the the", ["the cat"]),
    ("cat cat cat", ["cat"]),
    ("one two three four five", ["one two three four five six seven"]),
    ("one two three four five six seven eight", ["one two"]),
    ("a", ["a"]),
    ("an apple a day", ["an apple"]),
    ("l'état c'est moi", ["l'état, c'est moi!"]),
    ("₁₂ ½ Ⅻ", ["12 1/2 XII"]),
    ("thé", ["the"]),
    ("tab\tseparated\ttext", ["tab separated text"]),
    ("kitten", ["sitting"]),
    ("flaw", ["lawn"]),
    ("ab", ["ba"]),
    ("日本", ["日"]),
    ("no match at all", ["zzz yyy"]),
    ("The quick brown fox jumps over the lazy dog.", ["A quick brown dog jumps over the lazy fox."]),
    ("Hyphen-ated words-here 1990-2000", ["Hyphenated words here 1990 - 2000"]),
    ("{json: [1, 2]} @user #tag", ["json 1 2 user tag"]),
    ("Mr. Smith went to Washington.", ["Mr Smith went to Washington", "Smith went to Washington."]),
    ("", ["a", ""]),
]

WORDS = (
    "the a an cat dog sat on mat Paris France capital is of and to in it "
    "quick brown fox jumps over lazy 42 3.14 1,000 $5 -7 café naïve 東京 日本 "
    "Москва — , . ! ? ( ) \" ' ; : hello world HELLO World İ ß 🙂 e\u0301 ½"
).split()


def sentence(rng, lo, hi):
    n = rng.randint(lo, hi)
    return " ".join(rng.choice(WORDS) for _ in range(n))


def random_cases(rng, count):
    out = []
    for _ in range(count):
        pred = sentence(rng, 0, 14)
        k = rng.choice([1, 1, 1, 2, 3])
        refs = []
        for _ in range(k):
            if rng.random() < 0.4 and pred:
                # A perturbed copy of the prediction: shared n-grams.
                toks = pred.split()
                rng.shuffle(toks) if rng.random() < 0.3 else None
                toks = [t for t in toks if rng.random() > 0.3] + sentence(rng, 0, 3).split()
                refs.append(" ".join(toks))
            else:
                refs.append(sentence(rng, 0, 12))
        out.append((pred, refs))
    return out


def main():
    rng = random.Random(SEED)
    cases = HAND + random_cases(rng, 260)
    OUT.parent.mkdir(parents=True, exist_ok=True)
    with OUT.open("w", encoding="utf-8") as f:
        for pred, refs in cases:
            row = {"prediction": pred, "references": refs}
            row.update(scores(pred, refs))
            f.write(json.dumps(row, ensure_ascii=False, sort_keys=True) + "\n")
    print(
        f"wrote {len(cases)} cases to {OUT.relative_to(ROOT)} "
        f"(sacrebleu {sacrebleu.__version__}, rouge-score {getattr(rouge_score, '__version__', '0.1.2')}, "
        f"rapidfuzz {rapidfuzz.__version__})"
    )


if __name__ == "__main__":
    main()
