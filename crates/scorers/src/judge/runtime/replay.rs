//! Judging apart from scoring, for a job whose rows are spread over many processes (Spark,
//! Ray): its distinct requests are listed first and each sent once, by
//! [`JudgeRuntime::send`] through a runtime's cache, limits and counters; the processes that
//! score the rows then read exactly those replies from a runtime made by
//! [`JudgeRuntime::replaying`], which sends nothing.

use super::{add_stats, lock, JudgeRuntime, ModelRuntime, RuntimeError};
use evalscore_judge::{
    judge_keyed, Cache, CachedReply, Endpoint, JudgeError, Key, KeyMap, Live, RetryPolicy, Stats,
    WindowRequest,
};
use evalscore_task::ModelSpec;
use std::collections::{BTreeMap, BTreeSet};
use std::sync::atomic::AtomicU64;
use std::sync::{Arc, Mutex};
use std::time::Duration;

impl JudgeRuntime {
    /// The replies of `requests` to model `model_key`, in order: as a window gets them
    /// (identical ones sent once, cached ones reused, the rest sent within the model's limits
    /// and stored in the cache as they arrive; `--offline`: a missing one is
    /// [`JudgeError::Offline`]), counted in [`JudgeRuntime::stats`].
    pub fn send<R: WindowRequest>(
        &self,
        model_key: &str,
        requests: &[R],
    ) -> Result<Vec<Result<CachedReply, JudgeError>>, RuntimeError> {
        let model = self
            .models
            .get(model_key)
            .ok_or_else(|| RuntimeError::ModelNotSetUp(model_key.to_owned()))?;
        let keys: Vec<Key> = requests.iter().map(WindowRequest::key).collect();
        let mut stats = Stats::default();
        let started = std::time::Instant::now();
        let got = judge_keyed(
            &keys,
            |i| &requests[i],
            self.cache.as_ref(),
            &model.endpoint,
            self.offline,
            &mut stats,
            |reply| reply,
        )
        .map_err(|e| RuntimeError::of_window(e, model_key, &model.base_url));
        *lock(&model.waited) += started.elapsed();
        add_stats(&mut lock(&model.stats), &stats);
        got
    }

    /// A runtime for the `used` entries of `models` that answers from `cache` alone and
    /// sends nothing (as `--offline`): a request whose key is in `failed` fails with that
    /// error, any other missing one with [`JudgeError::Offline`]. `None` when none is used.
    /// No API key is read.
    pub fn replaying(
        models: &BTreeMap<String, ModelSpec>,
        used: &BTreeSet<&str>,
        cache: Cache,
        failed: KeyMap<JudgeError>,
    ) -> Option<JudgeRuntime> {
        if used.is_empty() {
            return None;
        }
        let models = used
            .iter()
            .filter_map(|&key| {
                let spec = models.get(key)?;
                let live = Arc::new(Live::default());
                // Never used to send: the runtime is offline.
                let endpoint = Endpoint {
                    api_key: None,
                    concurrency: 1,
                    policy: RetryPolicy::default(),
                    pace: None,
                    gate: None,
                    live: Some(Arc::clone(&live)),
                    interrupt: None,
                };
                let model = ModelRuntime {
                    model: spec.model.clone(),
                    base_url: spec.base_url.clone(),
                    endpoint,
                    live,
                    stats: Mutex::new(Stats::default()),
                    waited: Mutex::new(Duration::ZERO),
                };
                Some((key.to_owned(), model))
            })
            .collect();
        Some(JudgeRuntime {
            cache: Some(cache),
            offline: true,
            failed,
            models,
            rows_judged: AtomicU64::new(0),
        })
    }
}
