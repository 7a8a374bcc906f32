//! The processing configuration as records: the samples read as the form they are in,
//! unknown fields survive a round trip, and a configuration built in code writes the
//! JSON object the service reads. Bad input is an `InvalidInput` naming the field.

use std::collections::HashMap;

use serde_json::{Value, json};
use svc_ffi::*;

use super::{kind, samples};

fn sample(name: &str) -> String {
    std::fs::read_to_string(samples().join(name)).expect("sample")
}

fn value(text: &str) -> Value {
    serde_json::from_str(text).expect("JSON")
}

#[test]
fn the_vendor_sample_reads_as_a_project_and_writes_back_the_same_object() {
    let text = sample("project.json");
    let ProcessingConfig::Project { config } =
        processing_config_from_json(text.clone()).expect("read")
    else {
        panic!("not a project configuration");
    };
    assert_eq!(config.version, "1.0");
    assert_eq!(config.project.kind, "nmea");
    assert_eq!(config.project.path, "rover.nmea");
    assert_eq!(config.project.name.as_deref(), Some("Paris sample drive"));
    assert_eq!(config.processing.kind, "gnssSingle");
    assert_eq!(
        config.processing.motion_profile.as_deref(),
        Some("automotive")
    );
    let profiles: Vec<_> = config.exports.iter().map(|e| e.profile.as_str()).collect();
    assert_eq!(profiles, ["SBET: 10Hz", "ASCII: 10Hz", "KML: 1Hz"]);
    assert_eq!(config.reports[0].template, "Minimal JSON");
    assert_eq!(config.reports[1].output_dir.as_deref(), Some("reports"));

    let written = processing_config_to_json(ProcessingConfig::Project { config }).expect("write");
    assert_eq!(value(&written), value(&text));
}

#[test]
fn the_shorthand_sample_reads_as_a_shorthand_with_its_lever_arm() {
    let config = processing_config_from_json(sample("processing.json")).expect("read");
    let ProcessingConfig::Shorthand { config: short } = &config else {
        panic!("not a shorthand: {config:?}");
    };
    assert_eq!(short.kind.as_deref(), Some("gnss"));
    assert_eq!(short.mode.as_deref(), Some("kinematic"));
    let gnss = short.gnss.as_ref().expect("gnss");
    assert_eq!(gnss.elevation_mask_degrees, Some(10.0));
    assert_eq!(gnss.constellations.as_ref().map(Vec::len), Some(4));
    let imu = short.imu.as_ref().expect("imu");
    assert_eq!(imu.file.as_deref(), Some("imu.csv"));
    assert_eq!(
        imu.lever_arm,
        Some(LeverArm {
            x: 0.12,
            y: 0.0,
            z: -1.5
        })
    );
    assert_eq!(short.outputs.as_ref().and_then(|o| o.geojson), Some(true));
    // Written and read again, the same records.
    let written = processing_config_to_json(config.clone()).expect("write");
    assert_eq!(processing_config_from_json(written).expect("again"), config);
}

#[test]
fn fields_this_sdk_does_not_know_survive_a_round_trip_at_every_level() {
    let original = json!({
        "version": "1.0",
        "future": {"a": [1, 2]},
        "project": {"type": "sbgECom", "path": "rover/", "site": "quay 4"},
        "processing": {
            "type": "insSingle",
            "smoothing": true,
            "bases": [{
                "data": ["base/sbgs167p.20d"],
                "positionMode": "published",
                "antenna": {"type": "TWIVP6050_CONE  NONE", "height": 1.5},
                "coordinates": {"lat": 48.8}
            }]
        },
        "exports": [{"profile": "SBET: 200Hz", "datum": "WGS84"}],
        "reports": [{"template": "Minimal JSON", "language": "fr"}]
    });
    let config = processing_config_from_json(original.to_string()).expect("read");
    let ProcessingConfig::Project { config: project } = &config else {
        panic!("not a project: {config:?}");
    };
    assert_eq!(
        project.extra.get("future").map(String::as_str),
        Some(r#"{"a":[1,2]}"#)
    );
    assert_eq!(
        project.project.extra.get("site").map(String::as_str),
        Some(r#""quay 4""#)
    );
    let base = &project.processing.bases[0];
    assert_eq!(base.antenna_type.as_deref(), Some("TWIVP6050_CONE  NONE"));
    assert_eq!(
        base.antenna_extra.get("height").map(String::as_str),
        Some("1.5")
    );
    assert!(base.extra.contains_key("coordinates"));
    assert_eq!(
        project.exports[0].extra.get("datum").map(String::as_str),
        Some(r#""WGS84""#)
    );

    let written = processing_config_to_json(config).expect("write");
    assert_eq!(value(&written), original);
}

#[test]
fn a_configuration_built_in_code_writes_what_the_service_reads() {
    let config = ProcessingConfig::Project {
        config: ProjectConfig {
            version: "1.0".into(),
            project: ConfigProject {
                kind: "sbgECom".into(),
                path: "rover/".into(),
                name: None,
                extra: HashMap::new(),
            },
            processing: ConfigProcessing {
                kind: "insSingle".into(),
                motion_profile: Some("marine".into()),
                bases: vec![],
                estimate_lever_arm: Some(true),
                extra: HashMap::from([("smoothing".to_owned(), "true".to_owned())]),
            },
            exports: vec![ConfigExport {
                profile: "SBET: 200Hz".into(),
                name: None,
                output_dir: Some("export".into()),
                extra: HashMap::new(),
            }],
            reports: vec![],
            extra: HashMap::new(),
        },
    };
    let written = processing_config_to_json(config).expect("write");
    assert_eq!(
        value(&written),
        json!({
            "version": "1.0",
            "project": {"type": "sbgECom", "path": "rover/"},
            "processing": {"type": "insSingle", "motionProfile": "marine",
                           "estimateLeverArm": true, "smoothing": true},
            "exports": [{"profile": "SBET: 200Hz", "outputDir": "export"}]
        })
    );
    // The JSON case passes an object through as it is.
    let raw = ProcessingConfig::Json {
        json: r#"{"engine": {"x": 1}}"#.into(),
    };
    assert_eq!(
        value(&processing_config_to_json(raw).expect("raw")),
        json!({"engine": {"x": 1}})
    );
}

#[test]
fn bad_configurations_are_refused_naming_the_field() {
    // Read: the first wrong field is named.
    let wrong = json!({"version": "1.0", "project": {"type": "sbgECom", "path": "/etc/passwd"},
                       "processing": {"type": "insSingle"}});
    let (name, e) = kind(processing_config_from_json(wrong.to_string()));
    assert_eq!(name, "invalid_input");
    assert!(e.to_string().contains("project.path"), "{e}");
    let missing = json!({"version": "1.0", "project": {"type": "sbgECom", "path": "rover/"}});
    let (_, e) = kind(processing_config_from_json(missing.to_string()));
    assert!(e.to_string().contains("processing"), "{e}");
    for text in ["[]", "{", "7"] {
        let (name, _) = kind(processing_config_from_json(text.into()));
        assert_eq!(name, "invalid_input", "{text}");
    }

    // Written: an unknown field that is not JSON, or that names a field of its own, a
    // number JSON cannot hold, a JSON case that is not an object.
    let short = |extra: HashMap<String, String>, lever: f64| ProcessingConfig::Shorthand {
        config: ShorthandConfig {
            imu: Some(ShorthandImu {
                file: Some("imu.csv".into()),
                lever_arm: Some(LeverArm {
                    x: lever,
                    y: 0.0,
                    z: 0.0,
                }),
                extra,
            }),
            ..ShorthandConfig::default()
        },
    };
    assert!(processing_config_to_json(short(HashMap::new(), 0.5)).is_ok());
    let bad_json = HashMap::from([("note".to_owned(), "not json".to_owned())]);
    let (name, e) = kind(processing_config_to_json(short(bad_json, 0.5)));
    assert_eq!(name, "invalid_input");
    assert!(e.to_string().contains(r#"imu.extra["note"]"#), "{e}");
    let shadow = HashMap::from([("file".to_owned(), r#""other.csv""#.to_owned())]);
    let (_, e) = kind(processing_config_to_json(short(shadow, 0.5)));
    assert!(e.to_string().contains("field of its own"), "{e}");
    let (_, e) = kind(processing_config_to_json(short(HashMap::new(), f64::NAN)));
    assert!(e.to_string().contains("imu.leverArm.x"), "{e}");
    let (name, _) = kind(processing_config_to_json(ProcessingConfig::Json {
        json: "[1]".into(),
    }));
    assert_eq!(name, "invalid_input");
}
