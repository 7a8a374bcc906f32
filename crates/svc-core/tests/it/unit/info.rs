//! Scenario 1: the unit's information and its whole tree; an export keeps the nodes the
//! settings schema does not describe.

use std::sync::Arc;

use super::{Link, Rig, config};
use serde_json::json;
use svc_core::unit::Unit;

over_links!(info_and_whole_tree);

async fn info_and_whole_tree(link: Link) {
    let rig = Rig::start(link, config(&[])).await;
    let unit = rig.session().await;

    let info = unit.info().await.unwrap();
    let (status, raw_info) = rig.raw("GET", "/api/v1/info");
    assert_eq!(status, 200);
    assert_eq!(serde_json::to_value(&info).unwrap(), raw_info);
    assert!(!info.product_code.is_empty());
    assert!(!info.serial_number.is_empty());
    let (major, minor) = info
        .api_version
        .split_once('.')
        .expect("apiVersion is Major.Minor");
    assert!(
        major.parse::<u32>().is_ok() && minor.parse::<u32>().is_ok(),
        "apiVersion {:?}",
        info.api_version
    );

    let tree = unit.settings().await.unwrap();
    let typed = unit.settings_typed().await.unwrap();
    // The typed tree and the untyped one agree, and both are the unit's tree.
    assert_eq!(serde_json::to_value(&typed).unwrap(), tree);
    assert_eq!(svc_core::settings::to_value(&typed).unwrap(), tree);
    assert_eq!(tree, rig.tree(), "{link:?}: the tree as the SDK reads it");
    // Over serial the whole tree does not fit one standard frame: large frames carried it.
    let size = serde_json::to_vec(&tree).unwrap().len();
    assert!(size > 4086, "the tree is {size} bytes");
    for module in ["aiding", "output", "network", "ports", "localParam"] {
        assert!(tree.get(module).is_some(), "module {module}");
    }

    assert_eq!(unit.export().await.unwrap(), tree);
    assert_eq!(
        unit.node("aiding/gnss1").await.unwrap(),
        tree["aiding"]["gnss1"]
    );
    assert_eq!(
        unit.node("/aiding/gnss1/leverArmPrimary/").await.unwrap(),
        tree["aiding"]["gnss1"]["leverArmPrimary"]
    );
    assert_eq!(
        unit.node("output/comA/messages/imuShort").await.unwrap(),
        tree["output"]["comA"]["messages"]["imuShort"]
    );
    let missing = unit.node("aiding/gnss9").await.unwrap_err();
    assert_eq!(missing.status(), Some(404), "{missing}");

    // Nothing changed yet: the delta is empty; after one change it holds only that.
    assert_eq!(unit.settings_delta().await.unwrap(), json!({}));
    let outcome = unit
        .write_node("output/comA/messages/imuShort", &json!("10ms"), false)
        .await
        .unwrap();
    assert!(!outcome.need_reboot);
    assert_eq!(
        unit.settings_delta().await.unwrap(),
        json!({"output": {"comA": {"messages": {"imuShort": "10ms"}}}})
    );
}

/// An export keeps every node the unit holds, also those the settings schema does not
/// describe (a backup must not lose them).
#[tokio::test]
async fn export_keeps_nodes_the_schema_does_not_describe() {
    struct Fixed;
    impl svc_core::unit::Exchange for Fixed {
        fn exchange(
            &self,
            request: svc_core::unit::ExchangeRequest,
        ) -> svc_core::unit::ExchangeFuture<'_> {
            Box::pin(async move {
                assert_eq!(request.path, "/api/v1/settings/export");
                let body = br#"{"oem":{"label":"van","vendorExtra":7},"vendorModule":{"x":[1,2]}}"#
                    .to_vec();
                Ok(svc_core::unit::ExchangeReply { status: 200, body })
            })
        }
    }
    let unit = Unit::over(Arc::new(Fixed), "fixed".into());
    let tree = unit.export().await.unwrap();
    assert_eq!(
        tree,
        json!({"oem": {"label": "van", "vendorExtra": 7}, "vendorModule": {"x": [1, 2]}})
    );
}
