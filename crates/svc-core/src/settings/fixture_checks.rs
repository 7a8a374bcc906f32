//! Checks of the shared settings fixtures (`svc_test_support::settings`, which cannot
//! depend on this crate) against this crate's settings functions: the default tree
//! has the unit's shape and fits the typed tree, and random edits change exactly the
//! leaves they say.

use serde_json::json;
use svc_test_support::settings::{change_leaves, large_tree, unit_default_tree};

use super::{NodePath, diff, get, leaf_paths};

#[test]
fn the_default_tree_has_the_unit_shape() {
    let tree = unit_default_tree();
    let leaves = leaf_paths(&tree);
    assert!(leaves.len() > 900, "{} leaves", leaves.len());
    let at = |path: &str| get(&tree, &NodePath::parse(path).unwrap());
    assert_eq!(
        at("aiding/gnss1/leverArmPrimary"),
        Some(&json!([0.0, 0.0, 0.0]))
    );
    assert_eq!(at("output/comA/messages/imuShort"), Some(&json!("off")));
    assert_eq!(at("output/eth4/messages/PPS"), Some(&json!("off")));
    assert_eq!(
        at("output/can/messages/depthAltitude/trigger"),
        Some(&json!("off"))
    );
    assert_eq!(at("localParam/date"), Some(&json!("2024-05-01")));
    assert_eq!(
        at("aiding/magnetometer/softIronCorrection"),
        Some(&json!([1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0]))
    );
    let modules: Vec<&String> = tree.as_object().unwrap().keys().collect();
    assert_eq!(
        modules,
        [
            "oem",
            "imu",
            "mechanicalSetup",
            "insFilter",
            "aiding",
            "localParam",
            "network",
            "ports",
            "events",
            "output",
            "clock",
            "dataLogger"
        ]
    );
    // The typed tree holds all of it.
    crate::settings::from_value(tree).unwrap();
}

#[test]
fn changes_are_deterministic_and_counted() {
    let tree = unit_default_tree();
    let changed = change_leaves(&tree, 0.01, 7);
    assert_eq!(changed, change_leaves(&tree, 0.01, 7));
    let patch = diff(&tree, &changed);
    let expected = (leaf_paths(&tree).len() as f64 * 0.01).round() as usize;
    assert_eq!(patch.changed.len(), expected);
    assert!(patch.removed.is_empty());

    let large = large_tree(&tree, 10);
    assert_eq!(leaf_paths(&large).len(), 10 * leaf_paths(&tree).len());
}
