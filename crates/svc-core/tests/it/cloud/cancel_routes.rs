//! Cancelling at the route the service serves: the specification's
//! (`POST /processings/{id}`) or the vendor collection's (`/processings/{id}/cancel`),
//! against a service serving only one of them, and a processing that does not exist.

use super::{container_request, processing_request};
use crate::common::{client_for, emulator};
use svc_core::cloud::ProcessingStatus;
use svc_emulator::EmulatorConfig;
use uuid::Uuid;

#[tokio::test]
async fn a_processing_is_canceled_whichever_route_the_service_serves() {
    for missing in [
        vec![],
        vec!["cancelProcessing".to_owned()],
        vec!["cancelProcessingByCancelPath".to_owned()],
    ] {
        let emu = emulator(EmulatorConfig {
            processing_time: std::time::Duration::from_secs(60),
            missing_operations: missing.clone(),
            ..EmulatorConfig::default()
        })
        .await;
        let client = client_for(emu.info());
        for _ in 0..2 {
            // Twice: the second uses the route learned by the first.
            let container = client
                .create_container(container_request(None))
                .await
                .unwrap();
            let started = client
                .start_processing(processing_request(container.id))
                .await
                .unwrap();
            client
                .cancel_processing(started.id)
                .await
                .unwrap_or_else(|e| panic!("without {missing:?}: {e}"));
            let p = client.get_processing(started.id).await.unwrap();
            assert_eq!(p.status, ProcessingStatus::Canceled, "without {missing:?}");
            // Canceled: a state conflict, not a missing route.
            let e = client.cancel_processing(started.id).await.unwrap_err();
            assert_eq!(e.status(), Some(409), "without {missing:?}: {e}");
        }
        // No such processing: 404 on both routes, reported as such.
        let e = client.cancel_processing(Uuid::new_v4()).await.unwrap_err();
        assert_eq!(e.status(), Some(404), "without {missing:?}: {e}");
    }
}
