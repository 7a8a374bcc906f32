//! The emulator's random fault injection: retried where safe, never a duplicate
//! creation.

use std::collections::BTreeSet;
use std::time::Duration;

use super::{container_request, metadata};
use crate::common::{client_for, emulator};
use futures::StreamExt;
use svc_core::cloud::{CloudError, RetryHint};
use svc_emulator::{EmulatorConfig, FaultConfig};
use uuid::Uuid;

#[tokio::test]
async fn injected_faults_are_retried_where_safe() {
    let emu = emulator(EmulatorConfig {
        faults: FaultConfig {
            rate: 0.2,
            delay: Duration::from_millis(20),
            ..FaultConfig::default()
        },
        ..EmulatorConfig::default()
    })
    .await;
    let client = client_for(emu.info());

    // Creations: a 500 before the handler creates nothing; a cut answer comes after it.
    // Neither is repeated by the client; both are reported as retryable.
    let (mut created, mut cut, mut failed) = (BTreeSet::new(), BTreeSet::new(), 0);
    let mut n = 0;
    while (n < 30 || cut.is_empty()) && n < 300 {
        n += 1;
        let request = container_request(Some(metadata(&[("n", &n.to_string())])));
        match client.create_container(request).await {
            Ok(_) => {
                created.insert(n);
            }
            Err(e) => {
                assert_eq!(e.retry_hint(), RetryHint::Transient, "{e:?}");
                match &e {
                    CloudError::Transport { kind, .. } => {
                        assert!(kind.may_have_reached_service(), "{e:?}");
                        cut.insert(n);
                    }
                    CloudError::Api { status: 500, .. } => failed += 1,
                    other => panic!("unexpected {other:?}"),
                }
            }
        }
    }
    assert!(!cut.is_empty(), "no cut answer in {n} creations");

    // Reads are retried: every one succeeds.
    let all = client.list_containers_all().await.unwrap();
    let mut seen: Vec<usize> = all
        .iter()
        .map(|c| c.metadata.as_ref().unwrap()["n"].parse().unwrap())
        .collect();
    seen.sort_unstable();
    let expected: Vec<usize> = created.union(&cut).copied().collect();
    assert_eq!(
        seen, expected,
        "each creation made at most one container: the answered ones and the cut ones"
    );
    println!(
        "{n} creations: {} answered, {} cut, {failed} failed",
        created.len(),
        cut.len()
    );

    let ids: Vec<Uuid> = all.iter().map(|c| c.id).collect();
    let results: Vec<_> = futures::stream::iter(ids.iter().copied().cycle().take(60))
        .map(|id| {
            let client = client.clone();
            async move { client.get_container(id).await }
        })
        .buffer_unordered(8)
        .collect()
        .await;
    assert!(results.iter().all(Result::is_ok), "{results:?}");
    for _ in 0..10 {
        client.server_info().await.unwrap();
        client.list_processings_page(0, 10).await.unwrap();
    }
}
