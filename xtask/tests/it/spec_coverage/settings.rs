//! (6 and 7) The settings tree (the specification's table, one entry per leaf) and the
//! message names.

use std::collections::BTreeSet;

use super::operation_helpers::{operation, response_schema};
use super::schema_helpers::{
    T, check_fields, flatten, refers_to, required_of, schema, str_of, walk,
};
use super::{Ck, Doc, unit};
use serde_json::Value;

const CAN_MESSAGES: &[&str] = &[
    "status01",
    "status02",
    "status03",
    "utc0",
    "utc1",
    "imuInfo",
    "imuAccel",
    "imuGyro",
    "imuDeltaVel",
    "imuDeltaAngle",
    "ekfInfo",
    "ekfQuat",
    "ekfEuler",
    "ekfOrientationAcc",
    "ekfPos",
    "ekfAltitude",
    "ekfPosAcc",
    "ekfVelNed",
    "ekfVelNedAcc",
    "ekfVelBody",
    "autoTrackSlipCurv",
    "shipMotionInfo",
    "shipMotion0",
    "shipMotion1",
    "shipMotion2",
    "shipMotionHpInfo",
    "shipMotionHp0",
    "shipMotionHp1",
    "shipMotionHp2",
    "mag0",
    "mag1",
    "mag2",
    "odoInfo",
    "odoVel",
    "airDataInfo",
    "airDataAltitude",
    "airDataAirSpeed",
    "depthInfo",
    "depthAltitude",
];

const PORT_MESSAGES: &[&str] = &[
    "status",
    "diag",
    "sessionInfo",
    "utcTime",
    "ptpStatus",
    "imuData",
    "imuShort",
    "mag",
    "magCalib",
    "ekfEuler",
    "ekfQuat",
    "ekfNav",
    "ekfVelBody",
    "ekfRotAccelBody",
    "ekfRotAccelNed",
    "ekfDebug",
    "shipMotion",
    "shipMotionHp",
    "gps1Vel",
    "gps1Pos",
    "gps1Hdt",
    "gps1Raw",
    "gps1Sat",
    "gps2Vel",
    "gps2Pos",
    "gps2Hdt",
    "gps2Raw",
    "gps2Sat",
    "rtcmRaw",
    "odoVel",
    "dvlBottomTrack",
    "dvlWaterTrack",
    "airData",
    "usbl",
    "depth",
    "eventA",
    "eventB",
    "eventC",
    "eventD",
    "eventE",
    "eventOutA",
    "eventOutB",
    "GGA",
    "RMC",
    "VTG",
    "ZDA",
    "HDT",
    "ROT",
    "GST",
    "VBW",
    "DPT",
    "GSV",
    "gnssGGA",
    "gnssRMC",
    "gnssVTG",
    "gnssHDT",
    "PRDID",
    "PHINF",
    "PHTRO",
    "PHLIN",
    "PHOCT",
    "INDYN",
    "GGK",
    "PPS",
];

const OUTPUT_PORTS: &[&str] = &[
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
];

/// Kind of a settings leaf.
#[derive(Clone, Copy, Debug)]
enum K {
    S,
    N,
    I,
    B,
    /// 3-number array
    V3,
    /// 9-number array
    V9,
    /// {rough: [string x2], fine: [number x3]}
    Align,
}

fn add(out: &mut Vec<(String, K)>, prefix: &str, fields: &[(&str, K)]) {
    for (f, k) in fields {
        out.push((format!("{prefix}.{f}"), *k));
    }
}

/// The spec's settings table, one entry per leaf.
fn settings_leaves() -> Vec<(String, K)> {
    use K::*;
    let mut v = Vec::new();
    add(&mut v, "oem", &[("label", S)]);
    add(
        &mut v,
        "imu",
        &[
            ("model", S),
            ("refPoint", S),
            ("customRefPoint", V3),
            ("alignment", Align),
        ],
    );
    add(
        &mut v,
        "mechanicalSetup",
        &[
            ("alignment", Align),
            ("leverArms.cog", V3),
            ("leverArms.output1", V3),
            ("leverArms.output2", V3),
            ("leverArms.output3", V3),
            ("outputFrames.output1.rotation", Align),
            ("outputFrames.output2.rotation", Align),
            ("outputFrames.output3.rotation", Align),
            ("vehicleSize.customSize", B),
            ("vehicleSize.size", V3),
        ],
    );
    add(
        &mut v,
        "insFilter",
        &[
            ("motionProfile", S),
            ("useRtkHeave", B),
            ("validityThresholds.rollPitch", N),
            ("validityThresholds.heading", N),
            ("validityThresholds.velocity", N),
            ("validityThresholds.position", N),
        ],
    );
    for g in ["gnss1", "gnss2"] {
        add(
            &mut v,
            &format!("aiding.{g}"),
            &[
                ("model", S),
                ("source", S),
                ("sync", S),
                ("antenna", S),
                ("headingMode", S),
                ("leverArmPrimary", V3),
                ("leverArmSecondary", V3),
                ("usePosition", S),
                ("useDualAntenna", S),
            ],
        );
    }
    add(
        &mut v,
        "aiding.odometer",
        &[
            ("model", S),
            ("source", S),
            ("leverArm", V3),
            ("gain", N),
            ("gainError", N),
            ("reverse", B),
            ("useVelocity", S),
        ],
    );
    add(
        &mut v,
        "aiding.airData",
        &[
            ("model", S),
            ("source", S),
            ("leverArm", V3),
            ("useAirSpeed", S),
            ("useAltitude", S),
        ],
    );
    add(
        &mut v,
        "aiding.dvl",
        &[
            ("model", S),
            ("source", S),
            ("sync", S),
            ("leverArm", V3),
            ("alignment", Align),
            ("useWaterVel", S),
            ("useBottomVel", S),
        ],
    );
    add(
        &mut v,
        "aiding.depth",
        &[("model", S), ("source", S), ("useDepth", S)],
    );
    add(
        &mut v,
        "aiding.usbl",
        &[("model", S), ("source", S), ("usePosition", S)],
    );
    add(
        &mut v,
        "aiding.diffCorr",
        &[("source", S), ("ggaInterval", S)],
    );
    add(
        &mut v,
        "aiding.magnetometer",
        &[
            ("model", S),
            ("source", S),
            ("alignment", Align),
            ("useMagData", S),
            ("hardIronCorrection", V3),
            ("softIronCorrection", V9),
            ("calibrationMode", S),
        ],
    );
    add(
        &mut v,
        "localParam",
        &[
            ("latitude", N),
            ("longitude", N),
            ("height", N),
            ("date", S),
            ("useOnBoardWMM", B),
            ("magneticRef", V3),
        ],
    );
    add(
        &mut v,
        "network.ipv4",
        &[
            ("mode", S),
            ("ip", S),
            ("ipGnss", S),
            ("netmask", S),
            ("gateway", S),
            ("dns1", S),
            ("dns2", S),
        ],
    );
    add(
        &mut v,
        "network.ntrip",
        &[
            ("hostname", S),
            ("port", I),
            ("encryptionEnabled", B),
            ("mountPoint", S),
            ("authEnabled", B),
            ("username", S),
            ("password", S),
        ],
    );
    add(&mut v, "network.ntp", &[("enabled", B)]);
    add(
        &mut v,
        "network.ptp",
        &[
            ("enabled", B),
            ("mode", S),
            ("priority1", I),
            ("priority2", I),
            ("timeScale", S),
            ("timeScaleOffset", I),
        ],
    );
    add(&mut v, "ports.can", &[("mode", S), ("bitrate", I)]);
    for c in ["comA", "comB", "comC", "comD", "comE"] {
        add(
            &mut v,
            &format!("ports.{c}"),
            &[("mode", S), ("parity", S), ("baudrate", I)],
        );
    }
    for e in ["eth0", "eth1", "eth2", "eth3", "eth4"] {
        add(
            &mut v,
            &format!("ports.{e}"),
            &[
                ("protocol", S),
                ("udpIp", S),
                ("tcpClientHost", S),
                ("udpOutPort", I),
                ("udpInPort", I),
                ("tcpClientPort", I),
                ("tcpServerPort", I),
            ],
        );
    }
    for e in ["eventInA", "eventInB", "eventInC", "eventInD", "eventInE"] {
        add(
            &mut v,
            &format!("events.{e}"),
            &[("trigger", S), ("delay", N)],
        );
    }
    for e in ["eventOutA", "eventOutB"] {
        add(
            &mut v,
            &format!("events.{e}"),
            &[
                ("trigger", S),
                ("polarity", S),
                ("duration", N),
                ("distance", N),
            ],
        );
    }
    add(
        &mut v,
        "output.can",
        &[("leverArm", S), ("startThreshold", S)],
    );
    for p in OUTPUT_PORTS {
        add(
            &mut v,
            &format!("output.{p}"),
            &[
                ("nmea.talkerId", S),
                ("nmea.mode", S),
                ("nmea.alwaysOutputTime", B),
                ("leverArm", S),
                ("startThreshold", S),
            ],
        );
    }
    add(
        &mut v,
        "clock",
        &[("source", S), ("mode", S), ("leapSec", I)],
    );
    add(
        &mut v,
        "dataLogger",
        &[("mode", S), ("sessionName", S), ("sessionNameLocked", B)],
    );
    v
}

fn check_array(doc: &Value, node: &Value, item_type: &str, len: u64) -> Result<(), String> {
    let flat = flatten(doc, node);
    let items = flat.get("items").map(|i| flatten(doc, i));
    let ok = str_of(&flat, "type") == "array"
        && flat.get("minItems").and_then(Value::as_u64) == Some(len)
        && flat.get("maxItems").and_then(Value::as_u64) == Some(len)
        && items.as_ref().map(|i| str_of(i, "type")) == Some(item_type);
    if ok {
        Ok(())
    } else {
        Err(format!(
            "expected array of {len} {item_type}s (minItems = maxItems = {len}), found type={:?} minItems={:?} maxItems={:?} items.type={:?}",
            str_of(&flat, "type"),
            flat.get("minItems"),
            flat.get("maxItems"),
            items.as_ref().map(|i| str_of(i, "type").to_string())
        ))
    }
}

fn check_leaf(doc: &Value, node: &Value, k: K) -> Result<(), String> {
    let simple = |want: &str| {
        let flat = flatten(doc, node);
        let ty = str_of(&flat, "type");
        if ty == want {
            Ok(())
        } else {
            Err(format!("expected type {want}, found {ty:?}"))
        }
    };
    match k {
        K::S => simple("string"),
        K::N => simple("number"),
        K::I => simple("integer"),
        K::B => simple("boolean"),
        K::V3 => check_array(doc, node, "number", 3),
        K::V9 => check_array(doc, node, "number", 9),
        K::Align => {
            let flat = flatten(doc, node);
            let rough = flat
                .get("properties")
                .and_then(|p| p.get("rough"))
                .ok_or_else(|| "`rough` missing".to_string())
                .and_then(|r| check_array(doc, r, "string", 2).map_err(|e| format!("rough: {e}")));
            let fine = flat
                .get("properties")
                .and_then(|p| p.get("fine"))
                .ok_or_else(|| "`fine` missing".to_string())
                .and_then(|f| check_array(doc, f, "number", 3).map_err(|e| format!("fine: {e}")));
            match (rough, fine) {
                (Ok(()), Ok(())) => Ok(()),
                (a, b) => Err([a.err(), b.err()]
                    .into_iter()
                    .flatten()
                    .collect::<Vec<_>>()
                    .join("; ")),
            }
        }
    }
}

/// The root of the settings tree: the body of `GET /api/v1/settings`.
fn settings_root(doc: Doc) -> Value {
    operation(doc, "get", "/api/v1/settings")
        .and_then(|op| response_schema(doc, op, "200"))
        .or_else(|| schema(doc, "Settings").cloned())
        .expect(
            "ins-device.yaml: no settings tree (GET /api/v1/settings 200 body or schema Settings)",
        )
}

#[test]
fn settings_tree() {
    let mut ck = Ck::new("settings_tree");
    let doc = unit();
    let root = settings_root(doc);
    // the body of a write holds only the modules to change: nothing of the tree is required
    let mut seen_required = BTreeSet::new();
    for (path, k) in settings_leaves() {
        let node = walk(doc.root, &root, &path);
        let r = node.and_then(|n| check_leaf(doc.root, &n, k));
        ck.result(r.map_err(|e| format!("ins-device.yaml: Settings.{path} ({k:?}): {e}")));
        let segs: Vec<&str> = path.split('.').collect();
        for i in 0..segs.len() {
            let prefix = segs[..i].join(".");
            if !seen_required.insert(prefix.clone()) {
                continue;
            }
            let node = if prefix.is_empty() {
                Ok(root.clone())
            } else {
                walk(doc.root, &root, &prefix)
            };
            if let Ok(n) = node {
                let req = required_of(&flatten(doc.root, &n));
                ck.check(req.is_empty(), || {
                    format!("ins-device.yaml: Settings.{prefix} requires {req:?}, but a write carries only the keys it changes")
                });
            }
        }
    }
    ck.finish();
}

#[test]
fn settings_message_names() {
    let mut ck = Ck::new("settings_message_names");
    let doc = unit();
    let root = settings_root(doc);
    let names_of = |flat: &Value| -> Vec<String> {
        flat.get("x-message-names")
            .and_then(Value::as_array)
            .map(|a| {
                a.iter()
                    .filter_map(|x| x.as_str().map(str::to_string))
                    .collect()
            })
            .unwrap_or_default()
    };
    // CAN
    match walk(doc.root, &root, "output.can.messages") {
        Err(e) => {
            ck.check(false, || {
                format!("ins-device.yaml: Settings.output.can.messages: {e}")
            });
        }
        Ok(node) => {
            let flat = flatten(doc.root, &node);
            ck.check(str_of(&flat, "type") == "object", || {
                "ins-device.yaml: output.can.messages is not an object".to_string()
            });
            let names = names_of(&flat);
            for n in CAN_MESSAGES {
                ck.check(names.iter().any(|x| x == n), || {
                    format!("ins-device.yaml: output.can.messages x-message-names lacks `{n}`")
                });
            }
            match flat.get("additionalProperties") {
                Some(entry) if entry.is_object() => {
                    check_fields(
                        &mut ck,
                        doc,
                        "output.can.messages.<name>",
                        entry,
                        &[
                            ("id", T::I),
                            ("extended", T::B),
                            ("trigger", T::R("MessageTrigger")),
                        ],
                    );
                }
                _ => {
                    ck.check(false, || {
                        "ins-device.yaml: output.can.messages entries ({id, extended, trigger}) not described by additionalProperties".to_string()
                    });
                }
            }
        }
    }
    // serial, Ethernet and data logger outputs
    for port in OUTPUT_PORTS {
        let path = format!("output.{port}.messages");
        match walk(doc.root, &root, &path) {
            Err(e) => {
                ck.check(false, || format!("ins-device.yaml: Settings.{path}: {e}"));
            }
            Ok(node) => {
                let flat = flatten(doc.root, &node);
                let names = names_of(&flat);
                for n in PORT_MESSAGES {
                    ck.check(names.iter().any(|x| x == n), || {
                        format!("ins-device.yaml: {path} x-message-names lacks `{n}`")
                    });
                }
                ck.check(
                    str_of(&flat, "type") == "object"
                        && flat
                            .get("additionalProperties")
                            .is_some_and(|a| refers_to(a, "MessageTrigger")),
                    || format!("ins-device.yaml: {path} values must be MessageTrigger strings"),
                );
            }
        }
    }
    ck.finish();
}
