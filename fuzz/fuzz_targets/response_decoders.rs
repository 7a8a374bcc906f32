//! Every response type the generated clients decode (`svc-cloud-api`: the cloud and
//! notification services; `ins-device-api`: the unit), success and error bodies, with
//! `serde_json::from_slice` as the clients do.
//!
//! Input: `[type, body...]`: the first byte picks the response type (modulo their
//! number, see `DECODERS`), the rest is the body.
//!
//! Properties checked:
//! 1. nothing panics (hand-written parts: timestamps, open enums, secrets);
//! 2. what decodes writes JSON that decodes again, and writes the same JSON the second
//!    time (the SDK reads back what it writes: a response stored, cached or forwarded
//!    is read again alike);
//! 3. `Debug` of what decodes does not show the secrets it holds (tokens, webhook
//!    secrets).
#![no_main]

use ins_device_api::types as device;
use libfuzzer_sys::fuzz_target;
use serde::Serialize;
use serde::de::DeserializeOwned;
use svc_cloud_api::cloud::types as cloud;
use svc_cloud_api::notification::types as notification;
use svc_fuzz::same_json;

type Check = fn(&[u8]);

/// One entry per response type (element types of list responses are included as the
/// lists themselves), with the JSON pointers of the secrets it holds (`*`: every
/// element of an array).
const DECODERS: &[(&str, Check)] = &[
    // Cloud service.
    ("cloud ServerInfo", |b| check::<cloud::ServerInfo>(b, &[])),
    ("cloud ContainerList", |b| {
        check::<cloud::ContainerList>(b, &[])
    }),
    ("cloud Container", |b| check::<cloud::Container>(b, &[])),
    ("cloud Vec<ContainerFile>", |b| {
        check::<Vec<cloud::ContainerFile>>(b, &[])
    }),
    ("cloud ContainerFile", |b| {
        check::<cloud::ContainerFile>(b, &[])
    }),
    ("cloud ProcessingList", |b| {
        check::<cloud::ProcessingList>(b, &[])
    }),
    ("cloud Processing", |b| check::<cloud::Processing>(b, &[])),
    ("cloud Vec<OutputFile>", |b| {
        check::<Vec<cloud::OutputFile>>(b, &[])
    }),
    ("cloud Vec<ProcessingError>", |b| {
        check::<Vec<cloud::ProcessingError>>(b, &[])
    }),
    ("cloud Error", |b| check::<cloud::Error>(b, &[])),
    // Notification service (its `Error` is the cloud one).
    ("notification Vec<WebhookEndpoint>", |b| {
        check::<Vec<notification::WebhookEndpoint>>(b, &["*/secret"]);
    }),
    ("notification Vec<MissedWebhook>", |b| {
        check::<Vec<notification::MissedWebhook>>(b, &[])
    }),
    ("notification WebhookEvent", |b| {
        check::<notification::WebhookEvent>(b, &[])
    }),
    // The unit.
    ("device DeviceInfo", |b| check::<device::DeviceInfo>(b, &[])),
    ("device LoginResponse", |b| {
        check::<device::LoginResponse>(b, &["token"])
    }),
    ("device Settings", |b| {
        check::<device::Settings>(b, &["network/ntrip/password"])
    }),
    // A free-form export: its `Debug` shows every node but the secrets, redacted.
    ("device SettingsFile", |b| {
        check::<ins_device_api::SettingsFile>(b, &["network/ntrip/password"])
    }),
    ("device SettingsNode", |b| {
        check::<ins_device_api::SettingsNode>(b, &["ntrip/password", "password"])
    }),
    ("device WriteResult", |b| {
        check::<device::WriteResult>(b, &[])
    }),
    ("device ActionResult", |b| {
        check::<device::ActionResult>(b, &[])
    }),
    ("device DataLoggerStatus", |b| {
        check::<device::DataLoggerStatus>(b, &[])
    }),
    ("device Error", |b| check::<device::Error>(b, &[])),
];

fuzz_target!(|input: &[u8]| {
    let [pick, body @ ..] = input else {
        return;
    };
    let (_name, check) = DECODERS[usize::from(*pick) % DECODERS.len()];
    check(body);
});

fn check<T: DeserializeOwned + Serialize + std::fmt::Debug>(body: &[u8], secrets: &[&str]) {
    let Ok(value) = serde_json::from_slice::<T>(body) else {
        return;
    };
    let written = serde_json::to_vec(&value).expect("a decoded response serializes");
    let again: T = match serde_json::from_slice(&written) {
        Ok(again) => again,
        Err(error) => panic!(
            "a decoded response writes JSON it cannot read back: {error}\n{}",
            String::from_utf8_lossy(&written)
        ),
    };
    let rewritten = serde_json::to_vec(&again).expect("a decoded response serializes");
    assert!(
        same_json(&written, &rewritten),
        "a response read back from its own JSON writes different JSON:\n{}\n{}",
        String::from_utf8_lossy(&written),
        String::from_utf8_lossy(&rewritten)
    );
    check_debug_hides_secrets(&value, &written, secrets);
}

/// Secrets decoded (a token, a webhook secret, a password) are shown as `[redacted]` by
/// `Debug`: the same response with other values in the secrets' places (as long, so
/// that they decode alike) must show the same `Debug` text. (Looking for the secret in
/// the text instead would let the fuzzer pick a secret that the text holds anyway, a
/// type's name.)
fn check_debug_hides_secrets<T: DeserializeOwned + std::fmt::Debug>(
    value: &T,
    written: &[u8],
    secrets: &[&str],
) {
    if secrets.is_empty() {
        return;
    }
    let Ok(mut json) = serde_json::from_slice::<serde_json::Value>(written) else {
        return;
    };
    let mut replaced = 0;
    for path in secrets {
        let segments: Vec<&str> = path.split('/').collect();
        replace_at(&mut json, &segments, &mut replaced);
    }
    if replaced == 0 {
        return;
    }
    let Ok(other) = serde_json::from_value::<T>(json) else {
        return;
    };
    let shown = format!("{value:?}");
    assert_eq!(shown, format!("{other:?}"), "Debug shows a secret");
}

/// Replaces the strings at `path` (`*`: every element of an array) in `json` with
/// others of the same length, counting them.
fn replace_at(json: &mut serde_json::Value, path: &[&str], replaced: &mut usize) {
    match (path, json) {
        ([], serde_json::Value::String(text)) => {
            *text = text
                .chars()
                .map(|c| if c == 'a' { 'b' } else { 'a' })
                .collect();
            *replaced += 1;
        }
        (["*", rest @ ..], serde_json::Value::Array(items)) => {
            for item in items {
                replace_at(item, rest, replaced);
            }
        }
        ([key, rest @ ..], serde_json::Value::Object(map)) => {
            if let Some(child) = map.get_mut(*key) {
                replace_at(child, rest, replaced);
            }
        }
        _ => {}
    }
}
