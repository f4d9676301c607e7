//! Judging apart from scoring, for `evalscore.spark` and `evalscore.ray`: a batch's judge
//! requests as Arrow rows (distinct by key, with how many rows ask each), requests gathered
//! by key sent once and their replies as Arrow rows, and those replies held for scoring
//! offline ([`PyJudgeReplies`]). Also the judge statistics the Python API reports.

use crate::errors::py_err;
use arrow::array::{
    Array, ArrayRef, AsArray, Int32Array, Int64Array, RecordBatch, StringArray, StringBuilder,
};
use arrow::compute::cast;
use arrow::datatypes::{DataType, Field, Schema};
use evalscore_engine::{
    CachedReply, ChatRequest, Error, ErrorKind, JudgeError, JudgeReplies, JudgeRequest, Key,
    ModelStats, RequestError,
};
use pyo3::prelude::*;
use std::collections::HashMap;
use std::sync::Arc;

/// Replies got ahead of scoring, for `_Task.score_batch(..., replies=...)`.
#[pyclass(name = "_JudgeReplies", module = "evalscore._evalscore", frozen)]
pub(crate) struct PyJudgeReplies {
    pub(crate) replies: Arc<JudgeReplies>,
}

/// A message about the Arrow rows of `what` (`judge requests`, `judge replies`).
fn bad(what: &str, message: String) -> Error {
    Error::new(format!("{what}: {message}")).kind(ErrorKind::Data)
}

/// Column `name` of `batch` as UTF-8 text (any string layout).
fn text_column(batch: &RecordBatch, name: &str, what: &str) -> Result<ArrayRef, Error> {
    let col = batch
        .column_by_name(name)
        .ok_or_else(|| bad(what, format!("no column `{name}`")))?;
    cast(col, &DataType::Utf8).map_err(|e| bad(what, format!("column `{name}` is not text: {e}")))
}

/// Column `name` of `batch` as 64-bit integers, when there is one.
fn count_column(batch: &RecordBatch, name: &str, what: &str) -> Result<Option<ArrayRef>, Error> {
    batch
        .column_by_name(name)
        .map(|c| {
            cast(c, &DataType::Int64)
                .map_err(|e| bad(what, format!("column `{name}` is not a count: {e}")))
        })
        .transpose()
}

/// The distinct requests of `requests` in order of first appearance, as rows `model_key`,
/// `key` (hex), `request` (the request's JSON text) and `n` (the rows that ask it).
pub(crate) fn requests_batch(requests: Vec<JudgeRequest>) -> Result<RecordBatch, Error> {
    let mut index: HashMap<Key, usize> = HashMap::new();
    let mut first: Vec<JudgeRequest> = Vec::new();
    let mut counts: Vec<i64> = Vec::new();
    for r in requests {
        match index.get(&r.key) {
            Some(&i) => counts[i] += 1,
            None => {
                index.insert(r.key, first.len());
                first.push(r);
                counts.push(1);
            }
        }
    }
    let column = |f: &dyn Fn(&JudgeRequest) -> String| -> ArrayRef {
        Arc::new(first.iter().map(|r| Some(f(r))).collect::<StringArray>())
    };
    let columns = vec![
        column(&|r| r.model_key.clone()),
        column(&|r| r.key.hex()),
        column(&|r| r.request.to_json()),
        Arc::new(Int64Array::from(counts)) as ArrayRef,
    ];
    RecordBatch::try_new(Arc::new(requests_schema()), columns).map_err(internal)
}

fn requests_schema() -> Schema {
    Schema::new(vec![
        Field::new("model_key", DataType::Utf8, false),
        Field::new("key", DataType::Utf8, false),
        Field::new("request", DataType::Utf8, false),
        Field::new("n", DataType::Int64, false),
    ])
}

fn internal(e: impl std::fmt::Display) -> Error {
    Error::new(format!("internal error: {e}")).kind(ErrorKind::Internal)
}

/// The (model key, request) of each row of a [`requests_batch`]; a request that does not
/// match its key is an error naming the row.
pub(crate) fn read_requests(batch: &RecordBatch) -> Result<Vec<(String, ChatRequest)>, Error> {
    const WHAT: &str = "judge requests";
    let models = text_column(batch, "model_key", WHAT)?;
    let keys = text_column(batch, "key", WHAT)?;
    let requests = text_column(batch, "request", WHAT)?;
    let (models, keys, requests) = (
        models.as_string::<i32>(),
        keys.as_string::<i32>(),
        requests.as_string::<i32>(),
    );
    (0..batch.num_rows())
        .map(|i| {
            let at = |m: String| bad(WHAT, format!("row {}: {m}", i + 1));
            let text = |a: &StringArray, name: &str| {
                a.is_valid(i)
                    .then(|| a.value(i).to_owned())
                    .ok_or_else(|| at(format!("`{name}` is null")))
            };
            let request = ChatRequest::from_json(&text(requests, "request")?).map_err(at)?;
            let key = text(keys, "key")?;
            if request.key() != key {
                return Err(at(format!(
                    "the request's key is {}, not `{key}`",
                    request.key()
                )));
            }
            Ok((text(models, "model_key")?, request))
        })
        .collect()
}

/// The replies of the requests whose keys are `keys`, as rows `key`, `content`,
/// `prompt_tokens`, `completion_tokens`, `error` and `attempts` (a reply's error and
/// attempts are null; a failure's content and tokens are). A reply missing offline is left
/// out: the rows asking it then meet it as missing.
pub(crate) fn replies_batch(
    keys: &[String],
    replies: Vec<Result<CachedReply, JudgeError>>,
) -> Result<RecordBatch, Error> {
    let n = keys.len();
    let (mut key, mut content, mut error) = (
        StringBuilder::with_capacity(n, 64 * n),
        StringBuilder::new(),
        StringBuilder::new(),
    );
    let (mut prompt, mut completion, mut attempts) = (
        Vec::with_capacity(n),
        Vec::with_capacity(n),
        Vec::with_capacity(n),
    );
    for (k, reply) in keys.iter().zip(replies) {
        let tokens = |t: u64| Some(i64::try_from(t).unwrap_or(i64::MAX));
        match reply {
            Err(JudgeError::Offline) => continue,
            Ok(r) => {
                content.append_value(&r.content);
                error.append_null();
                prompt.push(tokens(r.prompt_tokens));
                completion.push(tokens(r.completion_tokens));
                attempts.push(None);
            }
            Err(JudgeError::Request(e)) => {
                content.append_null();
                error.append_value(&e.message);
                prompt.push(None);
                completion.push(None);
                attempts.push(Some(i32::try_from(e.attempts).unwrap_or(i32::MAX)));
            }
        }
        key.append_value(k);
    }
    let columns: Vec<ArrayRef> = vec![
        Arc::new(key.finish()),
        Arc::new(content.finish()),
        Arc::new(Int64Array::from(prompt)),
        Arc::new(Int64Array::from(completion)),
        Arc::new(error.finish()),
        Arc::new(Int32Array::from(attempts)),
    ];
    let schema = Schema::new(vec![
        Field::new("key", DataType::Utf8, false),
        Field::new("content", DataType::Utf8, true),
        Field::new("prompt_tokens", DataType::Int64, true),
        Field::new("completion_tokens", DataType::Int64, true),
        Field::new("error", DataType::Utf8, true),
        Field::new("attempts", DataType::Int32, true),
    ]);
    RecordBatch::try_new(Arc::new(schema), columns).map_err(internal)
}

/// A reply by its request's key, or why the request has none.
type Keyed = (Key, Result<CachedReply, JudgeError>);

/// The replies by key of the rows of [`replies_batch`]es; an unreadable row is an error
/// naming it.
pub(crate) fn read_replies(batches: &[RecordBatch]) -> Result<Vec<Keyed>, Error> {
    const WHAT: &str = "judge replies";
    let mut out = Vec::new();
    let mut row = 0usize;
    for batch in batches {
        let keys = text_column(batch, "key", WHAT)?;
        let content = text_column(batch, "content", WHAT)?;
        let error = text_column(batch, "error", WHAT)?;
        let count = |name| count_column(batch, name, WHAT);
        let (prompt, completion, attempts) = (
            count("prompt_tokens")?,
            count("completion_tokens")?,
            count("attempts")?,
        );
        let ints = |c: &Option<ArrayRef>, i: usize| {
            c.as_ref()
                .map(|c| c.as_primitive::<arrow::datatypes::Int64Type>())
                .filter(|c| c.is_valid(i))
                .map(|c| u64::try_from(c.value(i)).unwrap_or(0))
        };
        let (keys, content, error) = (
            keys.as_string::<i32>(),
            content.as_string::<i32>(),
            error.as_string::<i32>(),
        );
        for i in 0..batch.num_rows() {
            row += 1;
            let at = |m: String| bad(WHAT, format!("row {row}: {m}"));
            let key = keys
                .is_valid(i)
                .then(|| Key::from_hex(keys.value(i)))
                .flatten()
                .ok_or_else(|| at("`key` is not a judge cache key".to_owned()))?;
            let reply = if content.is_valid(i) {
                Ok(CachedReply {
                    content: content.value(i).to_owned(),
                    prompt_tokens: ints(&prompt, i).unwrap_or(0),
                    completion_tokens: ints(&completion, i).unwrap_or(0),
                })
            } else if error.is_valid(i) {
                Err(JudgeError::Request(RequestError {
                    message: error.value(i).to_owned(),
                    attempts: ints(&attempts, i).map_or(0, |n| u32::try_from(n).unwrap_or(0)),
                }))
            } else {
                return Err(at("neither `content` nor `error` is given".to_owned()));
            };
            out.push((key, reply));
        }
    }
    Ok(out)
}

/// [`read_replies`] held for scoring.
pub(crate) fn judge_replies(
    task: &evalscore_engine::Task,
    batches: &[RecordBatch],
) -> PyResult<PyJudgeReplies> {
    let replies = read_replies(batches).map_err(py_err)?;
    let replies = JudgeReplies::new(task, replies).map_err(py_err)?;
    Ok(PyJudgeReplies {
        replies: Arc::new(replies),
    })
}

/// What each model cost between `before` and `after` (a scorer's or a judge's statistics):
/// a JSON object by `models:` key, with run.json's counters.
pub(crate) fn stats_json(before: &[ModelStats], after: &[ModelStats]) -> String {
    let models: serde_json::Map<String, serde_json::Value> = after
        .iter()
        .map(|m| {
            let was = before
                .iter()
                .find(|b| b.model_key == m.model_key)
                .map(|b| b.stats)
                .unwrap_or_default();
            let s = m.stats;
            let counts = serde_json::json!({
                "model": m.model,
                "requests_sent": s.requests_sent.saturating_sub(was.requests_sent),
                "cache_hits": s.cache_hits.saturating_sub(was.cache_hits),
                "deduplicated": s.deduplicated.saturating_sub(was.deduplicated),
                "retries": s.retries.saturating_sub(was.retries),
                "failures": s.failures.saturating_sub(was.failures),
                "prompt_tokens": s.prompt_tokens.saturating_sub(was.prompt_tokens),
                "completion_tokens": s.completion_tokens.saturating_sub(was.completion_tokens),
            });
            (m.model_key.clone(), counts)
        })
        .collect();
    serde_json::Value::Object(models).to_string()
}
