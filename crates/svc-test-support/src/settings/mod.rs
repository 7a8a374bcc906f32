//! Settings trees for tests and benchmarks: a full default settings tree of the unit's
//! shape, a tree ten times larger, and deterministic random edits.
//!
//! The default tree is built from the `Settings` schema of `openapi/ins-device.yaml`
//! by [`default_tree_from_openapi`] (every module and field, every message name of the
//! `x-message-names` lists with trigger `off`, vectors `[0.0, 0.0, 0.0]`, plausible
//! strings and numbers). [`unit_default_tree`] returns a copy of it kept beside this
//! file (`unit_default.json`), so that benchmarks need no YAML parser; a unit test
//! checks that the copy matches the document (`SVC_UPDATE_SNAPSHOTS=1` rewrites it).

use serde_json::{Map, Value, json};

/// The default tree built from the document, as kept in `unit_default.json`.
const UNIT_DEFAULT_JSON: &str = include_str!("unit_default.json");

/// The unit's default settings tree (about a thousand leaves), built from the
/// document's `Settings` schema.
pub fn unit_default_tree() -> Value {
    // Cannot fail: the copy is compiled in, and `the_kept_default_tree_matches_the_document`
    // checks that it is valid JSON equal to the document's tree. (An empty tree in its
    // place would let every benchmark and test built on it measure nothing.)
    serde_json::from_str(UNIT_DEFAULT_JSON).expect("unit_default.json is valid JSON")
}

/// `tree` with the keys of every object in reverse order (the same tree as JSON).
pub fn reversed(tree: &Value) -> Value {
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

/// A tree `copies` times the size of `unit`, of the same shape: copies of it under the
/// keys `unit0`, `unit1`, ...
pub fn large_tree(unit: &Value, copies: usize) -> Value {
    Value::Object(
        (0..copies)
            .map(|index| (format!("unit{index}"), unit.clone()))
            .collect(),
    )
}

/// A copy of `tree` with `fraction` of its leaves (at least one, chosen by a PRNG
/// seeded with `seed`) changed: booleans flipped, numbers increased, strings changed
/// (`off` becomes `10ms`), the first item of arrays changed.
pub fn change_leaves(tree: &Value, fraction: f64, seed: u64) -> Value {
    let mut out = tree.clone();
    let mut leaves = leaf_paths(tree);
    let wanted = ((leaves.len() as f64 * fraction).round() as usize).clamp(1, leaves.len().max(1));
    let mut rng = SplitMix64(seed);
    // Partial Fisher-Yates: the first `wanted` leaves are a uniform random choice.
    for index in 0..wanted.min(leaves.len()) {
        let pick = index + rng.below(leaves.len() - index);
        leaves.swap(index, pick);
        if let Some(node) = node_mut(&mut out, &leaves[index]) {
            change(node);
        }
    }
    out
}

/// A small deterministic PRNG (SplitMix64).
#[derive(Debug, Clone)]
pub struct SplitMix64(pub u64);

impl SplitMix64 {
    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// A number in `0..bound` (`bound` > 0; 0 gives 0).
    pub fn below(&mut self, bound: usize) -> usize {
        if bound == 0 {
            0
        } else {
            (self.next_u64() % bound as u64) as usize
        }
    }
}

/// The paths (as their keys) of the leaves of `tree`, in document order: every node
/// that is not an object, and every empty object. The same leaves, in the same order,
/// as `svc_core::settings::leaf_paths`, so that [`change_leaves`] picks the same ones
/// it always did.
fn leaf_paths(tree: &Value) -> Vec<Vec<String>> {
    fn walk(node: &Value, stack: &mut Vec<String>, out: &mut Vec<Vec<String>>) {
        match node {
            Value::Object(map) if !map.is_empty() => {
                for (key, child) in map {
                    stack.push(key.clone());
                    walk(child, stack, out);
                    stack.pop();
                }
            }
            _ => out.push(stack.clone()),
        }
    }
    let mut out = Vec::new();
    walk(tree, &mut Vec::new(), &mut out);
    out
}

fn node_mut<'a>(tree: &'a mut Value, path: &[String]) -> Option<&'a mut Value> {
    path.iter()
        .try_fold(tree, |node, segment| node.as_object_mut()?.get_mut(segment))
}

fn change(node: &mut Value) {
    match node {
        Value::Bool(flag) => *flag = !*flag,
        Value::Number(number) => {
            *node = if let Some(int) = number.as_i64() {
                json!(int.wrapping_add(1))
            } else if let Some(uint) = number.as_u64() {
                json!(uint.wrapping_add(1))
            } else {
                json!(number.as_f64().unwrap_or(0.0) + 0.5)
            };
        }
        Value::String(text) if text == "off" => *text = "10ms".to_owned(),
        Value::String(text) => text.push('x'),
        Value::Array(items) => match items.first_mut() {
            Some(first) => change(first),
            None => items.push(json!(0)),
        },
        Value::Null => *node = json!(0),
        Value::Object(map) => {
            map.insert("added".to_owned(), json!(true));
        }
    }
}

/// Builds the default settings tree from an OpenAPI document (parsed into a JSON
/// value), walking `components/schemas/Settings`.
///
/// # Errors
///
/// A message when the document lacks the schema, a `$ref` does not resolve, or a
/// schema has a type the walk does not know.
pub fn default_tree_from_openapi(document: &Value) -> Result<Value, String> {
    let schemas = document
        .pointer("/components/schemas")
        .and_then(Value::as_object)
        .ok_or("the document has no components/schemas")?;
    let settings = schemas.get("Settings").ok_or("no Settings schema")?;
    let mut walk = Walk {
        schemas,
        next_can_id: 0x100,
    };
    walk.node(settings, &mut Vec::new())
}

struct Walk<'a> {
    schemas: &'a Map<String, Value>,
    next_can_id: u64,
}

impl<'a> Walk<'a> {
    fn resolve(&self, mut schema: &'a Value) -> Result<&'a Value, String> {
        while let Some(reference) = schema.get("$ref").and_then(Value::as_str) {
            let name = reference
                .strip_prefix("#/components/schemas/")
                .ok_or_else(|| format!("unsupported $ref {reference}"))?;
            schema = self
                .schemas
                .get(name)
                .ok_or_else(|| format!("unresolved $ref {reference}"))?;
        }
        Ok(schema)
    }

    fn node(&mut self, schema: &'a Value, path: &mut Vec<String>) -> Result<Value, String> {
        let schema = self.resolve(schema)?;
        let name = path.last().map_or("", String::as_str);
        if let Some(value) = schema.get("default").or_else(|| schema.get("example"))
            && !schema.get("type").is_some_and(|kind| kind == "object")
        {
            return Ok(value.clone());
        }
        if let Some(first) = schema
            .get("enum")
            .and_then(Value::as_array)
            .and_then(|values| values.first())
        {
            return Ok(first.clone());
        }
        let kind = schema.get("type").and_then(Value::as_str).unwrap_or("");
        Ok(match kind {
            "object" => {
                let mut out = Map::new();
                if let Some(properties) = schema.get("properties").and_then(Value::as_object) {
                    for (key, property) in properties {
                        path.push(key.clone());
                        let value = self.node(property, path)?;
                        path.pop();
                        out.insert(key.clone(), value);
                    }
                }
                if let (Some(names), Some(item)) = (
                    schema.get("x-message-names").and_then(Value::as_array),
                    schema.get("additionalProperties"),
                ) {
                    for key in names.iter().filter_map(Value::as_str) {
                        path.push(key.to_owned());
                        let value = self.node(item, path)?;
                        path.pop();
                        out.insert(key.to_owned(), value);
                    }
                }
                Value::Object(out)
            }
            "array" => {
                let count = schema.get("minItems").and_then(Value::as_u64).unwrap_or(0);
                let item = self.resolve(schema.get("items").ok_or("array without items")?)?;
                match item.get("type").and_then(Value::as_str) {
                    Some("number") if count == 9 => {
                        json!([1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0])
                    }
                    Some("number") => Value::Array(vec![json!(0.0); count as usize]),
                    Some("string") if name == "rough" && count == 2 => json!(["forward", "right"]),
                    Some("string") => Value::Array(vec![json!("x"); count as usize]),
                    other => return Err(format!("array of {other:?} at {}", path.join("/"))),
                }
            }
            "string" => json!(string_value(path)),
            "number" => json!(number_value(name)),
            "integer" => {
                if name == "id" {
                    self.next_can_id += 1;
                    json!(self.next_can_id - 1)
                } else {
                    json!(integer_value(name))
                }
            }
            "boolean" => json!(name == "useOnBoardWMM"),
            other => return Err(format!("type {other:?} at {}", path.join("/"))),
        })
    }
}

fn string_value(path: &[String]) -> &'static str {
    let name = path.last().map_or("", String::as_str);
    let parent = path
        .len()
        .checked_sub(2)
        .map_or("", |index| path[index].as_str());
    let module = path.first().map_or("", String::as_str);
    match (module, parent, name) {
        ("imu", _, "model") | ("aiding", "gnss1", "model") => "internal",
        ("network", "ipv4", "mode") => "dhcp",
        ("ports", port, "mode") if port.starts_with("com") => "rs232",
        ("output", "nmea", "mode") => "standard",
        ("clock" | "dataLogger", _, "mode") => "auto",
        (_, _, "mode") => "disabled",
        (_, _, "model" | "antenna") => "default",
        (_, _, "refPoint") => "imu",
        (_, _, "source" | "sync" | "parity") => "none",
        (_, _, "headingMode") => "auto",
        (_, _, name)
            if name.starts_with("use")
                && name.as_bytes().get(3).is_some_and(u8::is_ascii_uppercase) =>
        {
            "auto"
        }
        (_, _, "motionProfile") => "generalPurpose",
        (_, _, "ggaInterval") => "off",
        (_, _, "calibrationMode") => "2d",
        (_, _, "ip") => "192.168.1.1",
        (_, _, "ipGnss") => "192.168.1.2",
        (_, _, "netmask") => "255.255.255.0",
        (_, _, "gateway") => "192.168.1.254",
        (_, _, "dns1") => "8.8.8.8",
        (_, _, "dns2") => "8.8.4.4",
        (_, _, "udpIp") => "0.0.0.0",
        (_, _, "protocol") => "disabled",
        ("events", _, "trigger") => "disabled",
        (_, _, "polarity") => "rising",
        (_, _, "timeScale") => "tai",
        (_, _, "talkerId") => "GP",
        ("output", _, "leverArm") => "primary",
        (_, _, "startThreshold") => "always",
        (_, _, "sessionName") => "session",
        _ => "",
    }
}

fn number_value(name: &str) -> f64 {
    match name {
        "gain" => 1.0,
        "gainError" => 0.1,
        "rollPitch" | "velocity" => 0.5,
        "heading" => 1.0,
        "position" => 2.0,
        "latitude" => 48.85,
        "longitude" => 2.35,
        "height" => 35.0,
        "duration" => 0.001,
        _ => 0.0,
    }
}

fn integer_value(name: &str) -> i64 {
    match name {
        "baudrate" => 115_200,
        "bitrate" => 1_000_000,
        "port" => 2101,
        "priority1" | "priority2" => 128,
        "leapSec" => 18,
        "udpOutPort" => 5000,
        "udpInPort" => 5001,
        "tcpClientPort" => 5002,
        "tcpServerPort" => 5003,
        _ => 0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const DOCUMENT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../openapi/ins-device.yaml");
    const SNAPSHOT: &str = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/src/settings/unit_default.json"
    );

    fn from_document() -> Value {
        let text = std::fs::read_to_string(DOCUMENT).unwrap();
        let yaml: serde_yaml::Value = serde_yaml::from_str(&text).unwrap();
        let document = serde_json::to_value(yaml).unwrap();
        default_tree_from_openapi(&document).unwrap()
    }

    /// The leaves that differ between two trees (changed, or in one tree only), for
    /// the message of a failed comparison.
    fn differing_leaves(old: &Value, new: &Value) -> Vec<String> {
        let at = |tree: &Value, path: &[String]| {
            path.iter()
                .try_fold(tree, |node, key| node.get(key))
                .cloned()
        };
        let mut paths = leaf_paths(old);
        paths.extend(leaf_paths(new).into_iter().filter(|p| at(old, p).is_none()));
        paths
            .into_iter()
            .filter(|path| at(old, path) != at(new, path))
            .map(|path| path.join("/"))
            .collect()
    }

    #[test]
    fn the_kept_default_tree_matches_the_document() {
        let built = from_document();
        if std::env::var_os("SVC_UPDATE_SNAPSHOTS").is_some() {
            let text = serde_json::to_string_pretty(&built).unwrap() + "\n";
            std::fs::write(SNAPSHOT, text).unwrap();
        }
        let kept: Value = serde_json::from_str(UNIT_DEFAULT_JSON).unwrap();
        let differing = differing_leaves(&kept, &built);
        assert!(
            differing.is_empty() && kept == built,
            "unit_default.json is out of date with openapi/ins-device.yaml (rerun with SVC_UPDATE_SNAPSHOTS=1): differing leaves {differing:?}"
        );
        // Same key order too (document order).
        assert_eq!(
            serde_json::to_string(&kept).unwrap(),
            serde_json::to_string(&built).unwrap()
        );
    }

    #[test]
    fn leaves_are_the_non_objects_and_the_empty_objects_in_order() {
        let tree = json!({"b": {"x": 1, "e": {}}, "a": [1, 2], "c": {"d": null}});
        let paths: Vec<String> = leaf_paths(&tree).iter().map(|p| p.join("/")).collect();
        assert_eq!(paths, ["b/x", "b/e", "a", "c/d"]);
        assert_eq!(leaf_paths(&json!(3)), [Vec::<String>::new()]);
    }

    #[test]
    fn the_same_seed_picks_the_same_leaves() {
        let tree = unit_default_tree();
        let changed = change_leaves(&tree, 0.01, 7);
        assert_eq!(changed, change_leaves(&tree, 0.01, 7));
        assert_ne!(changed, change_leaves(&tree, 0.01, 8));
        assert_ne!(changed, tree);
    }
}
