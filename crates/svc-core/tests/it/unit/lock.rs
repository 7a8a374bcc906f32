//! Scenario 5: the lock between two sessions, and its expiry when idle.

use std::time::{Duration, Instant};

use super::{Link, Rig, config, poll};
use ins_device_api::enums::UserName;
use serde_json::json;
use svc_core::unit::{ApplyOptions, UnitError};
use svc_emulator::device::DeviceConfig;

over_links!(lock_between_two_sessions, lock_expires_when_idle);

async fn lock_between_two_sessions(link: Link) {
    let rig = Rig::start(link, config(&[])).await;
    let a = rig.login(UserName::Setup, "").await;
    let b = rig.login(UserName::Setup, "").await;
    let write = |n: u32| json!({"oem": {"label": format!("write {n}")}});

    a.lock().await.unwrap();
    a.lock().await.expect("locking again nests");
    assert!(a.holds_lock() && !b.holds_lock());
    let e = b.write(&write(1), false).await.unwrap_err();
    assert_eq!(e.status(), Some(409), "{link:?}: {e}");
    assert!(!e.is_retryable());
    match &e {
        UnitError::Api { title, detail, .. } => {
            assert!(!title.is_empty(), "{e:?}");
            assert!(
                detail.contains("another user is already editing the settings"),
                "{e:?}"
            );
        }
        other => panic!("{other:?}"),
    }
    let e = b
        .write_node("oem/label", &json!("b"), false)
        .await
        .unwrap_err();
    assert_eq!(e.status(), Some(409), "{e}");
    assert_eq!(b.lock().await.unwrap_err().status(), Some(409));
    // B holds no lock: giving one back is a mistake, said before anything is sent.
    let sent = rig.sent();
    let e = b.unlock().await.unwrap_err();
    assert!(matches!(e, UnitError::InvalidRequest { .. }), "{e:?}");
    assert_eq!(rig.sent(), sent);
    let anonymous = rig.session().await;
    let e = anonymous.write(&write(2), false).await.unwrap_err();
    assert_eq!(e.status(), Some(409), "the default user too: {e}");
    // Every kind of settings write.
    let tree = rig.tree();
    assert_eq!(
        b.import(&tree, false).await.unwrap_err().status(),
        Some(409)
    );
    assert_eq!(
        b.restore_defaults(false).await.unwrap_err().status(),
        Some(409)
    );
    let e = b.write(&write(2), true).await.unwrap_err();
    assert_eq!(e.status(), Some(409), "checkOnly too: {e}");
    let e = b
        .apply_wanted(&write(2), ApplyOptions::default())
        .await
        .unwrap_err();
    assert_eq!(e.status(), Some(409), "{e}");
    // Reading is not refused.
    b.settings().await.unwrap();
    // The holder writes.
    a.write(&write(3), false).await.unwrap();
    assert_eq!(rig.tree()["oem"]["label"], "write 3");

    // The inner unlock gives back the inner hold only: still locked.
    a.unlock().await.unwrap();
    assert!(a.holds_lock());
    assert_eq!(
        b.write(&write(4), false).await.unwrap_err().status(),
        Some(409)
    );
    // apply_wanted with `lock` inside a held lock neither takes nor releases it.
    let report = a
        .apply_wanted(
            &write(7),
            ApplyOptions {
                lock: true,
                ..ApplyOptions::default()
            },
        )
        .await
        .unwrap();
    assert!(report.written);
    assert!(a.holds_lock());
    assert_eq!(
        b.write(&write(4), false).await.unwrap_err().status(),
        Some(409),
        "the apply inside the held lock released it"
    );
    a.unlock().await.unwrap();
    assert!(!a.holds_lock());
    let e = a.unlock().await.unwrap_err();
    assert!(matches!(e, UnitError::InvalidRequest { .. }), "{e:?}");
    b.write(&write(4), false).await.unwrap();
    assert_eq!(rig.tree()["oem"]["label"], "write 4");

    // A logout ends the lock it held.
    b.lock().await.unwrap();
    assert_eq!(
        a.write(&write(5), false).await.unwrap_err().status(),
        Some(409)
    );
    b.logout().await.unwrap();
    assert!(!b.holds_lock());
    a.write(&write(6), false).await.unwrap();
    assert_eq!(rig.tree()["oem"]["label"], "write 6");
}

async fn lock_expires_when_idle(link: Link) {
    // Long enough that a loaded 2-core machine never leaves the holder idle that long
    // between two of its requests (it failed once at 500 ms under load).
    let idle = Duration::from_millis(1500);
    let rig = Rig::start(
        link,
        DeviceConfig {
            lock_idle: idle,
            ..config(&[])
        },
    )
    .await;
    let a = rig.login(UserName::Setup, "").await;
    let b = rig.login(UserName::Setup, "").await;

    // The holder's requests keep the lock alive past `lock_idle`.
    a.lock().await.unwrap();
    let start = Instant::now();
    while start.elapsed() < idle * 2 {
        a.info().await.unwrap();
        tokio::time::sleep(Duration::from_millis(40)).await;
    }
    let e = b
        .write_node("oem/label", &json!("b"), false)
        .await
        .unwrap_err();
    assert_eq!(e.status(), Some(409), "the lock is alive: {e}");

    // Left idle, it ends after `lock_idle`.
    let locked_at = Instant::now();
    a.lock().await.unwrap();
    let freed = poll(Duration::from_secs(5), "the idle lock ends", || async {
        match b.write_node("oem/label", &json!("b"), false).await {
            Ok(_) => Some(Instant::now()),
            Err(e) => {
                assert_eq!(e.status(), Some(409), "{e}");
                None
            }
        }
    })
    .await;
    assert!(
        freed.duration_since(locked_at) >= idle,
        "the lock ended after {:?}",
        freed.duration_since(locked_at)
    );
    assert_eq!(rig.tree()["oem"]["label"], "b");
    // The former holder has no lock any more: B can take it.
    b.lock().await.unwrap();
    assert_eq!(
        a.write_node("oem/label", &json!("a"), false)
            .await
            .unwrap_err()
            .status(),
        Some(409)
    );
}
