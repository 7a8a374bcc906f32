//! Settings trees (svc-core `settings`): node paths, diff (of values, of JSON texts,
//! of `SettingsTree`s), apply, three-way merge, and the typed tree (the schema).
//!
//! Input: `old NUL new NUL theirs NUL path`, each part optional (JSON text cannot hold
//! a raw NUL, so the parts are what a settings file or a unit would give). The texts
//! need not be JSON or UTF-8.
//!
//! Properties checked:
//! 1. nothing panics;
//! 2. a path parses exactly when no segment is empty or reserved (`.`, `..`, `\`, a
//!    control character, an action's name first), and reads back as written;
//!    `set` then `get` gives the value set;
//! 3. `diff_json` of two texts (as bytes or as `str`) is `diff` of their parsed values,
//!    and fails exactly when a text is not JSON; so is a kept `SettingsTree`'s
//!    `diff_json` of the new text; the old text with its keys in another order gives
//!    `diff` of that tree;
//! 4. `apply(old, diff(old, new).tree)` is `new` when the patch has no removals;
//!    `SettingsTree` gives the same diff, the same equality (whatever the key order)
//!    and the same applied tree as the values, and reads a text (`from_json`) as the
//!    parsed value. `diff` is the settings walk over values: every other
//!    representation and fast path is held to it;
//! 5. three-way merge: one side unchanged gives the other side; both sides alike give
//!    that side; a clean merge does not depend on which side is ours;
//! 6. the typed tree: what the schema accepts converts back to a JSON tree that the
//!    schema reads as the same typed tree, and that tree differs from the input only
//!    by the nodes reported as dropped (and numbers' form).
#![no_main]

use libfuzzer_sys::fuzz_target;
use serde_json::Value;
use svc_core::settings::{
    ACTION_ROUTES, NodePath, SettingsError, SettingsTree, apply, diff, diff_json, from_value,
    from_value_lossy, get, leaf_paths, merge, set, to_value,
};

fuzz_target!(|input: &[u8]| {
    let mut parts = input.splitn(4, |&byte| byte == 0);
    let old = parts.next().unwrap_or_default();
    let new = parts.next().unwrap_or_default();
    let theirs = parts.next().unwrap_or_default();
    let path = parts.next().unwrap_or_default();

    let old_value = serde_json::from_slice::<Value>(old).ok();
    let new_value = serde_json::from_slice::<Value>(new).ok();
    let theirs_value = serde_json::from_slice::<Value>(theirs).ok();

    check_path(path, old_value.as_ref());
    check_diff_json(old, new, old_value.as_ref(), new_value.as_ref());
    check_tree_text(old, old_value.as_ref());
    if let (Some(old), Some(new)) = (&old_value, &new_value) {
        check_diff_and_apply(old, new);
        check_trees(old, new);
        if let Some(theirs) = &theirs_value {
            check_merge(old, new, theirs);
        }
    }
    for tree in [&old_value, &new_value].into_iter().flatten() {
        check_typed(tree);
    }
});

/// 2: parse, display, segments, set and get.
fn check_path(text: &[u8], tree: Option<&Value>) {
    let Ok(text) = std::str::from_utf8(text) else {
        return;
    };
    match NodePath::parse(text) {
        Ok(path) => {
            assert!(text.is_empty() || !text.split('/').any(str::is_empty));
            assert!(
                text.is_empty()
                    || !text
                        .split('/')
                        .enumerate()
                        .any(|(index, segment)| reserved(segment, index == 0)),
                "a path with a reserved segment parsed: {text:?}"
            );
            assert_eq!(path.as_str(), text);
            assert_eq!(path.to_string(), text);
            let segments: Vec<&str> = path.segments().collect();
            assert_eq!(segments.len(), path.len());
            assert_eq!(NodePath::from_segments(&segments).as_ref(), Ok(&path));
            assert_eq!(text.parse::<NodePath>().as_ref(), Ok(&path));
            if let Some(parent) = path.parent() {
                assert!(path.starts_with(&parent));
                assert_eq!(
                    parent.join(path.last().expect("not the root")).as_ref(),
                    Ok(&path)
                );
            } else {
                assert!(path.is_root());
            }
            let mut tree = tree
                .cloned()
                .unwrap_or_else(|| Value::Object(Default::default()));
            let before = tree.clone();
            let value = Value::String("fuzz".to_owned());
            match set(&mut tree, &path, value.clone()) {
                Ok(replaced) => {
                    assert_eq!(get(&tree, &path), Some(&value));
                    assert_eq!(replaced.as_ref(), get(&before, &path));
                }
                Err(SettingsError::NotAnObject { path: at, node }) => {
                    assert_eq!(at, path);
                    assert!(path.starts_with(&node) && node != path);
                    assert_eq!(tree, before, "a failed set changed the tree");
                }
                Err(other) => panic!("unexpected set error: {other:?}"),
            }
        }
        Err(SettingsError::EmptySegment { path }) => {
            assert_eq!(path, text);
            assert!(text.split('/').any(str::is_empty));
        }
        Err(SettingsError::ReservedSegment { path, .. }) => {
            assert_eq!(path, text);
            assert!(!text.split('/').any(str::is_empty));
            assert!(
                text.split('/')
                    .enumerate()
                    .any(|(index, segment)| reserved(segment, index == 0)),
                "a path without a reserved segment refused: {text:?}"
            );
        }
        Err(other) => panic!("unexpected parse error: {other:?}"),
    }
}

/// Whether a segment cannot name a node (as `NodePath` documents): `.` or `..`, a
/// segment holding `\` or a control character, or, first, a settings action's name.
fn reserved(segment: &str, first: bool) -> bool {
    segment == "."
        || segment == ".."
        || segment.contains('\\')
        || segment.chars().any(char::is_control)
        || (first && ACTION_ROUTES.contains(&segment))
}

/// 3: the text diff is the value diff.
fn check_diff_json(old: &[u8], new: &[u8], old_value: Option<&Value>, new_value: Option<&Value>) {
    let from_bytes = diff_json(old, new);
    if let (Ok(old_text), Ok(new_text)) = (std::str::from_utf8(old), std::str::from_utf8(new)) {
        assert_eq!(
            diff_json(old_text, new_text),
            from_bytes,
            "diff_json of bytes and of str differ"
        );
    }
    // A kept tree's `diff_json` is the same diff, of the text as given and of its
    // compact form (compared byte by byte with the tree's own compact text).
    if let (Some(old), Ok(new_text)) = (old_value, std::str::from_utf8(new)) {
        let tree = SettingsTree::from_value(old);
        assert_eq!(
            tree.diff_json(new_text),
            from_bytes,
            "SettingsTree::diff_json differs"
        );
        if let Some(new) = new_value {
            assert_eq!(
                tree.diff_json(&new.to_string()),
                Ok(diff(old, new)),
                "SettingsTree::diff_json of the compact text differs"
            );
        }
    }
    match (old_value, new_value) {
        (Some(old), Some(new)) => {
            assert_eq!(
                from_bytes,
                Ok(diff(old, new)),
                "the text diff is not the value diff"
            );
            // Keys in another order.
            let backwards = reversed(old);
            assert_eq!(
                diff_json(&backwards.to_string(), &new.to_string()),
                Ok(diff(&backwards, new)),
                "the diff of text nodes is not the value diff"
            );
        }
        (None, _) => assert!(
            matches!(
                from_bytes,
                Err(SettingsError::NotJson { ref document, .. }) if document == "the old tree"
            ),
            "{from_bytes:?}"
        ),
        (Some(_), None) => assert!(
            matches!(
                from_bytes,
                Err(SettingsError::NotJson { ref document, .. }) if document == "the new tree"
            ),
            "{from_bytes:?}"
        ),
    }
}

/// 4: diff then apply gives the new tree back.
fn check_diff_and_apply(old: &Value, new: &Value) {
    let patch = diff(old, new);
    assert_eq!(patch.is_empty(), old == new);
    if patch.removed.is_empty() {
        assert_eq!(
            &apply(old, &patch.tree),
            new,
            "diff then apply is not the new tree"
        );
        assert_eq!(patch.clone().into_write().as_ref(), Ok(&patch.tree));
    } else {
        assert!(matches!(
            patch.clone().into_write(),
            Err(SettingsError::RemovalNotExpressible { ref removed }) if *removed == patch.removed
        ));
    }
    assert!(diff(new, new).is_empty());
    let _ = leaf_paths(new);
}

/// 4: `SettingsTree` agrees with the values.
fn check_trees(old: &Value, new: &Value) {
    let old_tree = SettingsTree::from_value(old);
    let new_tree = SettingsTree::from_value(new);
    assert_eq!(&old_tree.to_value(), old);
    assert_eq!(&new_tree.to_value(), new);
    let patch = diff(old, new);
    assert_eq!(
        old_tree.diff(&new_tree).to_patch(),
        patch,
        "SettingsTree diff differs"
    );
    let applied = old_tree.apply(&patch.tree).to_value();
    assert_eq!(
        applied,
        apply(old, &patch.tree),
        "SettingsTree apply differs"
    );
    let written = old_tree.apply(new).to_value();
    assert_eq!(written, apply(old, new));
    // The walk's equality is serde_json's, whatever the key order.
    assert_eq!(
        old_tree == SettingsTree::from_value(&reversed(new)),
        old == new,
        "SettingsTree equality differs"
    );
}

/// `tree` with the keys of every object in reverse order (the same tree as JSON).
fn reversed(tree: &Value) -> Value {
    match tree {
        Value::Object(map) => Value::Object(
            map.iter()
                .rev()
                .map(|(key, value)| (key.clone(), reversed(value)))
                .collect(),
        ),
        Value::Array(items) => Value::Array(items.iter().map(reversed).collect()),
        other => other.clone(),
    }
}

/// 4: `SettingsTree::from_json` of a text is `from_value` of the parsed text, whether
/// or not a tree of its shape was built just before (two ways of reading it).
fn check_tree_text(text: &[u8], parsed: Option<&Value>) {
    let read = || match std::str::from_utf8(text) {
        Ok(text) => SettingsTree::from_json(text),
        Err(_) => SettingsTree::from_json_bytes(text),
    };
    let first = read();
    match parsed {
        Some(value) => {
            let tree = first.expect("a JSON text reads as a SettingsTree");
            assert_eq!(&tree.to_value(), value, "from_json is not the parsed value");
            // Now its shape is known: read straight into it.
            let again = read().expect("a JSON text reads as a SettingsTree");
            assert_eq!(
                &again.to_value(),
                value,
                "from_json into a known shape differs"
            );
            assert!(again.diff(&SettingsTree::from_value(value)).is_empty());
        }
        None => assert!(
            matches!(first, Err(SettingsError::NotJson { .. })),
            "{:?}",
            first.map(|tree| tree.to_value())
        ),
    }
}

/// 5: three-way merge.
fn check_merge(base: &Value, ours: &Value, theirs: &Value) {
    let one_sided = merge(base, ours, base);
    assert!(one_sided.is_clean(), "{:?}", one_sided.conflicts);
    assert_eq!(
        &one_sided.tree, ours,
        "theirs unchanged: the merge is not ours"
    );
    let other_sided = merge(base, base, theirs);
    assert!(other_sided.is_clean());
    assert_eq!(
        &other_sided.tree, theirs,
        "ours unchanged: the merge is not theirs"
    );
    let alike = merge(base, theirs, theirs);
    assert!(alike.is_clean());
    assert_eq!(&alike.tree, theirs);
    let merged = merge(base, ours, theirs);
    let swapped = merge(base, theirs, ours);
    assert_eq!(merged.conflicts.len(), swapped.conflicts.len());
    if merged.is_clean() {
        assert_eq!(
            merged.tree, swapped.tree,
            "a clean merge depends on the side"
        );
    }
}

/// 6: the typed tree.
fn check_typed(tree: &Value) {
    let Ok((settings, dropped)) = from_value_lossy(tree.clone()) else {
        assert!(from_value(tree.clone()).is_err());
        return;
    };
    match from_value(tree.clone()) {
        Ok(strict) => {
            assert!(dropped.is_empty());
            assert_eq!(strict, settings);
        }
        Err(SettingsError::UnknownNodes { paths }) => assert_eq!(paths, dropped),
        Err(other) => panic!("the lossy read accepted what the strict one refuses: {other:?}"),
    }
    let back = to_value(&settings).expect("a typed tree read from JSON has finite numbers");
    let (again, dropped_again) =
        from_value_lossy(back.clone()).expect("the schema reads its own tree");
    assert!(dropped_again.is_empty(), "{dropped_again:?}");
    assert_eq!(
        again, settings,
        "the typed tree changed through its JSON form"
    );
    assert!(diff(&back, &to_value(&again).expect("finite numbers")).is_empty());
}
