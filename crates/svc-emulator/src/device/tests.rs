//! Tests of the emulated unit, over HTTP (reqwest against a real server on
//! 127.0.0.1:0) and over the serial protocol (the TCP bridge and the pty, frames
//! written and read with the `svc_protocol::serial` codec, except in the framing tests,
//! which send and expect recorded bytes). Most behaviours run through every transport
//! with the same code ([`Client`]). The pty exists on Unix only; its tests are compiled
//! there only.

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

    /// The next whole message, or `None` after `wait` without one.
    async fn next_message(&mut self, wait: Duration) -> Option<Message> {
        let deadline = tokio::time::Instant::now() + wait;
        let mut buf = [0_u8; 4096];
        loop {
            if let Some(message) = self.decoder.next_message() {
                return Some(message);
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

// ------------------------------------------------------------------ the document

#[test]
fn the_document_gives_routes_rights_and_schemas() {
    let spec = Spec::load().expect("the document loads");
    assert_eq!(spec.operations.len(), 17);
    assert_eq!(
        spec.rights.roles,
        ["viewer", "operator", "powerUser", "setup", "factory"]
    );
    let right = |id: &str| {
        spec.operations
            .iter()
            .find(|op| op.id == id)
            .and_then(|op| op.right.clone())
    };
    let write = right("updateSettings").expect("a right");
    assert!(!spec.rights.allows("operator", &write));
    assert!(spec.rights.allows("powerUser", &write));
    let reboot = right("reboot").expect("a right");
    assert!(!spec.rights.allows("viewer", &reboot));
    assert!(spec.rights.allows("operator", &reboot));
    assert!(right("login").is_none());
    // Exact routes win over the node template.
    match spec.route(Some(Method::Post), "/api/v1/settings/default") {
        super::spec::Route::Found(op, _) => assert_eq!(op.id, "restoreDefaultSettings"),
        _ => panic!("no route"),
    }
    match spec.route(
        Some(Method::Get),
        "/api/v1/settings/output/comA/messages/imuShort",
    ) {
        super::spec::Route::Found(op, node) => {
            assert_eq!(op.id, "getSettingsNode");
            assert_eq!(node, "output/comA/messages/imuShort");
        }
        _ => panic!("no route"),
    }
    let can = spec
        .settings
        .at(["output", "can", "messages"])
        .expect("the CAN messages");
    assert_eq!(can.message_names().len(), 39);
    assert_eq!(
        can.message_names().last().map(String::as_str),
        Some("depthAltitude")
    );
}

#[test]
fn defaults_are_complete_and_valid() {
    let spec = Spec::load().expect("the document loads");
    let defaults = super::defaults::default_settings(&spec.settings);
    assert_eq!(
        super::default_settings().expect("the public copy"),
        defaults
    );
    let mut errors = Vec::new();
    spec.settings.validate(&defaults, "", true, &mut errors);
    assert!(errors.is_empty(), "{errors:#?}");
    // Module order is the schema's.
    let modules: Vec<&String> = defaults.as_object().expect("an object").keys().collect();
    assert_eq!(modules.first().map(|s| s.as_str()), Some("oem"));
    assert_eq!(modules.last().map(|s| s.as_str()), Some("dataLogger"));
    // Every port lists every message name, the CAN output every CAN name.
    let port_names = spec
        .settings
        .at(["output", "comA", "messages"])
        .expect("messages")
        .message_names()
        .len();
    for port in [
        "dataLogger",
        "comA",
        "comB",
        "comC",
        "comD",
        "comE",
        "eth0",
        "eth1",
        "eth2",
        "eth3",
        "eth4",
    ] {
        let messages = defaults["output"][port]["messages"]
            .as_object()
            .expect("messages");
        assert_eq!(messages.len(), port_names, "{port}");
    }
    assert_eq!(defaults["output"]["comA"]["messages"]["GGA"], "1000ms");
    let can = defaults["output"]["can"]["messages"]
        .as_object()
        .expect("CAN messages");
    let mut ids: Vec<u64> = can
        .values()
        .map(|m| m["id"].as_u64().expect("an id"))
        .collect();
    ids.sort_unstable();
    ids.dedup();
    assert_eq!(ids.len(), can.len(), "CAN ids are unique");
    assert_eq!(
        can["status01"],
        json!({ "id": 256, "extended": false, "trigger": "1000ms" })
    );
    // The generated typed tree reads it without loss.
    let typed: ins_device_api::types::Settings =
        serde_json::from_value(defaults.clone()).expect("a typed Settings");
    assert_eq!(serde_json::to_value(&typed).expect("JSON"), defaults);
}

#[test]
fn validation_reports_every_kind_of_invalid_node() {
    let spec = Spec::load().expect("the document loads");
    let body = json!({
        "imu": { "customRefPoint": [1, 2, 3, 4] },
        "network": { "ntrip": { "port": 2101.5 } },
        "output": { "can": { "messages": {
            "status01": { "id": -1, "extended": "no" },
            "status02": { "id": 536870911, "extended": true, "trigger": "onChange" },
        } } },
        "mechanicalSetup": { "alignment": { "rough": ["forward", 3] } },
        "clock": null,
    });
    let mut errors = Vec::new();
    spec.settings.validate(&body, "", false, &mut errors);
    let paths: Vec<&str> = errors.iter().map(|e| e.path.as_str()).collect();
    assert_eq!(
        paths,
        [
            "imu/customRefPoint",
            "network/ntrip/port",
            "output/can/messages/status01/id",
            "output/can/messages/status01/extended",
            "mechanicalSetup/alignment/rough/1",
            "clock",
        ],
        "{errors:#?}"
    );
}

// ------------------------------------------------------------------ every route

async fn every_route(via: Via) {
    let unit = start(DeviceConfig {
        #[cfg(unix)]
        pty: matches!(via, Via::Pty),
        ..config()
    })
    .await;
    let mut c = connect(&unit, via).await;

    // Reads.
    let all = c.get("/settings", "").await;
    assert_eq!(all.status, 200);
    assert_eq!(all.body["aiding"]["gnss1"]["model"], "internal");
    let gnss1 = c.get("/settings/aiding/gnss1", "").await;
    assert_eq!(gnss1.body, all.body["aiding"]["gnss1"]);
    let leaf = c.get("/settings/output/comA/messages/ekfNav", "").await;
    assert_eq!(leaf.body, "50ms");
    let vector = c.get("/settings/aiding/gnss1/leverArmPrimary", "").await;
    assert_eq!(vector.body, json!([0.0, 0.0, -1.0]));
    for missing in [
        "/settings/aiding/gnss3",
        "/settings/output/comA/messages/nope",
        "/nothing",
    ] {
        let answer = c.get(missing, "").await;
        assert_eq!(answer.status, 404, "{missing}");
        assert_eq!(answer.body["status"], 404);
        assert!(answer.body["title"].is_string() && answer.body["detail"].is_string());
    }
    // A concrete path wins over `/settings/{path}` for every method, as OpenAPI matches
    // paths: `/settings/default` has only POST.
    for concrete in ["/settings/default", "/settings/lock", "/settings/import"] {
        let answer = c.get(concrete, "").await;
        assert_eq!(answer.status, 405, "{concrete}");
        assert_eq!(answer.body["status"], 405);
    }
    assert_eq!(c.post("/settings/export", "", &json!({})).await.status, 405);

    // Writes.
    let written = c
        .post(
            "/settings/output/comA/messages/imuShort",
            "",
            &json!("10ms"),
        )
        .await;
    assert_eq!(
        written.body,
        json!({ "title": "request successful", "needReboot": false })
    );
    let written = c
        .post(
            "/settings",
            "",
            &json!({ "aiding": { "gnss1": { "leverArmPrimary": [0.5, 0.0, -1.2] } } }),
        )
        .await;
    assert_eq!(written.status, 200);
    let gnss1 = c.get("/settings/aiding/gnss1", "").await;
    assert_eq!(gnss1.body["leverArmPrimary"], json!([0.5, 0.0, -1.2]));
    assert_eq!(
        gnss1.body["model"], "internal",
        "a merge keeps the other keys"
    );
    assert_eq!(
        c.get("/settings/output/comA/messages/imuShort", "")
            .await
            .body,
        "10ms"
    );
    let node = c
        .post(
            "/settings/output/can/messages/ekfPos",
            "",
            &json!({ "trigger": "onChange" }),
        )
        .await;
    assert_eq!(node.status, 200);
    let ekf_pos = c.get("/settings/output/can/messages/ekfPos", "").await;
    assert_eq!(
        ekf_pos.body,
        json!({ "id": 270, "extended": false, "trigger": "onChange" })
    );
    assert_eq!(c.post("/settings/nope", "", &json!(1)).await.status, 404);

    // Export / import / default.
    let export = c.get("/settings/export", "").await;
    assert_eq!(export.status, 200);
    if matches!(via, Via::Http) {
        assert_eq!(
            export.disposition.as_deref(),
            Some("attachment; filename=\"settings.json\"")
        );
    }
    let restored = c.post("/settings/default", "", &json!({})).await;
    assert_eq!(
        restored.body,
        json!({ "title": "request successful", "needReboot": false })
    );
    assert_eq!(
        c.get("/settings/output/comA/messages/imuShort", "")
            .await
            .body,
        "off"
    );
    let imported = c.post("/settings/import", "", &export.body).await;
    assert_eq!(imported.status, 200);
    assert_eq!(c.get("/settings/export", "").await.body, export.body);

    // Device info.
    let info = c.get("/info", "").await;
    let info: ins_device_api::types::DeviceInfo =
        serde_json::from_value(info.body).expect("a DeviceInfo");
    assert!(info.api_version.starts_with("1."));
    assert!(!info.serial_number.is_empty() && !info.mac_address.is_empty());

    // Users.
    let token = c.login("powerUser", "").await;
    assert_eq!(
        c.post("/settings/lock", &auth(&token), &json!({}))
            .await
            .status,
        200
    );
    assert_eq!(
        c.post("/settings/unlock", &auth(&token), &json!({}))
            .await
            .status,
        200
    );
    let changed = c
        .post(
            "/user/password",
            &auth(&token),
            &json!({ "password": "pw" }),
        )
        .await;
    assert_eq!(changed.body, json!({ "title": "request successful" }));
    let second = c.login("powerUser", "pw").await;
    assert_eq!(
        c.post("/user/logout", &auth(&token), &json!({}))
            .await
            .status,
        200
    );
    assert_eq!(c.get("/info", &auth(&token)).await.status, 401);
    assert_eq!(c.get("/info", &auth(&second)).await.status, 200);

    // Data logger.
    let status = c.get("/dataLogger", "").await;
    assert_eq!(status.body["state"], "idle");
    assert_eq!(status.body["sessionName"], "session");
    assert!(status.body["totalBytes"].as_i64() > Some(0));
    assert_eq!(c.post("/dataLogger/stop", "", &json!({})).await.status, 409);
    assert_eq!(
        c.post("/dataLogger/start", "", &json!({})).await.status,
        200
    );
    assert_eq!(
        c.post("/dataLogger/start", "", &json!({})).await.status,
        409
    );
    assert_eq!(c.get("/dataLogger", "").await.body["state"], "logging");
    assert_eq!(c.post("/dataLogger/stop", "", &json!({})).await.status, 200);
    assert_eq!(c.get("/dataLogger", "").await.body["state"], "idle");

    // Other methods, a body that is not JSON.
    if let Client::Http { .. } = c {
        let put = c.call("PUT", "/api/v1/settings", "", Some(b"{}")).await;
        assert_eq!(put.status, 405);
    }
    let bad = c
        .call("POST", "/api/v1/settings", "", Some(b"{not json"))
        .await;
    assert_eq!(bad.status, 400);
    let bad = c
        .call("POST", "/api/v1/user/login", "", Some(b"{\"user\":1}"))
        .await;
    assert_eq!(bad.status, 400);

    // Reboot last.
    let rebooted = c.post("/reboot", "", &json!({})).await;
    assert_eq!(rebooted.body, json!({ "title": "request successful" }));
    c.wait_until_up().await;
    assert_eq!(c.get("/info", &auth(&second)).await.status, 401);
    unit.shutdown().await;
}

#[tokio::test]
async fn every_route_over_http() {
    every_route(Via::Http).await;
}

#[tokio::test]
async fn every_route_over_the_serial_tcp_bridge() {
    every_route(Via::SerialTcp).await;
}

#[cfg(unix)]
#[tokio::test]
async fn every_route_over_the_pty() {
    every_route(Via::Pty).await;
}

// ------------------------------------------------------------------ rights matrix

/// The request each operation is tried with (path parameter, body), for a user whose
/// password is `password`.
fn example(op_id: &str, password: &str, export: &Value) -> (&'static str, Value) {
    match op_id {
        "getSettings" | "exportSettings" | "getDeviceInfo" | "getDataLoggerStatus" => {
            ("", Value::Null)
        }
        "getSettingsNode" => ("aiding/gnss1", Value::Null),
        "updateSettings" => ("", json!({ "oem": { "label": "matrix" } })),
        "updateSettingsNode" => ("output/comA/messages/imuShort", json!("10ms")),
        "importSettings" => ("", export.clone()),
        "restoreDefaultSettings"
        | "lockSettings"
        | "unlockSettings"
        | "startDataLogger"
        | "stopDataLogger"
        | "logout"
        | "reboot" => ("", json!({})),
        "changePassword" => ("", json!({ "password": password })),
        other => panic!("operation {other} has no example: add one"),
    }
}

/// Runs every operation of the document (but login) as each user, logged in, and
/// checks the answer against `x-required-right` and the rights matrix: 403 when the
/// user lacks the right, otherwise neither 401, 403, 404, 405 nor 500.
async fn rights_matrix(via: Via) {
    let spec = Spec::load().expect("the document loads");
    let defaults = super::defaults::default_settings(&spec.settings);
    // Disruptive operations last: unlock after lock, stop after start, logout (of a
    // second token) then reboot.
    let last = [
        "lockSettings",
        "unlockSettings",
        "startDataLogger",
        "stopDataLogger",
        "logout",
        "reboot",
    ];
    let mut operations: Vec<_> = spec
        .operations
        .iter()
        .filter(|op| op.id != "login")
        .collect();
    operations.sort_by_key(|op| last.iter().position(|id| *id == op.id));
    assert_eq!(operations.len(), 16);
    for user in &spec.rights.roles {
        let password = if user == "factory" { "factory" } else { "" };
        let unit = start(config()).await;
        let mut c = connect(&unit, via).await;
        let token = c.login(user, password).await;
        let second = c.login(user, password).await;
        for op in &operations {
            let (node, body) = example(&op.id, password, &defaults);
            let path = op.template.replace("{path}", node);
            let token = if op.id == "logout" { &second } else { &token };
            let body =
                (op.method == Method::Post).then(|| serde_json::to_vec(&body).expect("JSON"));
            let answer = c
                .call(op.method.as_str(), &path, &auth(token), body.as_deref())
                .await;
            let right = op.right.as_ref().expect("a right");
            if spec.rights.allows(user, right) {
                assert!(
                    ![401, 403, 404, 405, 500].contains(&answer.status),
                    "{via:?} {user} {}: {} {:?}",
                    op.id,
                    answer.status,
                    answer.body
                );
            } else {
                assert_eq!(
                    answer.status, 403,
                    "{via:?} {user} {}: {:?}",
                    op.id, answer.body
                );
            }
        }
        unit.shutdown().await;
    }
}

#[tokio::test]
async fn rights_matrix_over_http() {
    rights_matrix(Via::Http).await;
}

#[tokio::test]
async fn rights_matrix_over_the_serial_tcp_bridge() {
    rights_matrix(Via::SerialTcp).await;
}

// ------------------------------------------------------------------ users

#[tokio::test]
async fn default_user_follows_the_specification_examples() {
    // Nobody but factory has a password: setup.
    let unit = start(config()).await;
    assert_eq!(unit.default_user().as_deref(), Some("setup"));
    unit.shutdown().await;

    // Operator has a password, setup none: setup.
    let unit = start(DeviceConfig {
        passwords: passwords(&[("operator", "op")]),
        ..config()
    })
    .await;
    assert_eq!(unit.default_user().as_deref(), Some("setup"));
    unit.shutdown().await;

    // Operator, powerUser and setup have passwords: viewer, who reads but cannot act.
    let unit = start(DeviceConfig {
        passwords: passwords(&[("operator", "a"), ("powerUser", "b"), ("setup", "c")]),
        ..config()
    })
    .await;
    assert_eq!(unit.default_user().as_deref(), Some("viewer"));
    let mut c = connect(&unit, Via::Http).await;
    assert_eq!(c.get("/info", "").await.status, 200);
    assert_eq!(
        c.post("/dataLogger/start", "", &json!({})).await.status,
        403
    );
    assert_eq!(c.post("/settings", "", &json!({})).await.status, 403);
    unit.shutdown().await;

    // Every user has a password: no default user, 401 without auth.
    let unit = start(DeviceConfig {
        passwords: passwords(&[
            ("viewer", "v"),
            ("operator", "a"),
            ("powerUser", "b"),
            ("setup", "c"),
        ]),
        ..config()
    })
    .await;
    assert_eq!(unit.default_user(), None);
    let mut c = connect(&unit, Via::Http).await;
    let answer = c.get("/info", "").await;
    assert_eq!(answer.status, 401);
    assert_eq!(answer.body["status"], 401);
    let token = c.login("viewer", "v").await;
    assert_eq!(c.get("/info", &auth(&token)).await.status, 200);
    unit.shutdown().await;

    // An empty factory password makes factory the default user.
    let unit = start(DeviceConfig {
        factory_password: String::new(),
        ..config()
    })
    .await;
    assert_eq!(unit.default_user().as_deref(), Some("factory"));
    unit.shutdown().await;

    // An unknown user in the configuration fails the start.
    assert!(
        DeviceEmulator::start(DeviceConfig {
            passwords: passwords(&[("root", "x")]),
            ..config()
        })
        .await
        .is_err()
    );
}

#[tokio::test]
async fn login_with_a_wrong_user_or_password_answers_401() {
    let unit = start(config()).await;
    let mut c = connect(&unit, Via::Http).await;
    for body in [
        json!({ "user": "factory", "password": "wrong" }),
        json!({ "user": "factory", "password": "" }),
        json!({ "user": "root", "password": "" }),
        json!({ "user": "viewer", "password": "x" }),
    ] {
        let answer = c.post("/user/login", "", &body).await;
        assert_eq!(answer.status, 401, "{body}");
        assert_eq!(answer.body["title"], "Unauthorized");
    }
    c.login("factory", "factory").await;
    assert_eq!(c.get("/info", "auth=not-a-token").await.status, 401);
    unit.shutdown().await;
}

#[tokio::test]
async fn password_change_rules() {
    let unit = start(config()).await;
    let mut c = connect(&unit, Via::Http).await;
    // Without auth: 401, even though a default user exists.
    let answer = c
        .post("/user/password", "", &json!({ "password": "x" }))
        .await;
    assert_eq!(answer.status, 401);
    assert_eq!(c.post("/settings/lock", "", &json!({})).await.status, 401);
    assert_eq!(c.post("/user/logout", "", &json!({})).await.status, 401);

    let operator = c.login("operator", "").await;
    let setup = c.login("setup", "").await;
    let factory = c.login("factory", "factory").await;
    // Own password: anyone.
    let own = c
        .post(
            "/user/password",
            &auth(&operator),
            &json!({ "user": "operator", "password": "op" }),
        )
        .await;
    assert_eq!(own.status, 200);
    c.login("operator", "op").await;
    // Someone else's: only setup.
    let other = c
        .post(
            "/user/password",
            &auth(&operator),
            &json!({ "user": "viewer", "password": "v" }),
        )
        .await;
    assert_eq!(other.status, 403);
    let other = c
        .post(
            "/user/password",
            &auth(&factory),
            &json!({ "user": "viewer", "password": "v" }),
        )
        .await;
    assert_eq!(other.status, 403);
    let other = c
        .post(
            "/user/password",
            &auth(&setup),
            &json!({ "user": "operator", "password": "" }),
        )
        .await;
    assert_eq!(other.status, 200);
    // An empty password clears it.
    c.login("operator", "").await;
    let unknown = c
        .post(
            "/user/password",
            &auth(&setup),
            &json!({ "user": "root", "password": "" }),
        )
        .await;
    assert_eq!(unknown.status, 422);
    let bad = c
        .post(
            "/user/password",
            &auth(&setup),
            &json!({ "user": "viewer" }),
        )
        .await;
    assert_eq!(bad.status, 400);
    unit.shutdown().await;
}

// ------------------------------------------------------------------ lock

async fn lock_contention(via: Via) {
    let unit = start(DeviceConfig {
        lock_idle: REBOOT,
        ..config()
    })
    .await;
    let mut c = connect(&unit, via).await;
    let a = c.login("setup", "").await;
    let b = c.login("powerUser", "").await;
    let write = json!({ "oem": { "label": "b" } });

    assert_eq!(
        c.post("/settings/unlock", &auth(&a), &json!({}))
            .await
            .status,
        200,
        "unlock with no lock"
    );
    assert_eq!(
        c.post("/settings/lock", &auth(&a), &json!({})).await.status,
        200
    );
    let conflict = c.post("/settings", &auth(&b), &write).await;
    assert_eq!(conflict.status, 409);
    assert_eq!(conflict.body["detail"], LOCK_CONFLICT);
    assert_eq!(
        c.post("/settings", "", &write).await.status,
        409,
        "the default user too"
    );
    assert_eq!(
        c.post("/settings/oem/label", &auth(&b), &json!("b"))
            .await
            .status,
        409
    );
    assert_eq!(
        c.post("/settings/default", &auth(&b), &json!({}))
            .await
            .status,
        409
    );
    assert_eq!(
        c.post("/settings/import", &auth(&b), &write).await.status,
        409
    );
    assert_eq!(
        c.post("/settings/lock", &auth(&b), &json!({})).await.status,
        409
    );
    assert_eq!(
        c.post("/settings/unlock", &auth(&b), &json!({}))
            .await
            .status,
        409
    );
    // Reads stay open to everyone.
    assert_eq!(c.get("/settings/oem", &auth(&b)).await.status, 200);
    // The holder writes, renews, unlocks.
    assert_eq!(
        c.post("/settings", &auth(&a), &json!({ "oem": { "label": "a" } }))
            .await
            .status,
        200
    );
    assert_eq!(
        c.post("/settings/lock", &auth(&a), &json!({})).await.status,
        200
    );
    assert_eq!(
        c.post("/settings/unlock", &auth(&a), &json!({}))
            .await
            .status,
        200
    );
    assert_eq!(c.post("/settings", &auth(&b), &write).await.status, 200);

    // Any request of the holder keeps the lock alive past `lock_idle`.
    assert_eq!(
        c.post("/settings/lock", &auth(&a), &json!({})).await.status,
        200
    );
    let locked_at = Instant::now();
    while locked_at.elapsed() < REBOOT * 2 {
        tokio::time::sleep(REBOOT / 3).await;
        assert_eq!(c.get("/info", &auth(&a)).await.status, 200);
    }
    assert_eq!(c.post("/settings", &auth(&b), &write).await.status, 409);
    // Without requests from its holder it ends after `lock_idle`.
    let idle_from = Instant::now();
    let deadline = idle_from + ANSWER_WAIT;
    loop {
        let status = c.post("/settings", &auth(&b), &write).await.status;
        if status == 200 {
            break;
        }
        assert_eq!(status, 409);
        assert!(Instant::now() < deadline, "the lock never expired");
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    assert!(idle_from.elapsed() >= REBOOT / 2);

    // Logout ends the lock.
    assert_eq!(
        c.post("/settings/lock", &auth(&a), &json!({})).await.status,
        200
    );
    assert_eq!(c.post("/settings", &auth(&b), &write).await.status, 409);
    assert_eq!(
        c.post("/user/logout", &auth(&a), &json!({})).await.status,
        200
    );
    assert_eq!(c.post("/settings", &auth(&b), &write).await.status, 200);
    unit.shutdown().await;
}

#[tokio::test]
async fn lock_contention_and_idle_expiry_over_http() {
    lock_contention(Via::Http).await;
}

#[tokio::test]
async fn lock_contention_and_idle_expiry_over_the_serial_tcp_bridge() {
    lock_contention(Via::SerialTcp).await;
}

// ------------------------------------------------------------------ reboot

async fn reboot_mid_session(via: Via) {
    let unit = start(config()).await;
    let mut c = connect(&unit, via).await;
    let setup = c.login("setup", "").await;
    // Setup gives itself and powerUser a password: the default user stays setup
    // until the reboot.
    for user in ["setup", "powerUser"] {
        let body = json!({ "user": user, "password": "pw" });
        assert_eq!(
            c.post("/user/password", &auth(&setup), &body).await.status,
            200
        );
    }
    let check = json!({ "oem": { "label": "x" } });
    assert_eq!(
        c.post("/settings", "checkOnly=true", &check).await.status,
        200
    );
    assert_eq!(
        c.post("/settings/lock", &auth(&setup), &json!({}))
            .await
            .status,
        200
    );
    assert_eq!(
        c.post("/dataLogger/start", &auth(&setup), &json!({}))
            .await
            .status,
        200
    );

    // A client with a kept-alive connection from before the reboot.
    let pooled = reqwest::Client::new();
    let info = format!("{}/api/v1/info", unit.url());
    if let Via::Http = via {
        let before = pooled.get(&info).send().await.expect("an answer");
        assert_eq!(before.status(), 200);
    }

    let sent = Instant::now();
    assert_eq!(
        c.post("/reboot", &auth(&setup), &json!({})).await.status,
        200
    );
    assert!(unit.is_rebooting());
    if let Via::Http = via {
        assert!(
            pooled.get(&info).send().await.is_err(),
            "a kept-alive connection was answered during the reboot"
        );
    }
    // Silent meanwhile.
    assert!(
        c.try_call("GET", "/api/v1/info", "", None, SILENCE)
            .await
            .is_none(),
        "the unit answered during its reboot"
    );
    let up = c.wait_until_up().await;
    assert!(
        up.duration_since(sent) >= REBOOT,
        "back after {:?}",
        up.duration_since(sent)
    );

    // Tokens and lock are gone, the logger stopped, the default user re-chosen.
    assert_eq!(c.get("/info", &auth(&setup)).await.status, 401);
    assert_eq!(unit.default_user().as_deref(), Some("operator"));
    assert_eq!(
        c.post("/settings", "checkOnly=true", &check).await.status,
        403
    );
    let power_user = c.login("powerUser", "pw").await;
    assert_eq!(
        c.post("/settings", &auth(&power_user), &check).await.status,
        200,
        "no lock left"
    );
    assert_eq!(c.get("/dataLogger", "").await.body["state"], "idle");
    unit.shutdown().await;
}

#[tokio::test]
async fn reboot_mid_session_over_http() {
    reboot_mid_session(Via::Http).await;
}

#[tokio::test]
async fn reboot_mid_session_over_the_serial_tcp_bridge() {
    reboot_mid_session(Via::SerialTcp).await;
}

// ------------------------------------------------------------------ settings writes

async fn settings_writes(via: Via) {
    let unit = start(config()).await;
    let mut c = connect(&unit, via).await;
    let before = c.get("/settings/export", "").await.body;

    // Several invalid nodes: every one listed, nothing applied.
    let body = json!({
        "oem": { "label": "applied only if all is valid" },
        "aiding": { "gnss1": { "leverArmPrimary": [1.0, 2.0], "model": 5, "colour": "red" } },
        "output": {
            "comA": { "messages": { "imuShort": "7ms", "bogus": "10ms" } },
            "can": { "messages": { "status01": { "id": 536870912 } } },
        },
        "localParam": { "date": "2024/01/01" },
        "ports": { "comA": { "baudrate": 1.5 } },
        "nope": {},
    });
    let answer = c.post("/settings", "", &body).await;
    assert_eq!(answer.status, 422);
    assert_eq!(answer.body["status"], 422);
    let mut paths: Vec<&str> = answer.body["errors"]
        .as_array()
        .expect("errors")
        .iter()
        .map(|e| {
            assert!(e["message"].as_str().is_some_and(|m| !m.is_empty()));
            e["path"].as_str().expect("a path")
        })
        .collect();
    paths.sort_unstable();
    assert_eq!(
        paths,
        [
            "aiding/gnss1/colour",
            "aiding/gnss1/leverArmPrimary",
            "aiding/gnss1/model",
            "localParam/date",
            "nope",
            "output/can/messages/status01/id",
            "output/comA/messages/bogus",
            "output/comA/messages/imuShort",
            "ports/comA/baudrate",
        ]
    );
    assert_eq!(c.get("/settings/export", "").await.body, before);
    // The same through a node path: paths stay relative to the root.
    let answer = c
        .post(
            "/settings/aiding/gnss1",
            "",
            &json!({ "leverArmPrimary": [1, 2, 3, 4], "sync": true }),
        )
        .await;
    assert_eq!(answer.status, 422);
    let errors = answer.body["errors"].as_array().expect("errors");
    assert_eq!(errors.len(), 2);
    assert_eq!(errors[0]["path"], "aiding/gnss1/leverArmPrimary");
    let answer = c
        .post("/settings/output/comA/messages/imuShort", "", &json!("3ms"))
        .await;
    assert_eq!(
        answer.body["errors"][0]["path"],
        "output/comA/messages/imuShort"
    );
    assert_eq!(c.get("/settings/export", "").await.body, before);

    // checkOnly validates, answers the same, applies nothing.
    let check = c
        .post(
            "/settings",
            "checkOnly=true",
            &json!({ "network": { "ipv4": { "mode": "dhcp" } } }),
        )
        .await;
    assert_eq!(
        check.body,
        json!({ "title": "request successful", "needReboot": true })
    );
    let check = c.post("/settings", "checkOnly=true", &body).await;
    assert_eq!(check.status, 422);
    assert_eq!(
        c.post("/settings/default", "checkOnly=true", &json!({}))
            .await
            .status,
        200
    );
    assert_eq!(
        c.post(
            "/settings/import",
            "checkOnly=true",
            &json!({ "oem": { "label": "i" } })
        )
        .await
        .status,
        200
    );
    assert_eq!(c.get("/settings/export", "").await.body, before);
    assert_eq!(
        c.post("/settings", "checkOnly=maybe", &json!({}))
            .await
            .status,
        422
    );

    // needReboot: network and ports yes, the rest no; an unchanged value changes nothing.
    let answer = c
        .post("/settings/network/ipv4/mode", "", &json!("dhcp"))
        .await;
    assert_eq!(answer.body["needReboot"], true);
    let answer = c
        .post("/settings/network/ipv4/mode", "", &json!("dhcp"))
        .await;
    assert_eq!(answer.body["needReboot"], false, "same value");
    let answer = c
        .post("/settings/oem/label", "", &json!("survey van"))
        .await;
    assert_eq!(answer.body["needReboot"], false);
    let answer = c
        .post(
            "/settings",
            "",
            &json!({ "ports": { "comB": { "baudrate": 9600 } } }),
        )
        .await;
    assert_eq!(answer.body["needReboot"], true);
    let answer = c.post("/settings/default", "", &json!({})).await;
    assert_eq!(
        answer.body["needReboot"], true,
        "network and ports go back to their defaults"
    );
    assert_eq!(c.get("/settings/export", "").await.body, before);
    unit.shutdown().await;
}

#[tokio::test]
async fn settings_writes_over_http() {
    settings_writes(Via::Http).await;
}

#[tokio::test]
async fn settings_writes_over_the_serial_tcp_bridge() {
    settings_writes(Via::SerialTcp).await;
}

#[tokio::test]
async fn delta_and_pretty() {
    let unit = start(config()).await;
    let mut c = connect(&unit, Via::Http).await;
    assert_eq!(c.get("/settings", "delta=true").await.body, json!({}));
    assert_eq!(
        c.get("/settings/oem/label", "delta=true").await.body,
        Value::Null
    );
    c.post("/settings/oem/label", "", &json!("van")).await;
    c.post(
        "/settings/output/comA/messages/imuShort",
        "",
        &json!("10ms"),
    )
    .await;
    c.post(
        "/settings/aiding/odometer/leverArm",
        "",
        &json!([0.1, 0.2, 0.3]),
    )
    .await;
    let delta = c.get("/settings", "delta=true").await;
    assert_eq!(
        delta.body,
        json!({
            "oem": { "label": "van" },
            "aiding": { "odometer": { "leverArm": [0.1, 0.2, 0.3] } },
            "output": { "comA": { "messages": { "imuShort": "10ms" } } },
        })
    );
    let node = c.get("/settings/output/comA", "delta=true").await;
    assert_eq!(node.body, json!({ "messages": { "imuShort": "10ms" } }));
    assert_eq!(
        c.get("/settings/output/comB", "delta=true").await.body,
        json!({})
    );
    assert_eq!(c.get("/settings/oem/label", "delta=true").await.body, "van");

    let compact = c.get("/settings", "format=compact").await;
    assert!(!compact.raw.contains(&b'\n'));
    let pretty = c.get("/settings", "format=pretty").await;
    let text = String::from_utf8(pretty.raw.clone()).expect("UTF-8");
    assert!(
        text.starts_with("{\n  \"oem\": {\n    \"label\": \"van\""),
        "{}",
        &text[..40]
    );
    assert_eq!(pretty.body, compact.body);
    let pretty_delta = c.get("/settings/aiding", "delta=true&format=pretty").await;
    assert!(pretty_delta.raw.contains(&b'\n'));
    assert_eq!(
        pretty_delta.body,
        json!({ "odometer": { "leverArm": [0.1, 0.2, 0.3] } })
    );
    assert_eq!(c.get("/settings", "format=yaml").await.status, 422);
    assert_eq!(c.get("/settings", "delta=yes").await.status, 422);
    unit.shutdown().await;
}

// ------------------------------------------------------------------ serial framing
//
// The framing tests send recorded bytes and compare the unit's ACKs with recorded
// bytes, rather than encoding with the codec the unit itself decodes with: a codec bug
// could otherwise pass on both sides. The fixtures were computed apart from
// `svc_protocol::serial` (a few lines of Python: CRC-16/KERMIT over id, class, length
// and data), and the first one is the specification's test vector.

/// `GET /api/v1/info`, no query, in one standard frame (the specification's vector).
const GET_INFO: &str = "ff5a30100e002f6170692f76312f696e666f0000889333";

/// The same request in one large frame: class 0x90, transfer id 2, page 0 of 1.
const GET_INFO_LARGE: &str = "ff5a3090130002000001002f6170692f76312f696e666f00005fc133";

/// A successful ACK of a GET (error code 0), as a unit would send it.
const ACK_GET_OK: &str = "ff5a0010040030100000026c33";

/// Recorded bytes from their hex text.
fn fixture(hex_text: &str) -> Vec<u8> {
    hex::decode(hex_text).expect("fixture hex")
}

async fn tcp_link(unit: &DeviceEmulator) -> SerialLink {
    let stream = tokio::net::TcpStream::connect(unit.serial_tcp())
        .await
        .expect("connect to the serial bridge");
    SerialLink::new(Box::new(stream))
}

#[tokio::test]
async fn the_resolved_test_vector_is_answered() {
    let unit = start(config()).await;
    let mut link = tcp_link(&unit).await;
    link.send(&fixture(GET_INFO)).await;
    let message = link.next_message(ANSWER_WAIT).await.expect("a reply");
    assert_eq!((message.id, message.class), (ID_GET, CLASS_REST));
    let reply = decode_reply(&message, ID_GET).expect("a reply");
    assert_eq!(reply.status, 200);
    let info: Value = serde_json::from_slice(&reply.body).expect("JSON");
    assert!(info["apiVersion"].is_string());
    assert_eq!(link.received.last(), Some(&0x33));
    unit.shutdown().await;
}

#[tokio::test]
async fn a_full_settings_tree_goes_in_large_frames_both_ways() {
    let unit = start(DeviceConfig {
        pty: true,
        ..config()
    })
    .await;
    let mut http = connect(&unit, Via::Http).await;
    for &via in SERIAL_VIAS {
        let export = http.get("/settings/export", "").await;
        assert!(
            export.raw.len() > 4086,
            "the tree is {} bytes",
            export.raw.len()
        );
        let mut link = match connect(&unit, via).await {
            Client::Serial(link) => link,
            Client::Http { .. } => unreachable!(),
        };
        let request = RestRequest::get("/api/v1/settings", "");
        link.send(&request.encode(0)).await;
        let message = link.next_message(ANSWER_WAIT).await.expect("a reply");
        let reply = decode_reply(&message, request.id()).expect("a reply");
        assert_eq!(reply.status, 200);
        assert!(
            reply.body == export.raw,
            "{via:?}: another tree than over HTTP"
        );
        // The first frame on the wire is a large-frame page: class 0x90, page 0 of n.
        assert_eq!(&link.received[..4], [0xFF, 0x5A, ID_GET, CLASS_REST | 0x80]);
        let pages = u16::from_le_bytes([link.received[9], link.received[10]]);
        assert_eq!(usize::from(pages), (export.raw.len() + 3).div_ceil(4081));

        // A whole tree written back in large frames (import of a changed tree).
        let mut tree = export.body.clone();
        tree["oem"]["label"] = json!(format!("{via:?}"));
        let body = serde_json::to_vec_pretty(&tree).expect("JSON");
        assert!(body.len() > 4086);
        let request = RestRequest::post("/api/v1/settings/import", "", body);
        link.send(&request.encode(3)).await;
        let message = link.next_message(ANSWER_WAIT).await.expect("a reply");
        let reply = decode_reply(&message, request.id()).expect("a reply");
        assert_eq!(
            reply.status,
            200,
            "{}",
            String::from_utf8_lossy(&reply.body)
        );
        assert_eq!(
            http.get("/settings/oem/label", "").await.body,
            json!(format!("{via:?}"))
        );
    }
    unit.shutdown().await;
}

#[tokio::test]
async fn bad_frames_are_skipped_and_good_ones_answered() {
    let unit = start(config()).await;
    let mut link = tcp_link(&unit).await;
    let good = fixture(GET_INFO);
    let mut bad_crc = good.clone();
    let crc_at = bad_crc.len() - 3;
    bad_crc[crc_at] ^= 0xFF;
    let mut bad_etx = good.clone();
    let etx_at = bad_etx.len() - 1;
    bad_etx[etx_at] = 0x00;
    // Noise, a bad CRC and a bad ETX, then a good frame, in one write.
    let mut bytes = b"noise\xff\x00".to_vec();
    bytes.extend_from_slice(&bad_crc);
    bytes.extend_from_slice(&bad_etx);
    bytes.extend_from_slice(&good);
    link.send(&bytes).await;
    let message = link.next_message(ANSWER_WAIT).await.expect("a reply");
    assert_eq!(decode_reply(&message, ID_GET).expect("a reply").status, 200);
    // Only that one is answered.
    assert!(link.next_message(SILENCE).await.is_none());
    // A bad CRC alone: no answer at all.
    link.send(&bad_crc).await;
    assert!(link.next_message(SILENCE).await.is_none());
    link.send(&good).await;
    assert!(link.next_message(ANSWER_WAIT).await.is_some());
    unit.shutdown().await;
}

/// A header whose length is in range (4086) but that starts no real frame: the
/// sequence of issue #11.
const CORRUPT_HEADER: [u8; 6] = [0xff, 0x5a, 0x30, 0x10, 0xf6, 0x0f];

/// A corrupt header announcing 4086 bytes, then a few bytes of junk: the unit gives the
/// partial frame up once the line is idle for the inter-byte timeout, and answers the
/// valid frame that follows at once (before, every later frame waited for 4095 bytes).
#[tokio::test]
async fn a_corrupt_header_does_not_stall_the_next_frames() {
    let unit = start(config()).await;
    let good = fixture(GET_INFO);
    let mut corrupt = CORRUPT_HEADER.to_vec();
    corrupt.extend_from_slice(b"junk\x00\x01");

    // The valid frame after a pause longer than the inter-byte timeout.
    let mut link = tcp_link(&unit).await;
    link.send(&corrupt).await;
    tokio::time::sleep(DeviceConfig::default().serial_inter_byte_timeout * 2).await;
    let sent = Instant::now();
    link.send(&good).await;
    let message = link
        .next_message(Duration::from_secs(2))
        .await
        .expect("the frame after the pause is answered");
    assert_eq!(decode_reply(&message, ID_GET).expect("a reply").status, 200);
    assert!(sent.elapsed() < Duration::from_secs(2));

    // The valid frame right behind the junk, in the same write: found once the line
    // has been idle for the inter-byte timeout.
    let mut link = tcp_link(&unit).await;
    let mut bytes = corrupt.clone();
    bytes.extend_from_slice(&good);
    link.send(&bytes).await;
    let message = link
        .next_message(Duration::from_secs(2))
        .await
        .expect("the frame behind the junk is answered");
    assert_eq!(decode_reply(&message, ID_GET).expect("a reply").status, 200);
    assert!(link.next_message(SILENCE).await.is_none(), "answered once");
    unit.shutdown().await;
}

#[tokio::test]
async fn malformed_requests_are_acked_with_an_error_code() {
    let unit = start(config()).await;
    let mut link = tcp_link(&unit).await;
    // (message id, request frame, error code, the ACK frame expected in answer)
    let cases: [(u8, &str, u16, &str); 4] = [
        // The REST class, data without the NUL separators: `/api/v1/info`.
        (
            ID_GET,
            "ff5a30100c002f6170692f76312f696e666f6cd933",
            super::ACK_INVALID_FRAME,
            "ff5a0010040030100400620b33",
        ),
        // A POST whose body lacks its NUL: `/api/v1/settings NUL NUL {}`.
        (
            47,
            "ff5a2f1014002f6170692f76312f73657474696e677300007b7db1d533",
            super::ACK_INVALID_FRAME,
            "ff5a001004002f1004003a7a33",
        ),
        // A path that is not UTF-8: `/api/ 0xFF NUL NUL`.
        (
            ID_GET,
            "ff5a301008002f6170692fff000099d433",
            super::ACK_INVALID_FRAME,
            "ff5a0010040030100400620b33",
        ),
        // An id of the REST class that is no request (99): `/api/v1/info NUL NUL`.
        (
            99,
            "ff5a63100e002f6170692f76312f696e666f000030a633",
            super::ACK_INVALID_PARAMETER,
            "ff5a0010040063100900c14b33",
        ),
    ];
    for (id, request, code, expected_ack) in cases {
        link.received.clear();
        link.send(&fixture(request)).await;
        let message = link.next_message(ANSWER_WAIT).await.expect("an ACK");
        assert_eq!(hex::encode(&link.received), expected_ack, "ACK bytes");
        assert_eq!(
            decode_reply(&message, id),
            Err(SerialError::Ack { error: code })
        );
        let ack = Ack::decode(&message).expect("an ACK");
        assert_eq!((ack.id, ack.class), (id, CLASS_REST));
        assert_ne!(ack.error, 0);
    }
    // An ACK sent to the unit is not answered.
    link.send(&fixture(ACK_GET_OK)).await;
    assert!(link.next_message(SILENCE).await.is_none());
    // The link still serves requests, in a standard or a large frame.
    for request in [GET_INFO, GET_INFO_LARGE] {
        link.send(&fixture(request)).await;
        let message = link.next_message(ANSWER_WAIT).await.expect("a reply");
        assert_eq!(decode_reply(&message, ID_GET).expect("a reply").status, 200);
    }
    unit.shutdown().await;
}

#[cfg(unix)]
#[tokio::test]
async fn http_and_serial_share_one_unit() {
    let unit = start(DeviceConfig {
        pty: true,
        ..config()
    })
    .await;
    let mut http = connect(&unit, Via::Http).await;
    let mut tcp = connect(&unit, Via::SerialTcp).await;
    let mut pty = connect(&unit, Via::Pty).await;
    let token = tcp.login("setup", "").await;
    assert_eq!(
        http.post("/settings/lock", &auth(&token), &json!({}))
            .await
            .status,
        200
    );
    assert_eq!(
        pty.post("/settings/oem/label", "", &json!("x"))
            .await
            .status,
        409
    );
    assert_eq!(
        pty.post("/settings/oem/label", &auth(&token), &json!("pty"))
            .await
            .status,
        200
    );
    assert_eq!(http.get("/settings/oem/label", "").await.body, "pty");
    assert_eq!(tcp.get("/settings/oem/label", "").await.body, "pty");
    // The core answers the same bytes as the transports.
    let (status, body) = unit
        .handle("GET", "/api/v1/settings/oem", "", b"")
        .expect("an answer");
    assert_eq!(status, 200);
    assert_eq!(body, http.get("/settings/oem", "").await.raw);
    unit.shutdown().await;
}

#[tokio::test]
async fn dropping_the_emulator_stops_it() {
    let unit = start(config()).await;
    let url = unit.url().to_owned();
    let serial = unit.serial_tcp().to_owned();
    drop(unit);
    let deadline = Instant::now() + ANSWER_WAIT;
    loop {
        let http_down = reqwest::get(format!("{url}/api/v1/info")).await.is_err();
        let serial_down = tokio::net::TcpStream::connect(&serial).await.is_err();
        if http_down && serial_down {
            break;
        }
        assert!(Instant::now() < deadline, "still serving");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

// ------------------------------------------------------------------ fleets

#[test]
fn fleet_units_count_on_from_the_first_identity() {
    use super::{nth_mac_address, nth_serial_number};
    assert_eq!(nth_serial_number("EMU00000001", 0), "EMU00000001");
    assert_eq!(nth_serial_number("EMU00000001", 1), "EMU00000002");
    assert_eq!(nth_serial_number("EMU00000001", 255), "EMU00000256");
    assert_eq!(nth_serial_number("EMU99999999", 1), "EMU100000000");
    assert_eq!(nth_serial_number("A9", 1), "A10");
    assert_eq!(nth_serial_number("unit", 0), "unit");
    assert_eq!(nth_serial_number("unit", 2), "unit-3");
    let mac = |first: &str, index| nth_mac_address(first, index);
    assert_eq!(
        mac("02:00:5e:10:00:01", 0).as_deref(),
        Ok("02:00:5e:10:00:01")
    );
    assert_eq!(
        mac("02:00:5e:10:00:01", 1).as_deref(),
        Ok("02:00:5e:10:00:02")
    );
    assert_eq!(
        mac("02:00:5e:10:00:ff", 1).as_deref(),
        Ok("02:00:5e:10:01:00")
    );
    assert_eq!(
        mac("02:00:5e:ff:ff:ff", 1).as_deref(),
        Ok("02:00:5e:00:00:00")
    );
    assert_eq!(mac("not a mac", 0).as_deref(), Ok("not a mac"));
    assert!(mac("not a mac", 1).is_err());
    assert!(mac("02:00:5e:10:00", 1).is_err());
    assert!(mac("02:00:5e:10:00:1", 1).is_err());
}

#[tokio::test]
async fn a_configured_identity_is_reported() {
    let unit = start(DeviceConfig {
        serial_number: "SN-42".to_owned(),
        mac_address: "02:00:00:00:00:2a".to_owned(),
        ..config()
    })
    .await;
    assert_eq!(unit.serial_number(), "SN-42");
    let mut c = connect(&unit, Via::Http).await;
    let info = c.get("/info", "").await;
    assert_eq!(info.status, 200);
    assert_eq!(info.body["serialNumber"], "SN-42");
    assert_eq!(info.body["macAddress"], "02:00:00:00:00:2a");
    unit.shutdown().await;
}
