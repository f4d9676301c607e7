//! A PUT whose reply is lost after the store committed it.

use crate::s3;
use evalscore_test_support::stores::*;

/// The reply to a PUT is lost after the store did it (the connection cut; a gateway's 503,
/// which the retry turns into a 412 against the object just written): the PUT is checked
/// and succeeds, create-only or not, and the object holds what was sent.
#[test]
fn a_put_whose_reply_is_lost_succeeds_when_the_object_is_ours() {
    let server = moto();
    create_bucket(server.port, "evals");
    let proxy = proxy(server.port);
    let bytes = br#"{"run_id": "ours"}"#.to_vec();
    for (i, (how, overwrite)) in [
        (Lost::Cut, false),
        (Lost::Unavailable, false),
        (Lost::Cut, true),
        (Lost::Unavailable, true),
    ]
    .into_iter()
    .enumerate()
    {
        let key = format!("out/{i}/run.json");
        proxy.rules.lock().unwrap().lose_reply = Some((format!("PUT /evals/{key} "), how));
        let loc = s3(&proxy.endpoint(), &format!("s3://evals/{key}"));
        loc.put(bytes.clone(), overwrite)
            .unwrap_or_else(|e| panic!("{how:?}, overwrite {overwrite}: {e}"));
        // The rule was used: the reply was lost.
        assert!(proxy.rules.lock().unwrap().lose_reply.is_none());
        assert_eq!(get_object(server.port, "evals", &key), Some(bytes.clone()));
    }
}

/// What the check must not hide: another object already there still refuses a create-only
/// PUT (and is left alone), and a lost reply whose outcome cannot be checked (the look at the
/// object refused) is the PUT's error, marked as of unknown outcome.
#[test]
fn a_put_refused_or_unchecked_is_still_an_error() {
    let server = moto();
    create_bucket(server.port, "evals");
    let proxy = proxy(server.port);
    put_object(
        server.port,
        "evals",
        "out/run.json",
        b"another run's run.json",
    );
    let loc = s3(&proxy.endpoint(), "s3://evals/out/run.json");
    let e = loc
        .put(b"our run.json, as long.".to_vec(), false)
        .unwrap_err();
    assert_eq!(
        e.to_string(),
        "s3://evals/out/run.json: cannot write: it already exists"
    );
    assert!(e.already_exists && !e.unknown_outcome);
    assert_eq!(
        get_object(server.port, "evals", "out/run.json").as_deref(),
        Some(&b"another run's run.json"[..])
    );

    let loc = s3(&proxy.endpoint(), "s3://evals/new/run.json");
    {
        let mut rules = proxy.rules.lock().unwrap();
        rules.lose_reply = Some(("PUT /evals/new/run.json ".into(), Lost::Cut));
        rules.forbid = Some("HEAD /evals/new/run.json ".into());
    }
    let e = loc.put(b"ours".to_vec(), false).unwrap_err();
    assert!(e.unknown_outcome, "{e}");
    assert!(
        e.to_string()
            .starts_with("s3://evals/new/run.json: cannot write: "),
        "{e}"
    );
}
