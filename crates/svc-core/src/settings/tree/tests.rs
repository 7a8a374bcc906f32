use serde_json::json;

use super::shape::RECENT;
use super::*;
use svc_test_support::settings as testing;

fn tree(value: &Value) -> SettingsTree {
    SettingsTree::from_value(value)
}

/// The tree patch agrees with the diff of the values, in every form.
fn check_against_values(a: &Value, b: &Value) -> TreePatch {
    let patch = tree(a).diff(&tree(b));
    let expected = diff(a, b);
    assert_eq!(patch.to_patch(), expected);
    assert_eq!(
        serde_json::to_string(&patch).unwrap(),
        serde_json::to_string(&expected.tree).unwrap(),
        "same key order"
    );
    assert_eq!(
        patch.changed().cloned().collect::<Vec<_>>(),
        expected.changed
    );
    assert_eq!(patch.removed(), expected.removed);
    assert_eq!(patch.is_empty(), expected.is_empty());
    patch
}

#[test]
fn round_trips_and_shares_shapes() {
    let unit = testing::unit_default_tree();
    let settings = tree(&unit);
    assert_eq!(settings.to_value(), unit);
    assert_eq!(
        serde_json::to_string(&settings).unwrap(),
        serde_json::to_string(&unit).unwrap()
    );
    let changed = testing::change_leaves(&unit, 0.01, 7);
    let other = tree(&changed);
    assert!(settings.same_shape(&other), "same keys: one shape");
    assert_ne!(settings, other);
    assert_eq!(settings, tree(&unit));
    let patch = check_against_values(&unit, &changed);
    assert_eq!(patch.changed().len(), 11);
    // Another key order is another shape, but an equal tree.
    let (x, y) = (
        tree(&json!({"a": 2, "b": 1})),
        tree(&json!({"b": 1, "a": 2})),
    );
    assert!(!x.same_shape(&y));
    assert_eq!(x, y);
    assert!(x.diff(&y).is_empty());
}

#[test]
fn leaves_compare_as_serde_json_does() {
    let values = [
        json!(null),
        json!(true),
        json!(false),
        json!(0),
        json!(1),
        json!(1.0),
        json!(-0.0),
        json!(0.0),
        json!(-1),
        json!(u64::MAX),
        json!(i64::MIN),
        json!(""),
        json!("off"),
        json!("exactly-twenty-three-by"),
        json!("exactly-twenty-four-byte"),
        json!("twenty-five-bytes-long..."),
        json!("a string far longer than twenty-four bytes"),
        json!("é"),
        json!("ééééééééééééé"),
        json!([]),
        json!([1, 2]),
        json!([1, 2.0]),
        json!([0.0, -0.0, 1.5]),
        json!([-0.0, 0.0, 1.5]),
        json!([1, 2, 3, 4]),
        json!(["a", "b"]),
        json!([{"a": 1, "b": 2}]),
        json!([{"b": 2, "a": 1}]),
    ];
    for a in &values {
        for b in &values {
            let (x, y) = (tree(&json!({"k": a})), tree(&json!({"k": b})));
            assert!(x.same_shape(&y));
            assert_eq!(x == y, a == b, "{a} vs {b}");
            check_against_values(&json!({"k": a}), &json!({"k": b}));
        }
        let single = tree(a);
        assert_eq!(&single.to_value(), a);
        assert_eq!(
            serde_json::to_string(&single).unwrap(),
            serde_json::to_string(a).unwrap()
        );
    }
}

#[test]
fn partial_trees_nest_like_the_values_diff() {
    let old = json!({
        "a": {"x": {"p": 1, "q": 2}, "y": 3, "z": {"r": {"s": 4}}},
        "b": 5,
        "c": {},
        "d": {"t": [1, 2, 3, 4, 5]}
    });
    let mut new = old.clone();
    new["a"]["x"]["q"] = json!(20);
    new["a"]["z"]["r"]["s"] = json!("four");
    new["b"] = json!(null);
    new["d"]["t"] = json!([1]);
    let patch = check_against_values(&old, &new);
    assert_eq!(
        serde_json::to_value(&patch).unwrap(),
        json!({"a": {"x": {"q": 20}, "z": {"r": {"s": "four"}}}, "b": null, "d": {"t": [1]}})
    );
    assert_eq!(
        patch.clone().into_write().unwrap(),
        serde_json::to_value(&patch).unwrap()
    );
    // Different shapes diff through the values, removals included.
    let patch = check_against_values(&old, &json!({"a": 1}));
    assert!(patch.has_removals());
    assert!(patch.into_write().is_err());
}

#[test]
fn trees_and_patches_cross_threads() {
    fn send_sync<T: Send + Sync + Clone + 'static>() {}
    send_sync::<SettingsTree>();
    send_sync::<TreePatch>();
}

#[test]
fn get_finds_nodes() {
    let settings = tree(&json!({"a": {"b": [1], "c": {"d": "x"}}, "e": 2}));
    let path = |text: &str| NodePath::parse(text).unwrap();
    assert_eq!(settings.get(&path("a/c/d")), Some(json!("x")));
    assert_eq!(settings.get(&path("a/c")), Some(json!({"d": "x"})));
    assert_eq!(settings.get(&path("e")), Some(json!(2)));
    assert_eq!(settings.get(&NodePath::root()), Some(settings.to_value()));
    assert_eq!(settings.get(&path("a/b/0")), None, "arrays are leaves");
    assert_eq!(settings.get(&path("a/x")), None);
    assert_eq!(settings.get(&path("e/f")), None);
    assert_eq!(settings.leaf_count(), 3);
}

#[test]
fn leaf_roots_diff_like_values() {
    for (a, b) in [
        (json!(3), json!(3)),
        (json!(3), json!(4)),
        (json!("x"), json!([1])),
    ] {
        check_against_values(&a, &b);
    }
}

#[test]
fn secrets_stay_out_of_debug() {
    let old = tree(&json!({"network": {"ntrip": {"password": "hunter1"}}}));
    let new = tree(&json!({"network": {"ntrip": {"password": "hunter2"}}}));
    let shown = format!("{new:?} {:?}", old.diff(&new));
    assert!(!shown.contains("hunter"), "{shown}");
    assert!(shown.contains("[redacted]"), "{shown}");
    assert!(shown.contains("network/ntrip/password"), "{shown}");
}

#[test]
fn dead_shapes_are_swept_away() {
    let unique = json!({"dead_shapes_are_swept_away": {"k": 1}});
    let hash = tree(&unique).shape.hash;
    let alive = |hash| {
        SHAPES.lock().unwrap().shapes.get(&hash).map_or(0, |list| {
            list.iter().filter(|w| w.strong_count() > 0).count()
        })
    };
    // Another test's tree being built holds the recent shapes for a moment.
    let settles_at = |hash, count| {
        (0..200).any(|_| {
            let now = alive(hash);
            if now != count {
                std::thread::sleep(std::time::Duration::from_millis(2));
            }
            now == count
        })
    };
    // The first tree is gone: its shape too.
    assert!(settles_at(hash, 0));
    let kept = tree(&unique);
    let again = tree(&unique);
    assert!(kept.same_shape(&again));
    assert!(settles_at(hash, 1));
    // Many shapes, each dropped at once: their entries do not pile up.
    for index in 0..20_000 {
        drop(tree(&json!({ format!("dead_shape_{index}"): index })));
    }
    let entries = SHAPES.lock().unwrap().shapes.len();
    assert!(entries < 1_000, "{entries} entries for a few live shapes");
    assert!(settles_at(hash, 1), "a live shape stays");
    assert!(kept.same_shape(&tree(&unique)));
    drop((kept, again));
    assert!(settles_at(hash, 0));
}

#[test]
fn recent_shapes_are_reused_without_building() {
    let (a, b) = (
        json!({"recent_a": {"x": 1, "y": "off"}}),
        json!({"recent_b": [1, 2, 3]}),
    );
    let (first_a, first_b) = (tree(&a), tree(&b));
    // Alternating shapes: both stay among the recent ones, and each new tree takes
    // the shape of its live twin.
    for _ in 0..3 {
        assert!(tree(&a).same_shape(&first_a));
        assert!(tree(&b).same_shape(&first_b));
    }
    assert!(!first_a.same_shape(&first_b));
    let recent = SHAPES.lock().unwrap().recent.len();
    assert!(recent <= RECENT);
}

#[test]
fn empty_keys_and_leaf_roots_keep_their_changes() {
    // A key may be the empty string: its change is not the root's.
    let patch = check_against_values(&json!({"": []}), &json!({"": true}));
    assert_eq!(patch.to_patch().tree, json!({"": true}));
    check_against_values(
        &json!({"a": {"": 1}, "": {"": 2}}),
        &json!({"a": {"": 3}, "": {"": 4}}),
    );
    // A tree whose root is a leaf: the new tree is the patch.
    let patch = check_against_values(&json!(1), &json!("one"));
    assert_eq!(patch.to_patch().tree, json!("one"));
    check_against_values(&json!([1, 2]), &json!([1, 2]));
}
