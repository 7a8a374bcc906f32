//! Scenario 7: `apply_wanted` — a wanted tree applied as a minimal patch, and a unit
//! that acknowledges a write without applying it.

use std::collections::BTreeSet;
use std::sync::Arc;
use std::time::Duration;

use super::{Link, Rig, config, password_of, paths, set_of};
use ins_device_api::enums::UserName;
use serde_json::{Value, json};
use svc_core::unit::{ApplyOptions, Exchange, ExchangeFuture, ExchangeRequest, Unit, UnitError};

over_links!(apply_wanted_tree);

async fn apply_wanted_tree(link: Link) {
    let rig = Rig::start(link, config(&[])).await;
    let unit = rig.login(UserName::Setup, "").await;
    let original = rig.tree();

    let wanted = json!({
        "aiding": {"gnss1": {"leverArmPrimary": [0.1, 0.0, -1.2], "model": original["aiding"]["gnss1"]["model"]}},
        "output": {"comA": {"messages": {"imuShort": "10ms", "status": original["output"]["comA"]["messages"]["status"]}}},
        "network": {"ntp": {"enabled": true}},
        "localParam": {"latitude": 0},
    });
    let changes = set_of(&[
        "aiding/gnss1/leverArmPrimary",
        "output/comA/messages/imuShort",
        "network/ntp/enabled",
    ]);

    // check_only: the changes are listed, nothing is written.
    let report = unit
        .apply_wanted(
            &wanted,
            ApplyOptions {
                check_only: true,
                ..ApplyOptions::default()
            },
        )
        .await
        .unwrap();
    assert_eq!(
        report.changed.iter().cloned().collect::<BTreeSet<_>>(),
        changes
    );
    assert_eq!(report.changed.len(), 3);
    assert!(!report.written);
    assert!(
        report.need_reboot,
        "the unit's checkOnly answer: network needs a reboot"
    );
    assert_eq!(rig.tree(), original, "check_only changed nothing");

    // Applied: exactly those three nodes; `network` needs a reboot.
    let report = unit
        .apply_wanted(&wanted, ApplyOptions::default())
        .await
        .unwrap();
    assert_eq!(
        report.changed.iter().cloned().collect::<BTreeSet<_>>(),
        changes
    );
    assert_eq!(report.changed.len(), 3);
    assert!(report.need_reboot);
    assert!(report.written);
    let after = rig.tree();
    assert_eq!(
        after["aiding"]["gnss1"]["leverArmPrimary"],
        json!([0.1, 0.0, -1.2])
    );
    assert_eq!(after["output"]["comA"]["messages"]["imuShort"], "10ms");
    assert_eq!(after["network"]["ntp"]["enabled"], true);
    let changed_paths = svc_core::settings::diff(&original, &after);
    assert_eq!(
        changed_paths
            .changed
            .iter()
            .map(|p| p.as_str().to_owned())
            .collect::<BTreeSet<_>>(),
        changes,
        "nothing else changed"
    );

    // Again: nothing to do, nothing written.
    let report = unit
        .apply_wanted(&wanted, ApplyOptions::default())
        .await
        .unwrap();
    assert!(report.changed.is_empty(), "{report:?}");
    assert!(!report.written);
    assert!(!report.need_reboot);

    // `1` and `1.0` of a number node are the same value.
    let numbers = json!({
        "insFilter": {"validityThresholds": {"heading": 1}},
        "aiding": {"odometer": {"gain": 4096}},
        "mechanicalSetup": {"leverArms": {"cog": [0, 0, 0]}},
    });
    assert_eq!(
        original["insFilter"]["validityThresholds"]["heading"],
        json!(1.0)
    );
    let report = unit
        .apply_wanted(&numbers, ApplyOptions::default())
        .await
        .unwrap();
    assert!(report.changed.is_empty(), "{report:?}");
    assert!(!report.written);
    assert_eq!(rig.tree(), after);

    // With the lock: applied, and the lock released afterwards.
    let wanted = json!({"localParam": {"height": 42.5}, "oem": {"label": "locked apply"}});
    let report = unit
        .apply_wanted(
            &wanted,
            ApplyOptions {
                lock: true,
                ..ApplyOptions::default()
            },
        )
        .await
        .unwrap();
    assert_eq!(
        report.changed.iter().cloned().collect::<BTreeSet<_>>(),
        set_of(&["localParam/height", "oem/label"])
    );
    assert!(report.written);
    assert!(!report.need_reboot);
    let other = rig.login(UserName::Setup, "").await;
    other
        .write_node("oem/label", &json!("other session"), false)
        .await
        .expect("the lock was released");
    assert_eq!(rig.tree()["localParam"]["height"], json!(42.5));

    // While another session holds the lock: 409, nothing applied.
    other.lock().await.unwrap();
    let before = rig.tree();
    let e = unit
        .apply_wanted(
            &json!({"localParam": {"height": 1.5}}),
            ApplyOptions::default(),
        )
        .await
        .unwrap_err();
    assert_eq!(e.status(), Some(409), "{e}");
    let e = unit
        .apply_wanted(
            &json!({"localParam": {"height": 1.5}}),
            ApplyOptions {
                lock: true,
                ..ApplyOptions::default()
            },
        )
        .await
        .unwrap_err();
    assert_eq!(e.status(), Some(409), "{e}");
    assert_eq!(rig.tree(), before);
    other.unlock().await.unwrap();

    // An invalid wanted value: the unit's 422, nothing applied.
    let e = unit
        .apply_wanted(
            &json!({"output": {"comA": {"messages": {"imuShort": "3ms", "ekfNav": "10ms"}}}}),
            ApplyOptions::default(),
        )
        .await
        .unwrap_err();
    assert_eq!(e.status(), Some(422), "{e}");
    assert_eq!(paths(&e), set_of(&["output/comA/messages/imuShort"]));
    assert_eq!(rig.tree(), before);
}

/// A unit that acknowledges a write without applying it: `apply_wanted` does not trust
/// the 200 but reads the tree back, and names every node that is still not as wanted.
#[tokio::test]
async fn apply_wanted_reports_nodes_the_read_back_does_not_show() {
    /// One request as the fake saw it.
    #[derive(Clone)]
    struct Seen {
        method: String,
        path: String,
        query: String,
        body: Option<Value>,
    }
    /// Answers every write with the unit's success body, and every read with the tree
    /// it started with; records each request.
    struct Stale {
        tree: Value,
        seen: std::sync::Mutex<Vec<Seen>>,
    }
    impl Exchange for Stale {
        fn exchange(&self, request: ExchangeRequest) -> ExchangeFuture<'_> {
            Box::pin(async move {
                let body = request
                    .body
                    .as_deref()
                    .map(|b| serde_json::from_slice::<Value>(b).expect("a JSON body"));
                let method = request.method.as_str().to_owned();
                self.seen.lock().unwrap().push(Seen {
                    method: method.clone(),
                    path: request.path.clone(),
                    query: request.query.clone(),
                    body,
                });
                let body = match (method.as_str(), request.path.as_str()) {
                    ("GET", "/api/v1/settings") => serde_json::to_vec(&self.tree).unwrap(),
                    // updateSettings' WriteResult, for checkOnly and the real write alike.
                    ("POST", "/api/v1/settings") => {
                        br#"{"title":"request successful","needReboot":false}"#.to_vec()
                    }
                    _ => return Err(format!("the fake has no {method} {}", request.path).into()),
                };
                Ok(svc_core::unit::ExchangeReply { status: 200, body })
            })
        }
    }

    let original = json!({
        "oem": {"label": "van"},
        "localParam": {"height": 10.0, "latitude": 48.5, "longitude": 2.25},
    });
    let stale = Arc::new(Stale {
        tree: original.clone(),
        seen: std::sync::Mutex::new(Vec::new()),
    });
    let unit = Unit::over(stale.clone(), "stale".into());

    // Two nodes change; `latitude` is wanted as it already is and must not be reported.
    let wanted = json!({
        "oem": {"label": "stale"},
        "localParam": {"height": 42.5, "latitude": 48.5},
    });
    let e = unit
        .apply_wanted(&wanted, ApplyOptions::default())
        .await
        .expect_err("the read-back still shows the original tree");
    let UnitError::NotApplied { paths } = &e else {
        panic!("expected NotApplied, got {e:?}");
    };
    let mut paths = paths.clone();
    paths.sort();
    assert_eq!(paths, ["localParam/height", "oem/label"], "{e}");
    assert!(e.to_string().contains("oem/label"), "{e}");

    // Read, validate, write, read back: the same minimal patch both times, and the
    // write really happened (checkOnly=false) before the unit was found stale.
    let patch = json!({"localParam": {"height": 42.5}, "oem": {"label": "stale"}});
    let seen = stale.seen.lock().unwrap().clone();
    let steps: Vec<(&str, &str, &str)> = seen
        .iter()
        .map(|s| (s.method.as_str(), s.path.as_str(), s.query.as_str()))
        .collect();
    assert_eq!(
        steps,
        [
            ("GET", "/api/v1/settings", ""),
            ("POST", "/api/v1/settings", "checkOnly=true"),
            ("POST", "/api/v1/settings", "checkOnly=false"),
            ("GET", "/api/v1/settings", ""),
        ]
    );
    assert_eq!(seen[0].body, None);
    assert_eq!(seen[1].body.as_ref(), Some(&patch));
    assert_eq!(seen[2].body.as_ref(), Some(&patch));
    assert_eq!(seen[3].body, None);
}

/// The answer to `apply_wanted`'s check-only write is lost (on any link: here the
/// link itself gives up at once): the check, which applies nothing, is sent again and
/// the apply goes on; the real write is sent once.
#[tokio::test]
async fn apply_wanted_checks_again_when_the_check_answer_is_lost() {
    /// A unit whose tree takes writes, and which loses the answer to the first
    /// check-only write.
    struct Lossy {
        tree: std::sync::Mutex<Value>,
        seen: std::sync::Mutex<Vec<String>>,
    }
    impl Exchange for Lossy {
        fn exchange(&self, request: ExchangeRequest) -> ExchangeFuture<'_> {
            Box::pin(async move {
                let step = format!("{} {}", request.method, request.query);
                let checks = {
                    let mut seen = self.seen.lock().unwrap();
                    seen.push(step.clone());
                    seen.iter().filter(|s| s.contains("checkOnly=true")).count()
                };
                let written = br#"{"title":"request successful","needReboot":false}"#.to_vec();
                let body = match (request.method.as_str(), request.query.as_str()) {
                    ("GET", _) => serde_json::to_vec(&*self.tree.lock().unwrap()).unwrap(),
                    ("POST", "checkOnly=true") if checks == 1 => {
                        return Err(svc_core::unit::ExchangeError::no_answer(
                            "no answer (silent for 3s)",
                        ));
                    }
                    ("POST", "checkOnly=true") => written,
                    ("POST", _) => {
                        let patch: Value =
                            serde_json::from_slice(request.body.as_deref().unwrap()).unwrap();
                        let mut tree = self.tree.lock().unwrap();
                        *tree = svc_core::settings::apply(&tree, &patch);
                        written
                    }
                    _ => return Err(format!("the fake has no {step}").into()),
                };
                Ok(svc_core::unit::ExchangeReply { status: 200, body })
            })
        }
    }
    let lossy = Arc::new(Lossy {
        tree: std::sync::Mutex::new(json!({"oem": {"label": "van"}})),
        seen: std::sync::Mutex::new(Vec::new()),
    });
    let unit = Unit::over(lossy.clone(), "lossy".into());
    let report = unit
        .apply_wanted(
            &json!({"oem": {"label": "checked twice"}}),
            ApplyOptions::default(),
        )
        .await
        .unwrap();
    assert!(report.written);
    assert_eq!(
        *lossy.seen.lock().unwrap(),
        [
            "GET ",
            "POST checkOnly=true",
            "POST checkOnly=true",
            "POST checkOnly=false",
            "GET ",
        ]
    );
}

/// `reboot` with `wait_until_back`: the apply returns once the unit answers again, so
/// the next call finds it up; without, it returns while the unit reboots.
#[tokio::test]
async fn apply_with_reboot_waits_until_the_unit_is_back_when_asked() {
    let rig = Rig::start(Link::Http, config(&[("setup", &password_of("setup"))])).await;
    let unit = rig.login(UserName::Setup, &password_of("setup")).await;
    let up = || rig.dev.handle("GET", "/api/v1/info", "", b"").is_some();

    let report = unit
        .apply_wanted(
            &json!({"ports": {"eth1": {"udpInPort": 1240}}}),
            ApplyOptions {
                reboot: true,
                ..ApplyOptions::default()
            },
        )
        .await
        .expect("applied");
    assert!(report.rebooted && report.need_reboot, "{report:?}");
    assert!(!up(), "returned while the unit reboots");
    unit.wait_until_back(Duration::from_secs(20))
        .await
        .expect("back");

    let report = unit
        .apply_wanted(
            &json!({"ports": {"eth1": {"udpInPort": 1241}}}),
            ApplyOptions {
                reboot: true,
                wait_until_back: Some(Duration::from_secs(20)),
                ..ApplyOptions::default()
            },
        )
        .await
        .expect("applied, and back");
    assert!(report.rebooted, "{report:?}");
    assert!(up(), "the unit answers when the apply returns");
    assert_eq!(
        unit.node("ports/eth1/udpInPort")
            .await
            .expect("read as the session"),
        json!(1241)
    );
}
