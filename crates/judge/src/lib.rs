//! Requests to judge models (OpenAI-compatible chat completions) and their persistent cache.
//!
//! - [`ChatRequest`]: one request, exactly as it will be sent, and its cache key: the SHA-256
//!   of its canonical JSON (base URL, model, messages, every sampling parameter and the
//!   scorer's parser version; object keys sorted, no spaces), so a cached reply is reused only
//!   for the very same request.
//! - [`Cache`]: SQLite (bundled through `rusqlite`, WAL mode), one row per key, each reply
//!   committed on its own as it arrives, so a run killed at any point keeps every reply it got;
//!   optionally in front of a shared cache in object storage or a shared folder
//!   ([`Cache::open_shared`]): immutable Parquet segments written create-only, read through by
//!   their bloom-filtered row groups, merged by [`compact_shared`]. [`Cache::in_memory`] holds
//!   replies handed over by another process (judged once for a Spark or Ray job), which
//!   [`ChatRequest::to_json`] / [`ChatRequest::from_json`] carry the requests of.
//! - [`send`]: one request over HTTP (`ureq`), retried on connection errors, timeouts, 429 and
//!   5xx with exponential backoff and jitter, honouring `Retry-After` up to a cap; never
//!   redirected; every wait bounded; a reply body of at most [`MAX_REPLY_BYTES`].
//! - [`judge_window`]: the replies of a window of rows: identical requests sent once, cached
//!   replies reused (or, `--offline`, required), the rest sent by `concurrency` threads and
//!   stored as they arrive, each reduced at once to what its caller keeps ([`judge_keyed`]);
//!   [`Stats`] counts requests, hits, retries, failures and tokens. A
//!   window stops early ([`WindowError`]) on a signal, a dead endpoint or a cache that cannot
//!   store, abandoning its requests in flight.
//! - [`EmbeddingRequest`] and [`send_embeddings`]: vectors from an OpenAI-compatible
//!   `/embeddings` endpoint (same retries as [`send`], its own cache key), and [`cosine`].
//! - The OpenAI Batch API files: [`ChatRequest::batch_line`] writes a request line
//!   (`custom_id` = the cache key), [`Cache::import_batch_output`] stores an output file
//!   ([`open_batch_output`] opens one, a regular file only).

mod batch_files;
mod cache;
mod client;
mod diagnostic;
mod embed;
mod halt;
mod memory_cache;
mod pace;
mod request;
mod window;

pub use batch_files::{batch_part_name, batch_parts_present, open_batch_output, IMPORT_LINE_LIMIT};
pub use cache::{
    compact_shared, default_cache_path, shared_cache_stats, Cache, CacheError, CachedReply,
    Compacted, ImportStats, SharedCacheStats, SharedStats, BLOOM_FPP, BUSY_TIMEOUT, FLUSH_ROWS,
    GROUP_ROWS, INDEX_BYTES_PER_ROW, MERGED_ROWS, SMALL_ROWS,
};
pub use client::{
    api_key_problem, retry_after_cap, send, RequestError, RetryPolicy, Sent, MAX_REPLY_BYTES,
};
pub use embed::{
    cosine, embeddings_of, parse_embeddings, send_embeddings, EmbeddingRequest, Embeddings,
};
pub use halt::{dead_after, Halt};
pub use pace::{Pace, PACE_AHEAD_LIMIT};
pub use request::{ChatKeys, ChatRequest, Key, KeyHasher, KeyMap, Message};
pub use window::{
    judge_keyed, judge_window, Endpoint, Gate, JudgeError, Live, Stats, WindowError, WindowRequest,
};
