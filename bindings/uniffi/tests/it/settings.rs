//! Settings diff, apply, merge and trees, through JSON strings.

use super::kind;
use svc_ffi::*;

#[test]
fn settings_diff_apply_merge_and_trees_through_json_strings() {
    let old = r#"{"a":{"b":1,"c":"x"},"d":[1,2]}"#;
    let new = r#"{"a":{"b":2,"c":"x"},"d":[1,2]}"#;
    let patch = settings_diff(old.into(), new.into()).expect("diff");
    assert_eq!(patch.changed, ["a/b"]);
    assert_eq!(patch.tree, r#"{"a":{"b":2}}"#);
    assert!(patch.removed.is_empty());
    assert_eq!(
        settings_apply(old.into(), patch.tree.clone().into()).expect("apply"),
        new
    );
    let theirs = r#"{"a":{"b":3,"c":"y"},"d":[1,2]}"#;
    let merged = settings_merge(old.into(), new.into(), theirs.into()).expect("merge");
    assert_eq!(merged.conflicts.len(), 1);
    assert_eq!(merged.conflicts[0].path, "a/b");
    assert_eq!(merged.conflicts[0].theirs.as_deref(), Some("3"));
    assert!(merged.tree.contains(r#""c":"y""#), "{}", merged.tree);

    let a = SettingsTree::from_json(old.into()).expect("tree");
    let b = SettingsTree::from_json(new.into()).expect("tree");
    assert!(a.same_shape(b.clone()));
    assert_eq!(a.leaf_count(), LongCount(3));
    assert_eq!(b.get("a/b".into()).expect("path").as_deref(), Some("2"));
    assert_eq!(b.get("a/zz".into()).expect("path"), None);
    assert_eq!(kind(b.get("a//b".into())).0, "invalid_input");
    let p = a.diff(b);
    assert_eq!(p.changed(), ["a/b"]);
    assert_eq!(p.to_json().expect("json"), r#"{"a":{"b":2}}"#);
    assert_eq!(p.to_write().expect("write"), r#"{"a":{"b":2}}"#);

    let removed = SettingsTree::from_json(r#"{"a":{"b":2}}"#.into()).expect("tree");
    let p = SettingsTree::from_json(old.into())
        .expect("tree")
        .diff(removed);
    assert_eq!(p.removed(), ["a/c", "d"]);
    let (name, e) = kind(p.to_write());
    assert_eq!(name, "invalid_input");
    assert_eq!(e.node_errors().len(), 2);
    assert_eq!(
        kind(settings_diff("{".into(), "{}".into())).0,
        "invalid_input"
    );

    // The fleet case in one call: the same patch as fromJson, diff and toJson.
    let reference = SettingsTree::from_json(old.into()).expect("tree");
    let one_call = reference.diff_json(new.into()).expect("diff");
    assert_eq!(
        one_call,
        settings_diff(old.into(), new.into()).expect("diff")
    );
    let other_shape = reference
        .diff_json(r#"{"a":{"b":1},"e":true}"#.into())
        .expect("diff");
    assert_eq!(other_shape.changed, ["e"]);
    assert_eq!(other_shape.removed, ["a/c", "d"]);
    assert_eq!(other_shape.tree, r#"{"e":true}"#);
    assert_eq!(kind(reference.diff_json("{".into())).0, "invalid_input");
    let (name, e) = kind(reference.diff_json(JsonText::from(b"{\"a\":\"\xff\"}".to_vec())));
    assert_eq!(name, "invalid_input");
    assert!(e.to_string().contains("the new tree"), "{e}");
}
