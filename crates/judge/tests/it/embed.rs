//! Embeddings: the cache key against its golden value, and real vectors from llama.cpp's
//! `llama-server` in embedding mode (`--embeddings --pooling mean`) with SmolLM2-135M, built
//! and cached by `scripts/setup/llama-server.sh` and started on 127.0.0.1 here. Checked: the
//! protocol, the vectors' dimension (the model's hidden size, 576), that the same request
//! gives the same vectors (to 1e-4: llama.cpp is not bit-reproducible across requests), and
//! cosine similarity on them.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use evalscore_judge::{cosine, send_embeddings, EmbeddingRequest, RetryPolicy};
use evalscore_test_support::llama;
use std::time::Duration;

#[test]
fn the_key_is_the_sha256_of_the_canonical_request() {
    let r = EmbeddingRequest {
        base_url: "http://127.0.0.1:8080/v1/".to_owned(),
        model: "smollm2".to_owned(),
        input: vec!["The cat sat.".to_owned(), "Le chat «assis» été".to_owned()],
    };
    // scripts/golden/embed_key.py
    assert_eq!(
        r.key(),
        "bdf7abf2e91318006b94f474fdc118e2c160a67fc96a76b962d890692d76e1e0"
    );
    let mut other = r.clone();
    other.input.swap(0, 1);
    assert_ne!(other.key(), r.key());
    let mut other = r.clone();
    other.model = "other".to_owned();
    assert_ne!(other.key(), r.key());
}

/// llama-server in embedding mode (mean pooling over the model's last layer).
fn start_embedding_server() -> (llama::Server, String) {
    llama::start_with(&["--embeddings", "--pooling", "mean"])
}

#[test]
fn a_real_server_gives_deterministic_vectors() {
    let (_server, base_url) = start_embedding_server();
    let request = EmbeddingRequest {
        base_url,
        model: "smollm2".to_owned(),
        input: vec![
            "The cat sat on the mat.".to_owned(),
            "Quarterly revenue grew by four percent.".to_owned(),
            "The cat sat on the mat.".to_owned(),
        ],
    };
    let agent = ureq::AgentBuilder::new().build();
    let policy = RetryPolicy {
        timeout: Duration::from_secs(60),
        ..RetryPolicy::default()
    };
    let first = send_embeddings(&agent, &request, None, &policy).unwrap();
    let second = send_embeddings(&agent, &request, None, &policy).unwrap();
    assert_eq!(first.attempts, 1);
    assert_eq!(first.vectors.len(), 3);
    for v in &first.vectors {
        assert_eq!(v.len(), 576, "SmolLM2-135M's hidden size");
        assert!(v.iter().all(|x| x.is_finite()));
    }
    // The same request gives the same vectors, up to the last bits of llama.cpp's float
    // arithmetic (its batches are not bit-reproducible from one request to the next).
    for (a, b) in first.vectors.iter().zip(&second.vectors) {
        let diff = a
            .iter()
            .zip(b)
            .map(|(x, y)| (x - y).abs())
            .fold(0.0, f64::max);
        assert!(
            diff < 1e-4,
            "largest difference between two replies: {diff}"
        );
        let c = cosine(a, b).unwrap();
        assert!((c - 1.0).abs() < 1e-6, "cosine between two replies: {c}");
    }
    let (cat, revenue, cat_again) = (&first.vectors[0], &first.vectors[1], &first.vectors[2]);
    let same = cosine(cat, cat).unwrap();
    assert!((same - 1.0).abs() < 1e-12, "cosine(a, a) = {same}");
    let twice = cosine(cat, cat_again).unwrap();
    assert!((twice - 1.0).abs() < 1e-6, "same text, cosine {twice}");
    let other = cosine(cat, revenue).unwrap();
    assert!(other < 0.999, "different texts, cosine {other}");
}
