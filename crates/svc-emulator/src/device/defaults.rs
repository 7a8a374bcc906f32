//! The factory settings tree of the emulated unit: a value for every module and field
//! of the settings table, in the order of the schemas. The message maps are filled
//! from the document's `x-message-names` (every output port gets every serial/Ethernet
//! message name, the CAN output every CAN message name with its own standard
//! identifier), so adding a name to the document adds it here.
//!
//! Values are plausible for a land-vehicle installation (internal GNSS and IMU, the
//! other aiding sensors disabled, a few messages enabled on comA, eth0 and the data
//! logger); the specification shows no allowed values for most strings, so they are
//! the emulator's choice. `tests::defaults_are_complete_and_valid` checks the tree
//! against the schema in "complete" mode (every property present, every value valid).

use serde_json::{Map, Value, json};

use super::spec::Schema;

/// Identifier of the first CAN message; the others follow in the document's order.
const FIRST_CAN_ID: u64 = 0x100;

/// Messages enabled by default on the serial/Ethernet outputs, with their trigger.
const PORT_MESSAGES: &[(&str, &str)] = &[
    ("status", "1000ms"),
    ("utcTime", "1000ms"),
    ("ekfEuler", "50ms"),
    ("ekfNav", "50ms"),
    ("gps1Pos", "onChange"),
    ("GGA", "1000ms"),
];

/// Messages recorded by default by the data logger, with their trigger.
const LOGGER_MESSAGES: &[(&str, &str)] = &[
    ("status", "1000ms"),
    ("diag", "onChange"),
    ("sessionInfo", "onChange"),
    ("utcTime", "onChange"),
    ("imuShort", "5ms"),
    ("ekfEuler", "10ms"),
    ("ekfQuat", "10ms"),
    ("ekfNav", "10ms"),
    ("gps1Vel", "onChange"),
    ("gps1Pos", "onChange"),
    ("gps1Hdt", "onChange"),
    ("gps1Raw", "onChange"),
    ("eventA", "onChange"),
];

/// CAN messages enabled by default, with their trigger.
const CAN_MESSAGES: &[(&str, &str)] = &[
    ("status01", "1000ms"),
    ("utc0", "1000ms"),
    ("ekfEuler", "100ms"),
    ("ekfPos", "100ms"),
    ("ekfVelNed", "100ms"),
];

fn names(root: &Schema, path: &[&str]) -> Vec<String> {
    root.at(path.iter().copied())
        .map(|map| map.message_names().to_vec())
        .unwrap_or_default()
}

fn trigger(enabled: &[(&str, &str)], name: &str) -> Value {
    let trigger = enabled
        .iter()
        .find(|(n, _)| *n == name)
        .map_or("off", |(_, t)| *t);
    Value::String(trigger.to_owned())
}

fn port_output(names: &[String], enabled: &[(&str, &str)]) -> Value {
    let messages: Map<String, Value> = names
        .iter()
        .map(|name| (name.clone(), trigger(enabled, name)))
        .collect();
    json!({
        "nmea": { "talkerId": "GP", "mode": "standard", "alwaysOutputTime": false },
        "leverArm": "primary",
        "startThreshold": "powerOn",
        "messages": messages,
    })
}

fn can_output(names: &[String]) -> Value {
    let messages: Map<String, Value> = names
        .iter()
        .zip(FIRST_CAN_ID..)
        .map(|(name, id)| {
            (
                name.clone(),
                json!({ "id": id, "extended": false, "trigger": trigger(CAN_MESSAGES, name) }),
            )
        })
        .collect();
    json!({ "leverArm": "primary", "startThreshold": "powerOn", "messages": messages })
}

fn alignment() -> Value {
    json!({ "rough": ["forward", "right"], "fine": [0.0, 0.0, 0.0] })
}

fn serial_port(mode: &str, baudrate: u32) -> Value {
    json!({ "mode": mode, "parity": "none", "baudrate": baudrate })
}

fn ethernet_port(protocol: &str, port: u16) -> Value {
    json!({
        "protocol": protocol,
        "udpIp": "192.168.1.255",
        "tcpClientHost": "",
        "udpOutPort": port,
        "udpInPort": port,
        "tcpClientPort": port,
        "tcpServerPort": port,
    })
}

fn event_in() -> Value {
    json!({ "trigger": "disabled", "delay": 0.0 })
}

fn event_out() -> Value {
    json!({ "trigger": "disabled", "polarity": "fallingEdge", "duration": 0.001, "distance": 0.0 })
}

/// The default settings tree. `root` is the compiled `Settings` schema (for the
/// message names).
pub fn default_settings(root: &Schema) -> Value {
    let port_names = names(root, &["output", "comA", "messages"]);
    let can_names = names(root, &["output", "can", "messages"]);
    let zero = json!([0.0, 0.0, 0.0]);
    let off = |names: &[String]| port_output(names, &[]);
    json!({
        "oem": { "label": "" },
        "imu": {
            "model": "internal",
            "refPoint": "imuCenter",
            "customRefPoint": zero,
            "alignment": alignment(),
        },
        "mechanicalSetup": {
            "alignment": alignment(),
            "leverArms": { "cog": zero, "output1": zero, "output2": zero, "output3": zero },
            "outputFrames": {
                "output1": { "rotation": alignment() },
                "output2": { "rotation": alignment() },
                "output3": { "rotation": alignment() },
            },
            "vehicleSize": { "customSize": false, "size": [4.5, 1.8, 1.5] },
        },
        "insFilter": {
            "motionProfile": "automotive",
            "useRtkHeave": false,
            "validityThresholds": { "rollPitch": 0.5, "heading": 1.0, "velocity": 0.5, "position": 2.0 },
        },
        "aiding": {
            "gnss1": {
                "model": "internal",
                "source": "internal",
                "sync": "internal",
                "antenna": "geodetic",
                "headingMode": "auto",
                "leverArmPrimary": [0.0, 0.0, -1.0],
                "leverArmSecondary": [1.0, 0.0, -1.0],
                "usePosition": "auto",
                "useDualAntenna": "auto",
            },
            "gnss2": {
                "model": "disabled",
                "source": "comC",
                "sync": "none",
                "antenna": "unknown",
                "headingMode": "single",
                "leverArmPrimary": zero,
                "leverArmSecondary": zero,
                "usePosition": "never",
                "useDualAntenna": "never",
            },
            "odometer": {
                "model": "disabled",
                "source": "can",
                "leverArm": zero,
                "gain": 4096.0,
                "gainError": 0.5,
                "reverse": false,
                "useVelocity": "never",
            },
            "airData": {
                "model": "disabled",
                "source": "comD",
                "leverArm": zero,
                "useAirSpeed": "never",
                "useAltitude": "never",
            },
            "dvl": {
                "model": "disabled",
                "source": "comE",
                "sync": "none",
                "leverArm": zero,
                "alignment": alignment(),
                "useWaterVel": "never",
                "useBottomVel": "never",
            },
            "depth": { "model": "disabled", "source": "comE", "useDepth": "never" },
            "usbl": { "model": "disabled", "source": "comE", "usePosition": "never" },
            "diffCorr": { "source": "ntrip", "ggaInterval": "10s" },
            "magnetometer": {
                "model": "internal",
                "source": "internal",
                "alignment": alignment(),
                "useMagData": "never",
                "hardIronCorrection": zero,
                "softIronCorrection": [1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0],
                "calibrationMode": "2d",
            },
        },
        "localParam": {
            "latitude": 0.0,
            "longitude": 0.0,
            "height": 0.0,
            "date": "2024-01-01",
            "useOnBoardWMM": true,
            "magneticRef": [0.2, 0.0, 0.4],
        },
        "network": {
            "ipv4": {
                "mode": "static",
                "ip": "192.168.1.1",
                "ipGnss": "192.168.1.2",
                "netmask": "255.255.255.0",
                "gateway": "192.168.1.254",
                "dns1": "192.168.1.254",
                "dns2": "0.0.0.0",
            },
            "ntrip": {
                "hostname": "",
                "port": 2101,
                "encryptionEnabled": false,
                "mountPoint": "",
                "authEnabled": false,
                "username": "",
                "password": "",
            },
            "ntp": { "enabled": false },
            "ptp": {
                "enabled": false,
                "mode": "master",
                "priority1": 128,
                "priority2": 128,
                "timeScale": "ptp",
                "timeScaleOffset": 0,
            },
        },
        "ports": {
            "can": { "mode": "normal", "bitrate": 1_000_000 },
            "comA": serial_port("rs232", 115_200),
            "comB": serial_port("rs232", 115_200),
            "comC": serial_port("rs232", 115_200),
            "comD": serial_port("rs232", 115_200),
            "comE": serial_port("rs422", 921_600),
            "eth0": ethernet_port("tcpServer", 1234),
            "eth1": ethernet_port("disabled", 1235),
            "eth2": ethernet_port("disabled", 1236),
            "eth3": ethernet_port("disabled", 1237),
            "eth4": ethernet_port("disabled", 1238),
        },
        "events": {
            "eventInA": event_in(),
            "eventInB": event_in(),
            "eventInC": event_in(),
            "eventInD": event_in(),
            "eventInE": event_in(),
            "eventOutA": event_out(),
            "eventOutB": event_out(),
        },
        "output": {
            "can": can_output(&can_names),
            "dataLogger": port_output(&port_names, LOGGER_MESSAGES),
            "comA": port_output(&port_names, PORT_MESSAGES),
            "comB": off(&port_names),
            "comC": off(&port_names),
            "comD": off(&port_names),
            "comE": off(&port_names),
            "eth0": port_output(&port_names, PORT_MESSAGES),
            "eth1": off(&port_names),
            "eth2": off(&port_names),
            "eth3": off(&port_names),
            "eth4": off(&port_names),
        },
        "clock": { "source": "gnss1", "mode": "automatic", "leapSec": 18 },
        "dataLogger": { "mode": "manual", "sessionName": "session", "sessionNameLocked": false },
    })
}
