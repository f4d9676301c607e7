//! Embeddings for `similarity` with `method: embedding`: one request per distinct text,
//! through the judges' window, cache and limits.

use crate::judge::runtime::{JudgeCtx, Kept};
use crate::row_error::RowError;
use evalscore_judge::{embeddings_of, EmbeddingRequest, Key, WindowRequest};
use std::collections::{BTreeMap, HashMap};

/// The embedding of each of `texts` (distinct) from model `model_key`, one request per text
/// (so each text is cached on its own), through the same window, cache and limits as the
/// judges. A text whose request failed is a row error at `first_row[text]`.
pub(crate) fn embeddings(
    judge: &JudgeCtx<'_>,
    model_key: &str,
    texts: &[String],
    first_row: &BTreeMap<String, usize>,
) -> Result<HashMap<String, Vec<f64>>, RowError> {
    let model = judge
        .runtime
        .models
        .get(model_key)
        .ok_or_else(|| RowError {
            message: format!("internal error: model `{model_key}` not set up"),
            ..RowError::default()
        })?;
    let spec_url = model.base_url.clone();
    let requests: Vec<EmbeddingRequest> = texts
        .iter()
        .map(|t| EmbeddingRequest {
            base_url: spec_url.clone(),
            model: model.model.clone(),
            input: vec![t.clone()],
        })
        .collect();
    let keys: Vec<Key> = requests.iter().map(WindowRequest::key).collect();
    judge
        .runtime
        .fetch(
            model_key,
            &keys,
            |i| &requests[i],
            judge.memo,
            |reply| Kept::Vectors(embeddings_of(&reply.content)),
        )
        .map_err(|e| RowError {
            message: e.text(),
            hint: e.hint(),
            ..RowError::default()
        })?;
    let memo = judge.memo.entries();
    let mut out = HashMap::with_capacity(texts.len());
    for (t, key) in texts.iter().zip(&keys) {
        let fail = |message: String| RowError {
            row: first_row.get(t).copied().unwrap_or(0),
            message: format!("embedding model `{model_key}` ({spec_url}): {message}"),
            per_row: true,
            ..RowError::default()
        };
        let mut v = match memo.get(key) {
            Some(Ok(Kept::Vectors(v))) => v.clone().map_err(fail)?,
            Some(Ok(Kept::Reading(_))) => {
                return Err(fail(
                    "internal error: a chat reply for an embedding".to_owned(),
                ))
            }
            Some(Err(e)) => return Err(fail(e.to_string())),
            None => return Err(fail("internal error: no reply was fetched".to_owned())),
        };
        if v.len() != 1 {
            return Err(fail(format!("{} vectors for one text", v.len())));
        }
        out.insert(t.clone(), v.remove(0));
    }
    Ok(out)
}
