//! Errors while a store is set up never show a setting's value.

use evalscore_storage::StoreUrl;

/// A fake service account key file's JSON, with a fake private key.
const SERVICE_ACCOUNT: &str = r#"{"type": "service_account", "project_id": "p", "private_key_id": "0123456789abcdef", "private_key": "-----BEGIN PRIVATE KEY-----\nMIIEvFAKEfakeFAKEnot-a-real-key-0123456789\n-----END PRIVATE KEY-----\n", "client_email": "x@p.iam.gserviceaccount.com"}"#;

/// The service account's JSON itself where its file's path is expected (a common CI
/// mistake): the store cannot be set up, and the message names the problem without the
/// JSON or any part of it.
#[test]
fn a_service_account_json_given_as_a_path_is_not_shown() {
    let options = vec![(
        "google_application_credentials".to_owned(),
        SERVICE_ACCOUNT.to_owned(),
    )];
    let e = StoreUrl::parse("gs://evals/in/x.parquet")
        .unwrap()
        .connect(&options)
        .unwrap_err();
    let shown = format!("{e} {:?}", e.hint);
    assert!(
        shown.starts_with("gs://evals/in/x.parquet: cannot set up the store: "),
        "{shown}"
    );
    for secret in [
        "FAKEfakeFAKE",
        "0123456789abcdef",
        "service_account",
        "private_key",
    ] {
        assert!(!shown.contains(secret), "{secret}: {shown}");
    }
    assert_eq!(
        e.message,
        "cannot set up the store: Generic GCS error: Unable to open service account file from <redacted>: No such file or directory (os error 2)"
    );
}
