//! Node paths reach nodes only: a path that would name an action route (`default`,
//! `import`, `lock`, ...), climb out of `/settings/` (`../reboot`) or name no node is
//! refused before anything is sent, over every link.

use super::{Link, Rig, config};
use serde_json::json;
use svc_core::unit::UnitError;

over_links!(paths_that_are_not_nodes_are_refused_before_sending);

async fn paths_that_are_not_nodes_are_refused_before_sending(link: Link) {
    let rig = Rig::start(link, config(&[])).await;
    let unit = rig.session().await;
    // Something to lose: a value changed from the defaults.
    unit.write_node("output/comA/messages/imuShort", &json!("10ms"), false)
        .await
        .unwrap();
    let before = rig.tree();
    let writes = rig.dev.applied_writes();
    let sent = rig.sent();

    for path in [
        "default",
        "/default/",
        "import",
        "lock",
        "unlock",
        "export",
        "save",
        "../reboot",
        "../info",
        "aiding/../../reboot",
        "aiding/..\\..\\reboot",
        "./default",
        "",
        "/",
        "aiding//gnss1",
    ] {
        let e = unit
            .write_node(path, &json!({}), false)
            .await
            .expect_err(path);
        assert!(
            matches!(e, UnitError::InvalidRequest { .. }),
            "{link:?} set {path:?}: {e:?}"
        );
        assert_eq!(e.kind(), svc_core::ErrorKind::InvalidInput);
        let e = unit.node(path).await.expect_err(path);
        assert!(
            matches!(e, UnitError::InvalidRequest { .. }),
            "{link:?} get {path:?}: {e:?}"
        );
    }
    assert!(!rig.dev.is_rebooting(), "{link:?}: the unit was rebooted");
    assert_eq!(rig.dev.applied_writes(), writes, "{link:?}: a write ran");
    if link != Link::Http {
        assert_eq!(rig.sent(), sent, "{link:?}: a refused request was sent");
    }
    assert_eq!(rig.tree(), before, "{link:?}: the tree changed");

    // An action's name deeper down is an ordinary node path.
    let e = unit.node("aiding/default").await.unwrap_err();
    assert_eq!(e.status(), Some(404), "{link:?}: {e}");
    assert_eq!(
        unit.node("/output/comA/messages/imuShort/").await.unwrap(),
        json!("10ms")
    );
}

/// `ACTION_ROUTES` is every route of the unit's document directly under `/settings/`
/// other than the node route: a route the document gains is refused as a node path.
#[test]
fn the_action_routes_are_those_of_the_document() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../openapi/ins-device.yaml");
    let text = std::fs::read_to_string(path).unwrap();
    let document: serde_json::Value = serde_yaml::from_str(&text).unwrap();
    let mut routes: Vec<&str> = document["paths"]
        .as_object()
        .unwrap()
        .keys()
        .filter_map(|route| route.strip_prefix("/api/v1/settings/"))
        .filter(|rest| !rest.starts_with('{'))
        .map(|rest| rest.split('/').next().unwrap())
        .collect();
    routes.sort_unstable();
    routes.dedup();
    let mut known = svc_core::settings::ACTION_ROUTES.to_vec();
    known.sort_unstable();
    assert_eq!(routes, known);
}
