//! Round trips of the generated unit client against an in-test HTTP server, and the
//! typed settings tree against the document's own schemas.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: fixed inputs, a panic is a failure

use std::sync::{Arc, Mutex};

use axum::Router;
use axum::extract::{Request, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use ins_device_api::enums::{MessageTrigger, UserName};
use ins_device_api::{AuthToken, Client, DeviceState, Password, types};
use serde_json::{Value, json};

const TOKEN: &str = "unit-tok-9f";

#[derive(Clone, Default)]
struct Server {
    /// Method and path with query, as received (before any decoding).
    seen: Arc<Mutex<Vec<(String, String, Value)>>>,
}

impl Server {
    fn last(&self) -> (String, String, Value) {
        self.seen
            .lock()
            .unwrap()
            .last()
            .cloned()
            .expect("the server saw a request")
    }
}

async fn handle(State(server): State<Server>, request: Request) -> Response {
    let method = request.method().to_string();
    let target = request
        .uri()
        .path_and_query()
        .map(|p| p.to_string())
        .unwrap_or_default();
    let bytes = axum::body::to_bytes(request.into_body(), 1 << 20)
        .await
        .unwrap_or_default();
    let body = serde_json::from_slice(&bytes).unwrap_or(Value::Null);
    server
        .seen
        .lock()
        .unwrap()
        .push((method.clone(), target.clone(), body.clone()));
    let path = target.split('?').next().unwrap_or_default();
    match (method.as_str(), path) {
        ("POST", "/api/v1/user/login") => {
            if body == json!({"user": "setup", "password": "pw"}) {
                axum::Json(json!({"token": TOKEN})).into_response()
            } else {
                (
                    StatusCode::UNAUTHORIZED,
                    axum::Json(json!({"status": 401, "title": "Unauthorized", "detail": "wrong user or password"})),
                )
                    .into_response()
            }
        }
        ("GET", "/api/v1/settings/output/comA/messages/imuShort") => {
            axum::Json(json!("onChange")).into_response()
        }
        ("POST", "/api/v1/settings") => (
            StatusCode::UNPROCESSABLE_ENTITY,
            axum::Json(json!({
                "status": 422, "title": "Unprocessable Entity", "detail": "2 invalid nodes",
                "errors": [
                    {"path": "aiding/gnss1/leverArmPrimary", "message": "expected 3 numbers"},
                    {"path": "output/comA/messages/imuShort", "message": "`3ms` is not a trigger"}
                ]
            })),
        )
            .into_response(),
        ("POST", "/api/v1/user/logout") => {
            axum::Json(json!({"title": "request successful"})).into_response()
        }
        _ => (StatusCode::IM_A_TEAPOT, "unexpected").into_response(),
    }
}

async fn start() -> (String, Server) {
    let server = Server::default();
    let app = Router::new().fallback(handle).with_state(server.clone());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, app).await });
    (url, server)
}

#[tokio::test]
async fn login_then_node_path_with_slashes_and_auth_parameter() {
    let (url, server) = start().await;
    let state = DeviceState::new();
    let unit = Client::new(&url, state.clone());

    let login = types::LoginRequest {
        user: UserName::Setup,
        password: Password::new("pw"),
    };
    assert!(
        format!("{login:?}").contains("Password([redacted])"),
        "the password never shows in Debug"
    );
    let token = unit
        .login()
        .body(login)
        .send()
        .await
        .unwrap()
        .into_inner()
        .token;
    let (_, target, _) = server.last();
    assert_eq!(
        target, "/api/v1/user/login",
        "login carries no auth parameter"
    );
    assert_eq!(token.expose_secret(), TOKEN);
    state.set_token(Some(token));

    let value = unit
        .get_settings_node()
        .path("output/comA/messages/imuShort")
        .send()
        .await
        .unwrap()
        .into_inner();
    assert_eq!(*value, json!("onChange"));
    let (method, target, _) = server.last();
    assert_eq!(method, "GET");
    assert_eq!(
        target,
        format!("/api/v1/settings/output/comA/messages/imuShort?auth={TOKEN}")
    );

    unit.logout().send().await.unwrap();
    assert_eq!(server.last().1, format!("/api/v1/user/logout?auth={TOKEN}"));
}

#[tokio::test]
async fn wrong_password_is_a_decoded_401() {
    let (url, _server) = start().await;
    let unit = Client::new(&url, DeviceState::new());
    let login = types::LoginRequest {
        user: UserName::Setup,
        password: Password::new("nope"),
    };
    let err = unit.login().body(login).send().await.unwrap_err();
    let ins_device_api::Error::ErrorResponse(body) = err else {
        panic!("expected a documented error: {err:?}")
    };
    assert_eq!((body.status, body.title.as_str()), (401, "Unauthorized"));
}

#[tokio::test]
async fn settings_422_lists_every_invalid_node() {
    let (url, server) = start().await;
    let unit = Client::new(&url, DeviceState::new());
    let patch = types::Settings {
        oem: Some(types::OemSettings {
            label: Some("survey van".into()),
        }),
        ..Default::default()
    };
    let err = unit
        .update_settings()
        .check_only(true)
        .body(patch)
        .send()
        .await
        .unwrap_err();

    let (method, target, body) = server.last();
    assert_eq!(
        (method.as_str(), target.as_str()),
        ("POST", "/api/v1/settings?checkOnly=true")
    );
    assert_eq!(
        body,
        json!({"oem": {"label": "survey van"}}),
        "a partial tree sends only what is set"
    );

    let ins_device_api::Error::ErrorResponse(body) = err else {
        panic!("expected a documented error: {err:?}")
    };
    assert_eq!(body.status, 422);
    let paths: Vec<_> = body.errors.iter().map(|e| e.path.as_str()).collect();
    assert_eq!(
        paths,
        [
            "aiding/gnss1/leverArmPrimary",
            "output/comA/messages/imuShort"
        ]
    );
}

#[tokio::test]
async fn the_token_never_shows_in_error_text() {
    let (url, _server) = start().await;
    let state = DeviceState::new();
    state.set_token(Some(AuthToken::new(TOKEN)));

    // An undocumented answer (418) keeps the response inside the error.
    let unit = Client::new(&url, state.clone());
    let err = unit.get_device_info().send().await.unwrap_err();
    assert!(
        matches!(err, ins_device_api::Error::UnexpectedResponse(_)),
        "{err:?}"
    );
    for text in [format!("{err:?}"), err.to_string()] {
        assert!(!text.contains(TOKEN), "token leaked: {text}");
    }

    // A transport error names the URL, with the token redacted.
    let closed = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let dead = format!("http://{}", closed.local_addr().unwrap());
    drop(closed);
    let err = Client::new(&dead, state)
        .get_device_info()
        .send()
        .await
        .unwrap_err();
    assert!(
        matches!(err, ins_device_api::Error::CommunicationError(_)),
        "{err:?}"
    );
    for text in [format!("{err:?}"), err.to_string()] {
        assert!(!text.contains(TOKEN), "token leaked: {text}");
    }
    assert!(
        format!("{err:?}").contains("auth=%5Bredacted%5D"),
        "{err:?}"
    );
}

// ---------------------------------------------------------------------------
// The typed settings tree against the document's schemas.

fn document() -> Value {
    let text = include_str!("../../../../openapi/ins-device.yaml");
    serde_yaml::from_str(text).unwrap()
}

fn resolve<'a>(doc: &'a Value, schema: &'a Value) -> &'a Value {
    match schema.get("$ref").and_then(Value::as_str) {
        Some(r) => resolve(
            doc,
            doc.pointer(r.trim_start_matches('#'))
                .unwrap_or_else(|| panic!("{r}")),
        ),
        None => match schema.get("allOf").and_then(Value::as_array) {
            Some(all) if all.len() == 1 => resolve(doc, &all[0]),
            _ => schema,
        },
    }
}

/// A value for every field the schema describes: each object property, every message
/// name of a message map, arrays of their exact length, the last value of each enum.
fn sample(doc: &Value, schema: &Value, counter: &mut u32) -> Value {
    let schema = resolve(doc, schema);
    *counter += 1;
    if let Some(values) = schema.get("enum").and_then(Value::as_array) {
        return values.last().cloned().unwrap();
    }
    match schema.get("type").and_then(Value::as_str) {
        Some("object") => {
            let mut out = serde_json::Map::new();
            if let Some(props) = schema.get("properties").and_then(Value::as_object) {
                for (name, prop) in props {
                    out.insert(name.clone(), sample(doc, prop, counter));
                }
            }
            if let Some(extra) = schema.get("additionalProperties").filter(|v| v.is_object()) {
                let names = schema
                    .get("x-message-names")
                    .and_then(Value::as_array)
                    .expect("maps list their names");
                for name in names {
                    out.insert(
                        name.as_str().unwrap().to_owned(),
                        sample(doc, extra, counter),
                    );
                }
            }
            Value::Object(out)
        }
        Some("array") => {
            let n = schema.get("minItems").and_then(Value::as_u64).unwrap_or(1);
            Value::Array(
                (0..n)
                    .map(|_| sample(doc, &schema["items"], counter))
                    .collect(),
            )
        }
        Some("string") if schema.get("pattern").is_some() => json!("2026-01-02"),
        Some("string") => json!(format!("text-{counter}")),
        Some("integer") => json!(*counter),
        Some("number") => json!(f64::from(*counter) + 0.5),
        Some("boolean") => json!(counter.is_multiple_of(2)),
        other => panic!("unexpected schema type {other:?} in {schema}"),
    }
}

fn leaves(v: &Value) -> usize {
    match v {
        Value::Object(m) => m.values().map(leaves).sum(),
        _ => 1,
    }
}

#[test]
fn typed_tree_carries_every_field_of_the_schema() {
    let doc = document();
    let full = sample(
        &doc,
        &json!({"$ref": "#/components/schemas/Settings"}),
        &mut 0,
    );
    assert!(
        leaves(&full) > 400,
        "the sample covers the whole tree ({} leaves)",
        leaves(&full)
    );

    let typed: types::Settings = serde_json::from_value(full.clone()).unwrap();
    let back = serde_json::to_value(&typed).unwrap();
    // Nothing dropped, renamed or retyped: the typed tree writes back exactly what it read.
    assert_eq!(back, full);

    let comb = typed
        .output
        .as_ref()
        .and_then(|o| o.com_a.as_ref())
        .and_then(|p| p.messages.as_ref())
        .unwrap();
    assert_eq!(comb.get("imuShort"), Some(&MessageTrigger::Ms1000));
}

#[test]
fn typed_tree_keeps_unknown_trigger_values_and_drops_unknown_keys() {
    let tree = json!({
        "output": {"comA": {"messages": {"imuShort": "3ms", "ekfNav": "onChange"}}},
        "aFutureModule": {"x": 1}
    });
    let typed: types::Settings = serde_json::from_value(tree).unwrap();
    let messages = typed.output.unwrap().com_a.unwrap().messages.unwrap();
    assert_eq!(
        messages.get("imuShort"),
        Some(&MessageTrigger::Unknown("3ms".into()))
    );
    assert_eq!(messages.get("ekfNav"), Some(&MessageTrigger::OnChange));
}

#[test]
fn vectors_have_their_exact_length() {
    let bad = json!({"aiding": {"gnss1": {"leverArmPrimary": [1.0, 2.0]}}});
    assert!(serde_json::from_value::<types::Settings>(bad).is_err());
    let good = json!({"aiding": {"gnss1": {"leverArmPrimary": [1.0, 2.0, 3.0]}}});
    let typed: types::Settings = serde_json::from_value(good).unwrap();
    let arm = typed
        .aiding
        .unwrap()
        .gnss1
        .unwrap()
        .lever_arm_primary
        .unwrap();
    assert_eq!(*arm, [1.0, 2.0, 3.0]);
}

#[test]
fn ntrip_password_is_redacted_in_debug() {
    let tree = json!({"network": {"ntrip": {"username": "me", "password": "caster-secret"}}});
    let typed: types::Settings = serde_json::from_value(tree.clone()).unwrap();
    assert!(!format!("{typed:?}").contains("caster-secret"));
    assert_eq!(
        serde_json::to_value(&typed).unwrap(),
        tree,
        "sent as the plain string"
    );
}

// ---------------------------------------------------------------------------
// The same client over another link (serial in svc-core): requests go to an Exchange.

struct Recorder {
    seen: Mutex<Vec<ins_device_api::hooks::ExchangeRequest>>,
    fail: bool,
}

impl ins_device_api::hooks::Exchange for Recorder {
    fn exchange(
        &self,
        request: ins_device_api::hooks::ExchangeRequest,
    ) -> ins_device_api::hooks::ExchangeFuture<'_> {
        self.seen.lock().unwrap().push(request.clone());
        let fail = self.fail;
        Box::pin(async move {
            if fail {
                return Err(ins_device_api::hooks::ExchangeError::no_answer(
                    "serial link: no answer within 1 s",
                ));
            }
            let body = match request.path.as_str() {
                "/api/v1/settings/output/comA/messages/imuShort" => {
                    br#"{"title":"request successful","needReboot":false}"#.to_vec()
                }
                _ => br#"{"status":401,"title":"Unauthorized","detail":"log in first"}"#.to_vec(),
            };
            let status = if body.starts_with(br#"{"status""#) {
                401
            } else {
                200
            };
            Ok(ins_device_api::hooks::ExchangeReply { status, body })
        })
    }
}

#[tokio::test]
async fn requests_travel_over_an_exchange_link() {
    let link = Arc::new(Recorder {
        seen: Mutex::new(Vec::new()),
        fail: false,
    });
    let state = DeviceState::with_exchange(link.clone());
    state.set_token(Some(AuthToken::new(TOKEN)));
    let unit = Client::new("serial://unit", state);

    let written = unit
        .update_settings_node()
        .path("output/comA/messages/imuShort")
        .check_only(true)
        .body(json!("10ms"))
        .send()
        .await
        .unwrap()
        .into_inner();
    assert!(!written.need_reboot);
    let sent = link.seen.lock().unwrap().last().cloned().unwrap();
    assert_eq!(sent.method, reqwest::Method::POST);
    assert_eq!(sent.path, "/api/v1/settings/output/comA/messages/imuShort");
    assert_eq!(sent.query, format!("checkOnly=true&auth={TOKEN}"));
    assert_eq!(sent.body.as_deref(), Some(&b"\"10ms\""[..]));

    // A documented error answered over the link decodes like one over HTTP.
    let err = unit.get_device_info().send().await.unwrap_err();
    let ins_device_api::Error::ErrorResponse(body) = err else {
        panic!("{err:?}")
    };
    assert_eq!((body.status, body.detail.as_str()), (401, "log in first"));
}

#[tokio::test]
async fn a_failing_link_is_an_error_without_the_token() {
    let link = Arc::new(Recorder {
        seen: Mutex::new(Vec::new()),
        fail: true,
    });
    let state = DeviceState::with_exchange(link);
    state.set_token(Some(AuthToken::new(TOKEN)));
    let err = Client::new("serial://unit", state)
        .get_device_info()
        .send()
        .await
        .unwrap_err();
    assert!(
        matches!(&err, ins_device_api::Error::Custom(text)
            if ins_device_api::hooks::ExchangeError::from_custom(text)
                == ("serial link: no answer within 1 s", true)),
        "{err:?}"
    );
    assert!(!format!("{err:?}").contains(TOKEN));
}
