//! Several emulated units in one emulator (`EmulatorConfig::devices`, `--devices N`):
//! each has its own serial number, HTTP port, serial bridge and state (settings, users
//! and passwords, sessions, lock), and the JSON line lists them all.

use std::collections::HashSet;
use std::time::Duration;

use clap::Parser;
use futures::future::join_all;
use reqwest::Client;
use serde_json::{Value, json};
use svc_emulator::cli::EmulatorArgs;
use svc_emulator::device::{DEFAULT_SERIAL_NUMBER, DeviceConfig};
use svc_emulator::{Emulator, EmulatorConfig, MAX_DEVICES};
use svc_protocol::serial::{Decoder, RestRequest, decode_reply};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use crate::common::client;

const WAIT: Duration = Duration::from_secs(5);

/// An emulator with `devices` units (no pty: the TCP bridges are the serial lines).
async fn fleet(devices: usize) -> Emulator {
    Emulator::start(EmulatorConfig {
        device: Some(DeviceConfig {
            pty: false,
            ..DeviceConfig::default()
        }),
        devices,
        ..EmulatorConfig::default()
    })
    .await
    .expect("the emulator starts")
}

/// `(status, JSON body)` of a request to a unit over HTTP.
async fn call(
    http: &Client,
    base: &str,
    method: &str,
    path: &str,
    body: Option<Value>,
) -> (u16, Value) {
    let url = format!("{base}/api/v1{path}");
    let request = match method {
        "GET" => http.get(url),
        _ => http.post(url).json(&body.unwrap_or_else(|| json!({}))),
    };
    let response = request.send().await.expect("the unit answers");
    let status = response.status().as_u16();
    let bytes = response.bytes().await.expect("a body");
    let body = if bytes.is_empty() {
        Value::Null
    } else {
        serde_json::from_slice(&bytes).expect("a JSON body")
    };
    (status, body)
}

async fn get(http: &Client, base: &str, path: &str) -> (u16, Value) {
    call(http, base, "GET", path, None).await
}

async fn post(http: &Client, base: &str, path: &str, body: Value) -> (u16, Value) {
    call(http, base, "POST", path, Some(body)).await
}

async fn login(http: &Client, base: &str, user: &str, password: &str) -> String {
    let (status, body) = post(
        http,
        base,
        "/user/login",
        json!({ "user": user, "password": password }),
    )
    .await;
    assert_eq!(status, 200, "login {user} on {base}: {body}");
    body["token"].as_str().expect("a token").to_owned()
}

#[tokio::test]
async fn fifty_units_each_with_its_own_identity_and_state() {
    let emulator = fleet(50).await;
    let line = emulator.line();
    let units = &line.devices;
    assert_eq!(units.len(), 50);
    assert_eq!(emulator.devices().len(), 50);

    // Distinct identities and addresses; the first unit is today's single unit.
    let serials: HashSet<&str> = units.iter().map(|u| u.serial_number.as_str()).collect();
    let urls: HashSet<&str> = units.iter().map(|u| u.device_url.as_str()).collect();
    let bridges: HashSet<&str> = units.iter().map(|u| u.device_serial_tcp.as_str()).collect();
    assert_eq!((serials.len(), urls.len(), bridges.len()), (50, 50, 50));
    assert!(units.iter().all(|u| u.device_serial_path.is_none()));
    assert_eq!(units[0].serial_number, DEFAULT_SERIAL_NUMBER);
    assert_eq!(units[1].serial_number, "EMU00000002");
    assert_eq!(units[49].serial_number, "EMU00000050");
    let info = emulator.info();
    assert_eq!(
        info.device_url.as_deref(),
        Some(units[0].device_url.as_str())
    );
    assert_eq!(
        info.device_serial_tcp.as_deref(),
        Some(units[0].device_serial_tcp.as_str())
    );
    assert_eq!(
        emulator.device().map(|d| d.url()),
        Some(units[0].device_url.as_str())
    );
    for (listed, running) in units.iter().zip(emulator.devices()) {
        assert_eq!(listed.device_url, running.url());
        assert_eq!(listed.device_serial_tcp, running.serial_tcp());
        assert_eq!(listed.serial_number, running.serial_number());
    }

    // The JSON line: the usual fields naming the first unit, and `devices`.
    let printed = serde_json::to_value(line).expect("JSON");
    assert_eq!(printed["device_url"], json!(units[0].device_url));
    assert_eq!(
        printed["device_serial_tcp"],
        json!(units[0].device_serial_tcp)
    );
    assert!(printed["api_key"].is_string());
    let listed = printed["devices"].as_array().expect("devices");
    assert_eq!(listed.len(), 50);
    for (entry, unit) in listed.iter().zip(units) {
        assert_eq!(entry["device_url"], json!(unit.device_url));
        assert_eq!(entry["device_serial_tcp"], json!(unit.device_serial_tcp));
        assert_eq!(entry["serial_number"], json!(unit.serial_number));
    }

    // Every unit answers its own info, and starts from the same settings.
    let http = client();
    let infos = join_all(units.iter().map(|u| get(&http, &u.device_url, "/info"))).await;
    let mut macs = HashSet::new();
    for ((status, body), unit) in infos.iter().zip(units) {
        assert_eq!(*status, 200, "{body}");
        assert_eq!(body["serialNumber"], json!(unit.serial_number));
        macs.insert(body["macAddress"].as_str().expect("macAddress").to_owned());
    }
    assert_eq!(macs.len(), 50, "distinct MAC addresses");
    let settings = join_all(units.iter().map(|u| get(&http, &u.device_url, "/settings"))).await;
    let defaults = settings[0].1.clone();
    assert!(defaults["oem"].is_object(), "{defaults}");
    for (status, body) in &settings {
        assert_eq!(*status, 200);
        assert_eq!(body, &defaults);
    }

    // A setting written on one unit changes that unit only.
    let (status, body) = post(
        &http,
        &units[7].device_url,
        "/settings",
        json!({ "oem": { "label": "unit-7" } }),
    )
    .await;
    assert_eq!(status, 200, "{body}");
    let labels = join_all(
        units
            .iter()
            .map(|u| get(&http, &u.device_url, "/settings/oem/label")),
    )
    .await;
    for (index, (status, label)) in labels.iter().enumerate() {
        assert_eq!(*status, 200);
        if index == 7 {
            assert_eq!(label, &json!("unit-7"));
        } else {
            assert_eq!(label, &defaults["oem"]["label"], "unit {index}");
        }
    }
    let (_, eighth) = get(&http, &units[8].device_url, "/settings").await;
    assert_eq!(eighth, defaults);

    // One unit's lock holds there only; its session is unknown elsewhere.
    let (locked, free) = (&units[3].device_url, &units[4].device_url);
    let token = login(&http, locked, "setup", "").await;
    let (status, body) = post(
        &http,
        locked,
        &format!("/settings/lock?auth={token}"),
        json!({}),
    )
    .await;
    assert_eq!(status, 200, "{body}");
    let write = json!({ "oem": { "label": "other" } });
    assert_eq!(post(&http, locked, "/settings", write.clone()).await.0, 409);
    assert_eq!(post(&http, free, "/settings", write.clone()).await.0, 200);
    let (status, _) = post(&http, free, "/settings/lock", json!({})).await;
    assert_eq!(status, 401, "the lock needs a login on that unit");
    assert_eq!(
        get(&http, free, &format!("/info?auth={token}")).await.0,
        401
    );
    let (status, _) = post(
        &http,
        free,
        &format!("/settings/lock?auth={token}"),
        json!({}),
    )
    .await;
    assert_eq!(status, 401, "a token of another unit");
    assert_eq!(
        post(
            &http,
            locked,
            &format!("/settings?auth={token}"),
            write.clone()
        )
        .await
        .0,
        200,
        "the holder writes"
    );

    // Users and passwords are per unit too.
    let (with_password, without) = (&units[5].device_url, &units[6].device_url);
    let setup = login(&http, with_password, "setup", "").await;
    let (status, body) = post(
        &http,
        with_password,
        &format!("/user/password?auth={setup}"),
        json!({ "password": "pw-5" }),
    )
    .await;
    assert_eq!(status, 200, "{body}");
    login(&http, with_password, "setup", "pw-5").await;
    let wrong = json!({ "user": "setup", "password": "pw-5" });
    assert_eq!(post(&http, without, "/user/login", wrong).await.0, 401);
    login(&http, without, "setup", "").await;

    emulator.shutdown().await;
}

/// A serial line over a unit's TCP bridge.
struct Serial {
    stream: TcpStream,
    decoder: Decoder,
}

impl Serial {
    async fn open(address: &str) -> Self {
        Self {
            stream: TcpStream::connect(address)
                .await
                .expect("connect to the serial bridge"),
            decoder: Decoder::new(),
        }
    }

    async fn call(&mut self, request: RestRequest) -> (u16, Value) {
        self.stream
            .write_all(&request.encode(0))
            .await
            .expect("write a frame");
        let mut buf = [0_u8; 4096];
        let message = loop {
            if let Some(message) = self.decoder.next_message() {
                break message;
            }
            let n = tokio::time::timeout(WAIT, self.stream.read(&mut buf))
                .await
                .expect("a reply in time")
                .expect("read the bridge");
            assert!(n > 0, "the bridge closed");
            self.decoder.push(&buf[..n]);
        };
        let reply = decode_reply(&message, request.id()).expect("a REST reply");
        let body = if reply.body.is_empty() {
            Value::Null
        } else {
            serde_json::from_slice(&reply.body).expect("a JSON body")
        };
        (reply.status, body)
    }

    async fn get(&mut self, path: &str, query: &str) -> (u16, Value) {
        self.call(RestRequest::get(format!("/api/v1{path}"), query))
            .await
    }

    async fn post(&mut self, path: &str, query: &str, body: &Value) -> (u16, Value) {
        let body = serde_json::to_vec(body).expect("JSON");
        self.call(RestRequest::post(format!("/api/v1{path}"), query, body))
            .await
    }
}

#[tokio::test]
async fn two_units_answer_on_their_own_serial_bridges() {
    let emulator = fleet(2).await;
    let units = &emulator.line().devices;
    let mut first = Serial::open(&units[0].device_serial_tcp).await;
    let mut second = Serial::open(&units[1].device_serial_tcp).await;

    let (status, info) = first.get("/info", "").await;
    assert_eq!(status, 200);
    assert_eq!(info["serialNumber"], json!(units[0].serial_number));
    let (status, info) = second.get("/info", "").await;
    assert_eq!(status, 200);
    assert_eq!(info["serialNumber"], json!(units[1].serial_number));
    assert_ne!(units[0].serial_number, units[1].serial_number);

    // The first unit locked over its line; the second one writes freely over its own.
    let (_, default_label) = first.get("/settings/oem/label", "").await;
    let (status, login) = first
        .post(
            "/user/login",
            "",
            &json!({ "user": "setup", "password": "" }),
        )
        .await;
    assert_eq!(status, 200, "{login}");
    let auth = format!("auth={}", login["token"].as_str().expect("a token"));
    assert_eq!(first.post("/settings/lock", &auth, &json!({})).await.0, 200);
    let label = json!("over-serial");
    assert_eq!(first.post("/settings/oem/label", "", &label).await.0, 409);
    let (status, body) = second.post("/settings/oem/label", "", &label).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(second.get("/settings/oem/label", "").await.1, label);
    assert_eq!(first.get("/settings/oem/label", "").await.1, default_label);
    assert_eq!(
        second.get("/info", &auth).await.0,
        401,
        "a token of the first unit"
    );

    // HTTP and the bridge of one unit share its state.
    let (status, over_http) = get(&client(), &units[1].device_url, "/settings/oem/label").await;
    assert_eq!((status, over_http), (200, label));
    emulator.shutdown().await;
}

#[derive(Parser, Debug)]
struct Args {
    #[command(flatten)]
    emulator: EmulatorArgs,
}

fn args(flags: &[&str]) -> Result<EmulatorArgs, clap::Error> {
    Args::try_parse_from(std::iter::once("svc-emulator").chain(flags.iter().copied()))
        .map(|a| a.emulator)
}

#[test]
fn the_number_of_units_is_bounded() {
    let default = args(&[]).expect("no flag").config().expect("a config");
    assert_eq!(default.devices, 1);
    assert!(default.device.is_some());
    let fleet = args(&["--devices", "256"])
        .expect("flags")
        .config()
        .expect("a config");
    assert_eq!(fleet.devices, MAX_DEVICES);
    let none = args(&["--devices", "0"])
        .expect("flags")
        .config()
        .expect("a config");
    assert!(none.device.is_none(), "--devices 0 is --no-device");
    let over = args(&["--devices", "257"]).expect("flags").config();
    assert!(over.is_err_and(|e| e.contains("--devices")));
    assert!(args(&["--devices", "-1"]).is_err());
    assert!(
        args(&["--devices", "2", "--no-device"]).is_err(),
        "conflicting flags"
    );
    let no_room = args(&["--port", "65300", "--devices", "256"])
        .expect("flags")
        .config();
    assert!(no_room.is_err_and(|e| e.contains("--port")));
}

#[tokio::test]
async fn the_in_process_api_bounds_the_number_of_units() {
    let too_many = Emulator::start(EmulatorConfig {
        devices: MAX_DEVICES + 1,
        ..EmulatorConfig::default()
    })
    .await;
    assert!(too_many.is_err_and(|e| e.to_string().contains("devices")));

    let none = fleet(0).await;
    assert!(none.line().devices.is_empty());
    assert!(none.info().device_url.is_none() && none.device().is_none());
    let printed = serde_json::to_value(none.line()).expect("JSON");
    assert_eq!(printed["devices"], json!([]));
    none.shutdown().await;
}

#[tokio::test]
async fn units_can_answer_with_the_latency_of_a_field_link() {
    let latency = Duration::from_millis(300);
    let emulator = Emulator::start(EmulatorConfig {
        device: Some(DeviceConfig {
            pty: false,
            latency,
            ..DeviceConfig::default()
        }),
        devices: 3,
        ..EmulatorConfig::default()
    })
    .await
    .expect("the emulator starts");
    let http = client();
    // Every unit waits; three at once wait together, not one after the other.
    let started = std::time::Instant::now();
    let answers = join_all(
        emulator
            .devices()
            .iter()
            .map(|device| get(&http, device.url(), "/info")),
    )
    .await;
    let elapsed = started.elapsed();
    assert!(
        answers.iter().all(|(status, _)| *status == 200),
        "{answers:?}"
    );
    assert!(elapsed >= latency, "{elapsed:?}");
    assert!(elapsed < latency * 3, "{elapsed:?}");
    // The emulator's default: no added latency.
    let quick = fleet(1).await;
    let started = std::time::Instant::now();
    let (status, _) = get(&http, quick.devices()[0].url(), "/info").await;
    assert_eq!(status, 200);
    assert!(started.elapsed() < latency, "{:?}", started.elapsed());
}

#[tokio::test]
async fn a_method_the_unit_does_not_answer_says_which_it_does() {
    let emulator = fleet(1).await;
    let base = emulator.devices()[0].url().to_owned();
    let http = client();
    for (method, path, allowed) in [
        ("OPTIONS", "/api/v1/settings/default", "POST"),
        ("GET", "/api/v1/settings/lock", "POST"),
        ("DELETE", "/api/v1/settings", "GET, POST"),
        ("PUT", "/api/v1/settings/aiding/gnss1", "GET, POST"),
        ("POST", "/api/v1/info", "GET"),
    ] {
        let method = reqwest::Method::from_bytes(method.as_bytes()).expect("a method");
        let answer = http
            .request(method.clone(), format!("{base}{path}"))
            .send()
            .await
            .expect("an answer");
        assert_eq!(answer.status().as_u16(), 405, "{method} {path}");
        let header = answer.headers().get("allow").and_then(|v| v.to_str().ok());
        assert_eq!(header, Some(allowed), "{method} {path}");
    }
}
