//! Settings trees: diff, apply, merge and typed conversions on the unit's full default
//! tree, and property tests on random trees shaped like settings.

use proptest::prelude::*;
use proptest::sample::Index;
use serde_json::{Value, json};
use svc_core::settings::{
    ACTION_ROUTES, NodePath, SettingsError, SettingsTree, apply, apply_in_place, diff, diff_json,
    from_value, get, leaf_paths, merge, set, to_value,
};
use svc_test_support::settings as testing;
use svc_test_support::settings::reversed;

fn path(text: &str) -> NodePath {
    NodePath::parse(text).unwrap()
}

fn texts(paths: &[NodePath]) -> Vec<String> {
    paths.iter().map(ToString::to_string).collect()
}

fn unit() -> Value {
    testing::unit_default_tree()
}

// ------------------------------------------------------------------ realistic cases

#[test]
fn lever_arm_change() {
    let old = unit();
    let mut new = old.clone();
    set(
        &mut new,
        &path("aiding/gnss1/leverArmPrimary"),
        json!([0.5, 0.0, -1.2]),
    )
    .unwrap();

    let patch = diff(&old, &new);
    assert_eq!(texts(&patch.changed), ["aiding/gnss1/leverArmPrimary"]);
    assert!(patch.removed.is_empty());
    assert_eq!(
        patch.tree,
        json!({"aiding": {"gnss1": {"leverArmPrimary": [0.5, 0.0, -1.2]}}})
    );
    assert_eq!(apply(&old, &patch.tree), new);
    assert_eq!(
        patch.into_write().unwrap()["aiding"]["gnss1"]["leverArmPrimary"][2],
        -1.2
    );
}

#[test]
fn one_component_of_a_vector_is_the_whole_vector() {
    let old = unit();
    let mut new = old.clone();
    new["mechanicalSetup"]["leverArms"]["cog"][1] = json!(0.25);
    let patch = diff(&old, &new);
    assert_eq!(texts(&patch.changed), ["mechanicalSetup/leverArms/cog"]);
    assert_eq!(
        patch.tree,
        json!({"mechanicalSetup": {"leverArms": {"cog": [0.0, 0.25, 0.0]}}})
    );
}

#[test]
fn trigger_changes() {
    let old = unit();
    let mut new = old.clone();
    new["output"]["comA"]["messages"]["imuShort"] = json!("10ms");
    new["output"]["comA"]["messages"]["ekfNav"] = json!("onChange");
    new["output"]["can"]["messages"]["ekfEuler"]["trigger"] = json!("20ms");
    new["dataLogger"]["sessionName"] = json!("survey01");

    let patch = diff(&old, &new);
    assert_eq!(
        texts(&patch.changed),
        [
            "output/can/messages/ekfEuler/trigger",
            "output/comA/messages/imuShort",
            "output/comA/messages/ekfNav",
            "dataLogger/sessionName",
        ],
        "document order"
    );
    assert_eq!(
        patch.tree,
        json!({
            "output": {
                "can": {"messages": {"ekfEuler": {"trigger": "20ms"}}},
                "comA": {"messages": {"imuShort": "10ms", "ekfNav": "onChange"}}
            },
            "dataLogger": {"sessionName": "survey01"}
        })
    );
    assert_eq!(apply(&old, &patch.tree), new);
}

#[test]
fn no_change_is_an_empty_patch() {
    let old = unit();
    let patch = diff(&old, &old.clone());
    assert!(patch.is_empty());
    assert_eq!(patch.tree, json!({}));
    assert!(diff(&old, &old).is_empty());
}

#[test]
fn type_change_is_a_whole_replacement() {
    let old = unit();
    let mut new = old.clone();
    new["network"]["ntp"] = json!(false); // an object replaced by a scalar
    new["clock"]["leapSec"] = json!({"value": 18}); // a scalar replaced by an object
    let patch = diff(&old, &new);
    assert_eq!(texts(&patch.changed), ["network/ntp", "clock/leapSec"]);
    assert!(
        patch.removed.is_empty(),
        "no removal: network/ntp/enabled went with its node"
    );
    assert_eq!(
        patch.tree,
        json!({"network": {"ntp": false}, "clock": {"leapSec": {"value": 18}}})
    );
    assert_eq!(apply(&old, &patch.tree), new);
}

#[test]
fn removed_key_is_reported() {
    let old = unit();
    let mut new = old.clone();
    new["output"]["comB"]["messages"]
        .as_object_mut()
        .unwrap()
        .remove("PPS");
    new["oem"].as_object_mut().unwrap().remove("label");
    new["insFilter"]["useRtkHeave"] = json!(true);

    let patch = diff(&old, &new);
    assert_eq!(texts(&patch.changed), ["insFilter/useRtkHeave"]);
    assert_eq!(
        texts(&patch.removed),
        ["oem/label", "output/comB/messages/PPS"]
    );
    assert_eq!(patch.tree, json!({"insFilter": {"useRtkHeave": true}}));
    // The write would keep them: the patch refuses to become a write body.
    let written = apply(&old, &patch.tree);
    assert_ne!(written, new);
    assert_eq!(get(&written, &path("oem/label")), Some(&json!("")));
    let error = patch.into_write().unwrap_err();
    assert_eq!(
        error,
        SettingsError::RemovalNotExpressible {
            removed: vec![path("oem/label"), path("output/comB/messages/PPS")]
        }
    );
}

#[test]
fn added_key_is_a_change() {
    let old = unit();
    let mut new = old.clone();
    new["output"]["comA"]["messages"]["vendorFormat"] = json!("10ms");
    let patch = diff(&old, &new);
    assert_eq!(texts(&patch.changed), ["output/comA/messages/vendorFormat"]);
    assert_eq!(apply(&old, &patch.tree), new);
}

#[test]
fn apply_does_not_mutate_its_input() {
    let old = unit();
    let before = old.clone();
    let write = json!({"aiding": {"gnss1": {"leverArmPrimary": [0.5, 0.0, -1.2]}}, "clock": {"leapSec": 19}});
    let written = apply(&old, &write);
    assert_eq!(old, before);
    assert_eq!(written["clock"]["leapSec"], 19);
    assert_eq!(written["clock"]["source"], old["clock"]["source"]);
    let mut in_place = old.clone();
    apply_in_place(&mut in_place, &write);
    assert_eq!(in_place, written);
}

#[test]
fn merge_of_two_operators() {
    let base = unit();
    let mut ours = base.clone();
    ours["aiding"]["gnss1"]["leverArmPrimary"] = json!([0.5, 0.0, -1.2]);
    ours["output"]["comA"]["messages"]["imuShort"] = json!("10ms");
    ours["clock"]["leapSec"] = json!(18); // unchanged
    let mut theirs = base.clone();
    theirs["output"]["comA"]["messages"]["imuShort"] = json!("10ms"); // same change
    theirs["output"]["comB"]["messages"]["ekfNav"] = json!("20ms");
    theirs["aiding"]["gnss1"]["leverArmPrimary"] = json!([0.4, 0.0, -1.2]); // conflict

    let merged = merge(&base, &ours, &theirs);
    assert_eq!(merged.conflicts.len(), 1);
    let conflict = &merged.conflicts[0];
    assert_eq!(conflict.path, path("aiding/gnss1/leverArmPrimary"));
    assert_eq!(conflict.base, Some(json!([0.0, 0.0, 0.0])));
    assert_eq!(conflict.ours, Some(json!([0.5, 0.0, -1.2])));
    assert_eq!(conflict.theirs, Some(json!([0.4, 0.0, -1.2])));
    // The merged tree keeps ours at the conflict, and takes every other change.
    let mut expected = ours.clone();
    expected["output"]["comB"]["messages"]["ekfNav"] = json!("20ms");
    assert_eq!(merged.tree, expected);
    assert!(!merged.is_clean());
}

#[test]
fn typed_round_trip_and_diff() {
    let tree = unit();
    let settings = from_value(tree.clone()).unwrap();
    assert!(diff(&tree, &to_value(&settings).unwrap()).is_empty());

    let mut changed = settings.clone();
    changed.data_logger.as_mut().unwrap().session_name = Some("survey01".to_owned());
    let patch = diff(&to_value(&settings).unwrap(), &to_value(&changed).unwrap());
    assert_eq!(
        patch.tree,
        json!({"dataLogger": {"sessionName": "survey01"}})
    );

    let mut unknown = tree.clone();
    unknown["aiding"]["gnss1"]["futureField"] = json!(1);
    assert_eq!(
        from_value(unknown).unwrap_err(),
        SettingsError::UnknownNodes {
            paths: vec![path("aiding/gnss1/futureField")]
        }
    );
}

#[test]
fn the_default_tree_is_of_the_unit_size() {
    let leaves = leaf_paths(&unit()).len();
    assert!((900..2000).contains(&leaves), "{leaves} leaves");
    let large = testing::large_tree(&unit(), 10);
    assert_eq!(leaf_paths(&large).len(), 10 * leaves);
    let changed = testing::change_leaves(&large, 0.01, 1);
    let patch = diff(&large, &changed);
    assert_eq!(
        patch.changed.len(),
        ((10 * leaves) as f64 * 0.01).round() as usize
    );
    assert_eq!(apply(&large, &patch.tree), changed);
}

// ------------------------------------------------------------------ property tests

/// Keys of the random trees: settings-like names.
const KEYS: &[&str] = &[
    "aiding", "gnss1", "gnss2", "model", "source", "leverArm", "messages", "imuShort", "ekfNav",
    "trigger", "enabled", "mode", "port", "rough", "fine",
];

fn leaf() -> impl Strategy<Value = Value> {
    prop_oneof![
        prop::sample::select(vec![
            "off", "onChange", "10ms", "20ms", "internal", "", "none"
        ])
        .prop_map(|text| json!(text)),
        "[a-z]{0,5}".prop_map(Value::String),
        (-1000i64..1000).prop_map(|number| json!(number)),
        (-1.0e3f64..1.0e3).prop_map(|number| json!(number)),
        any::<bool>().prop_map(Value::Bool),
        prop::array::uniform3(-10.0f64..10.0).prop_map(|vector| json!(vector)),
        ("[a-z]{1,3}", "[a-z]{1,3}").prop_map(|(a, b)| json!([a, b])),
    ]
}

/// A nested object with string/number/bool/array leaves (the root is an object).
fn tree() -> impl Strategy<Value = Value> {
    let object = |inner: BoxedStrategy<Value>| {
        prop::collection::vec((prop::sample::select(KEYS), inner), 0..6)
            .prop_map(|entries| {
                Value::Object(
                    entries
                        .into_iter()
                        .map(|(key, value)| (key.to_owned(), value))
                        .collect(),
                )
            })
            .boxed()
    };
    leaf()
        .boxed()
        .prop_recursive(5, 96, 6, object)
        .prop_map(|tree| {
            if tree.is_object() {
                tree
            } else {
                json!({ "module": tree })
            }
        })
}

#[derive(Debug, Clone)]
enum Edit {
    /// Set a leaf to a new leaf value.
    ChangeLeaf(Value),
    /// Replace an array with another array.
    ReplaceArray(Vec<f64>),
    /// Replace an object (not the root) with a scalar.
    ObjectToScalar(Value),
    /// Add a key (named with the side's prefix) to an object.
    AddKey(u8, Value),
    /// Remove a node (not the root).
    Remove,
}

fn edit(removals: bool) -> impl Strategy<Value = (Index, Edit)> {
    let scalar = prop_oneof![
        any::<bool>().prop_map(Value::Bool),
        (0i64..100).prop_map(|number| json!(number)),
        "[a-z]{1,4}".prop_map(Value::String),
    ];
    let kinds = prop_oneof![
        3 => leaf().prop_map(Edit::ChangeLeaf),
        1 => prop::collection::vec(-5.0f64..5.0, 0..4).prop_map(Edit::ReplaceArray),
        1 => scalar.prop_map(Edit::ObjectToScalar),
        1 => (any::<u8>(), prop_oneof![leaf(), tree()]).prop_map(|(key, value)| Edit::AddKey(key, value)),
    ];
    let kinds = if removals {
        prop_oneof![5 => kinds, 1 => Just(Edit::Remove)].boxed()
    } else {
        kinds.boxed()
    };
    (any::<Index>(), kinds)
}

/// Every node of the tree with its path (the root first).
fn nodes(tree: &Value) -> Vec<(NodePath, &Value)> {
    fn walk<'a>(node: &'a Value, path: NodePath, out: &mut Vec<(NodePath, &'a Value)>) {
        out.push((path.clone(), node));
        if let Value::Object(map) = node {
            for (key, child) in map {
                walk(child, path.join(key).unwrap(), out);
            }
        }
    }
    let mut out = Vec::new();
    walk(tree, NodePath::root(), &mut out);
    out
}

fn remove(tree: &mut Value, target: &NodePath) -> Option<Value> {
    let parent = target.parent()?;
    let mut node = tree;
    for segment in parent.segments() {
        node = node.as_object_mut()?.get_mut(segment)?;
    }
    node.as_object_mut()?.remove(target.last()?)
}

/// Applies an edit to `tree` at a node chosen among `candidates` (paths of the base
/// tree) that suits the edit and is not under `avoid`; returns the affected path.
fn apply_edit(
    tree: &mut Value,
    candidates: &[NodePath],
    avoid: &[NodePath],
    (index, edit): &(Index, Edit),
    prefix: &str,
) -> Option<NodePath> {
    let fits = |path: &NodePath| {
        let Some(node) = get(tree, path) else {
            return false;
        };
        match edit {
            Edit::ChangeLeaf(_) => !node.is_object(),
            Edit::ReplaceArray(_) => node.is_array(),
            Edit::ObjectToScalar(_) => node.is_object() && !path.is_root(),
            Edit::AddKey(..) => node.is_object(),
            Edit::Remove => !path.is_root(),
        }
    };
    let target = |path: &NodePath| match edit {
        Edit::AddKey(key, _) => path.join(&format!("{prefix}{key}")).unwrap(),
        _ => path.clone(),
    };
    let related = |path: &NodePath| {
        let target = target(path);
        avoid
            .iter()
            .any(|other| target.starts_with(other) || other.starts_with(&target))
    };
    let choices: Vec<&NodePath> = candidates
        .iter()
        .filter(|path| fits(path) && !related(path))
        .collect();
    if choices.is_empty() {
        return None;
    }
    let chosen = target(choices[index.index(choices.len())]);
    match edit {
        Edit::ChangeLeaf(value) | Edit::ObjectToScalar(value) | Edit::AddKey(_, value) => {
            set(tree, &chosen, value.clone()).unwrap();
        }
        Edit::ReplaceArray(items) => {
            set(tree, &chosen, json!(items)).unwrap();
        }
        Edit::Remove => {
            remove(tree, &chosen).unwrap();
        }
    }
    Some(chosen)
}

/// `base` edited by `edits` (nodes chosen among base's, away from `avoid`), and the
/// affected paths.
fn edited(
    base: &Value,
    edits: &[(Index, Edit)],
    avoid: &[NodePath],
    prefix: &str,
) -> (Value, Vec<NodePath>) {
    let candidates: Vec<NodePath> = nodes(base).into_iter().map(|(path, _)| path).collect();
    let mut tree = base.clone();
    let mut touched = Vec::new();
    for edit in edits {
        if let Some(path) = apply_edit(&mut tree, &candidates, avoid, edit, prefix) {
            touched.push(path);
        }
    }
    (tree, touched)
}

/// `apply(old, patch.tree)` with the reported removals carried out as well.
fn apply_with_removals(old: &Value, patch: &svc_core::settings::Patch) -> Value {
    let mut out = apply(old, &patch.tree);
    for removed in &patch.removed {
        assert!(
            remove(&mut out, removed).is_some(),
            "removed node {removed} is not in the tree"
        );
    }
    out
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn apply_of_diff_gives_the_new_tree(
        old in tree(),
        edits in prop::collection::vec(edit(false), 0..6),
    ) {
        let (new, _) = edited(&old, &edits, &[], "new");
        let patch = diff(&old, &new);
        prop_assert!(patch.removed.is_empty(), "these edits remove nothing: {:?}", patch.removed);
        prop_assert_eq!(&apply(&old, &patch.tree), &new);
        // Minimal: every changed node differs, and the partial tree holds it as new has it.
        for changed in &patch.changed {
            prop_assert_ne!(get(&old, changed), get(&new, changed));
            prop_assert_eq!(get(&patch.tree, changed), get(&new, changed));
        }
        // Only changed nodes and the objects leading to them.
        let leaves = leaf_paths(&patch.tree);
        prop_assert!(leaves.iter().all(|leaf| patch.is_empty()
            || patch.changed.iter().any(|changed| leaf.starts_with(changed))));
        prop_assert_eq!(patch.is_empty(), old == new);
    }

    #[test]
    fn removals_are_reported_not_lost(
        old in tree(),
        edits in prop::collection::vec(edit(true), 0..6),
    ) {
        let (new, _) = edited(&old, &edits, &[], "new");
        let patch = diff(&old, &new);
        for removed in &patch.removed {
            prop_assert!(get(&old, removed).is_some());
            prop_assert!(get(&new, removed).is_none());
        }
        prop_assert_eq!(apply_with_removals(&old, &patch), new);
    }

    #[test]
    fn tree_diff_is_the_value_diff(
        old in tree(),
        edits in prop::collection::vec(edit(true), 0..6),
        seed in any::<u64>(),
    ) {
        let (new, _) = edited(&old, &edits, &[], "new");
        // Leaf values changed only: one shape, the leaf-by-leaf diff.
        let relabeled = testing::change_leaves(&old, 0.2, seed);
        for new in [&new, &relabeled, &old] {
            let (a, b) = (SettingsTree::from_value(&old), SettingsTree::from_value(new));
            prop_assert_eq!(&a.to_value(), &old);
            prop_assert_eq!(serde_json::to_string(&b).unwrap(), serde_json::to_string(new).unwrap());
            prop_assert_eq!(a == b, &old == new);
            let expected = diff(&old, new);
            let patch = a.diff(&b);
            prop_assert_eq!(patch.changed().cloned().collect::<Vec<_>>(), expected.changed.clone());
            prop_assert_eq!(patch.removed(), &expected.removed[..]);
            // The same body, in the same key order.
            prop_assert_eq!(serde_json::to_string(&patch).unwrap(), serde_json::to_string(&expected.tree).unwrap());
            prop_assert_eq!(patch.to_patch(), expected);
        }
        // (An empty object counts as a leaf there, and changes by gaining a key.)
        fn has_empty_object(tree: &Value) -> bool {
            tree.as_object().is_some_and(|map| map.is_empty() || map.values().any(has_empty_object))
        }
        prop_assert!(
            has_empty_object(&old)
                || SettingsTree::from_value(&old).same_shape(&SettingsTree::from_value(&relabeled))
        );
    }

    /// The semantics is written once (`settings::walk`); each representation walked or
    /// compared otherwise gives its patch: texts read as nodes (any formatting, keys in
    /// another order), a `SettingsTree` (leaf arrays of one shape, or values), its kept
    /// text, and its write of leaves.
    #[test]
    fn every_representation_gives_the_walks_patch(
        old in tree(),
        edits in prop::collection::vec(edit(true), 0..6),
        seed in any::<u64>(),
    ) {
        let (edited, _) = edited(&old, &edits, &[], "new");
        let relabeled = testing::change_leaves(&old, 0.2, seed);
        let pretty = |v: &Value| serde_json::to_string_pretty(v).unwrap();
        for new in [&edited, &relabeled, &old] {
            let expected = diff(&old, new);
            prop_assert_eq!(expected.is_empty(), &old == new);
            let (old_text, new_text) = (old.to_string(), new.to_string());
            prop_assert_eq!(diff_json(&old_text, &new_text).unwrap(), expected.clone());
            prop_assert_eq!(diff_json(pretty(&old), &new_text).unwrap(), expected.clone());
            prop_assert_eq!(
                diff_json(pretty(&old).as_bytes(), new_text.as_bytes()).unwrap(),
                expected.clone()
            );
            // Keys in another order: the walk of the texts' nodes.
            let backwards = reversed(&old);
            prop_assert_eq!(
                diff_json(backwards.to_string(), &new_text).unwrap(),
                diff(&backwards, new)
            );
            let tree = SettingsTree::from_value(&old);
            prop_assert_eq!(tree.diff(&SettingsTree::from_value(new)).to_patch(), expected.clone());
            prop_assert_eq!(tree.diff_json(&new_text).unwrap(), expected.clone());
            prop_assert_eq!(tree == SettingsTree::from_value(&reversed(new)), &old == new);
            prop_assert_eq!(tree.apply(&expected.tree).to_value(), apply(&old, &expected.tree));
            prop_assert_eq!(tree.apply(new).to_value(), apply(&old, new));
        }
    }

    #[test]
    fn diff_of_equal_trees_is_empty(old in tree()) {
        let patch = diff(&old, &old.clone());
        prop_assert!(patch.is_empty());
        prop_assert_eq!(patch.tree, json!({}));
    }

    #[test]
    fn apply_does_not_change_its_input(old in tree(), write in tree()) {
        let before = old.clone();
        let written = apply(&old, &write);
        prop_assert_eq!(&old, &before);
        let mut in_place = old.clone();
        apply_in_place(&mut in_place, &write);
        prop_assert_eq!(in_place, written);
    }

    #[test]
    fn merge_with_one_side_unchanged_takes_the_other(
        base in tree(),
        edits in prop::collection::vec(edit(true), 0..6),
    ) {
        let (other, _) = edited(&base, &edits, &[], "x");
        let merged = merge(&base, &base, &other);
        prop_assert!(merged.is_clean(), "{:?}", merged.conflicts);
        prop_assert_eq!(&merged.tree, &other);
        let merged = merge(&base, &other, &base);
        prop_assert!(merged.is_clean(), "{:?}", merged.conflicts);
        prop_assert_eq!(&merged.tree, &other);
        let merged = merge(&base, &other, &other);
        prop_assert!(merged.is_clean());
        prop_assert_eq!(&merged.tree, &other);
    }

    #[test]
    fn merge_of_disjoint_changes_holds_both(
        base in tree(),
        our_edits in prop::collection::vec(edit(true), 0..5),
        their_edits in prop::collection::vec(edit(true), 0..5),
    ) {
        let (ours, touched) = edited(&base, &our_edits, &[], "o");
        let (theirs, _) = edited(&base, &their_edits, &touched, "t");
        let merged = merge(&base, &ours, &theirs);
        prop_assert!(merged.is_clean(), "{:?}", merged.conflicts);
        // Both changes: ours with theirs' patch written into it.
        let expected = apply_with_removals(&ours, &diff(&base, &theirs));
        prop_assert_eq!(&merged.tree, &expected);
        let expected = apply_with_removals(&theirs, &diff(&base, &ours));
        prop_assert_eq!(&merged.tree, &expected);
    }

    #[test]
    fn clean_merges_commute(
        base in tree(),
        our_edits in prop::collection::vec(edit(true), 0..5),
        their_edits in prop::collection::vec(edit(true), 0..5),
    ) {
        let (ours, _) = edited(&base, &our_edits, &[], "o");
        let (theirs, _) = edited(&base, &their_edits, &[], "t");
        let merged = merge(&base, &ours, &theirs);
        let swapped = merge(&base, &theirs, &ours);
        // Conflicts are symmetric: the same nodes, ours and theirs swapped.
        let paths = |conflicts: &[svc_core::settings::Conflict]| {
            conflicts.iter().map(|conflict| conflict.path.clone()).collect::<Vec<_>>()
        };
        let mut a = paths(&merged.conflicts);
        let mut b = paths(&swapped.conflicts);
        a.sort();
        b.sort();
        prop_assert_eq!(a, b);
        if merged.is_clean() {
            prop_assert_eq!(&merged.tree, &swapped.tree);
        }
        for conflict in &merged.conflicts {
            // The merged tree keeps ours at every conflict.
            prop_assert_eq!(get(&merged.tree, &conflict.path), conflict.ours.as_ref());
            prop_assert_eq!(get(&ours, &conflict.path), conflict.ours.as_ref());
            prop_assert_eq!(get(&theirs, &conflict.path), conflict.theirs.as_ref());
        }
    }

    #[test]
    fn merge_of_the_same_tree_is_that_tree(base in tree(), other in tree()) {
        // Unrelated trees: whatever base is, identical sides never conflict.
        let merged = merge(&base, &other, &other);
        prop_assert!(merged.is_clean());
        prop_assert_eq!(merged.tree, other);
    }

    #[test]
    fn paths_round_trip(
        segments in prop::collection::vec("[a-zA-Z0-9_.-]{1,8}", 0..6).prop_filter(
            "a segment `.` or `..`, or a first one naming an action, is refused",
            |segments| {
                !segments.iter().any(|s| s == "." || s == "..")
                    && segments.first().is_none_or(|s| !ACTION_ROUTES.contains(&s.as_str()))
            },
        )
    ) {
        let built = NodePath::from_segments(&segments).unwrap();
        prop_assert_eq!(built.segments().collect::<Vec<_>>(), segments.iter().map(String::as_str).collect::<Vec<_>>());
        let shown = built.to_string();
        prop_assert_eq!(NodePath::parse(&shown).unwrap(), built.clone());
        prop_assert_eq!(built.len(), segments.len());
    }
}

proptest! {
    /// A path holding a `.` or `..` segment, or starting with an action's name, is
    /// refused however it is built, and a valid path with one appended is too.
    #[test]
    fn paths_leaving_the_node_are_refused(
        before in prop::collection::vec("[a-z]{1,4}", 0..3),
        bad in prop::sample::select(vec![".", "..", "a\\b", "x\u{7}"]),
        after in prop::collection::vec("[a-z]{1,4}", 0..3),
        action in prop::sample::select(ACTION_ROUTES.to_vec()),
    ) {
        let mut segments: Vec<&str> = before.iter().map(String::as_str).collect();
        segments.push(bad);
        segments.extend(after.iter().map(String::as_str));
        prop_assert!(NodePath::parse(&segments.join("/")).is_err());
        prop_assert!(NodePath::from_segments(&segments).is_err());
        let mut rest: Vec<&str> = vec![action];
        rest.extend(after.iter().map(String::as_str));
        prop_assert!(NodePath::parse(&rest.join("/")).is_err());
        prop_assert!(NodePath::from_segments(&rest).is_err());
        // The same name below the root is an ordinary key.
        let mut deeper: Vec<&str> = vec!["aiding", action];
        deeper.extend(after.iter().map(String::as_str));
        prop_assert!(NodePath::parse(&deeper.join("/")).is_ok());
    }
}

#[test]
fn the_property_tests_are_not_vacuous() {
    // The generators produce what the properties are about: changed, removed, added
    // and replaced nodes, conflicts, and disjoint changes on both sides.
    use proptest::strategy::ValueTree;
    use proptest::test_runner::TestRunner;
    fn generate<S: Strategy>(runner: &mut TestRunner, strategy: S) -> S::Value {
        strategy.new_tree(runner).unwrap().current()
    }
    let mut runner = TestRunner::deterministic();
    let (mut deepest, mut changed, mut removed, mut conflicts, mut both_sides) = (0, 0, 0, 0, 0);
    for _ in 0..200 {
        let base = generate(&mut runner, tree());
        assert!(base.is_object());
        deepest = deepest.max(
            leaf_paths(&base)
                .iter()
                .map(NodePath::len)
                .max()
                .unwrap_or(0),
        );
        let our_edits = generate(&mut runner, prop::collection::vec(edit(true), 0..5));
        let their_edits = generate(&mut runner, prop::collection::vec(edit(true), 0..5));
        let (ours, touched) = edited(&base, &our_edits, &[], "o");
        let patch = diff(&base, &ours);
        changed += usize::from(!patch.changed.is_empty());
        removed += usize::from(patch.has_removals());
        let (theirs, _) = edited(&base, &their_edits, &[], "t");
        conflicts += usize::from(!merge(&base, &ours, &theirs).is_clean());
        let (disjoint, _) = edited(&base, &their_edits, &touched, "t");
        both_sides += usize::from(base != ours && base != disjoint);
    }
    assert!(deepest >= 4, "deepest leaf at depth {deepest}");
    assert!(changed > 100, "{changed} of 200 with changes");
    assert!(removed > 20, "{removed} of 200 with removals");
    assert!(conflicts > 10, "{conflicts} of 200 with conflicts");
    assert!(
        both_sides > 60,
        "{both_sides} of 200 with disjoint changes on both sides"
    );
}
