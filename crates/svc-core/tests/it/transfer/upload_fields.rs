//! The fields of an upload form as the service hands them out: the SDK sends every one,
//! unchanged and in order, those it does not know included. The emulator's storage adds
//! an extra field to its forms (`EmulatorConfig::upload_extra_fields`), signed into the
//! policy like the others: an upload succeeds only if it is sent unchanged.

use reqwest::Client;
use svc_core::transfer::{FileState, TransferError, Transfers, UPLOAD_REFUSED_REASON};
use svc_emulator::{EmulatorConfig, FaultConfig};
use svc_test_support::UPLOAD_FIELDS;

use super::{Rig, emulator_config, options, registered};

/// A field this SDK knows nothing of, with a value a careless form encoder would change.
const EXTRA: (&str, &str) = ("x-amz-meta-uploaded-by", "svc sdk tests/1+2=3 é");

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unknown_field_handed_out_is_sent_and_the_upload_succeeds() {
    let rig = Rig::with(EmulatorConfig {
        upload_extra_fields: vec![(EXTRA.0.to_owned(), EXTRA.1.to_owned())],
        ..emulator_config(FaultConfig::default())
    })
    .await;
    let dir = tempfile::tempdir().expect("temp dir");
    let (container, jobs) = registered(
        &rig,
        dir.path(),
        &[("rover/track.nmea", 4096), ("empty.bin", 0)],
    )
    .await;
    // The forms: the standard fields in the service's order, then the unknown one.
    for job in &jobs {
        let names: Vec<&str> = job.upload_info.fields.keys().map(String::as_str).collect();
        let mut expected = UPLOAD_FIELDS.to_vec();
        expected.push(EXTRA.0);
        assert_eq!(names, expected);
        assert_eq!(job.upload_info.fields[EXTRA.0], EXTRA.1);
    }

    // Without it storage refuses the form: the success below is the SDK sending it.
    let mut stripped = jobs[0].clone();
    stripped.upload_info.fields.shift_remove(EXTRA.0);
    let error = Transfers::new(Client::new(), options(3))
        .upload(vec![stripped])
        .wait()
        .await
        .expect_err("a form without the extra field is refused");
    match error.failures() {
        [
            TransferError::UploadRefused {
                reason,
                storage_message,
                ..
            },
        ] => {
            assert_eq!(*reason, UPLOAD_REFUSED_REASON);
            assert!(storage_message.contains(EXTRA.0), "{storage_message}");
        }
        other => panic!("expected UploadRefused, got {other:?}"),
    }
    rig.assert_all(&container, "pending").await;

    let report = Transfers::new(Client::new(), options(3))
        .upload(jobs)
        .wait()
        .await
        .expect("the forms as handed out upload");
    for file in &report.files {
        assert_eq!(
            (file.state, file.attempts),
            (FileState::Done, 1),
            "{file:?}"
        );
    }
    rig.assert_all(&container, "ready").await;
}
