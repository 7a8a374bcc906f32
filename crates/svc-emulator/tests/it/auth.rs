//! Authentication (`openapi/cloud.yaml`, "Authentication" and the `oidc` scheme): OpenID
//! Connect discovery, both grants, token answers and scopes, 401/403/404 rules.

use std::time::Duration;

use reqwest::Method;
use serde_json::{Value, json};
use svc_emulator::EmulatorConfig;

use crate::common::{
    Env, NO_BEARER, Resp, client_credentials_grant, config, discovery, password_grant, poll,
    realm_token, token,
};

fn scopes(answer: &Value) -> Vec<String> {
    answer["scope"]
        .as_str()
        .unwrap_or_default()
        .split_whitespace()
        .map(str::to_owned)
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn discovery_document_gives_issuer_and_token_endpoint() {
    let env = Env::start().await;
    let doc = discovery(&env.http, &env.info.auth_url).await;
    let issuer = doc["issuer"].as_str().expect("issuer string");
    // OpenID Connect Discovery 1.0 §4.3: the issuer is the URL the document was fetched under.
    assert_eq!(
        issuer.trim_end_matches('/'),
        env.info.auth_url.trim_end_matches('/'),
        "{doc}"
    );
    let endpoint = doc["token_endpoint"]
        .as_str()
        .expect("token_endpoint string");
    let url = reqwest::Url::parse(endpoint).expect("token_endpoint is an absolute URL");
    assert!(matches!(url.scheme(), "http" | "https"), "{endpoint}");
    assert!(
        endpoint.starts_with(&env.info.auth_url),
        "token endpoint {endpoint} is not on {}",
        env.info.auth_url
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn password_grant_gives_a_bearer_token_with_both_scopes() {
    let env = Env::start().await;
    let r = password_grant(
        &env.http,
        &env.info.auth_url,
        &env.info.api_key,
        &env.info.api_secret,
    )
    .await;
    let answer = r.ok().clone();
    let access = answer["access_token"].as_str().expect("access_token");
    assert!(!access.is_empty());
    assert_eq!(answer["token_type"], "Bearer", "{answer}");
    assert_eq!(
        answer["expires_in"], 300,
        "default lifetime is 300 s: {answer}"
    );
    let scopes = scopes(&answer);
    assert!(scopes.iter().any(|s| s == "cloud:api-key"), "{answer}");
    assert!(scopes.iter().any(|s| s == "notification:user"), "{answer}");
    // The token works on a cloud route and on a notification route.
    let info = env
        .call_as(Some(access), Method::GET, &env.cloud("/api/v1/info"), None)
        .await;
    info.ok();
    let path = format!(
        "/api/v2/organizations/{}/webhook-endpoints?page=0&perPage=10",
        env.org()
    );
    env.call_as(Some(access), Method::GET, &env.notif(&path), None)
        .await
        .ok();
}

/// The vendor's samples post to the token endpoint of its Keycloak realm, without a scope.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_keycloak_realm_path_answers_as_the_token_endpoint() {
    let env = Env::start().await;
    let r = realm_token(&env, &env.info.api_secret).await;
    let access = r.ok()["access_token"]
        .as_str()
        .expect("access_token")
        .to_owned();
    env.call_as(Some(&access), Method::GET, &env.cloud("/api/v1/info"), None)
        .await
        .ok();
    // The same rules as at the discovered endpoint.
    let r = realm_token(&env, "wrong").await;
    assert_eq!(r.status.as_u16(), 401, "{}", r.text);
    assert_eq!(r.json["error"], "invalid_grant", "{}", r.text);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn client_credentials_grant_gives_a_working_token() {
    let env = Env::start().await;
    let r = client_credentials_grant(
        &env.http,
        &env.info.auth_url,
        &env.info.api_key,
        &env.info.api_secret,
    )
    .await;
    let answer = r.ok().clone();
    assert_eq!(answer["token_type"], "Bearer", "{answer}");
    assert_eq!(answer["expires_in"], 300, "{answer}");
    let scopes = scopes(&answer);
    assert!(
        scopes.iter().any(|s| s == "cloud:api-key")
            && scopes.iter().any(|s| s == "notification:user"),
        "{answer}"
    );
    let access = answer["access_token"].as_str().expect("access_token");
    let path = format!(
        "/api/v2/organizations/{}/containers?page=0&perPage=10",
        env.org()
    );
    let list = env
        .call_as(Some(access), Method::GET, &env.cloud(&path), None)
        .await;
    assert_eq!(list.ok()["numItems"], 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn expires_in_is_the_configured_lifetime() {
    let env = Env::with(EmulatorConfig {
        token_lifetime: Duration::from_secs(42),
        ..config()
    })
    .await;
    let r = password_grant(
        &env.http,
        &env.info.auth_url,
        &env.info.api_key,
        &env.info.api_secret,
    )
    .await;
    assert_eq!(r.ok()["expires_in"], 42, "{}", r.text);
}

#[track_caller]
fn assert_oauth_error(r: &Resp, codes: &[&str]) {
    assert_eq!(r.status, 401, "expected 401, got {}: {}", r.status, r.text);
    let error = r.json["error"]
        .as_str()
        .unwrap_or_else(|| panic!("OAuth error body without `error`: {}", r.text));
    assert!(
        codes.contains(&error),
        "OAuth error `{error}` not in {codes:?}: {}",
        r.text
    );
    assert!(r.json.get("access_token").is_none(), "{}", r.text);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn wrong_secret_or_unknown_key_is_an_oauth_401() {
    let env = Env::start().await;
    let (auth, key) = (&env.info.auth_url, &env.info.api_key);
    let r = password_grant(&env.http, auth, key, "not-the-secret").await;
    assert_oauth_error(&r, &["invalid_grant"]);
    let r = password_grant(&env.http, auth, "svc_key_unknown", &env.info.api_secret).await;
    assert_oauth_error(&r, &["invalid_grant", "invalid_client"]);
    let r = client_credentials_grant(&env.http, auth, key, "not-the-secret").await;
    assert_oauth_error(&r, &["invalid_grant", "invalid_client"]);
    // The other organization's secret does not fit this key either.
    let other = &env.info.organizations[1];
    let r = password_grant(&env.http, auth, key, &other.api_secret).await;
    assert_oauth_error(&r, &["invalid_grant"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn member_token_lacks_the_scopes() {
    let env = Env::start().await;
    let r = password_grant(
        &env.http,
        &env.info.auth_url,
        &env.info.member_api_key,
        &env.info.member_api_secret,
    )
    .await;
    let answer = r.ok().clone();
    assert_eq!(answer["token_type"], "Bearer", "{answer}");
    let scopes = scopes(&answer);
    assert!(!scopes.iter().any(|s| s == "cloud:api-key"), "{answer}");
    assert!(!scopes.iter().any(|s| s == "notification:user"), "{answer}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_bearer_token_is_401_with_the_exact_details() {
    let env = Env::start().await;
    let cloud = [
        (Method::GET, env.cloud("/api/v1/info")),
        (
            Method::GET,
            env.cloud(&format!(
                "/api/v2/organizations/{}/containers?page=0&perPage=10",
                env.org()
            )),
        ),
        (
            Method::POST,
            env.cloud(&format!("/api/v2/organizations/{}/containers", env.org())),
        ),
    ];
    let notification = [
        (
            Method::GET,
            env.notif(&format!(
                "/api/v2/organizations/{}/webhook-endpoints?page=0&perPage=10",
                env.org()
            )),
        ),
        (
            Method::POST,
            env.notif(&format!(
                "/api/v2/organizations/{}/webhook-endpoints",
                env.org()
            )),
        ),
    ];
    for (method, url) in cloud.into_iter().chain(notification) {
        let body = (method == Method::POST).then(|| json!({"region": "eu-west-3"}));
        let r = env.call_as(None, method.clone(), &url, body.as_ref()).await;
        assert_eq!(r.err(401), NO_BEARER, "{method} {url}");
        // A non-bearer scheme carries no bearer token either.
        let r = Resp::read(
            env.http
                .request(method.clone(), &url)
                .header("authorization", "Basic dXNlcjpwYXNz")
                .send()
                .await
                .unwrap(),
        )
        .await;
        assert_eq!(r.err(401), NO_BEARER, "Basic scheme: {method} {url}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn garbage_token_is_401() {
    let env = Env::start().await;
    let org = env.org();
    for url in [
        env.cloud("/api/v1/info"),
        env.cloud(&format!(
            "/api/v2/organizations/{org}/containers?page=0&perPage=10"
        )),
        env.notif(&format!(
            "/api/v2/organizations/{org}/webhook-endpoints?page=0&perPage=10"
        )),
    ] {
        let r = env
            .call_as(Some("garbage.token.value"), Method::GET, &url, None)
            .await;
        r.err(401);
        // An API key is not an access token.
        let r = env
            .call_as(Some(&env.info.api_key), Method::GET, &url, None)
            .await;
        r.err(401);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn expired_token_is_401() {
    let env = Env::with(EmulatorConfig {
        token_lifetime: Duration::from_secs(1),
        ..config()
    })
    .await;
    let r = password_grant(
        &env.http,
        &env.info.auth_url,
        &env.info.api_key,
        &env.info.api_secret,
    )
    .await;
    assert_eq!(r.ok()["expires_in"], 1, "{}", r.text);
    let short = r.json["access_token"].as_str().unwrap().to_owned();
    let info = env.cloud("/api/v1/info");
    env.call_as(Some(&short), Method::GET, &info, None)
        .await
        .ok();
    let expired = poll("token expiry", Duration::from_secs(6), || async {
        let r = env.call_as(Some(&short), Method::GET, &info, None).await;
        (r.status != 200).then_some(r)
    })
    .await;
    expired.err(401);
    let path = format!(
        "/api/v2/organizations/{}/webhook-endpoints?page=0&perPage=10",
        env.org()
    );
    env.call_as(Some(&short), Method::GET, &env.notif(&path), None)
        .await
        .err(401);
    // A fresh token works again.
    let fresh = token(
        &env.http,
        &env.info.auth_url,
        &env.info.api_key,
        &env.info.api_secret,
    )
    .await;
    env.call_as(Some(&fresh), Method::GET, &info, None)
        .await
        .ok();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn member_key_is_403_on_cloud_and_notification_routes() {
    let env = Env::start().await;
    let member = token(
        &env.http,
        &env.info.auth_url,
        &env.info.member_api_key,
        &env.info.member_api_secret,
    )
    .await;
    let org = env.org();
    let requests = [
        (Method::GET, env.cloud("/api/v1/info"), None),
        (
            Method::GET,
            env.cloud(&format!(
                "/api/v2/organizations/{org}/containers?page=0&perPage=10"
            )),
            None,
        ),
        (
            Method::POST,
            env.cloud(&format!("/api/v2/organizations/{org}/containers")),
            Some(json!({"region": "eu-west-3"})),
        ),
        (
            Method::GET,
            env.cloud(&format!(
                "/api/v2/organizations/{org}/processings?page=0&perPage=10"
            )),
            None,
        ),
        (
            Method::GET,
            env.notif(&format!(
                "/api/v2/organizations/{org}/webhook-endpoints?page=0&perPage=10"
            )),
            None,
        ),
        (
            Method::POST,
            env.notif(&format!("/api/v2/organizations/{org}/webhook-endpoints")),
            Some(
                json!({"url": "http://127.0.0.1:9/hook", "enabledEventTypes": ["cloud:processing-ended"]}),
            ),
        ),
    ];
    for (method, url, body) in requests {
        let r = env
            .call_as(Some(&member), method.clone(), &url, body.as_ref())
            .await;
        r.err(403);
    }
    // Nothing was created by the member.
    let list = env
        .get(&format!(
            "/api/v2/organizations/{org}/containers?page=0&perPage=10"
        ))
        .await;
    assert_eq!(list.ok()["numItems"], 0, "{}", list.text);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn other_organization_in_the_path_is_403() {
    let env = Env::start().await;
    let (_, other) = env.other_org().await;
    let requests = [
        (
            Method::GET,
            env.cloud(&format!(
                "/api/v2/organizations/{other}/containers?page=0&perPage=10"
            )),
            None,
        ),
        (
            Method::POST,
            env.cloud(&format!("/api/v2/organizations/{other}/containers")),
            Some(json!({"region": "eu-west-3"})),
        ),
        (
            Method::GET,
            env.cloud(&format!(
                "/api/v2/organizations/{other}/processings?page=0&perPage=10"
            )),
            None,
        ),
        (
            Method::GET,
            env.notif(&format!(
                "/api/v2/organizations/{other}/webhook-endpoints?page=0&perPage=10"
            )),
            None,
        ),
        (
            Method::POST,
            env.notif(&format!("/api/v2/organizations/{other}/webhook-endpoints")),
            Some(
                json!({"url": "http://127.0.0.1:9/hook", "enabledEventTypes": ["cloud:processing-ended"]}),
            ),
        ),
    ];
    for (method, url, body) in requests {
        let r = env
            .call_as(Some(&env.token), method.clone(), &url, body.as_ref())
            .await;
        r.err(403);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn other_organization_container_is_404() {
    let env = Env::start().await;
    let (other_token, other_org) = env.other_org().await;
    let created = env
        .call_as(
            Some(&other_token),
            Method::POST,
            &env.cloud(&format!("/api/v2/organizations/{other_org}/containers")),
            Some(&json!({"region": "us-west-1", "metadata": {"owner": "other"}, "files": [{"path": "a.nmea", "type": "input", "size": 3}]})),
        )
        .await;
    let created = created.ok().clone();
    let id = created["id"].as_str().unwrap();
    let file_id = created["files"][0]["id"].as_str().unwrap();
    env.get(&format!("/api/v2/containers/{id}")).await.err(404);
    env.patch(
        &format!("/api/v2/containers/{id}"),
        &json!({"metadata": {}}),
    )
    .await
    .err(404);
    env.post(
        &format!("/api/v2/containers/{id}/files"),
        &json!({"files": [{"path": "b", "type": "input", "size": 1}]}),
    )
    .await
    .err(404);
    env.patch(
        &format!("/api/v2/container-files/{file_id}"),
        &json!({"path": "c"}),
    )
    .await
    .err(404);
    env.delete(&format!("/api/v2/container-files/{file_id}"))
        .await
        .err(404);
    env.delete(&format!("/api/v2/containers/{id}"))
        .await
        .err(404);
    // A processing start on it: 404 (not the caller's container).
    env.start_processing_raw(&json!({"containerId": id, "processingJson": {}}))
        .await
        .err(404);
    // Untouched for its owner.
    let mine = env
        .call_as(
            Some(&other_token),
            Method::GET,
            &env.cloud(&format!("/api/v2/containers/{id}")),
            None,
        )
        .await;
    let mine = mine.ok();
    assert_eq!(mine["metadata"], json!({"owner": "other"}));
    assert_eq!(mine["files"][0]["path"], "a.nmea");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unknown_organization_in_the_path_is_404() {
    // cloud.yaml / notification.yaml, parameter `organizationId`: "An unknown organization
    // answers 404; an organization the caller does not administer answers 403."
    let env = Env::start().await;
    let unknown = uuid::Uuid::new_v4();
    let requests = [
        (
            Method::GET,
            env.cloud(&format!(
                "/api/v2/organizations/{unknown}/containers?page=0&perPage=10"
            )),
            None,
        ),
        (
            Method::POST,
            env.cloud(&format!("/api/v2/organizations/{unknown}/containers")),
            Some(json!({"region": "eu-west-3"})),
        ),
        (
            Method::GET,
            env.cloud(&format!(
                "/api/v2/organizations/{unknown}/processings?page=0&perPage=10"
            )),
            None,
        ),
        (
            Method::GET,
            env.notif(&format!(
                "/api/v2/organizations/{unknown}/webhook-endpoints?page=0&perPage=10"
            )),
            None,
        ),
    ];
    let mut wrong = Vec::new();
    for (method, url, body) in requests {
        let r = env
            .call_as(Some(&env.token), method.clone(), &url, body.as_ref())
            .await;
        if r.status == 404 {
            r.err(404);
        } else {
            wrong.push(format!("{method} {url} -> {} {}", r.status, r.text));
        }
    }
    assert!(
        wrong.is_empty(),
        "expected 404 for an unknown organization:\n{}",
        wrong.join("\n")
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn other_organization_endpoints_and_processings_are_404() {
    let env = Env::start().await;
    let (other_token, other_org) = env.other_org().await;
    let created = env
        .call_as(
            Some(&other_token),
            Method::POST,
            &env.notif(&format!("/api/v2/organizations/{other_org}/webhook-endpoints")),
            Some(&json!({"url": "http://127.0.0.1:9/hook", "enabledEventTypes": ["cloud:processing-ended"]})),
        )
        .await;
    let endpoint = created.ok()[0].clone();
    let eid = endpoint["id"].as_str().unwrap();
    env.npatch(
        &format!("/api/v2/webhook-endpoints/{eid}"),
        &json!({"enabled": false}),
    )
    .await
    .err(404);
    env.nget(&format!(
        "/api/v2/webhook-endpoints/{eid}/missed-webhooks?page=0&perPage=10"
    ))
    .await
    .err(404);
    env.ndelete(&format!("/api/v2/webhook-endpoints/{eid}"))
        .await
        .err(404);
    // The other organization's processing.
    let track = crate::common::nmea_track(3);
    let c = env
        .call_as(
            Some(&other_token),
            Method::POST,
            &env.cloud(&format!("/api/v2/organizations/{other_org}/containers")),
            Some(&json!({"region": "eu-west-3", "files": [{"path": "t.nmea", "type": "input", "size": track.len()}]})),
        )
        .await;
    let c = c.ok().clone();
    let (status, body) = crate::common::upload(&env.http, &c["files"][0], track.into_bytes()).await;
    assert_eq!(status, 204, "{body}");
    let p = env
        .call_as(
            Some(&other_token),
            Method::POST,
            &env.cloud(&format!("/api/v2/organizations/{other_org}/processings")),
            Some(&json!({"containerId": c["id"], "processingJson": {}})),
        )
        .await;
    let pid = p.ok()["id"].as_str().unwrap().to_owned();
    for (method, path) in [
        (Method::GET, format!("/api/v2/processings/{pid}")),
        (Method::GET, format!("/api/v2/processings/{pid}/errors")),
        (Method::GET, format!("/api/v2/processings/{pid}/output")),
        (Method::POST, format!("/api/v2/processings/{pid}/archive")),
        (Method::POST, format!("/api/v2/processings/{pid}")),
    ] {
        let r = env
            .call_as(Some(&env.token), method.clone(), &env.cloud(&path), None)
            .await;
        assert_eq!(r.status, 404, "{method} {path}: {}", r.text);
        r.err(404);
    }
    // Still there, untouched, for its owner; not listed for this organization.
    let theirs = env
        .call_as(
            Some(&other_token),
            Method::GET,
            &env.cloud(&format!("/api/v2/processings/{pid}")),
            None,
        )
        .await;
    assert!(
        matches!(
            theirs.ok()["status"].as_str(),
            Some("pending" | "processing" | "processed")
        ),
        "{}",
        theirs.text
    );
    let mine = env
        .get(&format!(
            "/api/v2/organizations/{}/processings?page=0&perPage=10",
            env.org()
        ))
        .await;
    assert_eq!(mine.ok()["numItems"], 0);
}
