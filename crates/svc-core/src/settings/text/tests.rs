use proptest::prelude::*;
use serde_json::{Map, Value, json};

use super::*;
use svc_test_support::settings as testing;

/// `diff_json` agrees with `diff` of the parsed values, on the texts as given.
fn check_texts(old_text: &str, new_text: &str) -> Patch {
    let (Ok(old), Ok(new)) = (
        serde_json::from_str::<Value>(old_text),
        serde_json::from_str::<Value>(new_text),
    ) else {
        panic!("test texts are JSON: {old_text} / {new_text}")
    };
    let expected = diff(&old, &new);
    let patch = match diff_json(old_text, new_text) {
        Ok(patch) => patch,
        Err(e) => panic!("{e}: {old_text} -> {new_text}"),
    };
    assert_eq!(patch, expected, "{old_text} -> {new_text}");
    let bytes = diff_json(old_text.as_bytes(), new_text.as_bytes());
    assert_eq!(bytes.as_ref(), Ok(&expected));
    patch
}

/// ... on the values written compact, pretty, and one of each.
fn check(old: &Value, new: &Value) {
    let pretty = |v: &Value| serde_json::to_string_pretty(v).unwrap_or_default();
    check_texts(&old.to_string(), &new.to_string());
    check_texts(&pretty(old), &pretty(new));
    check_texts(&pretty(old), &new.to_string());
}

#[test]
fn agrees_with_the_value_diff() {
    // Empty keys are keys like any other, not the root.
    check(
        &json!({"": 1, "a": {"": [1]}}),
        &json!({"": 2, "a": {"": [2]}}),
    );
    check(
        &json!({"a": {"b": 1, "c": [1, 2]}, "d": true, "e": "x"}),
        &json!({"a": {"b": 1.0, "c": [1, 2]}, "d": 1, "e": "x", "f": null}),
    );
    check(
        &json!({"a": 1, "b": 2, "c": 3}),
        &json!({"b": 2, "a": 1, "d": 4}),
    );
    check(
        &json!({"a": {"x": 1, "y": {"z": 2}}}),
        &json!({"a": {"x": 2}}),
    );
    check(&json!({"a": {"x": 1}}), &json!({"a": 5}));
    check(&json!({"a": 5}), &json!({"a": {"x": 1}}));
    check(&json!([1, 2]), &json!({"a": 1}));
    check(&json!({"a": 1}), &json!([1, 2]));
    check(&json!(3), &json!(3));
    check(&json!({}), &json!({}));
    check(
        &json!({"a": [1, [2, {"b": 3}]], "c": [true]}),
        &json!({"a": [1, [2, {"b": 4}]], "c": []}),
    );
    check(&json!({"a": []}), &json!({"a": [1]}));
    check(&json!({"a": ""}), &json!({"a": "x"}));
    check(&json!({"a": 12}), &json!({"a": 123}));
    check(&json!({"a": 123}), &json!({"a": 12}));
    check(&json!({"a": true}), &json!({"a": false}));
    check(&json!({"a": null, "b": 1}), &json!({"a": 0, "b": 1}));
    let many: Map<String, Value> = (0..40).map(|i| (format!("k{i}"), json!(i))).collect();
    let mut changed = many.clone();
    changed.insert("k7".into(), json!("seven"));
    changed.remove("k30");
    check(&Value::Object(many), &Value::Object(changed));
}

#[test]
fn changes_at_the_edges_of_values() {
    for (old, new) in [
        (r#"{"a": 12, "b": 1}"#, r#"{"a": 123, "b": 1}"#),
        (r#"{"a": 123}"#, r#"{"a": 12}"#),
        (r#"{"a": 1}"#, r#"{"a": 1.5}"#),
        (r#"{"a": true}"#, r#"{"a": false}"#),
        (r#"{"a": null}"#, r#"{"a": 0}"#),
        (r#"{"a": [{"k\"": 1}]}"#, r#"{"a": [{"k\"": 2}]}"#),
        (r#"{"a": []}"#, r#"{"a": [1]}"#),
        (r#"{"a": [1, 2]}"#, r#"{"a": [1,2]}"#),
        (r#"{"a": ""}"#, r#"{"a": "x"}"#),
        (
            r#"{"a": {"b": [1, {"c": 2}]}}"#,
            r#"{"a": {"b": [1, {"c": 3}]}}"#,
        ),
        (
            r#"{"a": {"b": [1, {"c": 2}]}}"#,
            r#"{"a": {"b": [1, {"d": 2}]}}"#,
        ),
        (r#"{"a": {"b": 1}}"#, r#"{"a": 7}"#),
        (r#"{"a": 7, "z": 0}"#, r#"{"a": {"b": 1}, "z": 0}"#),
        (r#"{"a":  1}"#, r#"{"a": 2}"#),
        (r#"{"a": 1}"#, r#"{"a":   2}"#),
        (
            r#"{ "a" : 1 , "b":[ 1,2 ] }"#,
            "{\"a\":1,\n\"b\":\t[1,\r2]}",
        ),
        (r#"{ "a" : 1 , "b":[ 1,2 ] } "#, r#"{"a":1,"b":[1,3]}"#),
        (r#"{"a":1,"b":[1,2]}"#, r#"  { "a" : 2 , "b":[ 1,2 ] }  "#),
    ] {
        check_texts(old, new);
    }
}

#[test]
fn two_exports_of_one_schema() {
    let tree = testing::unit_default_tree();
    let changed = testing::change_leaves(&tree, 0.01, 7);
    for write in [
        |v: &Value| v.to_string(),
        |v: &Value| serde_json::to_string_pretty(v).unwrap_or_default(),
    ] {
        let (old, new) = (write(&tree), write(&changed));
        let patch = check_texts(&old, &new);
        assert!(patch.changed.len() >= 5, "{patch:?}");
        assert!(check_texts(&old, &old).is_empty());
    }
    // One written compact, the other indented.
    let compact = tree.to_string();
    let pretty = serde_json::to_string_pretty(&changed).unwrap_or_default();
    check_texts(&compact, &pretty);
    check_texts(&pretty, &compact);
    // Another key.
    let Some(renamed) = changed.as_object().map(|root| {
        root.iter()
            .enumerate()
            .map(|(at, (k, v))| (if at == 3 { format!("{k}2") } else { k.clone() }, v.clone()))
            .collect::<Map<String, Value>>()
    }) else {
        panic!("the unit tree is an object")
    };
    let renamed = Value::Object(renamed).to_string();
    check_texts(&compact, &renamed);
}

#[test]
fn the_same_value_in_other_text_is_equal() {
    let patch = check_texts(
        r#"{"a": {"x": 1, "y": [1.0, "\u0061"]}, "b": 1e2, "c": "\u0062"}"#,
        r#"{"a": {"x": 1, "y": [1.00, "a"]}, "b": 100.0, "c": "b"}"#,
    );
    assert!(patch.is_empty());
    assert_eq!(patch.tree, json!({}));
    let patch = check_texts(r#"{"a":   1, "b": [1,  2]}"#, r#"{"a": 1, "b": [1, 2]}"#);
    assert!(patch.is_empty());
    check_texts(
        r#"{"a": {"x": 1, "y": [1.0, "\u0061"]}, "b": 1e2}"#,
        r#"{"a":{"y":[1.00,"a"],"x":1},"b":100.0}"#,
    );
}

#[test]
fn duplicated_keys_read_as_serde_json_reads_them() {
    for (old, new) in [
        (r#"{"a": 1, "b": 2, "a": 3}"#, r#"{"b": 2, "a": 3}"#),
        (r#"{"a": 1, "a": 2}"#, r#"{"a": 2, "a": 2}"#),
        (
            r#"{"a": {"x": 1}, "a": {"x": 1}}"#,
            r#"{"a": {"x": 2}, "a": {"x": 1}}"#,
        ),
        (r#"{"a": 1, "b": 1, "a": 1}"#, r#"{"a": 1, "b": 2, "a": 1}"#),
        // A change between the two places of another changed key: the patch lists the
        // key at the place of its first.
        (r#"{"k": 1, "j": 1, "k": 2}"#, r#"{"k": 1, "j": 2, "k": 3}"#),
    ] {
        check_texts(old, new);
    }
    // A key twice off the way to any change (the same bytes in both texts: the same
    // last value) does not matter.
    for (old, new) in [
        (r#"{"a": 1, "c": 5, "c": 5}"#, r#"{"a": 2, "c": 5, "c": 5}"#),
        (
            r#"{"x": {"d": 1, "d": [1]}, "y": {"v": 1}}"#,
            r#"{"x": {"d": 1, "d": [1]}, "y": {"v": 2}}"#,
        ),
    ] {
        check_texts(old, new);
    }
    let keys = (0..20)
        .map(|i| format!("\"k{i}\": {i}"))
        .collect::<Vec<_>>()
        .join(", ");
    let old = format!("{{{keys}, \"k3\": \"again\"}}");
    let patch = check_texts(&old, &format!("{{{keys}}}"));
    assert_eq!(patch.tree, json!({"k3": 3}));
}

#[test]
fn keys_with_escapes_and_non_ascii_text() {
    check_texts(
        r#"{"k\"ey": 1, "é": "ü", "b": "\n"}"#,
        r#"{"k\"ey": 2, "é": "ü", "b": "\t"}"#,
    );
    check_texts(r#"{"é": {"ü": "à"}}"#, r#"{"é": {"ü": "ß"}}"#);
}

#[test]
fn text_that_is_not_json_names_the_document() {
    let not_json = |old: &str, new: &str, which: &str| match diff_json(old, new) {
        Err(SettingsError::NotJson { document, .. }) => {
            assert_eq!(document, which, "{old} / {new}")
        }
        other => panic!("{old} / {new}: {other:?}"),
    };
    not_json("{", "{}", "the old tree");
    not_json("{}", r#"{"a": tru}"#, "the new tree");
    // The same broken text on both sides is still broken.
    for broken in [
        r#"{"a": tru}"#,
        r#"{"a": 1e400}"#,
        r#"{"a": 01}"#,
        r#"{"a": 1.}"#,
        r#"{"a": "x"} x"#,
        r#"{"a": "x",}"#,
        r#"{"a": [1,]}"#,
        "{\"a\": \"\u{1}\"}",
        r#"{"a": "\x"}"#,
        r#"{"a" 1}"#,
    ] {
        assert!(diff_json(broken, broken).is_err(), "{broken}");
    }
    // Broken only where the texts differ.
    not_json(
        r#"{"a": 1, "b": 2}"#,
        r#"{"a": 1, "b": 2x}"#,
        "the new tree",
    );
    not_json(
        r#"{"a": 1, "b": 2}"#,
        r#"{"a": 1, "b": true2}"#,
        "the new tree",
    );
    not_json(r#"{"a": 1}"#, r#"{"a": 1} 2"#, "the new tree");
    not_json(r#"{"a": [1, 2]}"#, r#"{"a": [1, 2}"#, "the new tree");
    let e = diff_json("{\"password\": \"hunter2", "{}").expect_err("not JSON");
    assert!(!e.to_string().contains("hunter2"), "{e}");
    assert_eq!(e.kind(), crate::error::ErrorKind::InvalidInput);
    assert!(diff_json(b"{\"a\": \"\xff\"}", b"{}").is_err());
}

#[test]
fn deep_documents_are_refused_as_serde_json_refuses_them() {
    for depth in [60, 70, 200, 10_000] {
        let deep = format!("{}1{}", "{\"a\":".repeat(depth), "}".repeat(depth));
        let expected = serde_json::from_str::<Value>(&deep).is_ok();
        assert_eq!(diff_json(&deep, &deep).is_ok(), expected, "depth {depth}");
        let deep_array = format!("{{\"a\":{}1{}}}", "[".repeat(depth), "]".repeat(depth));
        let expected = serde_json::from_str::<Value>(&deep_array).is_ok();
        let other = deep_array.replace('1', "2");
        assert_eq!(
            diff_json(&deep_array, &other).is_ok(),
            expected,
            "depth {depth}"
        );
    }
}

/// A random settings-like tree: objects of a few keys over scalars and small arrays.
fn tree() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        (-1000i64..1000).prop_map(|n| json!(n)),
        (-100.0f64..100.0).prop_map(|x| json!((x * 8.0).round() / 8.0)),
        "[a-c\\\\\"é\n]{0,4}".prop_map(Value::String),
        prop::collection::vec((0i64..4).prop_map(|n| json!(n)), 0..3).prop_map(Value::Array),
    ];
    leaf.prop_recursive(4, 48, 5, |inner| {
        prop::collection::vec(("[a-e]{1,2}", inner), 0..5)
            .prop_map(|entries| Value::Object(entries.into_iter().collect()))
    })
}

/// `tree` with some leaves changed (to another leaf or a sub-tree), added or removed.
fn edit(tree: &Value, choices: &[u8], at: &mut usize) -> Value {
    fn next(choices: &[u8], at: &mut usize) -> u8 {
        *at += 1;
        choices
            .get(*at % choices.len().max(1))
            .copied()
            .unwrap_or(0)
    }
    let mut choice = || next(choices, at);
    match tree {
        Value::Object(map) => {
            let mut out = Map::new();
            for (key, value) in map {
                match next(choices, at) % 16 {
                    0 => {} // removed
                    1 => {
                        out.insert(key.clone(), json!({"n": 1}));
                    }
                    2 => {
                        out.insert(key.clone(), value.clone());
                        out.insert(format!("{key}+"), json!(2));
                    }
                    _ => {
                        out.insert(key.clone(), edit(value, choices, at));
                    }
                }
            }
            Value::Object(out)
        }
        Value::Number(n) if choice() % 3 == 0 => json!(n.as_f64().unwrap_or(0.0) + 1.5),
        Value::Array(items) if choice() % 3 == 0 => {
            let mut items = items.clone();
            items.push(json!(9));
            Value::Array(items)
        }
        Value::String(s) if choice() % 3 == 0 => Value::String(format!("{s}\"")),
        Value::Bool(b) if choice() % 3 == 0 => json!(!b),
        other => other.clone(),
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]

    #[test]
    fn agrees_with_the_value_diff_on_random_trees(
        old in tree(),
        choices in prop::collection::vec(any::<u8>(), 1..64),
        root_object in any::<bool>(),
    ) {
        let old = if root_object && !old.is_object() { json!({"r": old}) } else { old };
        let new = edit(&old, &choices, &mut 0);
        check(&old, &new);
        check(&new, &old);
    }
}
