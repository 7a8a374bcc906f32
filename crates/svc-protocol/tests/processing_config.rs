//! The processing configuration, typed: the vendor's form and the project's shorthand
//! read, unknown fields and values kept, wrong types and missing parts named by field.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use serde_json::{Value, json};
use svc_protocol::processing_config::{ConfigError, ProcessingConfig};

/// The configuration the vendor's published samples submit.
fn vendor() -> Value {
    json!({"version": "1.0",
     "project": {"name": "Navsight demo", "type": "sbgECom", "path": "rover/"},
     "processing": {"motionProfile": "automotive", "type": "insSingle",
                    "bases": [{"positionMode": "published", "antenna": {"type": "TWIVP6050_CONE  NONE"},
                               "data": ["base/sbgs167p.20d"]}]},
     "exports": [{"name": "Export SBET", "profile": "SBET: 200Hz", "outputDir": "export"},
                 {"name": "Export ASCII", "profile": "ASCII: INS at 200Hz", "outputDir": "export"}],
     "reports": [{"name": "JSON report", "template": "Minimal JSON", "outputDir": "reports/json"},
                 {"name": "PDF report", "template": "Full PDF"}]})
}

fn error_of(value: &Value) -> ConfigError {
    ProcessingConfig::from_value(value).expect_err("refused")
}

#[test]
fn the_vendors_configuration_is_read_whole() {
    let config = ProcessingConfig::from_value(&vendor()).expect("read");
    let ProcessingConfig::Project(project) = &config else {
        panic!("the vendor's form: {config:?}")
    };
    assert_eq!(project.project.kind, "sbgECom");
    assert_eq!(project.processing.kind, "insSingle");
    assert_eq!(
        project.processing.motion_profile.as_deref(),
        Some("automotive")
    );
    assert_eq!(project.exports[0].profile, "SBET: 200Hz");
    assert_eq!(project.reports[1].template, "Full PDF");
    assert_eq!(project.reports[1].output_dir, None);
    let antenna = project.processing.bases[0].antenna.as_ref().unwrap();
    assert_eq!(antenna.kind.as_deref(), Some("TWIVP6050_CONE  NONE"));
    assert_eq!(config.input_paths(), ["rover/", "base/sbgs167p.20d"]);
    // Written back, it is what was read (absent optional fields stay absent).
    assert_eq!(serde_json::to_value(project).unwrap(), vendor());
}

#[test]
fn unknown_fields_and_values_are_kept() {
    let mut value = vendor();
    value["processing"]["motionProfile"] = json!("hovercraft");
    value["processing"]["gnssOptions"] = json!({"elevationMask": 12});
    value["futureSection"] = json!([1, 2]);
    value["exports"][0]["rate"] = json!(50);
    let ProcessingConfig::Project(project) = ProcessingConfig::from_value(&value).unwrap() else {
        panic!("the vendor's form")
    };
    assert_eq!(
        project.processing.motion_profile.as_deref(),
        Some("hovercraft")
    );
    assert_eq!(
        project.processing.other["gnssOptions"],
        json!({"elevationMask": 12})
    );
    assert_eq!(project.other["futureSection"], json!([1, 2]));
    assert_eq!(project.exports[0].other["rate"], 50);
    assert_eq!(serde_json::to_value(&project).unwrap(), value);
}

type Change = fn(&mut Value);

#[test]
fn wrong_types_and_missing_parts_name_their_field() {
    let cases: [(&str, Change, &str); 8] = [
        (
            "project.path",
            |v| v["project"]["path"] = json!(7),
            "invalid type",
        ),
        (
            "processing.type",
            |v| {
                v["processing"].as_object_mut().unwrap().remove("type");
            },
            "missing",
        ),
        (
            "version",
            |v| {
                v.as_object_mut().unwrap().remove("version");
            },
            "missing",
        ),
        (
            "exports[1].profile",
            |v| {
                v["exports"][1].as_object_mut().unwrap().remove("profile");
            },
            "missing",
        ),
        (
            "reports[0].template",
            |v| v["reports"][0]["template"] = json!(null),
            "invalid type",
        ),
        (
            "processing.bases[0].data[1]",
            |v| v["processing"]["bases"][0]["data"] = json!(["base/a.20o", 3]),
            "invalid type",
        ),
        (
            "processing.bases[0].data[0]",
            |v| v["processing"]["bases"][0]["data"] = json!(["/etc/passwd"]),
            "not a path among the input files",
        ),
        (
            "project.path",
            |v| v["project"]["path"] = json!("../rover/"),
            "not a path among the input files",
        ),
    ];
    for (field, change, reason) in cases {
        let mut value = vendor();
        change(&mut value);
        let e = error_of(&value);
        assert_eq!(e.field, field, "{e}");
        assert!(e.reason.contains(reason), "{field}: {e}");
        assert!(
            e.to_string()
                .starts_with(&format!("processing configuration: {field}: ")),
            "{e}"
        );
    }
    assert_eq!(error_of(&json!([1])).field, ".");
}

#[test]
fn the_shorthand_is_read_and_checked() {
    let sample: Value =
        serde_json::from_str(include_str!("../../../samples/processing.json")).unwrap();
    let config = ProcessingConfig::from_value(&sample).expect("the project's sample");
    let ProcessingConfig::Shorthand(short) = &config else {
        panic!("the shorthand: {config:?}")
    };
    assert_eq!(short.mode.as_deref(), Some("kinematic"));
    assert_eq!(
        short.imu.as_ref().unwrap().lever_arm,
        Some([0.12, 0.0, -1.5])
    );
    assert_eq!(config.input_paths(), ["imu.csv"]);

    // Open: unknown modes and fields are the engine's to judge.
    let open = ProcessingConfig::from_value(&json!({"mode": "nonsense", "bogus": 1})).unwrap();
    let ProcessingConfig::Shorthand(open) = open else {
        panic!("the shorthand")
    };
    assert_eq!(open.other["bogus"], 1);

    for (value, field) in [
        (json!({"imu": {"leverArm": [1.0, 2.0]}}), "imu.leverArm"),
        (
            json!({"gnss": {"elevationMaskDegrees": "ten"}}),
            "gnss.elevationMaskDegrees",
        ),
        (json!({"outputs": {"csv": "yes"}}), "outputs.csv"),
        (json!({"imu": {"file": "/imu.csv"}}), "imu.file"),
    ] {
        let e = error_of(&value);
        assert_eq!(e.field, field, "{e}");
    }
}
