//! Tokens: one request shared by many tasks, renewal across expiry, a 401, refused
//! credentials, a failing identity provider, refused keys and organizations.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use super::proxy::{Action, DISCOVERY, TOKEN, proxied};
use super::{api_status, container_request, default_emulator};
use crate::common::{emulator, fast_config};
use svc_core::ErrorKind;
use svc_core::cloud::{ApiSecret, CloudClient, CloudConfig, CloudError, RetryHint, TransportKind};
use svc_emulator::EmulatorConfig;

#[tokio::test]
async fn many_tasks_share_one_token_request() {
    let emu = default_emulator().await;
    let p = proxied(emu.info(), |_| {}).await;
    let tasks: Vec<_> = (0..24)
        .map(|i| {
            let client = p.client.clone();
            tokio::spawn(async move {
                if i % 2 == 0 {
                    client.server_info().await.map(|_| ())
                } else {
                    client.list_containers_page(0, 10).await.map(|_| ())
                }
            })
        })
        .collect();
    for task in tasks {
        task.await.unwrap().unwrap();
    }
    assert_eq!(p.auth.count("GET", DISCOVERY), 1);
    assert_eq!(p.auth.count("POST", TOKEN), 1, "{:?}", p.auth.hits());
    assert_eq!(p.cloud.hits().len(), 24);

    // The password grant of the `oidc` security scheme, form-encoded.
    let grant = p.auth.hits().into_iter().find(|h| h.path == TOKEN).unwrap();
    let form: HashMap<String, String> = url_pairs(&grant.body);
    assert_eq!(form["grant_type"], "password");
    assert_eq!(form["client_id"], "api-key");
    assert_eq!(form["username"], emu.info().api_key);
    assert_eq!(form["password"], emu.info().api_secret);
    assert_eq!(form["scope"], "openid");

    // Later calls use the cached token.
    p.client.server_info().await.unwrap();
    p.client.list_webhook_endpoints_all().await.unwrap();
    assert_eq!(p.auth.count("POST", TOKEN), 1);
}

fn url_pairs(body: &str) -> HashMap<String, String> {
    body.split('&')
        .filter_map(|pair| pair.split_once('='))
        .map(|(k, v)| (k.to_owned(), v.replace("%3A", ":")))
        .collect()
}

#[tokio::test]
async fn work_goes_on_across_token_expiry() {
    let emu = emulator(EmulatorConfig {
        token_lifetime: Duration::from_secs(2),
        ..EmulatorConfig::default()
    })
    .await;
    let p = proxied(emu.info(), |_| {}).await;
    let deadline = Instant::now() + Duration::from_secs(30);
    let mut calls = 0;
    // Work until the third token: two renewals happened in the middle of it.
    while p.auth.count("POST", TOKEN) < 3 {
        assert!(Instant::now() < deadline, "no renewal");
        if calls % 2 == 0 {
            p.client.server_info().await.unwrap();
        } else {
            p.client.list_containers_page(0, 5).await.unwrap();
        }
        calls += 1;
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let unauthorized = p.cloud.hits().iter().filter(|h| h.status == 401).count();
    println!("{calls} calls, 3 tokens, {unauthorized} answers 401");
    // Renewal comes ahead of expiry; a 401 only when a request crossed the expiry in
    // flight (a loaded machine), and then at most for one of the two renewals.
    assert!(unauthorized < 2, "{unauthorized} answers 401");
}

#[tokio::test]
async fn a_401_gets_a_new_token_and_one_repeat() {
    let emu = default_emulator().await;
    let p = proxied(emu.info(), |_| {}).await;
    p.client.server_info().await.unwrap();
    assert_eq!(p.auth.count("POST", TOKEN), 1);

    // The service no longer accepts the token (as after expiry or a revocation).
    let refused =
        r#"{"title":"Unauthorized","details":"The access token is invalid or has expired"}"#;
    p.cloud.on(
        "GET",
        "/api/v1/info",
        1,
        Action::Answer(401, refused.to_owned()),
    );
    p.client.server_info().await.unwrap();
    assert_eq!(p.auth.count("POST", TOKEN), 2, "a new token");
    assert_eq!(
        p.cloud.count("GET", "/api/v1/info"),
        3,
        "the request repeated once"
    );

    // Still 401 with the new token: one repeat only, then the error.
    p.cloud.on(
        "GET",
        "/api/v1/info",
        5,
        Action::Answer(401, refused.to_owned()),
    );
    let e = p.client.server_info().await.unwrap_err();
    assert_eq!(api_status(&e), 401);
    assert_eq!(e.operation(), Some("getServerInfo"));
    assert_eq!(
        e.details(),
        Some("The access token is invalid or has expired")
    );
    assert_eq!(e.retry_hint(), RetryHint::Never);
    assert_eq!(p.cloud.count("GET", "/api/v1/info"), 5);
    assert_eq!(p.auth.count("POST", TOKEN), 3);
}

#[tokio::test]
async fn a_wrong_secret_is_an_authentication_error_without_the_secret() {
    let emu = default_emulator().await;
    let wrong = "wrong-secret-Zq81x";
    let p = proxied(emu.info(), |c| c.api_secret = ApiSecret::new(wrong)).await;
    let e = p.client.server_info().await.unwrap_err();
    match &e {
        CloudError::Authentication {
            status,
            error,
            description,
        } => {
            assert_eq!(*status, Some(401));
            assert_eq!(error, "invalid_grant");
            assert_eq!(description, "invalid API key or secret");
        }
        other => panic!("expected an authentication error, got {other:?}"),
    }
    assert!(!e.is_retryable());
    for text in [e.to_string(), format!("{e:?}")] {
        assert!(!text.contains(wrong), "{text}");
    }
    assert_eq!(p.auth.count("POST", TOKEN), 1, "a refusal is not retried");
    assert!(p.cloud.hits().is_empty(), "nothing sent without a token");

    // An identity provider that cannot be reached: transient, retried, then reported.
    let closed = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let dead = format!("http://{}", closed.local_addr().unwrap());
    drop(closed);
    let mut config = fast_config(emu.info());
    config.auth_url = dead;
    let e = CloudClient::new(config)
        .unwrap()
        .server_info()
        .await
        .unwrap_err();
    // Not an authentication failure: nothing refused the credentials.
    assert!(
        matches!(
            e,
            CloudError::Transport {
                operation: "openidConfiguration",
                kind: TransportKind::Connect,
                ..
            }
        ),
        "{e:?}"
    );
    assert_eq!(e.kind(), ErrorKind::Unreachable);
    assert!(e.to_string().contains("identity provider"), "{e}");
    assert!(e.is_retryable());
}

#[tokio::test]
async fn a_failing_identity_provider_is_transient_not_an_authentication_error() {
    let emu = default_emulator().await;
    let mut config_change = |c: &mut CloudConfig| {
        c.retry.max_attempts = 2;
        c.retry.base_delay = Duration::from_millis(1);
    };
    // The token endpoint answers 503 to every attempt: the token is asked for twice
    // (the retry policy), and the operation is not repeated on top of that.
    let p = proxied(emu.info(), &mut config_change).await;
    p.auth.on(
        "POST",
        TOKEN,
        2,
        Action::Answer(503, "upstream down".to_owned()),
    );
    let e = p.client.server_info().await.unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Transient, "{e:?}");
    assert_eq!(e.status(), Some(503));
    assert_eq!(e.operation(), Some("requestToken"));
    assert!(e.is_retryable());
    assert!(p.cloud.hits().is_empty(), "nothing sent without a token");
    assert_eq!(
        p.auth.count("POST", TOKEN),
        2,
        "retried as transient, once over"
    );
    // Once it is back, the same client works.
    p.client.server_info().await.unwrap();

    // Discovery failing with 502: transient too.
    let p = proxied(emu.info(), &mut config_change).await;
    p.auth.on(
        "GET",
        DISCOVERY,
        4,
        Action::Answer(502, "bad gateway".to_owned()),
    );
    let e = p.client.server_info().await.unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Transient, "{e:?}");
    assert_eq!(e.operation(), Some("openidConfiguration"));

    // A refusal stays an authentication error.
    let p = proxied(emu.info(), |c| c.api_secret = ApiSecret::new("nope")).await;
    let e = p.client.server_info().await.unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Authentication);
}

/// Sixteen operations at once while the identity provider fails: it is asked by one
/// task at a time, and the tasks that waited for a failed attempt get its error instead
/// of asking again (not sixteen rounds of retries, each multiplied by the operation's
/// own).
#[tokio::test]
async fn a_failing_identity_provider_is_not_asked_once_per_waiting_task() {
    let emu = default_emulator().await;
    let p = proxied(emu.info(), |c| {
        c.retry.max_attempts = 3;
        c.retry.base_delay = Duration::from_millis(20);
    })
    .await;
    p.auth.on(
        "POST",
        TOKEN,
        1000,
        Action::Answer(503, "upstream down".to_owned()),
    );
    let tasks: Vec<_> = (0..16)
        .map(|_| {
            let client = p.client.clone();
            tokio::spawn(async move { client.list_containers_page(0, 10).await })
        })
        .collect();
    for task in tasks {
        let e = task.await.unwrap().unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Transient, "{e:?}");
        assert_eq!(e.status(), Some(503));
        assert_eq!(e.operation(), Some("requestToken"));
    }
    let asked = p.auth.count("POST", TOKEN);
    // One attempt of 3 requests shared by the tasks waiting for it; a task that came
    // after it ended may start one more.
    assert!(
        (3..=6).contains(&asked),
        "{asked} token requests for 16 operations"
    );
    assert!(p.cloud.hits().is_empty(), "nothing sent without a token");
    // A later operation asks again, and works once the provider is back.
    p.auth.clear();
    p.client.list_containers_page(0, 10).await.unwrap();
    assert_eq!(p.auth.count("POST", TOKEN), asked + 1);
}

#[tokio::test]
async fn a_member_key_and_another_organization_are_refused_with_403() {
    let emu = default_emulator().await;
    let info = emu.info();
    let mut config = fast_config(info);
    config.api_key = info.member_api_key.clone();
    config.api_secret = ApiSecret::new(info.member_api_secret.clone());
    let member = CloudClient::new(config).unwrap();
    let e = member.server_info().await.unwrap_err();
    assert_eq!(api_status(&e), 403);
    assert_eq!(e.title(), Some("Forbidden"));
    assert!(!e.is_retryable());
    let e = member.list_webhook_endpoints_page(0, 10).await.unwrap_err();
    assert_eq!(api_status(&e), 403);
    assert_eq!(e.operation(), Some("listWebhookEndpoints"));

    let other = info
        .organizations
        .iter()
        .find(|o| o.organization_id != info.organization_id)
        .unwrap();
    let mut config = fast_config(info);
    config.organization_id = other.organization_id;
    let e = CloudClient::new(config)
        .unwrap()
        .create_container(container_request(None))
        .await
        .unwrap_err();
    assert_eq!(api_status(&e), 403);
    assert_eq!(e.operation(), Some("createContainer"));
}
