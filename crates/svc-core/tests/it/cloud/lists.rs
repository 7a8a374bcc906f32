//! Lists: pages one by one, and streams over every page.

use std::collections::BTreeSet;

use super::proxy::{Proxy, proxied};
use super::{container_request, default_emulator, endpoint_request, metadata};
use futures::{StreamExt, TryStreamExt};
use svc_core::cloud::CloudClient;
use uuid::Uuid;

#[tokio::test]
async fn lists_are_streams_over_every_page() {
    let emu = default_emulator().await;
    let p = proxied(emu.info(), |_| {}).await;
    let client = &p.client;
    let created: BTreeSet<Uuid> = futures::stream::iter(0..23)
        .map(|i| {
            let client = client.clone();
            async move {
                client
                    .create_container(container_request(Some(metadata(&[("n", &i.to_string())]))))
                    .await
                    .map(|c| c.id)
            }
        })
        .buffer_unordered(6)
        .try_collect()
        .await
        .unwrap();
    assert_eq!(created.len(), 23);

    // Page by page.
    let mut paged = BTreeSet::new();
    for (page, expected) in [(0, 5), (1, 5), (2, 5), (3, 5), (4, 3), (5, 0)] {
        let list = client.list_containers_page(page, 5).await.unwrap();
        assert_eq!(list.num_items, 23);
        assert_eq!(list.containers.len(), expected, "page {page}");
        paged.extend(list.containers.iter().map(|c| c.id));
    }
    assert_eq!(paged, created);

    // The stream with the default page size: one request.
    let before = p.cloud.count("GET", "/api/v2/organizations");
    let streamed: Vec<Uuid> = client
        .list_containers()
        .map_ok(|c| c.id)
        .try_collect()
        .await
        .unwrap();
    assert_eq!(streamed.len(), 23);
    assert_eq!(streamed.iter().copied().collect::<BTreeSet<_>>(), created);
    assert_eq!(p.cloud.count("GET", "/api/v2/organizations"), before + 1);

    // With pages of 5: 5 requests, stopping at the short one.
    let mut config = client.config();
    config.page_size = 5;
    let small = CloudClient::new(config).unwrap();
    let before = p.cloud.count("GET", "/api/v2/organizations");
    let all = small.list_containers_all().await.unwrap();
    assert_eq!(all.iter().map(|c| c.id).collect::<BTreeSet<_>>(), created);
    assert_eq!(all.len(), 23, "no duplicate across pages");
    assert_eq!(p.cloud.count("GET", "/api/v2/organizations"), before + 5);

    // Webhook endpoints (a bare array, no total): pages until a short one.
    let notification = Proxy::start(&emu.info().notification_url).await;
    let mut config = small.config();
    config.notification_url = notification.url.clone();
    let small = CloudClient::new(config).unwrap();
    for i in 0..12 {
        small
            .create_webhook_endpoint(endpoint_request(&format!("https://hooks.example.com/{i}")))
            .await
            .unwrap();
    }
    let endpoints: Vec<_> = small.list_webhook_endpoints().try_collect().await.unwrap();
    assert_eq!(endpoints.len(), 12);
    assert_eq!(
        notification.count("GET", "/api/v2/organizations"),
        3,
        "5 + 5 + 2"
    );

    // The stream is 'static: it can move to another task.
    let handle = tokio::spawn(small.list_containers().try_collect::<Vec<_>>());
    assert_eq!(handle.await.unwrap().unwrap().len(), 23);
}
