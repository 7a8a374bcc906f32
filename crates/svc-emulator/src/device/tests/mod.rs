//! Tests of the emulated unit, over HTTP (reqwest against a real server on
//! 127.0.0.1:0) and over the serial protocol (the TCP bridge and the pty, frames
//! written and read with the `svc_protocol::serial` codec, except in the framing tests,
//! which send and expect recorded bytes). Most behaviours run through every transport
//! with the same code ([`Client`]). The pty exists on Unix only; its tests are compiled
//! there only.
//!
//! This file has the test clients; the tests are grouped by subject: [`document`],
//! [`routes`], [`sessions`], [`settings`], [`framing`], [`noise`] and [`units`].

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use svc_protocol::serial::{
    Ack, CLASS_REST, Decoder, ID_GET, Message, RestRequest, SerialError, decode_reply,
};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};

#[cfg(unix)]
use super::FdStream;
use super::spec::{Method, Spec};
use super::unit::LOCK_CONFLICT;
use super::{DeviceConfig, DeviceEmulator};

mod document;
mod framing;
mod noise;
mod routes;
mod sessions;
mod settings;
mod units;

/// Time given to an answer before a test decides there is none.
const ANSWER_WAIT: Duration = Duration::from_secs(10);
/// Time after which a silent serial link counts as "no answer".
const SILENCE: Duration = Duration::from_millis(150);
const REBOOT: Duration = Duration::from_millis(300);

fn config() -> DeviceConfig {
    DeviceConfig {
        pty: false,
        reboot_time: REBOOT,
        ..DeviceConfig::default()
    }
}

fn passwords(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
    pairs
        .iter()
        .map(|(u, p)| ((*u).to_owned(), (*p).to_owned()))
        .collect()
}

async fn start(config: DeviceConfig) -> DeviceEmulator {
    DeviceEmulator::start(config)
        .await
        .expect("the unit starts")
}

// ------------------------------------------------------------------ test clients

trait Link: AsyncRead + AsyncWrite + Unpin + Send {}
impl<T: AsyncRead + AsyncWrite + Unpin + Send> Link for T {}

/// A serial link: frames out, messages in.
struct SerialLink {
    link: Box<dyn Link>,
    decoder: Decoder,
    /// Every byte received, for the tests that look at the frames themselves.
    received: Vec<u8>,
}

impl SerialLink {
    fn new(link: Box<dyn Link>) -> Self {
        Self {
            link,
            decoder: Decoder::new(),
            received: Vec::new(),
        }
    }

    async fn send(&mut self, bytes: &[u8]) {
        self.link.write_all(bytes).await.expect("write to the link");
        self.link.flush().await.expect("flush the link");
    }

    /// The next whole REST message (the output logs the unit streams on the link are
    /// skipped), or `None` after `wait` without one.
    async fn next_message(&mut self, wait: Duration) -> Option<Message> {
        let deadline = tokio::time::Instant::now() + wait;
        let mut buf = [0_u8; 4096];
        loop {
            while let Some(message) = self.decoder.next_message() {
                if message.class == svc_protocol::serial::CLASS_REST {
                    return Some(message);
                }
            }
            let n = tokio::time::timeout_at(deadline, self.link.read(&mut buf))
                .await
                .ok()?
                .expect("read from the link");
            assert!(n > 0, "the link closed");
            self.received.extend_from_slice(&buf[..n]);
            self.decoder.push(&buf[..n]);
        }
    }
}

/// One answer: status and JSON body (raw bytes kept for format checks).
#[derive(Debug)]
struct Answer {
    status: u16,
    body: Value,
    raw: Vec<u8>,
    disposition: Option<String>,
}

impl Answer {
    fn new(status: u16, raw: Vec<u8>, disposition: Option<String>) -> Self {
        let body = if raw.is_empty() {
            Value::Null
        } else {
            serde_json::from_slice(&raw).expect("a JSON body")
        };
        Self {
            status,
            body,
            raw,
            disposition,
        }
    }
}

enum Client {
    Http { http: reqwest::Client, base: String },
    Serial(Box<SerialLink>),
}

#[derive(Clone, Copy, Debug)]
enum Via {
    Http,
    SerialTcp,
    #[cfg(unix)]
    Pty,
}

/// The serial transports: the TCP bridge and (Unix only) the pty.
const SERIAL_VIAS: &[Via] = &[
    Via::SerialTcp,
    #[cfg(unix)]
    Via::Pty,
];

async fn connect(unit: &DeviceEmulator, via: Via) -> Client {
    match via {
        Via::Http => Client::Http {
            // No connection pool: each request opens its own connection, so a
            // connection closed by a reboot is never reused.
            http: reqwest::Client::builder()
                .pool_max_idle_per_host(0)
                .timeout(ANSWER_WAIT)
                .build()
                .expect("a reqwest client"),
            base: unit.url().to_owned(),
        },
        Via::SerialTcp => {
            let stream = tokio::net::TcpStream::connect(unit.serial_tcp())
                .await
                .expect("connect to the serial bridge");
            Client::Serial(Box::new(SerialLink::new(Box::new(stream))))
        }
        #[cfg(unix)]
        Via::Pty => {
            let path = unit.serial_path().expect("the unit has a pty");
            let stream = FdStream::open(path).expect("open the pty");
            Client::Serial(Box::new(SerialLink::new(Box::new(stream))))
        }
    }
}

impl Client {
    /// Sends a request; `None` when the unit does not answer (HTTP: the connection
    /// fails; serial: no reply within `wait`).
    async fn try_call(
        &mut self,
        method: &str,
        path: &str,
        query: &str,
        body: Option<&[u8]>,
        wait: Duration,
    ) -> Option<Answer> {
        match self {
            Client::Http { http, base } => {
                let url = if query.is_empty() {
                    format!("{base}{path}")
                } else {
                    format!("{base}{path}?{query}")
                };
                let method = reqwest::Method::from_bytes(method.as_bytes()).expect("a method");
                let mut request = http.request(method, url).timeout(wait);
                if let Some(body) = body {
                    request = request
                        .header("content-type", "application/json")
                        .body(body.to_vec());
                }
                let response = request.send().await.ok()?;
                let status = response.status().as_u16();
                let disposition = response
                    .headers()
                    .get("content-disposition")
                    .and_then(|v| v.to_str().ok())
                    .map(str::to_owned);
                let raw = response.bytes().await.ok()?.to_vec();
                Some(Answer::new(status, raw, disposition))
            }
            Client::Serial(link) => {
                let request = match method {
                    "GET" => RestRequest::get(path, query),
                    _ => RestRequest::post(path, query, body.unwrap_or_default()),
                };
                link.send(&request.encode(0)).await;
                let message = link.next_message(wait).await?;
                let reply = decode_reply(&message, request.id()).expect("a REST reply");
                Some(Answer::new(reply.status, reply.body, None))
            }
        }
    }

    async fn call(&mut self, method: &str, path: &str, query: &str, body: Option<&[u8]>) -> Answer {
        self.try_call(method, path, query, body, ANSWER_WAIT)
            .await
            .unwrap_or_else(|| panic!("no answer to {method} {path}"))
    }

    async fn get(&mut self, path: &str, query: &str) -> Answer {
        self.call("GET", &format!("/api/v1{path}"), query, None)
            .await
    }

    async fn post(&mut self, path: &str, query: &str, body: &Value) -> Answer {
        let body = serde_json::to_vec(body).expect("JSON");
        self.call("POST", &format!("/api/v1{path}"), query, Some(&body))
            .await
    }

    async fn login(&mut self, user: &str, password: &str) -> String {
        let answer = self
            .post(
                "/user/login",
                "",
                &json!({ "user": user, "password": password }),
            )
            .await;
        assert_eq!(answer.status, 200, "login {user}: {:?}", answer.body);
        answer.body["token"].as_str().expect("a token").to_owned()
    }

    /// Waits until the unit answers again after a reboot; returns when it did.
    async fn wait_until_up(&mut self) -> Instant {
        let deadline = Instant::now() + ANSWER_WAIT;
        loop {
            if let Some(answer) = self
                .try_call("GET", "/api/v1/info", "", None, SILENCE)
                .await
            {
                assert_eq!(answer.status, 200);
                let up = Instant::now();
                // A serial reply slower than `SILENCE` to an earlier poll may follow:
                // take it, so that the next request reads its own reply.
                if let Client::Serial(link) = self {
                    while link.next_message(SILENCE).await.is_some() {}
                }
                return up;
            }
            assert!(Instant::now() < deadline, "the unit did not come back");
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }
}

fn auth(token: &str) -> String {
    format!("auth={token}")
}
