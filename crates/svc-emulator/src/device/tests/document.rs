//! The unit's document: routes, rights and schemas, the defaults, validation.

use super::*;

#[test]
fn the_document_gives_routes_rights_and_schemas() {
    let spec = Spec::load().expect("the document loads");
    assert_eq!(spec.operations.len(), 19);
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
        crate::device::spec::Route::Found(op, _) => assert_eq!(op.id, "restoreDefaultSettings"),
        _ => panic!("no route"),
    }
    match spec.route(
        Some(Method::Get),
        "/api/v1/settings/output/comA/messages/imuShort",
    ) {
        crate::device::spec::Route::Found(op, node) => {
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
    let defaults = crate::device::defaults::default_settings(&spec.settings);
    assert_eq!(
        crate::device::default_settings().expect("the public copy"),
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
