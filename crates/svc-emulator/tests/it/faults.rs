//! Fault injection (`EmulatorConfig::faults`): a share of requests answered 500 with an
//! error body, or cut in the middle of the body; the rest served normally.

use std::time::Duration;

use serde_json::Value;
use svc_emulator::{Emulator, EmulatorConfig, FaultConfig};

use crate::common::{assert_error_body, client, config};

/// Gets a token, retrying through injected faults (bounded).
async fn token_through_faults(
    http: &reqwest::Client,
    auth_url: &str,
    key: &str,
    secret: &str,
) -> String {
    for _ in 0..100 {
        let Ok(doc) = http
            .get(format!("{auth_url}/.well-known/openid-configuration"))
            .send()
            .await
        else {
            continue;
        };
        let Ok(doc) = doc.json::<Value>().await else {
            continue;
        };
        let Some(endpoint) = doc["token_endpoint"].as_str() else {
            continue;
        };
        let form = [
            ("grant_type", "password"),
            ("client_id", "api-key"),
            ("username", key),
            ("password", secret),
            ("scope", "openid"),
        ];
        let Ok(answer) = http.post(endpoint).form(&form).send().await else {
            continue;
        };
        if !answer.status().is_success() {
            continue;
        }
        if let Ok(body) = answer.json::<Value>().await
            && let Some(token) = body["access_token"].as_str()
        {
            return token.to_owned();
        }
    }
    panic!("no token within 100 attempts");
}

#[derive(Default, Debug)]
struct Tally {
    ok: u32,
    errors: u32,
    cuts: u32,
}

async fn one_request(http: &reqwest::Client, url: &str, token: &str, tally: &mut Tally) {
    let response = match http.get(url).bearer_auth(token).send().await {
        Ok(r) => r,
        Err(e) => {
            // A connection broken before the headers also counts as a cut.
            assert!(!e.is_builder(), "{e}");
            tally.cuts += 1;
            return;
        }
    };
    let status = response.status();
    match response.bytes().await {
        Err(e) => {
            assert!(
                e.is_body() || e.is_decode() || e.is_request(),
                "a body error, got {e:?}"
            );
            tally.cuts += 1;
        }
        Ok(body) => {
            let text = String::from_utf8_lossy(&body);
            let json: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
            match status.as_u16() {
                200 => {
                    assert!(json["version"].is_string(), "a whole ServerInfo: {text}");
                    tally.ok += 1;
                }
                500 => {
                    assert_error_body(&json, &text);
                    tally.errors += 1;
                }
                other => panic!("unexpected status {other}: {text}"),
            }
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn faults_give_500s_cut_bodies_and_successes() {
    let faults = FaultConfig {
        rate: 0.3,
        seed: 0x0123_4567,
        delay: Duration::from_millis(20),
        ..FaultConfig::default()
    };
    let emu = Emulator::start(EmulatorConfig { faults, ..config() })
        .await
        .unwrap();
    let info = emu.info().clone();
    let http = client();
    let token = token_through_faults(&http, &info.auth_url, &info.api_key, &info.api_secret).await;
    let url = format!("{}/api/v1/info", info.base_url);
    let mut tally = Tally::default();
    for _ in 0..400 {
        one_request(&http, &url, &token, &mut tally).await;
        if tally.ok >= 5 && tally.errors >= 3 && tally.cuts >= 3 {
            break;
        }
    }
    assert!(
        tally.ok >= 5 && tally.errors >= 3 && tally.cuts >= 3,
        "{tally:?}"
    );
    // Roughly the configured share of faults (delays are successes).
    let total = tally.ok + tally.errors + tally.cuts;
    assert!(tally.errors + tally.cuts < total, "{tally:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rate_zero_injects_nothing() {
    let faults = FaultConfig {
        rate: 0.0,
        ..FaultConfig::default()
    };
    let emu = Emulator::start(EmulatorConfig { faults, ..config() })
        .await
        .unwrap();
    let info = emu.info().clone();
    let http = client();
    let token = crate::common::token(&http, &info.auth_url, &info.api_key, &info.api_secret).await;
    let url = format!("{}/api/v1/info", info.base_url);
    let mut tally = Tally::default();
    for _ in 0..100 {
        one_request(&http, &url, &token, &mut tally).await;
    }
    assert_eq!(
        (tally.ok, tally.errors, tally.cuts),
        (100, 0, 0),
        "{tally:?}"
    );
}
