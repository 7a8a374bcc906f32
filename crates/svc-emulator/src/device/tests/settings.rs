//! Settings writes (values, subtrees, whole tree) and the delta and pretty exports.

use super::*;

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

/// Found by the stateful conformance run: floats came back one ULP off (serde_json
/// without `float_roundtrip`), and a whole number beyond 64 bits was called "a number".
#[tokio::test]
async fn floats_read_back_exactly_and_huge_integers_are_named() {
    let unit = start(config()).await;
    let mut c = connect(&unit, Via::Http).await;
    let written = json!([0.0, 7.938_722_650_725_611e-143, 3.068_186_913_711_019e72]);
    let answer = c
        .post("/settings/aiding/airData/leverArm", "", &written)
        .await;
    assert_eq!(answer.status, 200, "{:?}", answer.body);
    let read = c.get("/settings/aiding/airData/leverArm", "").await;
    assert_eq!(read.body, written);

    let body = json!({ "ports": { "eth4": { "udpInPort": -24_958_909_694_705_451_008.0 } } });
    let answer = c.post("/settings", "", &body).await;
    assert_eq!(answer.status, 422);
    assert_eq!(
        answer.body["errors"][0]["message"],
        "expected an integer within 64 bits, got a larger one"
    );
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
