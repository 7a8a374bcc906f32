//! `svc containers`, `svc processings` and `svc webhooks endpoints` against the cloud
//! emulator started in the test process (on a runtime of its own, so that it keeps
//! serving while the child `svc` runs).

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use svc_core::cloud::{
    CloudClient, CloudConfig, Container, ContainerFileType, ContainerRegion, CreateContainerFile,
    CreateContainerRequest, ENV_VARS, ProcessingStatus, StartProcessingRequest,
};
use svc_core::transfer::{TransferOptions, Transfers, UploadJob};
use svc_emulator::{Emulator, EmulatorConfig};
use uuid::Uuid;

use crate::support::{Run, command, finish};

/// An identifier that nothing in the emulator has.
const UNKNOWN_ID: &str = "3fa85f64-5717-4562-b3fc-2c963f66afa6";

/// The cloud emulator on its own runtime, and an SDK client for setting up data (also
/// used by the `svc process` tests that need the emulator's state).
pub(crate) struct Cloud {
    emulator: Option<Emulator>,
    runtime: tokio::runtime::Runtime,
    pub(crate) client: CloudClient,
}

impl Cloud {
    pub(crate) fn start() -> Cloud {
        Cloud::with(EmulatorConfig {
            processing_time: Duration::from_millis(500),
            device: None,
            ..Default::default()
        })
    }

    pub(crate) fn with(config: EmulatorConfig) -> Cloud {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .unwrap();
        let emulator = runtime
            .block_on(Emulator::start(config))
            .expect("the emulator starts");
        let client = {
            let vars = env_of(&emulator);
            let config = CloudConfig::from_vars(|name| {
                vars.iter()
                    .find(|(k, _)| *k == name)
                    .map(|(_, v)| v.clone())
            })
            .unwrap();
            CloudClient::new(config).unwrap()
        };
        Cloud {
            emulator: Some(emulator),
            runtime,
            client,
        }
    }

    pub(crate) fn emulator(&self) -> &Emulator {
        self.emulator.as_ref().expect("running")
    }

    pub(crate) fn env(&self) -> Vec<(&'static str, String)> {
        env_of(self.emulator())
    }

    pub(crate) fn block_on<F: Future>(&self, future: F) -> F::Output {
        self.runtime.block_on(future)
    }

    /// Runs `svc ARGS` with the emulator's `SVC_*` variables.
    pub(crate) fn svc(&self, args: &[&str]) -> Run {
        self.svc_in(args, &self.env(), None)
    }

    /// Runs `svc ARGS` with exactly the `SVC_*` variables of `env`, optionally in `dir`;
    /// checks that the API secret appears nowhere in what it prints.
    pub(crate) fn svc_in(&self, args: &[&str], env: &[(&str, String)], dir: Option<&Path>) -> Run {
        let mut command = command(args);
        for name in ENV_VARS {
            command.env_remove(name);
        }
        for (name, value) in env {
            command.env(name, value);
        }
        if let Some(dir) = dir {
            command.current_dir(dir);
        }
        let run = finish(
            command.spawn().expect("svc starts"),
            Duration::from_secs(60),
            args,
        );
        let secret = &self.emulator().info().api_secret;
        for text in [&run.stdout, &run.stderr] {
            assert!(
                !text.contains(secret.as_str()),
                "the API secret was printed by svc {args:?}: {run:#?}"
            );
        }
        run
    }

    fn create_container(
        &self,
        metadata: &[(&str, &str)],
        files: Vec<CreateContainerFile>,
    ) -> Container {
        let metadata = (!metadata.is_empty()).then(|| {
            metadata
                .iter()
                .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
                .collect()
        });
        self.block_on(self.client.create_container(CreateContainerRequest {
            region: ContainerRegion::EuWest3,
            metadata,
            files,
        }))
        .unwrap()
    }

    /// A container holding the uploaded sample `rover.nmea`.
    fn uploaded_container(&self) -> Uuid {
        let local = repo_root().join("samples/rover.nmea");
        let size = std::fs::metadata(&local).unwrap().len();
        let container = self.create_container(
            &[],
            vec![CreateContainerFile {
                path: "rover.nmea".to_owned(),
                type_: ContainerFileType::Input,
                size: i64::try_from(size).unwrap(),
                metadata: None,
            }],
        );
        let file = &container.files[0];
        let job = UploadJob {
            local_path: local,
            container_path: file.path.clone(),
            size,
            upload_info: file
                .upload_info
                .clone()
                .expect("a pending file has its form"),
        };
        let transfers = Transfers::new(reqwest::Client::new(), TransferOptions::default());
        self.block_on(async { transfers.upload(vec![job]).wait().await })
            .unwrap();
        container.id
    }

    /// Starts a processing of `container`.
    fn start_processing(&self, container: Uuid) -> Uuid {
        let processing_json = json!({"type": "gnss", "mode": "kinematic"});
        let request = StartProcessingRequest {
            container_id: container,
            metadata: None,
            name: Some("cli test".to_owned()),
            processing_json: processing_json.as_object().unwrap().clone(),
        };
        self.block_on(self.client.start_processing(request))
            .unwrap()
            .id
    }

    /// Waits until a processing has left `pending` and `processing`.
    fn wait_until_ended(&self, id: Uuid) -> ProcessingStatus {
        let end = Instant::now() + Duration::from_secs(30);
        loop {
            let processing = self.block_on(self.client.get_processing(id)).unwrap();
            if !matches!(
                processing.status,
                ProcessingStatus::Pending | ProcessingStatus::Processing
            ) {
                return processing.status;
            }
            assert!(Instant::now() < end, "the processing did not end in time");
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// A processed processing of the sample.
    fn processed(&self) -> Uuid {
        let id = self.start_processing(self.uploaded_container());
        assert_eq!(self.wait_until_ended(id), ProcessingStatus::Processed);
        id
    }
}

impl Drop for Cloud {
    fn drop(&mut self) {
        if let Some(emulator) = self.emulator.take() {
            self.runtime.block_on(emulator.shutdown());
        }
    }
}

fn env_of(emulator: &Emulator) -> Vec<(&'static str, String)> {
    emulator.info().env().to_vec()
}

fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Every line of stdout, each parsed as one JSON object (JSON Lines).
fn lines(run: &Run) -> Vec<Value> {
    assert_eq!(run.code, 0, "{run:#?}");
    run.stdout
        .lines()
        .map(|line| {
            let value: Value = serde_json::from_str(line)
                .unwrap_or_else(|e| panic!("a line is JSON: {e}: {line:?}"));
            assert!(value.is_object(), "{line}");
            value
        })
        .collect()
}

fn ids(values: &[Value]) -> BTreeSet<String> {
    values
        .iter()
        .map(|v| v["id"].as_str().unwrap().to_owned())
        .collect()
}

#[test]
fn containers_list_every_page_get_and_delete() {
    let cloud = Cloud::start();
    let created: BTreeSet<String> = (0..12)
        .map(|i| {
            cloud
                .create_container(&[("n", &i.to_string())], Vec::new())
                .id
                .to_string()
        })
        .collect();

    // Pages of 5: three requests, one JSON object per line.
    let paged = lines(&cloud.svc(&["containers", "list", "--page-size", "5"]));
    assert_eq!(paged.len(), 12);
    assert_eq!(ids(&paged), created);
    let all = lines(&cloud.svc(&["containers", "list"]));
    assert_eq!(ids(&all), created);

    let id = created.first().unwrap().clone();
    let got = cloud.svc(&["containers", "get", &id]).json();
    assert_eq!(got["id"], id.as_str());
    assert_eq!(got["status"], "empty");
    let compact = cloud.svc(&["containers", "get", &id, "--json"]);
    assert_eq!(compact.stdout.trim_end().lines().count(), 1, "{compact:#?}");
    assert_eq!(compact.json()["id"], id.as_str());

    cloud.svc(&["containers", "delete", &id]).ok();
    cloud.svc(&["containers", "get", &id]).fails_with(7);
    cloud.svc(&["containers", "delete", &id]).fails_with(7);
    let after = lines(&cloud.svc(&["containers", "list", "--page-size", "100"]));
    assert_eq!(after.len(), 11);
    assert!(!ids(&after).contains(&id));

    cloud.svc(&["containers", "get", UNKNOWN_ID]).fails_with(7);
    cloud
        .svc(&["containers", "list", "--page-size", "0"])
        .fails_with(2);
}

#[test]
fn processings_get_errors_outputs_download_cancel_archive() {
    let cloud = Cloud::start();
    let id = cloud.processed();
    let id_text = id.to_string();

    let listed = lines(&cloud.svc(&["processings", "list", "--page-size", "1"]));
    assert_eq!(ids(&listed), BTreeSet::from([id_text.clone()]));

    let got = cloud.svc(&["processings", "get", &id_text]).json();
    assert_eq!(got["id"], id_text.as_str());
    assert_eq!(got["status"], "processed");
    assert_eq!(got["processingResult"], "succeeded");

    for error in lines(&cloud.svc(&["processings", "errors", &id_text])) {
        assert!(
            error["level"].is_string() && error["message"].is_string(),
            "{error}"
        );
    }

    let outputs = lines(&cloud.svc(&["processings", "outputs", &id_text]));
    let stored = cloud.emulator().stored_outputs(id);
    assert_eq!(stored.len(), 3, "the engine stores three outputs");
    let paths: BTreeSet<&str> = outputs
        .iter()
        .map(|o| o["path"].as_str().unwrap())
        .collect();
    let expected: BTreeSet<&str> = stored.iter().map(|(p, _)| p.as_str()).collect();
    assert_eq!(paths, expected);
    assert!(
        outputs
            .iter()
            .all(|o| o["url"].as_str().unwrap().starts_with("http"))
    );

    // --out DIR: every output byte for byte, and the paths written on stdout.
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("outputs");
    let run = cloud.svc_in(
        &[
            "processings",
            "download",
            &id_text,
            "--out",
            out.to_str().unwrap(),
        ],
        &cloud.env(),
        None,
    );
    assert_eq!(run.code, 0, "{run:#?}");
    let printed: BTreeSet<PathBuf> = run.stdout.lines().map(PathBuf::from).collect();
    let expected_paths: BTreeSet<PathBuf> = stored.iter().map(|(p, _)| out.join(p)).collect();
    assert_eq!(printed, expected_paths);
    for (path, bytes) in &stored {
        assert_eq!(&std::fs::read(out.join(path)).unwrap(), bytes, "{path}");
    }

    // The default folder: ./svc-output/<id>/.
    let work = tempfile::tempdir().unwrap();
    let run = cloud.svc_in(
        &["processings", "download", &id_text],
        &cloud.env(),
        Some(work.path()),
    );
    assert_eq!(run.code, 0, "{run:#?}");
    assert_eq!(run.stdout.lines().count(), 3, "{run:#?}");
    for (path, bytes) in &stored {
        let written = work.path().join("svc-output").join(&id_text).join(path);
        assert_eq!(&std::fs::read(&written).unwrap(), bytes, "{path}");
    }

    // A finished processing cannot be canceled: 409.
    cloud
        .svc(&["processings", "cancel", &id_text])
        .fails_with(4);

    let archived = cloud.svc(&["processings", "archive", &id_text]).json();
    assert_eq!(archived["status"], "archived");
    cloud
        .svc(&["processings", "outputs", &id_text])
        .fails_with(4);
    let empty = tempfile::tempdir().unwrap();
    cloud
        .svc_in(
            &[
                "processings",
                "download",
                &id_text,
                "--out",
                empty.path().to_str().unwrap(),
            ],
            &cloud.env(),
            None,
        )
        .fails_with(4);

    cloud.svc(&["processings", "get", UNKNOWN_ID]).fails_with(7);
    cloud
        .svc(&["processings", "errors", UNKNOWN_ID])
        .fails_with(7);
}

#[test]
fn cancel_a_running_processing() {
    let cloud = Cloud::with(EmulatorConfig {
        processing_time: Duration::from_secs(120),
        device: None,
        ..Default::default()
    });
    let container = cloud.uploaded_container();
    let id = cloud.start_processing(container).to_string();
    // Its container cannot be deleted while it runs.
    cloud
        .svc(&["containers", "delete", &container.to_string()])
        .fails_with(4);
    let canceled = cloud.svc(&["processings", "cancel", &id]).json();
    assert_eq!(canceled["id"], id.as_str());
    assert_eq!(canceled["status"], "canceled");
    cloud.svc(&["processings", "cancel", &id]).fails_with(4);
    cloud.svc(&["processings", "outputs", &id]).fails_with(4);
}

#[test]
fn webhook_endpoints_create_list_update_missed_delete() {
    let cloud = Cloud::with(EmulatorConfig {
        processing_time: Duration::from_millis(500),
        device: None,
        webhook_retry_base: Duration::from_millis(1),
        webhook_retry_cap: Duration::from_millis(5),
        webhook_timeout: Duration::from_millis(500),
        ..Default::default()
    });
    // Nothing listens there: every delivery fails and ends as a missed event.
    let dead_url = format!("http://{}/hook", crate::support::closed_address());

    let created = cloud
        .svc(&[
            "webhooks",
            "endpoints",
            "create",
            "--url",
            &dead_url,
            "--event",
            "cloud:processing-ended",
            "--metadata",
            "team=qa",
            "--metadata",
            "env=test",
        ])
        .json();
    let dead = created["id"].as_str().unwrap().to_owned();
    let secret = created["secret"].as_str().unwrap().to_owned();
    assert!(
        secret.starts_with("whsec_"),
        "create prints the signing secret"
    );
    assert_eq!(created["url"], dead_url.as_str());
    assert_eq!(created["enabled"], true);
    assert_eq!(
        created["enabledEventTypes"],
        json!(["cloud:processing-ended"])
    );
    assert_eq!(created["metadata"], json!({"team": "qa", "env": "test"}));

    let other = cloud
        .svc(&[
            "webhooks",
            "endpoints",
            "create",
            "--url",
            "http://127.0.0.1:9/other",
            "--event",
            "cloud:processing-progress",
            "--event",
            "cloud:processing-error",
            "--json",
        ])
        .json();
    let other = other["id"].as_str().unwrap().to_owned();

    // list: JSON Lines, secrets only when asked for.
    let listed = lines(&cloud.svc(&["webhooks", "endpoints", "list", "--page-size", "1"]));
    assert_eq!(ids(&listed), BTreeSet::from([dead.clone(), other.clone()]));
    assert!(
        listed.iter().all(|e| e.get("secret").is_none()),
        "{listed:?}"
    );
    let run = cloud.svc(&["webhooks", "endpoints", "list"]);
    assert!(!run.stdout.contains(&secret));
    let with_secrets = lines(&cloud.svc(&["webhooks", "endpoints", "list", "--show-secrets"]));
    assert!(with_secrets.iter().any(|e| e["secret"] == secret.as_str()));

    // update: disable, then enable with new event types and metadata.
    let disabled = cloud
        .svc(&["webhooks", "endpoints", "update", &other, "--disable"])
        .json();
    assert_eq!(disabled["enabled"], false);
    assert!(disabled.get("secret").is_none());
    assert_eq!(
        disabled["enabledEventTypes"],
        json!(["cloud:processing-progress", "cloud:processing-error"])
    );
    let updated = cloud
        .svc(&[
            "webhooks",
            "endpoints",
            "update",
            &other,
            "--enable",
            "--event",
            "cloud:processing-ended",
            "--metadata",
            "k=v",
            "--url",
            "http://127.0.0.1:9/moved",
        ])
        .json();
    assert_eq!(updated["enabled"], true);
    assert_eq!(
        updated["enabledEventTypes"],
        json!(["cloud:processing-ended"])
    );
    assert_eq!(updated["metadata"], json!({"k": "v"}));
    assert_eq!(updated["url"], "http://127.0.0.1:9/moved");
    let disabled = cloud
        .svc(&["webhooks", "endpoints", "update", &other, "--disable"])
        .json();
    assert_eq!(disabled["enabled"], false);

    // missed: the processing-ended event of a processing, after every retry failed.
    cloud.processed();
    let end = Instant::now() + Duration::from_secs(30);
    let missed = loop {
        let missed = lines(&cloud.svc(&["webhooks", "endpoints", "missed", &dead]));
        if !missed.is_empty() {
            break missed;
        }
        assert!(Instant::now() < end, "no missed event was recorded");
        std::thread::sleep(Duration::from_millis(200));
    };
    assert_eq!(missed[0]["eventType"], "cloud:processing-ended");
    assert_eq!(missed[0]["endpointMetadata"]["team"], "qa");
    // The disabled endpoint received (and missed) nothing.
    assert!(lines(&cloud.svc(&["webhooks", "endpoints", "missed", &other])).is_empty());

    // delete.
    cloud.svc(&["webhooks", "endpoints", "delete", &dead]).ok();
    cloud
        .svc(&["webhooks", "endpoints", "delete", &dead])
        .fails_with(7);
    cloud
        .svc(&["webhooks", "endpoints", "update", &dead, "--enable"])
        .fails_with(7);
    let left = lines(&cloud.svc(&["webhooks", "endpoints", "list"]));
    assert_eq!(ids(&left), BTreeSet::from([other.clone()]));

    // Usage errors: nothing to change, a bad KEY=VALUE, a key twice, no event.
    for args in [
        vec!["webhooks", "endpoints", "update", other.as_str()],
        vec![
            "webhooks",
            "endpoints",
            "update",
            &other,
            "--metadata",
            "novalue",
        ],
        vec![
            "webhooks",
            "endpoints",
            "update",
            &other,
            "--enable",
            "--disable",
        ],
        vec![
            "webhooks",
            "endpoints",
            "update",
            &other,
            "--metadata",
            "a=1",
            "--metadata",
            "a=2",
        ],
        vec!["webhooks", "endpoints", "create", "--url", &dead_url],
    ] {
        cloud.svc(&args).fails_with(2);
    }
    // Refused by the service: an unknown event type, an invalid URL (422).
    cloud
        .svc(&[
            "webhooks",
            "endpoints",
            "create",
            "--url",
            &dead_url,
            "--event",
            "nope",
        ])
        .fails_with(5);
    cloud
        .svc(&[
            "webhooks",
            "endpoints",
            "create",
            "--url",
            "not a url",
            "--event",
            "cloud:processing-ended",
        ])
        .fails_with(5);
}

#[test]
fn configuration_errors_bad_ids_and_no_secret_in_output() {
    let cloud = Cloud::start();

    // A missing variable: usage error naming it.
    let without_base: Vec<(&str, String)> = cloud
        .env()
        .into_iter()
        .filter(|(k, _)| *k != "SVC_BASE_URL")
        .collect();
    for args in [
        vec!["containers", "list"],
        vec!["processings", "get", UNKNOWN_ID],
        vec!["webhooks", "endpoints", "list"],
    ] {
        let run = cloud.svc_in(&args, &without_base, None);
        run.fails_with(2);
        assert!(run.stderr.contains("SVC_BASE_URL"), "{run:#?}");
    }

    // Identifiers that are not UUIDs: usage errors, before anything is sent.
    for args in [
        vec!["containers", "get", "not-a-uuid"],
        vec!["containers", "delete", "42"],
        vec!["processings", "get", "xyz"],
        vec!["processings", "download", "1234"],
        vec!["webhooks", "endpoints", "delete", "nope"],
        vec!["webhooks", "endpoints", "missed", "nope"],
    ] {
        let run = cloud.svc(&args);
        run.fails_with(2);
        assert!(run.stderr.contains("UUID"), "{run:#?}");
    }

    // A refused secret: an authentication failure (3) that does not quote it.
    let wrong_secret = "wrong-api-secret-7f3a9c";
    let mut env = cloud.env();
    for (k, v) in &mut env {
        if *k == "SVC_API_SECRET" {
            *v = wrong_secret.to_owned();
        }
    }
    let run = cloud.svc_in(&["containers", "list"], &env, None);
    run.fails_with(3);
    assert!(!run.stdout.contains(wrong_secret) && !run.stderr.contains(wrong_secret));

    // A known identity without the administrator role: 403, exit 3.
    let info = cloud.emulator().info();
    let mut env = cloud.env();
    for (k, v) in &mut env {
        match *k {
            "SVC_API_KEY" => *v = info.member_api_key.clone(),
            "SVC_API_SECRET" => *v = info.member_api_secret.clone(),
            _ => {}
        }
    }
    let run = cloud.svc_in(&["processings", "list"], &env, None);
    run.fails_with(3);
    assert!(!run.stderr.contains(&info.member_api_secret));

    // The help of create says that the signing secret is printed.
    let help = cloud.svc(&["webhooks", "endpoints", "create", "--help"]);
    assert!(help.stdout.contains("SIGNING SECRET"), "{help:#?}");
}

/// A pending file's upload form is a credential for its object: `containers get` and
/// `list` print its signature, credential, session token and policy (base64 JSON whose
/// conditions repeat the credential and the token) as `[redacted]`, and no other
/// field of the form carries them.
#[test]
fn upload_forms_are_printed_without_their_secrets() {
    let cloud = Cloud::start();
    let container = cloud.create_container(
        &[],
        vec![CreateContainerFile {
            path: "rover/day1.nmea".to_owned(),
            type_: ContainerFileType::Input,
            size: 10,
            metadata: None,
        }],
    );
    let form = container.files[0]
        .upload_info
        .clone()
        .expect("a pending file has its form");
    let secrets: Vec<&String> = [
        "X-Amz-Signature",
        "X-Amz-Credential",
        "X-Amz-Security-Token",
        "Policy",
    ]
    .iter()
    .map(|name| form.fields.get(*name).expect(name))
    .collect();
    let id = container.id.to_string();
    for run in [
        cloud.svc(&["containers", "get", &id]),
        cloud.svc(&["containers", "get", &id, "--json"]),
        cloud.svc(&["containers", "list"]),
    ] {
        assert_eq!(run.code, 0, "{run:#?}");
        for secret in &secrets {
            assert!(
                !run.stdout.contains(secret.as_str()),
                "{secret} printed: {}",
                run.stdout
            );
        }
        // The credential's access key alone (before its first `/`) is not shown either.
        let access_key = secrets[1].split('/').next().unwrap();
        assert!(!run.stdout.contains(access_key), "{}", run.stdout);
        // Pretty (`get`) or one object per line (`--json`, `list`).
        let shown: Value = serde_json::from_str(&run.stdout)
            .or_else(|_| serde_json::from_str(run.stdout.lines().next().unwrap_or_default()))
            .unwrap();
        let fields = &shown["files"][0]["uploadInfo"]["fields"];
        for name in [
            "X-Amz-Signature",
            "X-Amz-Credential",
            "X-Amz-Security-Token",
            "Policy",
        ] {
            assert_eq!(fields[name], "[redacted]", "{name}: {fields}");
        }
        assert_eq!(
            fields["key"],
            form.fields["key"].as_str(),
            "the other fields are shown"
        );
    }
    // Rust's `Debug` of the form (and of the container holding it) hides them too.
    let debug = format!("{container:?}");
    for secret in &secrets {
        assert!(
            !debug.contains(secret.as_str()),
            "{secret} in Debug: {debug}"
        );
    }
    assert!(debug.contains("[redacted]"));
}
