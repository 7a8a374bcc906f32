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

/// The vendor's published cloud samples (Python and TypeScript) call the service in this
/// order, with this configuration: a token from the Keycloak realm's endpoint, a
/// container, its files added with their paths below the mission folder, one upload form
/// per file, the processing, polling until it ends, the output list and each output's
/// download. The rover session here was written by the vendor's own sbgECom library
/// (`tests/data/vendor-session.sbg`, see `tests/data/README.md`).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_vendor_samples_flow_processes_a_session_written_by_the_vendor_library() {
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/../..");
    let session = std::fs::read(format!("{root}/tests/data/vendor-session.sbg")).unwrap();
    // The unit's settings beside its session, as the unit's web interface exports them.
    let sidecar = serde_json::to_vec(&json!({
        "name": "demo", "mode": "normal",
        "settings": {"sensor": {"motionProfile": "automotive",
                                "leverArm": [0.3, -0.16, 0.26]}}
    }))
    .unwrap();
    // A Hatanaka-compressed base file: only its header tells its time.
    let line = |content: &str, label: &str| format!("{content:<60}{label}\n");
    let base = [
        line(
            "1.0                 COMPACT RINEX FORMAT",
            "CRINEX VERS   / TYPE",
        ),
        line(
            "RNX2CRX ver.4.0.7                       15-Jun-20 16:05",
            "CRINEX PROG / DATE",
        ),
        line(
            "     2.11           OBSERVATION DATA    M (MIXED)",
            "RINEX VERSION / TYPE",
        ),
        line("VP6050C1808200003   TWIVP6050_CONE  NONE", "ANT # / TYPE"),
        line(
            "  2020     6    15    15     0    0.0000000     GPS",
            "TIME OF FIRST OBS",
        ),
        line("", "END OF HEADER"),
    ]
    .concat()
    .into_bytes();
    let files: [(&str, Vec<u8>); 3] = [
        ("rover/Navsight-Auto-Demo.002", session),
        ("rover/Navsight-Auto-Demo.json", sidecar),
        ("base/sbgs167p.20d", base),
    ];

    let env = Env::start().await;
    let token = realm_token(&env, &env.info.api_secret).await;
    let token = token.ok()["access_token"].as_str().unwrap().to_owned();
    let container = env
        .call_as(
            Some(&token),
            reqwest::Method::POST,
            &env.cloud(&format!("/api/v2/organizations/{}/containers", env.org())),
            Some(&json!({"region": "eu-west-3"})),
        )
        .await;
    let container_id = container.ok()["id"].as_str().unwrap().to_owned();
    let listed: Vec<Value> = files
        .iter()
        .map(|(path, bytes)| json!({"path": path, "type": "input", "size": bytes.len()}))
        .collect();
    let added = env
        .call_as(
            Some(&token),
            reqwest::Method::POST,
            &env.cloud(&format!("/api/v2/containers/{container_id}/files")),
            Some(&json!({"files": listed})),
        )
        .await;
    let added = added.created().as_array().unwrap().clone();
    for (path, bytes) in &files {
        let file = added.iter().find(|f| f["path"] == *path).unwrap();
        let (status, body) = upload(&env.http, file, bytes.clone()).await;
        assert_eq!(status, 204, "{path}: {body}");
    }
    let config = svc_test_support::vendor_sample_config();
    let started = env
        .start_processing_raw(&json!({"containerId": container_id, "processingJson": config}))
        .await;
    let id = started.ok()["id"].as_str().unwrap().to_owned();
    let end = env.wait_end(&id).await;
    assert_eq!(end["status"], "processed", "{end}");
    assert_eq!(end["processingResult"], "succeeded", "{end}");
    assert_eq!(
        end["errorCount"],
        json!({"errors": 0, "warnings": 0}),
        "{end}"
    );
    assert_eq!(end["missionLength"], 30, "{end}");

    let mut downloaded = std::collections::BTreeMap::new();
    for output in env.outputs(&id).await {
        let url = output["url"].as_str().unwrap();
        // Downloads carry no token, as the samples fetch them.
        let bytes = reqwest::get(url).await.unwrap().bytes().await.unwrap();
        downloaded.insert(output["path"].as_str().unwrap().to_owned(), bytes.to_vec());
    }
    for path in [
        "export/export_sbet.sbet",
        "export/export_ascii.txt",
        "reports/json/json_report.json",
        "pdf_report.pdf",
    ] {
        assert!(
            downloaded.contains_key(path),
            "{path} in {:?}",
            downloaded.keys()
        );
    }
    // SBET at 200 Hz over the 30 s the library wrote, dated by its utcTime records
    // (15:20:00 UTC is 141618 s into the GPS week), placed where its ekfNav put the unit.
    let sbet = &downloaded["export/export_sbet.sbet"];
    assert_eq!(sbet.len(), 17 * 8 * 6001);
    let field = |record: usize, i: usize| {
        let at = record * 136 + i * 8;
        f64::from_le_bytes(sbet[at..at + 8].try_into().unwrap())
    };
    assert!((field(0, 0) - 141_618.0).abs() < 1e-6, "{}", field(0, 0));
    assert!(
        (field(6000, 0) - 141_648.0).abs() < 1e-6,
        "{}",
        field(6000, 0)
    );
    let (lat, lon) = (field(0, 1).to_degrees(), field(0, 2).to_degrees());
    let metres = ((lat - 48.9331) * 111_200.0).hypot((lon - 2.168) * 73_000.0);
    assert!(
        metres < 1.0,
        "{lat} {lon}: {metres} m from the session's first ekfNav"
    );
    // Heading from its ekfEuler (0.3 rad at the start).
    assert!((field(0, 9) - 0.3).abs() < 1e-3, "{}", field(0, 9));

    let report: Value =
        serde_json::from_slice(&downloaded["reports/json/json_report.json"]).unwrap();
    assert_eq!(report["startTime"], "2020-06-15T15:20:00.000Z", "{report}");
    assert_eq!(report["durationSeconds"], 30.0, "{report}");
    assert_eq!(report["leverArm"], json!([0.3, -0.16, 0.26]), "{report}");
    assert!(downloaded["pdf_report.pdf"].starts_with(b"%PDF-"));
    let inputs: Value = serde_json::from_slice(&downloaded["report.json"]).unwrap();
    let notes: Vec<&Value> = inputs["inputFiles"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| &f["notes"])
        .collect();
    assert_eq!(inputs["inputFiles"][0]["validFixes"], 601, "{inputs}");
    assert_eq!(
        notes[1],
        &json!(["the rover's settings: settings.sensor.leverArm applied"])
    );
    assert_eq!(
        notes[2],
        &json!([
            "base station observations from 2020-06-15T14:59:42.000Z to an end it does not say"
        ])
    );

    env.call_as(
        Some(&token),
        reqwest::Method::DELETE,
        &env.cloud(&format!("/api/v2/containers/{container_id}")),
        None,
    )
    .await
    .ok();
}
