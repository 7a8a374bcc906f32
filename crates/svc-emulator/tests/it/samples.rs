//! The repository's sample dataset (`samples/`) processes cleanly: the README's main job
//! runs on it.

use serde_json::{Value, json};

use crate::common::*;

#[tokio::test]
async fn the_sample_dataset_processes_without_warnings() {
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/../../samples");
    let nmea = std::fs::read(format!("{root}/rover.nmea")).unwrap();
    let imu = std::fs::read(format!("{root}/imu.csv")).unwrap();
    let config: Value =
        serde_json::from_slice(&std::fs::read(format!("{root}/processing.json")).unwrap()).unwrap();
    assert!(config.is_object());

    let env = Env::start().await;
    let container = env
        .create_container(json!([
            {"path": "rover.nmea", "type": "input", "size": nmea.len()},
            {"path": "imu.csv", "type": "input", "size": imu.len()},
        ]))
        .await;
    for (i, bytes) in [nmea, imu].into_iter().enumerate() {
        let (status, body) = upload(&env.http, &container["files"][i], bytes).await;
        assert_eq!(status, 204, "{body}");
    }
    let id = container["id"].as_str().unwrap();
    let started = env
        .start_processing_raw(&json!({"containerId": id, "processingJson": config}))
        .await;
    let pid = started.ok()["id"].as_str().unwrap().to_owned();
    let end = env.wait_end(&pid).await;
    assert_eq!(end["processingResult"], "succeeded", "{end}");
    assert_eq!(
        end["errorCount"],
        json!({"errors": 0, "warnings": 0}),
        "{end}"
    );
    assert_eq!(end["missionLength"], 120, "a two-minute drive");
    // A drive from the Hôtel de Ville, Paris: France has no region in the boundaries data.
    assert_eq!(end["missionLocationCountry"], "FR", "{end}");
    assert_eq!(end["missionLocationRegion"], Value::Null, "{end}");
    assert_eq!(end["missionLocationPlace"], "Paris", "{end}");

    let outputs = env.emu.stored_outputs(pid.parse().unwrap());
    let csv = String::from_utf8(
        outputs
            .iter()
            .find(|(p, _)| p == "trajectory.csv")
            .unwrap()
            .1
            .clone(),
    )
    .unwrap();
    assert_eq!(csv.lines().count(), 122, "header + 121 fixes at 1 Hz");
    let report: Value =
        serde_json::from_slice(&outputs.iter().find(|(p, _)| p == "report.json").unwrap().1)
            .unwrap();
    assert_eq!(
        report["missionLocation"],
        json!({"country": "FR", "region": null, "place": "Paris"})
    );
}
