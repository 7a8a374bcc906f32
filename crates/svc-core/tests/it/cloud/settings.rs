//! The client's settings: read from variables (naming the bad one), checked when given
//! explicitly, secrets redacted in debug output.

use std::collections::HashMap;
use std::time::Duration;

use svc_core::cloud::{ApiSecret, CloudClient, CloudConfig, CloudError};

fn vars() -> HashMap<&'static str, String> {
    HashMap::from([
        ("SVC_BASE_URL", "https://cloud.example.com/".to_owned()),
        ("SVC_AUTH_URL", "https://auth.example.com".to_owned()),
        (
            "SVC_NOTIFICATION_URL",
            "https://notify.example.com".to_owned(),
        ),
        ("SVC_API_KEY", "svc_key_0123".to_owned()),
        ("SVC_API_SECRET", "top-secret-value-42".to_owned()),
        (
            "SVC_ORGANIZATION_ID",
            "3c9d5e7f-1a2b-4c3d-8e4f-5a6b7c8d9e0f".to_owned(),
        ),
    ])
}

fn from(map: &HashMap<&'static str, String>) -> Result<CloudConfig, CloudError> {
    CloudConfig::from_vars(|name| map.get(name).cloned())
}

#[track_caller]
fn config_error(result: Result<CloudConfig, CloudError>) -> (String, String) {
    match result {
        Err(CloudError::Config {
            setting, reason, ..
        }) => (setting, reason),
        other => panic!("expected a configuration error, got {other:?}"),
    }
}

#[test]
fn settings_come_from_variables_and_name_the_bad_one() {
    let config = from(&vars()).unwrap();
    assert_eq!(config.base_url, "https://cloud.example.com");
    assert_eq!(config.auth_url, "https://auth.example.com");
    assert_eq!(config.api_key, "svc_key_0123");
    assert_eq!(config.api_secret.expose_secret(), "top-secret-value-42");
    assert_eq!(
        config.organization_id.to_string(),
        "3c9d5e7f-1a2b-4c3d-8e4f-5a6b7c8d9e0f"
    );
    assert_eq!(config.page_size, 100);

    let mut missing = vars();
    missing.remove("SVC_API_SECRET");
    let (setting, reason) = config_error(from(&missing));
    assert_eq!(setting, "SVC_API_SECRET");
    assert_eq!(reason, "is not set");

    let mut several = vars();
    several.remove("SVC_AUTH_URL");
    several.remove("SVC_ORGANIZATION_ID");
    let error = from(&several).unwrap_err();
    assert_eq!(
        error.to_string(),
        "invalid configuration: SVC_AUTH_URL is not set (also missing: SVC_ORGANIZATION_ID)"
    );

    let mut empty = vars();
    empty.insert("SVC_API_KEY", "  ".to_owned());
    assert_eq!(
        config_error(from(&empty)),
        ("SVC_API_KEY".to_owned(), "is set but empty".to_owned())
    );

    for (name, value) in [
        ("SVC_BASE_URL", "ftp://cloud.example.com"),
        ("SVC_BASE_URL", "cloud.example.com"),
        ("SVC_NOTIFICATION_URL", "https://notify.example.com/api/v2"),
        ("SVC_AUTH_URL", "https://auth.example.com/?x=1"),
        ("SVC_ORGANIZATION_ID", "not-a-uuid"),
    ] {
        let mut bad = vars();
        bad.insert(name, value.to_owned());
        let (setting, reason) = config_error(from(&bad));
        assert_eq!(setting, name, "{value}: {reason}");
    }
}

#[test]
fn secrets_are_redacted_in_debug_output() {
    let config = from(&vars()).unwrap();
    let shown = format!("{config:?}");
    assert!(!shown.contains("top-secret-value-42"), "{shown}");
    assert!(shown.contains("ApiSecret([redacted])"), "{shown}");
    assert!(shown.contains("svc_key_0123"), "{shown}");
    assert_eq!(
        format!("{:?}", ApiSecret::new("abc")),
        "ApiSecret([redacted])"
    );
    let client = CloudClient::new(config.clone()).unwrap();
    let shown = format!("{client:?}");
    assert!(!shown.contains("top-secret-value-42"), "{shown}");
    assert!(shown.contains("cloud.example.com"), "{shown}");
    // Credentials or a token written into an address are not shown either.
    let mut with_credentials = config;
    with_credentials.base_url = "https://proxy-user:hunter2@cloud.example.com".into();
    with_credentials.auth_url = "https://auth.example.com/?token=tok-77".into();
    with_credentials.notification_url = "https://me:pw-88@notify.example.com".into();
    let shown = format!("{with_credentials:?}");
    for secret in ["hunter2", "proxy-user", "tok-77", "pw-88"] {
        assert!(!shown.contains(secret), "{secret}: {shown}");
    }
    with_credentials.auth_url = "https://auth.example.com".into();
    let client = CloudClient::new(with_credentials).unwrap();
    let shown = format!("{client:?}");
    for secret in ["hunter2", "proxy-user", "pw-88"] {
        assert!(!shown.contains(secret), "{secret}: {shown}");
    }
    assert!(shown.contains("https://cloud.example.com/"), "{shown}");
    assert!(shown.contains("https://notify.example.com/"), "{shown}");
}

#[test]
fn explicit_settings_are_checked() {
    let base = from(&vars()).unwrap();
    let setting_of = |config: CloudConfig| match CloudClient::new(config) {
        Err(CloudError::Config { setting, .. }) => setting,
        other => panic!("expected a configuration error, got {other:?}"),
    };
    let mut c = base.clone();
    c.page_size = 0;
    assert_eq!(setting_of(c), "page_size");
    let mut c = base.clone();
    c.api_secret = ApiSecret::new("");
    assert_eq!(setting_of(c), "api_secret");
    let mut c = base.clone();
    c.base_url = "https://cloud.example.com/api/v2/".to_owned();
    assert_eq!(setting_of(c), "base_url");
    let mut c = base;
    c.request_timeout = Duration::ZERO;
    assert_eq!(setting_of(c), "request_timeout");
}
