#!/usr/bin/env python3
"""evalscore's graded scorers against their reference libraries, on the same text pairs
(see BENCHMARKS.md, "Graded scorers against the reference libraries").

    python3 -m venv /work/notes/venv-bench     # or any venv outside the repository
    /work/notes/venv-bench/bin/pip install -r scripts/bench/requirements.txt
    /work/notes/venv-bench/bin/python scripts/bench/lexical_bench.py \
        [--rows 100000] [--runs 7] [--threads 2] [--kernel-rows 5000] [--kernel-runs 3] \
        [--only levenshtein,chrf,bleu,rouge1,rouge2,rougeL] [--skip-whole] [--skip-kernels]

1. The pairs: bench-data/lexical_N.parquet (columns `id`, `output`, `reference`; row groups of
   10,000 rows, zstd), written when absent from a fixed seed: every text is 200 to 600
   characters of sentences drawn from a word list (Zipf-weighted common English words,
   numbers such as `3.5`, `1,200`, `2019-2020`, commas, quotes, parentheses; about 3% of the
   texts carry a non-ASCII word such as `café` or `東京`); each reference is its answer
   with a per-row share of words dropped, replaced or inserted (so the scores spread over
   the whole range) and sentences sometimes swapped.
2. Whole run (Levenshtein, the issue's target), `--runs` rounds, the two in alternation,
   each a fresh process timed around the whole process (start and imports included):
   - evalscore: `target/dist/evalscore run` of a task with one `levenshtein` scorer
     (`expected: "{{ sample.reference }}"`), `--threads N`, writing its usual output files;
   - rapidfuzz: a Python process that reads the two columns with pyarrow and runs
     `rapidfuzz.process.cpdist(outputs, references,
     scorer=Levenshtein.normalized_similarity, workers=N)`.
   The same two are also run once untimed, and every per-row score must be bitwise equal
   (evalscore's `levenshtein__score` in id order against cpdist's array); else exit 1.
   evalscore alone is then timed on the same file for every other measure (rows/s).
3. Kernels, in process, one core: the first `--kernel-rows` pairs, `--kernel-runs` rounds in
   alternation, only the scoring loop timed (not reading the file):
   - evalscore: `cargo run --profile dist -p evalscore-benches --example lexical_pairs`, which
     runs `evalscore_kernels::graded` (the engine's call) over the pairs as Arrow columns;
   - Python: a loop over the pairs calling the library's fastest per-pair entry point with
     the options evalscore reproduces (constructed once, outside the loop):
     chrf   `sacrebleu.metrics.CHRF(word_order=2).sentence_score(h, [r]).score / 100`
            (`sacrebleu.sentence_chrf(h, [r], word_order=2)` builds that object per call)
     bleu   `sacrebleu.metrics.BLEU(effective_order=True).sentence_score(h, [r]).score / 100`
            (what `sacrebleu.sentence_bleu(h, [r])` computes, without its per-call setup)
     rouge1, rouge2, rougeL
            `rouge_scorer.RougeScorer([variant]).score(r, h)[variant].fmeasure`
     levenshtein
            `rapidfuzz.distance.Levenshtein.normalized_similarity(h, r)` per pair, and
            `process.cpdist(..., workers=1)` (one call for all pairs)
   Every score must be bitwise equal to the library's (else exit 1).
4. Prints Markdown tables (medians, min-max, rows/s, ratios) and writes them to
   bench-data/lexical_results.md.

Wall times are medians over the rounds; the machine's load average (`os.getloadavg`) is
printed before and after, since other work on the machine slows every tool.
"""
from __future__ import annotations

import argparse
import datetime
import itertools
import os
import platform
import random
import shutil
import statistics
import struct
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
DATA = ROOT / "bench-data"
EVALSCORE = ROOT / "target" / "dist" / "evalscore"
SEED = 20261126
ROW_GROUP = 10_000
MEASURES = ["levenshtein", "chrf", "bleu", "rouge1", "rouge2", "rougeL"]

# --- the pairs --------------------------------------------------------------------------

COMMON = """
the of and to a in is that for it as was with be by on not he this are or his from at which
but have an they you were her she there been one all we their has would when if so no will
more can its also into other than some these what time only about could up out may then
first any new like our very after most over such where through between should because
each those both well made many people before must years same under while last great used
world state own even part however system work number being year three between during
without another again around place small case found life high since against public given
power form might large against point long group rather often until within country change
order early model answer question data result value method process based results problem
water energy temperature increases rises level growth rate market price cost policy
government city capital river north south light heat cell body blood protein gene study
analysis effect effects cause reason therefore thus because although since example figure
table section report paper theory evidence support suggests shows indicates means lower
higher larger smaller greater fewer better worse important common different similar simple
general specific possible likely clear strong weak main major minor total average final
""".split()
NAMES = (
    "Paris France London Berlin Einstein Newton Darwin Python Rust Amazon Pacific Atlantic "
    "Europe Asia Africa January March October Monday NASA DNA RNA COVID-19 GPT-4 U.S."
).split()
FOREIGN = "café naïve résumé Zürich São Köln Ångström 東京 Москва señor façade".split()
ZIPF = list(itertools.accumulate(1.0 / (i + 1) ** 0.9 for i in range(len(COMMON))))


def word(rng: random.Random) -> str:
    r = rng.random()
    if r < 0.04:
        return rng.choice(NAMES)
    if r < 0.06:
        k = rng.random()
        if k < 0.4:
            return str(rng.randint(1, 2000))
        if k < 0.6:
            return f"{rng.randint(0, 99)}.{rng.randint(0, 9)}"
        if k < 0.8:
            return f"{rng.randint(1, 99)},{rng.randint(0, 999):03d}"
        return f"{rng.randint(1900, 2020)}-{rng.randint(2000, 2030)}"
    return rng.choices(COMMON, cum_weights=ZIPF)[0]


def sentence(rng: random.Random, foreign: bool) -> str:
    words = [word(rng) for _ in range(rng.randint(5, 18))]
    if foreign and rng.random() < 0.5:
        words[rng.randrange(len(words))] = rng.choice(FOREIGN)
    if len(words) > 8 and rng.random() < 0.5:
        words[rng.randrange(2, len(words) - 2)] += ","
    if rng.random() < 0.08:
        i = rng.randrange(len(words) - 1)
        words[i] = "(" + words[i]
        words[i + 1] += ")"
    if rng.random() < 0.05:
        i = rng.randrange(len(words))
        words[i] = f'"{words[i]}"'
    words[0] = words[0][:1].upper() + words[0][1:]
    return " ".join(words) + rng.choice([".", ".", ".", ".", "?", "!", ";"])


def fit(rng: random.Random, sentences: list[str], foreign: bool) -> str:
    """Sentences joined, then grown or cut (at a space) to 200-600 characters."""
    target = rng.randint(200, 600)
    text = " ".join(sentences)
    while len(text) < target:
        text = (text + " " + sentence(rng, foreign)).strip()
    if len(text) > target:
        cut = text.rfind(" ", 0, target + 1)
        text = text[: cut if cut >= 200 else target]
    return text[:600]


def pair(rng: random.Random) -> tuple[str, str]:
    foreign = rng.random() < 0.03
    answer = fit(rng, [], foreign)
    keep = rng.uniform(0.3, 0.97)
    out = []
    for w in answer.split(" "):
        r = rng.random()
        if r < keep:
            out.append(w)
        elif r < keep + (1 - keep) * 0.4:
            out.append(word(rng))
        elif r < keep + (1 - keep) * 0.8:
            continue
        else:
            out.extend([w, word(rng)])
    text = " ".join(out)
    if rng.random() < 0.2:
        parts = text.split(". ")
        rng.shuffle(parts)
        text = ". ".join(parts)
    reference = fit(rng, [text], foreign)
    return answer, reference


def make_pairs(path: Path, rows: int) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    rng = random.Random(SEED)
    outputs, refs = [], []
    for _ in range(rows):
        a, r = pair(rng)
        outputs.append(a)
        refs.append(r)
    table = pa.table(
        {
            "id": pa.array(range(rows), pa.int64()),
            "output": pa.array(outputs, pa.string()),
            "reference": pa.array(refs, pa.string()),
        }
    )
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    pq.write_table(table, tmp, row_group_size=ROW_GROUP, compression="zstd")
    tmp.rename(path)


# --- the Python side (run in a subprocess: `lexical_bench.py --py MODE FILE ...`) --------


def read_pairs(path: str, limit: int | None):
    import pyarrow.parquet as pq

    t = pq.read_table(path, columns=["output", "reference"])
    if limit is not None:
        t = t.slice(0, limit)
    return t.column("output").to_pylist(), t.column("reference").to_pylist()


def py_cpdist(path: str, workers: int, out: str | None) -> None:
    """The whole-run baseline: read with pyarrow, score with cpdist."""
    import numpy as np
    from rapidfuzz import process
    from rapidfuzz.distance import Levenshtein

    hyps, refs = read_pairs(path, None)
    scores = process.cpdist(hyps, refs, scorer=Levenshtein.normalized_similarity, workers=workers,
                            dtype=np.float64)
    if out:
        scores.astype("<f8").tofile(out)


def py_kernel(measure: str, path: str, limit: int, out: str) -> None:
    """One measure's per-pair loop, timed alone; prints the seconds."""
    hyps, refs = read_pairs(path, limit)
    if measure == "chrf":
        from sacrebleu.metrics import CHRF

        m = CHRF(word_order=2)
        f = lambda h, r: m.sentence_score(h, [r]).score / 100  # noqa: E731
    elif measure == "bleu":
        from sacrebleu.metrics import BLEU

        m = BLEU(effective_order=True)
        f = lambda h, r: m.sentence_score(h, [r]).score / 100  # noqa: E731
    elif measure.startswith("rouge"):
        from rouge_score import rouge_scorer

        m = rouge_scorer.RougeScorer([measure])
        f = lambda h, r: m.score(r, h)[measure].fmeasure  # noqa: E731
    elif measure == "levenshtein":
        from rapidfuzz.distance import Levenshtein

        f = Levenshtein.normalized_similarity
    elif measure == "levenshtein-cpdist":
        import numpy as np
        from rapidfuzz import process
        from rapidfuzz.distance import Levenshtein

        t0 = time.perf_counter()
        scores = process.cpdist(hyps, refs, scorer=Levenshtein.normalized_similarity, workers=1,
                                dtype=np.float64)
        dt = time.perf_counter() - t0
        scores.astype("<f8").tofile(out)
        print(f"{dt:.6f}")
        return
    else:
        raise SystemExit(f"unknown measure {measure}")
    t0 = time.perf_counter()
    scores = [f(h, r) for h, r in zip(hyps, refs)]
    dt = time.perf_counter() - t0
    Path(out).write_bytes(struct.pack(f"<{len(scores)}d", *scores))
    print(f"{dt:.6f}")


# --- the driver -------------------------------------------------------------------------

TASK = """definition:
  output_column: output
  scorers:
    - type: {type}
{extra}      expected: "{{{{ sample.reference }}}}"
      threshold: 0.5
      metrics: [{{type: mean, field: score}}]
"""


def task_yaml(measure: str) -> tuple[str, str]:
    """The task text and the scores column of one measure."""
    if measure.startswith("rouge"):
        return TASK.format(type="rouge", extra=f"      variant: {measure}\n"), "rouge__score"
    return TASK.format(type=measure, extra=""), f"{measure}__score"


def timed(cmd: list[str], **kw) -> tuple[float, subprocess.CompletedProcess]:
    t0 = time.perf_counter()
    p = subprocess.run(cmd, capture_output=True, text=True, **kw)
    dt = time.perf_counter() - t0
    if p.returncode != 0:
        sys.exit(f"failed: {' '.join(cmd)}\n{p.stdout}\n{p.stderr}")
    return dt, p


def read_f64(path: str) -> list[float]:
    b = Path(path).read_bytes()
    return list(struct.unpack(f"<{len(b) // 8}d", b))


def compare(name: str, got: list[float], want: list[float]) -> str:
    """Bitwise comparison; exits on any difference."""
    if len(got) != len(want):
        sys.exit(f"{name}: {len(got)} scores against {len(want)}")
    diff = [i for i, (a, b) in enumerate(zip(got, want)) if struct.pack("<d", a) != struct.pack("<d", b)]
    if diff:
        i = diff[0]
        worst = max(abs(got[j] - want[j]) for j in diff)
        sys.exit(
            f"{name}: {len(diff)} of {len(got)} scores differ (first row {i}: {got[i]!r} against "
            f"{want[i]!r}; largest difference {worst:.3g})"
        )
    return f"{name}: all {len(got)} scores bitwise equal"


def evalscore_scores(out_dir: Path, column: str) -> list[float]:
    import pyarrow.parquet as pq

    t = pq.read_table(out_dir / "scores.parquet", columns=["id", column]).sort_by("id")
    return t.column(column).to_pylist()


def fmt_s(xs: list[float]) -> tuple[str, str]:
    return f"{statistics.median(xs):.3f}", f"{min(xs):.3f}-{max(xs):.3f}"


def load() -> str:
    return "{:.2f} {:.2f} {:.2f}".format(*os.getloadavg())


def build() -> Path:
    subprocess.run(
        ["cargo", "build", "--profile", "dist", "-p", "evalscore-cli", "--bin", "evalscore"],
        cwd=ROOT,
        check=True,
    )
    subprocess.run(
        ["cargo", "build", "--profile", "dist", "-p", "evalscore-benches", "--example", "lexical_pairs"],
        cwd=ROOT,
        check=True,
    )
    return ROOT / "target" / "dist" / "examples" / "lexical_pairs"


def whole_run(args, data: Path, tmp: Path, lines: list[str]) -> None:
    task = tmp / "levenshtein.yaml"
    task.write_text(task_yaml("levenshtein")[0])
    es = [str(EVALSCORE), "run", str(task), "--input", str(data), "--out", str(tmp / "out"),
          "--threads", str(args.threads), "--overwrite"]
    py = [sys.executable, __file__, "--py", "cpdist", str(data), str(args.threads)]
    # Check first (untimed): the same scores, bit for bit.
    timed(es)
    timed(py + [str(tmp / "cpdist.f64")])
    msg = compare("levenshtein whole run", evalscore_scores(tmp / "out", "levenshtein__score"),
                  read_f64(str(tmp / "cpdist.f64")))
    print(msg)
    times: dict[str, list[float]] = {"evalscore": [], "rapidfuzz": []}
    for r in range(args.runs):
        for name, cmd in (("evalscore", es), ("rapidfuzz", py)):
            dt, _ = timed(cmd)
            times[name].append(dt)
        print(f"round {r + 1}: evalscore {times['evalscore'][-1]:.3f} s, "
              f"rapidfuzz {times['rapidfuzz'][-1]:.3f} s (load {load()})")
    e, p = statistics.median(times["evalscore"]), statistics.median(times["rapidfuzz"])
    per_round = [a / b for a, b in zip(times["evalscore"], times["rapidfuzz"])]
    lines += [
        f"### Whole run, Levenshtein: {args.rows:,} pairs, `--threads {args.threads}` / "
        f"`workers={args.threads}`, {args.runs} rounds in alternation",
        "",
        "| tool | wall median (s) | min-max (s) | rows/s | wall / rapidfuzz |",
        "| --- | ---: | ---: | ---: | ---: |",
        f"| **evalscore run** | **{fmt_s(times['evalscore'])[0]}** | {fmt_s(times['evalscore'])[1]} "
        f"| {args.rows / e:,.0f} | {e / p:.2f}x |",
        f"| pyarrow + rapidfuzz cpdist | {fmt_s(times['rapidfuzz'])[0]} | {fmt_s(times['rapidfuzz'])[1]} "
        f"| {args.rows / p:,.0f} | 1.00x |",
        "",
        f"Per round evalscore / rapidfuzz: {', '.join(f'{x:.2f}' for x in per_round)}. {msg}.",
        "",
    ]
    # Every other measure through the whole CLI, evalscore alone.
    rows = []
    for m in [m for m in args.only if m != "levenshtein"]:
        text, column = task_yaml(m)
        t = tmp / f"{m}.yaml"
        t.write_text(text)
        cmd = [str(EVALSCORE), "run", str(t), "--input", str(data), "--out", str(tmp / f"out-{m}"),
               "--threads", str(args.threads), "--overwrite"]
        ts = [timed(cmd)[0] for _ in range(max(1, args.runs // 2))]
        rows.append(f"| `{m}` | {fmt_s(ts)[0]} | {fmt_s(ts)[1]} | {args.rows / statistics.median(ts):,.0f} |")
        print(rows[-1])
    if rows:
        lines += [
            f"evalscore run, the other measures over the same {args.rows:,} pairs "
            f"(`--threads {args.threads}`, {max(1, args.runs // 2)} runs each):",
            "",
            "| scorer | wall median (s) | min-max (s) | rows/s |",
            "| --- | ---: | ---: | ---: |",
            *rows,
            "",
        ]


def kernels(args, data: Path, tmp: Path, example: Path, lines: list[str]) -> None:
    n = min(args.kernel_rows, args.rows)
    table = []
    for m in args.only:
        py_modes = [m] + (["levenshtein-cpdist"] if m == "levenshtein" else [])
        rust: list[float] = []
        py: dict[str, list[float]] = {k: [] for k in py_modes}
        checked = []
        for r in range(args.kernel_runs):
            rust_out = tmp / f"rust-{m}.f64"
            _, p = timed([str(example), str(data), m, str(n), str(rust_out)])
            rust.append(float(p.stdout.split()[0]))
            for k in py_modes:
                py_out = tmp / f"py-{k}.f64"
                _, p = timed([sys.executable, __file__, "--py", "kernel", k, str(data), str(n), str(py_out)])
                py[k].append(float(p.stdout.split()[0]))
                if r == 0:
                    checked.append(compare(f"{m} against {k}", read_f64(str(rust_out)), read_f64(str(py_out))))
        for c in checked:
            print(c)
        re_ = statistics.median(rust)
        for k in py_modes:
            pe = statistics.median(py[k])
            table.append(
                f"| `{m}` | {k if k != m else 'per pair'} | {re_ * 1e6 / n:.1f} | {pe * 1e6 / n:.1f} "
                f"| {n / re_:,.0f} | {n / pe:,.0f} | **{pe / re_:.1f}x** |"
            )
            print(table[-1])
    lines += [
        f"### Kernels in process, one core: the first {n:,} pairs, {args.kernel_runs} rounds in "
        "alternation (medians)",
        "",
        "| measure | reference call | evalscore µs/pair | reference µs/pair | evalscore pairs/s "
        "| reference pairs/s | reference / evalscore |",
        "| --- | --- | ---: | ---: | ---: | ---: | ---: |",
        *table,
        "",
        "Every score bitwise equal to the reference library's.",
        "",
    ]


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "--py":
        mode = sys.argv[2]
        if mode == "cpdist":
            py_cpdist(sys.argv[3], int(sys.argv[4]), sys.argv[5] if len(sys.argv) > 5 else None)
        else:
            py_kernel(sys.argv[3], sys.argv[4], int(sys.argv[5]), sys.argv[6])
        return
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rows", type=int, default=100_000)
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--kernel-rows", type=int, default=5_000)
    ap.add_argument("--kernel-runs", type=int, default=3)
    ap.add_argument("--only", default=",".join(MEASURES))
    ap.add_argument("--skip-whole", action="store_true")
    ap.add_argument("--skip-kernels", action="store_true")
    ap.add_argument("--no-build", action="store_true", help="use the binaries already built")
    args = ap.parse_args()
    args.only = [m for m in args.only.split(",") if m]
    for m in args.only:
        if m not in MEASURES:
            sys.exit(f"unknown measure {m}; one of {', '.join(MEASURES)}")
    example = ROOT / "target" / "dist" / "examples" / "lexical_pairs"
    if not args.no_build:
        example = build()
    data = DATA / f"lexical_{args.rows}.parquet"
    if not data.exists():
        print(f"writing {data.relative_to(ROOT)} ...")
        make_pairs(data, args.rows)
    import pyarrow
    import rapidfuzz
    import rouge_score  # noqa: F401
    import sacrebleu

    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True,
                            text=True).stdout.strip()
    before = load()
    lines = [
        f"{datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC, `{commit}`, "
        f"{platform.machine()} {os.cpu_count()} cores, Python {platform.python_version()}, "
        f"pyarrow {pyarrow.__version__}, rapidfuzz {rapidfuzz.__version__}, sacrebleu "
        f"{sacrebleu.__version__}, rouge-score 0.1.2; load average before: {before}",
        "",
    ]
    tmp = Path(tempfile.mkdtemp(prefix="lexical-bench-"))
    try:
        if not args.skip_whole:
            whole_run(args, data, tmp, lines)
        if not args.skip_kernels:
            kernels(args, data, tmp, example, lines)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    lines.append(f"Load average after: {load()}.")
    text = "\n".join(lines) + "\n"
    print()
    print(text)
    (DATA / "lexical_results.md").write_text(text)


if __name__ == "__main__":
    main()
