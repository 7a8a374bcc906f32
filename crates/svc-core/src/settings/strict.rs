//! A key written twice in one object of a settings file: JSON parsers keep the last
//! one silently, so a wanted tree whose first occurrence is the one meant would be
//! applied as the other. Settings files are refused for it, naming the key, its node
//! and its line.

use std::cell::RefCell;
use std::collections::HashSet;
use std::fmt;

use serde::de::{self, DeserializeSeed, MapAccess, SeqAccess, Visitor};

/// A key found twice in one object.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct DuplicateKey {
    /// The node the key names, e.g. `oem/label` (`/` between levels).
    pub node: String,
    /// The key itself.
    pub key: String,
    /// The line (from 1) of its second occurrence.
    pub line: usize,
    /// The column (from 1) there.
    pub column: usize,
}

thread_local! {
    /// The duplicate found by the walk below, handed out of serde's error.
    static FOUND: RefCell<Option<(String, String)>> = const { RefCell::new(None) };
}

/// The first key that appears twice in one object of the JSON `text`, if any.
///
/// # Errors
/// serde_json's error when `text` is not JSON (its position, never a value).
pub(crate) fn first_duplicate_key(text: &str) -> Result<Option<DuplicateKey>, serde_json::Error> {
    FOUND.with(|found| found.borrow_mut().take());
    let mut deserializer = serde_json::Deserializer::from_str(text);
    let walked = Walk { node: "" }
        .deserialize(&mut deserializer)
        .and_then(|()| deserializer.end());
    match walked {
        Ok(()) => Ok(None),
        Err(e) => match FOUND.with(|found| found.borrow_mut().take()) {
            Some((node, key)) => Ok(Some(DuplicateKey {
                node,
                key,
                line: e.line(),
                column: e.column(),
            })),
            None => Err(e),
        },
    }
}

/// Walks one value at `node`, checking the keys of every object.
#[derive(Clone, Copy)]
struct Walk<'a> {
    node: &'a str,
}

impl<'de> DeserializeSeed<'de> for Walk<'_> {
    type Value = ();

    fn deserialize<D: de::Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Walk<'_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_bool<E>(self, _: bool) -> Result<(), E> {
        Ok(())
    }
    fn visit_i64<E>(self, _: i64) -> Result<(), E> {
        Ok(())
    }
    fn visit_u64<E>(self, _: u64) -> Result<(), E> {
        Ok(())
    }
    fn visit_f64<E>(self, _: f64) -> Result<(), E> {
        Ok(())
    }
    fn visit_str<E>(self, _: &str) -> Result<(), E> {
        Ok(())
    }
    fn visit_unit<E>(self) -> Result<(), E> {
        Ok(())
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        // The objects in arrays too (their node named by the index).
        for index in 0usize.. {
            let node = if self.node.is_empty() {
                index.to_string()
            } else {
                format!("{}/{index}", self.node)
            };
            if seq.next_element_seed(Walk { node: &node })?.is_none() {
                break;
            }
        }
        Ok(())
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let mut seen: HashSet<String> = HashSet::new();
        while let Some(key) = map.next_key::<String>()? {
            let node = if self.node.is_empty() {
                key.clone()
            } else {
                format!("{}/{key}", self.node)
            };
            if !seen.insert(key.clone()) {
                FOUND.with(|found| *found.borrow_mut() = Some((node, key)));
                return Err(de::Error::custom("a key is written twice in one object"));
            }
            map.next_value_seed(Walk { node: &node })?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_duplicate_is_named_with_its_node_and_line() {
        let text = "{\n  \"oem\": {\"label\": \"a\"},\n  \"imu\": {\n    \"model\": \"x\",\n    \"model\": \"y\"\n  }\n}";
        let found = first_duplicate_key(text)
            .expect("JSON")
            .expect("a duplicate");
        assert_eq!(found.node, "imu/model");
        assert_eq!(found.key, "model");
        assert_eq!(found.line, 5);
        let top = first_duplicate_key("{\"oem\": 1, \"oem\": 2}")
            .expect("JSON")
            .expect("one");
        assert_eq!((top.node.as_str(), top.line), ("oem", 1));
    }

    #[test]
    fn a_key_twice_in_an_object_of_an_array_is_named_with_its_index() {
        let found = first_duplicate_key(r#"{"a": [1, {"k": 1}, {"k": 1, "k": 2}]}"#)
            .expect("JSON")
            .expect("a duplicate");
        assert_eq!((found.node.as_str(), found.key.as_str()), ("a/2/k", "k"));
    }

    #[test]
    fn distinct_keys_and_arrays_of_objects_pass() {
        let text = r#"{"a": {"x": 1}, "b": {"x": 2}, "c": [{"k": 1}, {"k": 2}], "d": "\u0078"}"#;
        assert_eq!(first_duplicate_key(text).expect("JSON"), None);
        // Escapes are compared decoded: "x" and "\u0078" are one key.
        let escaped = r#"{"x": 1, "\u0078": 2}"#;
        assert_eq!(
            first_duplicate_key(escaped).expect("JSON").map(|d| d.key),
            Some("x".to_owned())
        );
    }

    #[test]
    fn not_json_is_an_error() {
        assert!(first_duplicate_key("{\"a\": ").is_err());
        assert!(first_duplicate_key("{} {}").is_err());
    }
}
