//! What every server of the emulator shares (cloud, identity provider, notification,
//! storage, the unit's HTTP): errors produced before a route runs (a body over the
//! limit, a method the path does not take) get the documented error body, and a
//! half-sent request does not hold a connection beyond the read timeouts.

use std::time::{Duration, Instant};

use reqwest::Method;
use serde_json::{Value, json};
use svc_emulator::{EmulatorConfig, ReadTimeouts};
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio::net::TcpStream;

use crate::common::{Env, Resp, assert_error_body, config};

/// Over the 2 MB a route takes.
const OVERSIZED: usize = 3 << 20;

#[tokio::test]
async fn an_oversized_body_gets_the_documented_error_body() {
    let env = Env::start().await;
    let org = env.org();
    let big = "x".repeat(OVERSIZED);

    // The cloud and notification services: `{title, details}`.
    for url in [
        env.cloud(&format!("/api/v2/organizations/{org}/containers")),
        env.cloud(&format!("/api/v2/organizations/{org}/processings")),
        env.notif(&format!("/api/v2/organizations/{org}/webhook-endpoints")),
    ] {
        let r = env.call_raw(Method::POST, &url, &big).await;
        let details = r.err(413);
        assert!(
            details.contains("large") || details.contains("limit"),
            "{url}: {details}"
        );
    }

    // The identity provider: the OAuth error body of RFC 6749.
    let r = Resp::read(
        env.http
            .post(format!("{}/oauth/token", env.info.auth_url))
            .header("content-type", "application/x-www-form-urlencoded")
            .body(big.clone())
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(r.status.as_u16(), 413, "{}", r.text);
    assert!(r.content_type.starts_with("application/json"), "{r:?}");
    assert_eq!(r.json["error"], "invalid_request", "{}", r.text);
    assert!(
        r.json["error_description"]
            .as_str()
            .is_some_and(|d| !d.is_empty())
    );
}

#[tokio::test]
async fn a_method_a_path_does_not_take_gets_the_documented_error_body() {
    let env = Env::start().await;
    let org = env.org();
    let r = env
        .call_as(
            Some(&env.token),
            Method::PUT,
            &env.cloud(&format!("/api/v2/organizations/{org}/containers")),
            Some(&json!({})),
        )
        .await;
    r.err(405);
    let r = env
        .call_as(
            Some(&env.token),
            Method::PUT,
            &env.notif(&format!("/api/v2/organizations/{org}/webhook-endpoints")),
            Some(&json!({})),
        )
        .await;
    r.err(405);
    let r = Resp::read(
        env.http
            .get(format!("{}/oauth/token", env.info.auth_url))
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(r.status.as_u16(), 405, "{}", r.text);
    assert_eq!(r.json["error"], "invalid_request", "{}", r.text);
}

// ------------------------------------------------------------------ read timeouts

/// Short read timeouts: a half-sent request must be cut well within `LIMIT`.
const TIMEOUT: Duration = Duration::from_millis(300);
/// How long a test waits for the server to give up on a half-sent request.
const LIMIT: Duration = Duration::from_secs(5);

fn short_timeouts() -> EmulatorConfig {
    EmulatorConfig {
        read_timeouts: ReadTimeouts {
            header: TIMEOUT,
            body: TIMEOUT,
        },
        ..config()
    }
}

/// `host:port` of an `http://host:port` address.
fn authority(url: &str) -> String {
    url.trim_start_matches("http://")
        .split('/')
        .next()
        .unwrap()
        .to_owned()
}

/// Sends `bytes` and reads until the server closes the connection; fails when it is
/// still open after [`LIMIT`]. Returns what the server sent.
async fn sent_and_closed(address: &str, bytes: &[u8]) -> (Vec<u8>, Duration) {
    let mut stream = TcpStream::connect(address).await.unwrap();
    stream.write_all(bytes).await.unwrap();
    let started = Instant::now();
    let mut answer = Vec::new();
    let mut buf = [0_u8; 4096];
    loop {
        match tokio::time::timeout_at((started + LIMIT).into(), stream.read(&mut buf)).await {
            Err(_) => panic!(
                "{address}: the half-sent request still holds the connection after {LIMIT:?} (answer so far: {:?})",
                String::from_utf8_lossy(&answer)
            ),
            Ok(Ok(0) | Err(_)) => return (answer, started.elapsed()),
            Ok(Ok(n)) => answer.extend_from_slice(&buf[..n]),
        }
    }
}

/// The status and body of a raw HTTP/1.1 answer.
fn parse_answer(answer: &[u8]) -> (u16, String, String) {
    let text = String::from_utf8_lossy(answer).into_owned();
    let (head, body) = text.split_once("\r\n\r\n").unwrap_or((&text, ""));
    let status = head
        .split(' ')
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("an HTTP answer: {text:?}"));
    (status, head.to_ascii_lowercase(), body.to_owned())
}

#[tokio::test]
async fn half_sent_headers_are_cut_by_every_server() {
    let env = Env::with(short_timeouts()).await;
    let device = env.info.device_url.clone().expect("the unit runs");
    for url in [
        &env.info.base_url,
        &env.info.auth_url,
        &env.info.notification_url,
        &env.info.storage_url,
        &device,
    ] {
        let address = authority(url);
        let (_, took) = sent_and_closed(
            &address,
            format!("POST /api/v1/info HTTP/1.1\r\nHost: {address}\r\nContent-Le").as_bytes(),
        )
        .await;
        assert!(took < LIMIT, "{url}: {took:?}");
    }
}

#[tokio::test]
async fn half_sent_bodies_are_answered_408_with_the_documented_body() {
    let env = Env::with(short_timeouts()).await;
    let org = env.org();
    let device = env.info.device_url.clone().expect("the unit runs");
    let bearer = format!("Authorization: Bearer {}\r\n", env.token);
    let json_type = "Content-Type: application/json\r\n";
    // (server address, path, extra headers, kind of error body)
    let cases = [
        (
            &env.info.base_url,
            format!("/api/v2/organizations/{org}/containers"),
            format!("{bearer}{json_type}"),
            "cloud",
        ),
        (
            &env.info.notification_url,
            format!("/api/v2/organizations/{org}/webhook-endpoints"),
            format!("{bearer}{json_type}"),
            "cloud",
        ),
        (
            &env.info.auth_url,
            "/oauth/token".to_owned(),
            "Content-Type: application/x-www-form-urlencoded\r\n".to_owned(),
            "oauth",
        ),
        (
            &env.info.storage_url,
            "/svc-eu-west-3".to_owned(),
            "Content-Type: multipart/form-data; boundary=b0undary\r\n".to_owned(),
            "s3",
        ),
        (
            &device,
            "/api/v1/user/login".to_owned(),
            json_type.to_owned(),
            "unit",
        ),
    ];
    for (url, path, headers, kind) in cases {
        let address = authority(url);
        let request = format!(
            "POST {path} HTTP/1.1\r\nHost: {address}\r\n{headers}Content-Length: 1000\r\n\r\n--b0undary\r\n{{\"a\":"
        );
        let (answer, took) = sent_and_closed(&address, request.as_bytes()).await;
        assert!(took < LIMIT, "{url}: {took:?}");
        let (status, head, body) = parse_answer(&answer);
        match kind {
            "s3" => {
                // As S3: 400 RequestTimeout, in its XML error body.
                assert_eq!(status, 400, "{url}: {head}{body}");
                assert!(body.contains("<Code>RequestTimeout</Code>"), "{body}");
            }
            _ => {
                assert_eq!(status, 408, "{url}: {head}{body}");
                assert!(head.contains("content-type: application/json"), "{head}");
                let json: Value = serde_json::from_str(&body)
                    .unwrap_or_else(|e| panic!("{url}: a JSON body: {e}: {body:?}"));
                match kind {
                    "cloud" => {
                        assert_error_body(&json, &body);
                    }
                    "oauth" => assert_eq!(json["error"], "invalid_request", "{body}"),
                    _ => {
                        assert_eq!(json["status"], 408, "{body}");
                        assert!(json["title"].is_string() && json["detail"].is_string());
                    }
                }
            }
        }
    }
}

/// A request whose body keeps coming, however slowly, is not cut: the body timeout is
/// an idle one, not a limit on the whole upload.
#[tokio::test]
async fn a_slow_but_steady_body_is_not_cut() {
    let env = Env::with(short_timeouts()).await;
    let address = authority(&env.info.base_url);
    let body = json!({"region": "eu-west-3"}).to_string();
    let mut stream = TcpStream::connect(&address).await.unwrap();
    let head = format!(
        "POST /api/v2/organizations/{}/containers HTTP/1.1\r\nHost: {address}\r\nAuthorization: Bearer {}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        env.org(),
        env.token,
        body.len()
    );
    stream.write_all(head.as_bytes()).await.unwrap();
    // Each piece comes within the idle timeout; the whole body takes longer than it.
    let started = Instant::now();
    for piece in body.as_bytes().chunks(body.len().div_ceil(4)) {
        tokio::time::sleep(TIMEOUT / 2).await;
        stream.write_all(piece).await.unwrap();
    }
    assert!(started.elapsed() > TIMEOUT);
    let mut answer = Vec::new();
    tokio::time::timeout(LIMIT, stream.read_to_end(&mut answer))
        .await
        .expect("answered")
        .unwrap();
    let (status, _, text) = parse_answer(&answer);
    assert_eq!(status, 200, "{text}");
}
