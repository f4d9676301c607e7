#!/usr/bin/env python3
"""Differential mutation test of evalscore's Parquet reading against pyarrow.

Writes small seed Parquet files with pyarrow (every encoding, codec, data page version and
list shape pyarrow writes, with and without page checksums), makes deterministic mutants of
them (byte and bit flips, truncations, inserted and deleted bytes, swapped bytes, rewritten
integer fields of page headers and footers: module `mutants`), and reads every mutant with
pyarrow (page checksums verified, as evalscore verifies them) and with the evalscore CLI.
For each mutant evalscore must refuse the file (exit 2, an `error:` message) or read exactly
the values pyarrow reads.

evalscore reads each mutant twice, one process each, through its two paths for a kept
column: `decode` (every column decoded, and written again into scores.parquet) and `copy`
(one column decoded, the others copied as stored after their pages are checked). Its values
are read back from scores.parquet with pyarrow.

A mutant FAILS when evalscore
- exits 0 with values other than pyarrow's (compared as `normalize` says), or with a
  scores.parquet pyarrow cannot read;
- exits 0 on a file pyarrow refuses as damaged: any error reading it, or a table that fails
  `validate(full=True)` (pyarrow refusing a file as unsupported, ArrowNotImplementedError,
  is counted, not a failure: such a file may be sound);
- crashes (a signal, an exit code other than 0 and 2, `internal error`, a panic message),
  runs past `--timeout` or needs more memory than `--memory-mib` (RLIMIT_AS);
- refuses an unmutated seed, or reads it with other values.
evalscore refusing a mutant that pyarrow reads is allowed, and counted.

Each failing mutant is kept in OUT/failures/ with what both readers said and the commands
that reproduce it; the script then exits 1.

    python3 scripts/fuzz/parquet_mutations.py --mutants 5000 --seed 1 --out /tmp/pm
    python3 scripts/fuzz/parquet_mutations.py --replay OUT/failures/m01234-*.parquet

Needs pyarrow and the CLI (EVALSCORE_BIN, default target/debug/evalscore).
"""
from __future__ import annotations

import argparse
import collections
import concurrent.futures as cf
import json
import os
import random
import resource
import shutil
import signal
import struct
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

sys.path.insert(0, str(Path(__file__).resolve().parent))
import mutants  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
KEEP = ["id", "x", "s", "b", "l", "st"]
# Every kept column decoded: the task reads no column, and nothing is copied when no other
# column is left to decode.
DECODE_TASK = """\
definition:
  scorers:
    - type: string_equals
      value: "a"
      ground_truth: "a"
"""
# `id` decoded (a template reads it), the other kept columns copied as stored where they can be.
COPY_TASK = """\
definition:
  scorers:
    - type: string_equals
      value: "{{ sample.id }}"
      ground_truth: "a"
"""
MODES = ("decode", "copy")


# ---------------------------------------------------------------------------------------
# Seeds


def seed_table(rows: int, seed: int, payload: int = 0) -> pa.Table:
    """Every column type evalscore keeps: a required int64, a double with NaN, -0.0 and
    infinities, UTF-8 strings, booleans, list<string> with null lists, empty lists and null
    items, and a struct; all nullable but `id`. `payload` > 0 makes strings of that many
    random letters (a seed larger than the reader's in-memory unit)."""
    rng = random.Random(seed)
    words = ["A", "B", "héllo", "", "zz", "日本", "a longer value " * 3]
    specials = [float("nan"), -0.0, float("inf"), float("-inf"), 1e300, 5e-324]
    ids, xs, ss, bs, ls, sts = [], [], [], [], [], []
    for i in range(rows):
        ids.append(rng.choice([i, -i * 7919, 2**40 + i, i]))
        r = rng.random()
        xs.append(None if r < 0.1 else rng.choice(specials) if r < 0.25 else round(rng.uniform(-1e3, 1e3), 3))
        if payload:
            ss.append("".join(rng.choice("abcdefghij") for _ in range(payload)))
        else:
            ss.append(None if rng.random() < 0.15 else rng.choice(words))
        bs.append(None if rng.random() < 0.1 else rng.random() < 0.5)
        r = rng.random()
        if r < 0.12:
            ls.append(None)
        elif r < 0.25:
            ls.append([])
        else:
            ls.append([None if rng.random() < 0.1 else rng.choice(words) for _ in range(rng.randint(1, 4))])
        r = rng.random()
        sts.append(None if r < 0.1 else {"u": None if r < 0.2 else rng.randint(-5, 10**6),
                                          "v": None if r > 0.9 else rng.choice(words)})
    schema = pa.schema([
        pa.field("id", pa.int64(), nullable=False),
        ("x", pa.float64()), ("s", pa.string()), ("b", pa.bool_()),
        ("l", pa.list_(pa.string())),
        ("st", pa.struct([("u", pa.int64()), ("v", pa.string())])),
    ])
    return pa.table([ids, xs, ss, bs, ls, sts], schema=schema)


DELTA = {"id": "DELTA_BINARY_PACKED", "x": "BYTE_STREAM_SPLIT", "s": "DELTA_BYTE_ARRAY",
         "b": "RLE", "l.list.element": "DELTA_BYTE_ARRAY", "st.u": "DELTA_BINARY_PACKED",
         "st.v": "DELTA_LENGTH_BYTE_ARRAY"}
DLBA = {"id": "BYTE_STREAM_SPLIT", "x": "BYTE_STREAM_SPLIT", "s": "DELTA_LENGTH_BYTE_ARRAY",
        "b": "PLAIN", "l.list.element": "DELTA_LENGTH_BYTE_ARRAY", "st.u": "BYTE_STREAM_SPLIT",
        "st.v": "DELTA_BYTE_ARRAY"}

# (name, pq.write_table options): together every encoding pyarrow writes (PLAIN,
# PLAIN_DICTIONARY, RLE_DICTIONARY, RLE, DELTA_BINARY_PACKED, DELTA_LENGTH_BYTE_ARRAY,
# DELTA_BYTE_ARRAY, BYTE_STREAM_SPLIT), every codec (pyarrow's "lz4" is LZ4_RAW), page v1
# and v2, with and without CRC32 page checksums.
SEEDS = [
    ("plain-none-v1", dict(use_dictionary=False, compression="none", data_page_version="1.0")),
    ("dict-snappy-v1", dict(compression="snappy", data_page_version="1.0")),
    ("dict-zstd-v2-crc", dict(compression="zstd", data_page_version="2.0", write_page_checksum=True)),
    ("dict-none-v2", dict(compression="none", data_page_version="2.0")),
    ("plaindict-gzip-v1", dict(compression="gzip", data_page_version="1.0", version="1.0")),
    ("plain-brotli-v2", dict(use_dictionary=False, compression="brotli", data_page_version="2.0")),
    ("plain-lz4-v1-crc", dict(use_dictionary=False, compression="lz4", data_page_version="1.0",
                              write_page_checksum=True)),
    ("delta-none-v1-crc", dict(use_dictionary=False, column_encoding=DELTA, compression="none",
                               data_page_version="1.0", write_page_checksum=True)),
    ("delta-gzip-v2", dict(use_dictionary=False, column_encoding=DELTA, compression="gzip",
                           data_page_version="2.0")),
    ("dlba-zstd-v1", dict(use_dictionary=False, column_encoding=DLBA, compression="zstd",
                          data_page_version="1.0")),
    ("dlba-snappy-v2-crc", dict(use_dictionary=False, column_encoding=DLBA, compression="snappy",
                                data_page_version="2.0", write_page_checksum=True)),
    ("dict-zstd-v1", dict(compression="zstd", data_page_version="1.0")),
]
# One row group of 1.3 MB, above the reader's in-memory unit (1 MiB): its chunks are read
# through the file handle, not all at once.
LARGE = ("large-plain-none-v1", dict(use_dictionary=False, compression="none", data_page_version="1.0"))


def write_seeds(folder: Path, large: bool) -> list[Path]:
    folder.mkdir(parents=True, exist_ok=True)
    paths = []
    for i, (name, opts) in enumerate(SEEDS + ([LARGE] if large else [])):
        big = name.startswith("large")
        t = seed_table(300 if big else 40, seed=i, payload=4000 if big else 0)
        p = folder / f"{name}.parquet"
        pq.write_table(t, p, row_group_size=300 if big else 24, data_page_size=256,
                       write_batch_size=8, store_schema=False, **opts)
        paths.append(p)
    return paths


def chunk_ranges(path: Path) -> list[tuple[int, int]]:
    """(start, stored length) of every column chunk, from the seed's footer."""
    md = pq.ParquetFile(path).metadata
    out = []
    for g in range(md.num_row_groups):
        for c in range(md.num_columns):
            col = md.row_group(g).column(c)
            start = col.data_page_offset
            if col.has_dictionary_page and col.dictionary_page_offset is not None:
                start = min(start, col.dictionary_page_offset)
            out.append((start, col.total_compressed_size))
    return out


# ---------------------------------------------------------------------------------------
# Verdicts (run in worker processes)

CFG: dict = {}


def _limit_memory(mib: int) -> None:
    resource.setrlimit(resource.RLIMIT_AS, (mib << 20, mib << 20))


def init_worker(cfg: dict) -> None:
    CFG.update(cfg)
    CFG["dir"] = Path(tempfile.mkdtemp(prefix="pm-", dir=cfg["work"]))
    for mode, text in (("decode", DECODE_TASK), ("copy", COPY_TASK)):
        (CFG["dir"] / f"{mode}.yaml").write_text(text)
    # pyarrow's own reading is bounded too: a mutant that makes it allocate gigabytes is an
    # error here, not a machine out of memory.
    soft = cfg["memory_mib"] * 2 << 20
    resource.setrlimit(resource.RLIMIT_AS, (soft, resource.getrlimit(resource.RLIMIT_AS)[1]))


def normalize(v):
    """A value compared exactly: floats by their bits (NaN equals NaN, -0.0 is not 0.0).
    Two differences of shape that a mutated schema annotation makes, not of data, are
    compared away: strings by their UTF-8 bytes (a column that lost its UTF8 annotation is
    binary to pyarrow, text to evalscore), and a struct of one field as that field (a list
    group that lost its LIST annotation is a list to pyarrow, by its names, and the struct of
    a list of structs that Parquet's compatibility rules make of it to evalscore)."""
    if isinstance(v, float):
        return ("f", struct.pack("<d", v).hex())
    if isinstance(v, str):
        return v.encode("utf-8")
    if isinstance(v, list):
        return [normalize(x) for x in v]
    if isinstance(v, dict):
        if len(v) == 1:
            return normalize(next(iter(v.values())))
        return {k: normalize(x) for k, x in v.items()}
    return v


def table_values(t: pa.Table, names: list[str]) -> dict:
    t.validate(full=True)
    return {n: normalize(t.column(n).to_pylist()) for n in names if n in t.column_names}


def pyarrow_verdict(path: Path) -> dict:
    # Page checksums verified, as evalscore verifies them (pyarrow's default reads a page
    # whose CRC32 does not match as data).
    try:
        t = pq.read_table(path, page_checksum_verification=True)
        return {"read": True, "columns": t.column_names, "values": table_values(t, t.column_names)}
    except pa.ArrowNotImplementedError as e:
        return {"read": False, "why": "unsupported", "message": str(e)[:300]}
    except Exception as e:  # noqa: BLE001 - every other refusal is a refusal of damage
        return {"read": False, "why": "damage", "message": f"{type(e).__name__}: {str(e)[:300]}"}


def evalscore_command(path: Path, mode: str, out: Path, task: Path) -> list[str]:
    return [CFG["bin"], "run", str(task), "--input", str(path), "--out", str(out),
            "--keep", ",".join(KEEP), "--threads", "1", "--quiet", "--overwrite"]


def evalscore_verdict(path: Path, mode: str) -> dict:
    out = CFG["dir"] / f"out-{mode}"
    cmd = evalscore_command(path, mode, out, CFG["dir"] / f"{mode}.yaml")
    mib = CFG["memory_mib"]
    # prlimit sets the bound and execs evalscore; a preexec_fn would make Python fork (not
    # spawn) the child, which doubles the cost of a run.
    prlimit = CFG.get("prlimit")
    limited = {} if prlimit else {"preexec_fn": lambda: _limit_memory(mib)}
    if prlimit:
        cmd = [prlimit, f"--as={mib << 20}", *cmd]
    started = time.monotonic()
    try:
        r = subprocess.run(cmd, capture_output=True, timeout=CFG["timeout"], check=False,
                           **limited)
    except subprocess.TimeoutExpired:
        return {"verdict": "crash", "message": f"timed out after {CFG['timeout']} s"}
    secs = time.monotonic() - started
    err = r.stderr.decode("utf-8", "replace")
    if r.returncode < 0:
        name = signal.Signals(-r.returncode).name
        return {"verdict": "crash", "message": f"killed by {name} (memory bound {mib} MiB?): {err[-600:]}"}
    if "error: internal error" in err or "panicked at" in err or r.returncode not in (0, 2):
        return {"verdict": "crash", "message": f"exit {r.returncode}: {err[-600:]}"}
    if r.returncode == 2:
        if not err.startswith("error: "):
            return {"verdict": "crash", "message": f"exit 2 without an error message: {err[-600:]}"}
        return {"verdict": "refused", "message": err.strip()[:400], "secs": secs}
    try:
        t = pq.read_table(out / "scores.parquet")
        values = table_values(t, KEEP)
    except Exception as e:  # noqa: BLE001
        return {"verdict": "bad output", "message": f"pyarrow cannot read scores.parquet: {e}"}
    return {"verdict": "read", "values": values, "secs": secs}


def first_difference(want: dict, got: dict) -> str | None:
    for name in KEEP:
        if name not in want:
            continue
        if name not in got:
            return f"column `{name}` missing from scores.parquet"
        a, b = want[name], got[name]
        if len(a) != len(b):
            return f"column `{name}`: pyarrow reads {len(a)} rows, evalscore {len(b)}"
        for i, (x, y) in enumerate(zip(a, b)):
            if x != y:
                return f"column `{name}` row {i}: pyarrow reads {x!r}, evalscore {y!r}"
    return None


def judge(job: dict) -> dict:
    """Both readers' verdicts on one mutant, and the comparison, per evalscore mode."""
    path = CFG["dir"] / "mutant.parquet"
    path.write_bytes(job["bytes"])
    ref = pyarrow_verdict(path)
    result = {"id": job["id"], "name": job["name"], "desc": job["desc"], "seed": job["is_seed"],
              "pyarrow": {k: v for k, v in ref.items() if k != "values"}, "modes": {}}
    for mode in MODES:
        ev = evalscore_verdict(path, mode)
        outcome, detail = compare(ref, ev, job["is_seed"])
        result["modes"][mode] = {"verdict": ev["verdict"], "outcome": outcome, "detail": detail,
                                 "message": ev.get("message", ""), "secs": ev.get("secs")}
    return result


def compare(ref: dict, ev: dict, is_seed: bool) -> tuple[str, str]:
    """("same-values" | "both-refuse" | "refused-read" | "unsupported-read" | "FAIL", what)."""
    v = ev["verdict"]
    if v in ("crash", "bad output"):
        return "FAIL", f"evalscore {v}: {ev['message']}"
    if not ref["read"]:
        if v == "refused":
            return "both-refuse", "both refuse"
        if ref["why"] == "unsupported":
            return "unsupported-read", f"pyarrow: {ref['message']}"
        return "FAIL", f"evalscore reads a file pyarrow refuses as damaged ({ref['message']})"
    if v == "refused":
        if is_seed:
            return "FAIL", f"evalscore refuses an unmutated seed: {ev['message']}"
        return "refused-read", ev["message"]
    missing = [k for k in KEEP if k not in ref["columns"]]
    if missing:
        return "FAIL", f"evalscore reads columns pyarrow does not find: {missing}"
    diff = first_difference(ref["values"], ev["values"])
    if diff:
        return "FAIL", f"values differ: {diff}"
    return "same-values", "same values"


# ---------------------------------------------------------------------------------------
# The run


def make_jobs(seeds: list[Path], count: int, seed: int) -> list[dict]:
    """The unmutated seeds, then `count` mutants: mutant i of seed i mod len(seeds), from an
    RNG seeded with (seed, i) alone, so any mutant is made again without the others."""
    jobs = []
    data = [p.read_bytes() for p in seeds]
    chunks = [chunk_ranges(p) for p in seeds]
    for k, p in enumerate(seeds):
        jobs.append({"id": f"seed{k:02d}", "name": f"seed-{p.stem}", "desc": "unmutated",
                     "is_seed": True, "bytes": data[k]})
    for i in range(count):
        k = i % len(seeds)
        rng = random.Random(f"{seed}/{i}")
        desc, out = mutants.mutate(data[k], chunks[k], rng)
        jobs.append({"id": f"m{i:05d}", "name": f"m{i:05d}-{seeds[k].stem}", "desc": desc,
                     "is_seed": False, "bytes": out})
    return jobs


def run_jobs(jobs: list[dict], cfg: dict, workers: int, progress: bool) -> list[dict]:
    """Every job's verdicts, in parallel. A worker that dies (pyarrow crashing on a mutant)
    breaks the pool: the jobs then in flight are judged again one per pool, and the one that
    breaks it alone is reported as a pyarrow crash."""
    results: dict[str, dict] = {}
    pending = collections.deque(jobs)
    window = workers * 4
    done_at = time.monotonic()
    while pending:
        pool = cf.ProcessPoolExecutor(workers, initializer=init_worker, initargs=(cfg,))
        flight: dict[cf.Future, dict] = {}
        broken: list[dict] = []
        try:
            while pending or flight:
                while pending and len(flight) < window:
                    j = pending.popleft()
                    flight[pool.submit(judge, j)] = j
                done, _ = cf.wait(flight, return_when=cf.FIRST_COMPLETED)
                for f in done:
                    j = flight.pop(f)
                    try:
                        results[j["id"]] = f.result()
                    except cf.process.BrokenProcessPool:
                        broken.append(j)
                if broken:
                    broken.extend(flight.values())
                    break
                if progress and time.monotonic() - done_at > 5:
                    done_at = time.monotonic()
                    print(f"  {len(results)}/{len(jobs)} judged", file=sys.stderr)
        finally:
            pool.shutdown(wait=True, cancel_futures=True)
        for j in broken:
            one = cf.ProcessPoolExecutor(1, initializer=init_worker, initargs=(cfg,))
            try:
                results[j["id"]] = one.submit(judge, j).result()
            except cf.process.BrokenProcessPool:
                results[j["id"]] = {"id": j["id"], "name": j["name"], "desc": j["desc"],
                                    "seed": j["is_seed"], "pyarrow_crashed": True, "modes": {}}
            finally:
                one.shutdown(wait=True)
    return [results[j["id"]] for j in jobs]


def keep_failure(out: Path, job: dict, res: dict) -> None:
    """The mutant, both tasks and a note of both verdicts with the commands that reproduce
    them, in OUT/failures/."""
    folder = out / "failures"
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{job['name']}.parquet"
    path.write_bytes(job["bytes"])
    for mode, text in (("decode", DECODE_TASK), ("copy", COPY_TASK)):
        (folder / f"{mode}.yaml").write_text(text)
    lines = [f"mutant: {job['desc']}", f"pyarrow: {json.dumps(res.get('pyarrow'))}"]
    for mode, m in res["modes"].items():
        cmd = evalscore_command(path, mode, folder / f"out-{mode}", folder / f"{mode}.yaml")
        lines += [f"{mode}: {m['outcome']}: {m['detail']}", f"  evalscore said: {m['message']}",
                  "  reproduce: " + " ".join(cmd)]
    (folder / f"{job['name']}.txt").write_text("\n".join(lines) + "\n")


def summarize(jobs: list[dict], results: list[dict], elapsed: float, out: Path) -> dict:
    """Counts of mutations and outcomes (written to OUT/summary.json, every verdict to
    OUT/results.jsonl); prints and keeps each failing mutant."""
    outcomes = collections.Counter()
    kinds = collections.Counter()
    refusals = collections.Counter()
    failures = []
    pyarrow_refused = collections.Counter()
    crashed = refused_read = 0
    with open(out / "results.jsonl", "w", encoding="utf-8") as f:
        for res in results:
            f.write(json.dumps(res) + "\n")
    for job, res in zip(jobs, results):
        if not res["seed"]:
            kinds[job["desc"].split()[0]] += 1
        if res.get("pyarrow_crashed"):
            crashed += 1
            continue
        if not res["pyarrow"]["read"]:
            pyarrow_refused[res["pyarrow"]["why"]] += 1
        failed = False
        refused_read += any(m["outcome"] == "refused-read" for m in res["modes"].values())
        for mode, m in res["modes"].items():
            outcomes[(mode, m["outcome"])] += 1
            if m["outcome"] == "refused-read":
                refusals[_first_line(m["message"])] += 1
            if m["outcome"] == "FAIL":
                failed = True
                print(f"FAIL {job['name']} ({job['desc']}) [{mode}]: {m['detail']}")
        if failed:
            failures.append(job["name"])
            keep_failure(out, job, res)
    mutated = sum(1 for r in results if not r["seed"])
    summary = {
        "seeds": sum(1 for r in results if r["seed"]), "mutants": mutated,
        "seconds": round(elapsed, 1), "mutants_per_second": round(mutated / max(elapsed, 1e-9), 1),
        "kinds": dict(kinds), "pyarrow_refused": dict(pyarrow_refused), "pyarrow_crashed": crashed,
        "outcomes": {f"{m}/{o}": n for (m, o), n in sorted(outcomes.items())},
        "mutants_refused_where_pyarrow_read": refused_read,
        "refused_where_pyarrow_read": dict(refusals.most_common()), "failures": failures,
    }
    (out / "summary.json").write_text(json.dumps(summary, indent=2) + "\n")
    return summary


def _first_line(message: str) -> str:
    """An evalscore refusal without its file name and byte offsets, to group them."""
    line = message.splitlines()[0] if message else ""
    line = line.split(".parquet: ", 1)[-1]
    return "".join("N" if c.isdigit() else c for c in line)[:160]


def print_summary(s: dict) -> None:
    print(f"{s['seeds']} seeds, {s['mutants']} mutants in {s['seconds']} s "
          f"({s['mutants_per_second']} mutants/s)")
    print("  mutations: " + ", ".join(f"{k} {n}" for k, n in sorted(s["kinds"].items())))
    print(f"  pyarrow refused: {s['pyarrow_refused']}; pyarrow crashed: {s['pyarrow_crashed']}")
    for k, n in s["outcomes"].items():
        print(f"  {k}: {n}")
    if s["refused_where_pyarrow_read"]:
        print(f"  evalscore refused {s['mutants_refused_where_pyarrow_read']} mutants that pyarrow "
              "reads (allowed); its messages, per reading path:")
        for line, n in list(s["refused_where_pyarrow_read"].items())[:15]:
            print(f"    {n:5d}  {line}")
    print(f"failures: {len(s['failures'])}")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--mutants", type=int, default=2000, help="mutants to make (default 2000)")
    ap.add_argument("--seed", type=int, default=1, help="the RNG seed of the mutants")
    ap.add_argument("--out", type=Path, help="folder for seeds, failures and summary.json "
                    "(default: a new temporary folder)")
    ap.add_argument("--workers", type=int, default=os.cpu_count() or 2)
    ap.add_argument("--timeout", type=float, default=60.0, help="seconds per evalscore run")
    ap.add_argument("--memory-mib", type=int, default=2048, help="RLIMIT_AS of each evalscore run")
    ap.add_argument("--no-large", action="store_true", help="leave out the seed above 1 MiB")
    ap.add_argument("--replay", type=Path, nargs="+", help="judge these files instead of mutants")
    ap.add_argument("--quiet", action="store_true", help="no progress lines")
    args = ap.parse_args(argv)

    binary = os.environ.get("EVALSCORE_BIN", str(ROOT / "target" / "debug" / "evalscore"))
    if not Path(binary).is_file():
        print(f"error: no evalscore CLI at {binary} (set EVALSCORE_BIN)", file=sys.stderr)
        return 2
    out = args.out or Path(tempfile.mkdtemp(prefix="parquet-mutations-"))
    out.mkdir(parents=True, exist_ok=True)
    shutil.rmtree(out / "failures", ignore_errors=True)
    # Outputs on tmpfs where there is one: every run fsyncs its five files.
    shm = Path("/dev/shm")
    work = shm if shm.is_dir() and os.access(shm, os.W_OK) else None
    scratch = Path(tempfile.mkdtemp(prefix="parquet-mutations-", dir=work))
    cfg = {"bin": str(Path(binary).resolve()), "timeout": args.timeout,
           "memory_mib": args.memory_mib, "work": str(scratch), "prlimit": shutil.which("prlimit")}
    CFG.update(cfg)
    try:
        if args.replay:
            jobs = [{"id": f"r{i}", "name": p.stem, "desc": "replay", "is_seed": False,
                     "bytes": p.read_bytes()} for i, p in enumerate(args.replay)]
        else:
            seeds = write_seeds(out / "seeds", large=not args.no_large)
            jobs = make_jobs(seeds, args.mutants, args.seed)
        started = time.monotonic()
        results = run_jobs(jobs, cfg, max(1, args.workers), progress=not args.quiet)
        summary = summarize(jobs, results, time.monotonic() - started, out)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    print_summary(summary)
    if summary["failures"]:
        print(f"failing mutants kept in {out / 'failures'}")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
