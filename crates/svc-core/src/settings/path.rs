//! Node paths (`aiding/gnss1/leverArmPrimary`) and access to the nodes of a tree.

use std::fmt;
use std::str::FromStr;

use serde_json::{Map, Value};

use super::SettingsError;

/// The path of a node of a settings tree: the keys from the root down to the node,
/// joined by `/`, as in the unit's routes (`/api/v1/settings/aiding/gnss1`).
///
/// The root is the empty path (displayed as the empty string). A segment is an object
/// key: a non-empty string without `/`, `\` or control characters, and neither `.`
/// nor `..`; the first segment is not one of the unit's settings actions
/// ([`ACTION_ROUTES`]). So a path always names a node under `/settings/`: it can
/// neither climb out of it (`../reboot`) nor reach an action (`default`, `import`).
/// Arrays are leaves: a path never indexes into an array (the unit writes an array
/// whole).
///
/// ```
/// use svc_core::settings::NodePath;
///
/// let path: NodePath = "aiding/gnss1/leverArmPrimary".parse()?;
/// assert_eq!(path.segments().collect::<Vec<_>>(), ["aiding", "gnss1", "leverArmPrimary"]);
/// assert_eq!(path, NodePath::from_segments(["aiding", "gnss1", "leverArmPrimary"])?);
/// assert_eq!(path.to_string(), "aiding/gnss1/leverArmPrimary");
/// assert!(NodePath::parse("aiding//gnss1").is_err());
/// assert!(NodePath::parse("../reboot").is_err());
/// assert!(NodePath::parse("default").is_err(), "the route that restores the defaults");
/// # Ok::<(), svc_core::settings::SettingsError>(())
/// ```
///
/// Paths order segment by segment (a parent sorts before its children).
///
/// The diff, merge and [`leaf_paths`] name nodes by the keys they find. The keys of a
/// settings tree are always valid segments (each node is a route); in another tree, a
/// key that is empty or contains `/` gives a path that reads as one segment more or
/// less, by which [`get`] would not find the node. The trees those functions build
/// (patch, merged tree) are exact whatever the keys.
#[derive(Clone, Default, PartialEq, Eq, Hash)]
pub struct NodePath(
    /// The segments joined by `/`; empty for the root. No segment is empty or contains `/`,
    /// except in paths built from the keys of a tree whose keys are not valid segments
    /// (see [`NodePath::from_tree_keys`]).
    String,
);

/// The names under the unit's `/settings/` route that are actions, not settings
/// nodes (`openapi/ins-device.yaml`: `POST /settings/default` restores the defaults,
/// `/settings/import` replaces the tree, ...). No node path starts with one of them.
pub const ACTION_ROUTES: &[&str] = &["default", "lock", "unlock", "export", "import", "save"];

/// Why `segment` cannot be a segment of a node path (`first`: the path's first one),
/// or `None` when it can. Empty segments and `/` are told by their own errors.
fn refused(segment: &str, first: bool) -> Option<String> {
    if segment == "." || segment == ".." {
        return Some(format!(
            "the segment `{segment}` would leave the node (an address reads it as a level)"
        ));
    }
    if segment.contains('\\') {
        return Some("a segment cannot contain `\\` (an address reads it as `/`)".to_owned());
    }
    if segment.chars().any(char::is_control) {
        return Some("a segment cannot contain control characters".to_owned());
    }
    if first && ACTION_ROUTES.contains(&segment) {
        return Some(format!(
            "`{segment}` is the unit's settings action /settings/{segment}, not a node"
        ));
    }
    None
}

impl NodePath {
    /// The root of the tree (no segment).
    pub const fn root() -> Self {
        Self(String::new())
    }

    /// Parses a path written with `/` between the segments, e.g.
    /// `output/comA/messages/imuShort`. The empty string is the root.
    ///
    /// # Errors
    ///
    /// [`SettingsError::EmptySegment`] when a segment is empty: a leading or trailing
    /// `/`, or `//` (the path is written without the route prefix, so
    /// `/aiding/gnss1` is refused: write `aiding/gnss1`);
    /// [`SettingsError::ReservedSegment`] for a segment `.` or `..`, one holding `\`
    /// or a control character, or a first segment that names a settings action
    /// ([`ACTION_ROUTES`]).
    pub fn parse(path: &str) -> Result<Self, SettingsError> {
        if path.is_empty() {
            return Ok(Self::root());
        }
        if path.split('/').any(str::is_empty) {
            return Err(SettingsError::EmptySegment {
                path: path.to_owned(),
            });
        }
        for (index, segment) in path.split('/').enumerate() {
            if let Some(reason) = refused(segment, index == 0) {
                return Err(SettingsError::ReservedSegment {
                    path: path.to_owned(),
                    reason,
                });
            }
        }
        Ok(Self(path.to_owned()))
    }

    /// Builds a path from its segments (object keys), root first. No segment: the root.
    ///
    /// # Errors
    ///
    /// [`SettingsError::SlashInSegment`] when a segment contains `/` (it could not be
    /// told apart from two segments), [`SettingsError::EmptySegment`] when a segment is
    /// empty, [`SettingsError::ReservedSegment`] as for [`NodePath::parse`].
    pub fn from_segments<I, S>(segments: I) -> Result<Self, SettingsError>
    where
        I: IntoIterator<Item = S>,
        S: AsRef<str>,
    {
        let mut path = Self::root();
        for segment in segments {
            path.push(segment.as_ref())?;
        }
        Ok(path)
    }

    /// The segments, root first (none for the root).
    pub fn segments(&self) -> impl DoubleEndedIterator<Item = &str> + Clone + '_ {
        // The root is the empty string, which `split` would yield as one empty segment.
        self.0.split('/').filter(|segment| !segment.is_empty())
    }

    /// Number of segments (0 for the root).
    pub fn len(&self) -> usize {
        if self.0.is_empty() {
            0
        } else {
            self.0.bytes().filter(|&byte| byte == b'/').count() + 1
        }
    }

    /// Whether this is the root (no segment). Same as `len() == 0`.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Whether this is the root (no segment).
    pub fn is_root(&self) -> bool {
        self.0.is_empty()
    }

    /// Appends a segment.
    ///
    /// # Errors
    ///
    /// [`SettingsError::SlashInSegment`] when `segment` contains `/`,
    /// [`SettingsError::EmptySegment`] when it is empty,
    /// [`SettingsError::ReservedSegment`] as for [`NodePath::parse`]; the path is then
    /// unchanged.
    pub fn push(&mut self, segment: &str) -> Result<(), SettingsError> {
        if segment.is_empty() {
            return Err(SettingsError::EmptySegment {
                path: if self.0.is_empty() {
                    String::new()
                } else {
                    format!("{}/", self.0)
                },
            });
        }
        if segment.contains('/') {
            return Err(SettingsError::SlashInSegment {
                segment: segment.to_owned(),
            });
        }
        if let Some(reason) = refused(segment, self.0.is_empty()) {
            return Err(SettingsError::ReservedSegment {
                path: if self.0.is_empty() {
                    segment.to_owned()
                } else {
                    format!("{}/{segment}", self.0)
                },
                reason,
            });
        }
        if !self.0.is_empty() {
            self.0.push('/');
        }
        self.0.push_str(segment);
        Ok(())
    }

    /// This path with `segment` appended.
    ///
    /// # Errors
    ///
    /// As [`NodePath::push`].
    pub fn join(&self, segment: &str) -> Result<Self, SettingsError> {
        let mut path = self.clone();
        path.push(segment)?;
        Ok(path)
    }

    /// The parent path; `None` for the root.
    pub fn parent(&self) -> Option<Self> {
        if self.0.is_empty() {
            return None;
        }
        Some(Self(match self.0.rfind('/') {
            Some(slash) => self.0[..slash].to_owned(),
            None => String::new(),
        }))
    }

    /// The last segment; `None` for the root.
    pub fn last(&self) -> Option<&str> {
        self.segments().next_back()
    }

    /// Whether `prefix` is this path or one of its ancestors (segment by segment:
    /// `aiding/gnss` is not a prefix of `aiding/gnss1`). The root is a prefix of every
    /// path.
    pub fn starts_with(&self, prefix: &NodePath) -> bool {
        prefix.0.is_empty()
            || (self.0.starts_with(&prefix.0)
                && matches!(self.0.as_bytes().get(prefix.0.len()), None | Some(b'/')))
    }

    /// The path as written: segments joined by `/` (empty for the root).
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// Builds a path from the keys of a tree, root first, without checking them.
    ///
    /// The diff, merge and leaf listing name nodes by the keys they find. A settings
    /// tree's keys are always valid segments; a key of another tree that is empty or
    /// contains `/` gives a path whose text reads differently (one segment more or
    /// less), so [`get`] would not find the node by it. The trees themselves (patch,
    /// merged tree) are exact whatever the keys.
    pub(crate) fn from_tree_keys(keys: &[&str], last: &str) -> Self {
        let len = keys.iter().map(|key| key.len() + 1).sum::<usize>() + last.len();
        let mut path = String::with_capacity(len);
        for key in keys {
            path.push_str(key);
            path.push('/');
        }
        path.push_str(last);
        Self(path)
    }

    /// Builds a path from the keys of a tree (see [`NodePath::from_tree_keys`]).
    pub(crate) fn from_tree_stack(keys: &[&str]) -> Self {
        match keys.split_last() {
            Some((last, parents)) => Self::from_tree_keys(parents, last),
            None => Self::root(),
        }
    }
}

impl PartialOrd for NodePath {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for NodePath {
    /// Segment by segment (so `a/b` sorts before `a-c`, a parent before its children).
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.segments().cmp(other.segments())
    }
}

impl fmt::Display for NodePath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl fmt::Debug for NodePath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "NodePath({:?})", self.0)
    }
}

impl FromStr for NodePath {
    type Err = SettingsError;

    /// As [`NodePath::parse`].
    fn from_str(path: &str) -> Result<Self, SettingsError> {
        Self::parse(path)
    }
}

impl TryFrom<&str> for NodePath {
    type Error = SettingsError;

    /// As [`NodePath::parse`].
    fn try_from(path: &str) -> Result<Self, SettingsError> {
        Self::parse(path)
    }
}

impl AsRef<str> for NodePath {
    fn as_ref(&self) -> &str {
        &self.0
    }
}

/// The node at `path`, or `None` when the tree has no such node (a segment names a
/// key that is absent, or a node on the way is not an object). The root path gives
/// the tree itself.
///
/// ```
/// use serde_json::json;
/// use svc_core::settings::{get, NodePath};
///
/// let tree = json!({"aiding": {"gnss1": {"leverArmPrimary": [0.5, 0.0, -1.2]}}});
/// let path = NodePath::parse("aiding/gnss1/leverArmPrimary")?;
/// assert_eq!(get(&tree, &path), Some(&json!([0.5, 0.0, -1.2])));
/// assert_eq!(get(&tree, &NodePath::parse("aiding/gnss2")?), None);
/// # Ok::<(), svc_core::settings::SettingsError>(())
/// ```
pub fn get<'a>(tree: &'a Value, path: &NodePath) -> Option<&'a Value> {
    path.segments()
        .try_fold(tree, |node, segment| node.as_object()?.get(segment))
}

/// Sets the node at `path` to `value` and returns the node it replaces (`None` when
/// the node did not exist). Missing objects on the way are created, so `set` on an
/// empty object builds a partial tree. The root path replaces the whole tree.
///
/// # Errors
///
/// [`SettingsError::NotAnObject`] when a node on the way exists but is not an object
/// (a scalar, an array or null): it is not overwritten, and the tree is unchanged.
///
/// ```
/// use serde_json::{json, Value};
/// use svc_core::settings::{set, NodePath};
///
/// let mut write = json!({});
/// set(&mut write, &"output/comA/messages/imuShort".parse()?, json!("10ms"))?;
/// assert_eq!(write, json!({"output": {"comA": {"messages": {"imuShort": "10ms"}}}}));
/// # Ok::<(), svc_core::settings::SettingsError>(())
/// ```
pub fn set(
    tree: &mut Value,
    path: &NodePath,
    value: Value,
) -> Result<Option<Value>, SettingsError> {
    let text = path.as_str();
    if text.is_empty() {
        return Ok(Some(std::mem::replace(tree, value)));
    }
    let (parents, last) = match text.rfind('/') {
        Some(slash) => (&text[..slash], &text[slash + 1..]),
        None => ("", text),
    };
    let parents = parents.split('/').filter(|segment| !segment.is_empty());
    // Check first, so that an error leaves the tree unchanged.
    if let Some(depth) = first_non_object(tree, parents.clone()) {
        return Err(not_an_object(path, depth));
    }
    let mut node = tree;
    for (depth, segment) in parents.enumerate() {
        match node {
            Value::Object(map) => {
                node = map
                    .entry(segment)
                    .or_insert_with(|| Value::Object(Map::new()));
            }
            _ => return Err(not_an_object(path, depth)),
        }
    }
    match node {
        Value::Object(map) => Ok(map.insert(last.to_owned(), value)),
        _ => Err(not_an_object(path, path.len() - 1)),
    }
}

/// The depth of the first existing node along `parents` (the root at depth 0) that is
/// not an object, if any.
fn first_non_object<'a>(tree: &Value, parents: impl Iterator<Item = &'a str>) -> Option<usize> {
    let mut node = tree;
    let mut depth = 0;
    for segment in parents {
        let Value::Object(map) = node else {
            return Some(depth);
        };
        node = map.get(segment)?;
        depth += 1;
    }
    (!node.is_object()).then_some(depth)
}

fn not_an_object(path: &NodePath, depth: usize) -> SettingsError {
    SettingsError::NotAnObject {
        path: path.clone(),
        node: NodePath(path.segments().take(depth).collect::<Vec<_>>().join("/")),
    }
}

/// The paths of every leaf of the tree, in document order (depth first, keys in the
/// tree's order). A leaf is a node that is not an object (a scalar, null or an array:
/// arrays are leaves), or an empty object. A tree that is itself a leaf gives the root
/// path alone.
///
/// ```
/// use serde_json::json;
/// use svc_core::settings::leaf_paths;
///
/// let tree = json!({"clock": {"source": "internal", "leapSec": 18}, "oem": {"label": ""}});
/// let paths: Vec<String> = leaf_paths(&tree).iter().map(ToString::to_string).collect();
/// assert_eq!(paths, ["clock/source", "clock/leapSec", "oem/label"]);
/// ```
pub fn leaf_paths(tree: &Value) -> Vec<NodePath> {
    fn walk<'a>(node: &'a Value, stack: &mut Vec<&'a str>, out: &mut Vec<NodePath>) {
        match node {
            Value::Object(map) if !map.is_empty() => {
                for (key, child) in map {
                    stack.push(key);
                    walk(child, stack, out);
                    stack.pop();
                }
            }
            _ => out.push(NodePath::from_tree_stack(stack)),
        }
    }
    let mut out = Vec::new();
    walk(tree, &mut Vec::new(), &mut out);
    out
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn path(text: &str) -> NodePath {
        NodePath::parse(text).unwrap()
    }

    #[test]
    fn parse_display_and_segments() {
        let p = path("aiding/gnss1/leverArmPrimary");
        assert_eq!(p.to_string(), "aiding/gnss1/leverArmPrimary");
        assert_eq!(p.len(), 3);
        assert_eq!(p.last(), Some("leverArmPrimary"));
        assert_eq!(p.parent(), Some(path("aiding/gnss1")));
        assert_eq!(path("aiding").parent(), Some(NodePath::root()));
        assert_eq!(NodePath::root().parent(), None);
        assert_eq!(NodePath::root().segments().count(), 0);
        assert_eq!(NodePath::root().len(), 0);
        assert!(path("").is_root());
        assert_eq!("a/b".parse::<NodePath>().unwrap(), path("a/b"));
    }

    #[test]
    fn invalid_paths_are_refused() {
        for text in ["/aiding", "aiding/", "aiding//gnss1", "/"] {
            assert_eq!(
                NodePath::parse(text),
                Err(SettingsError::EmptySegment {
                    path: text.to_owned()
                }),
                "{text}"
            );
        }
        assert_eq!(
            NodePath::from_segments(["aiding", "gnss1/leverArmPrimary"]),
            Err(SettingsError::SlashInSegment {
                segment: "gnss1/leverArmPrimary".to_owned()
            })
        );
        assert!(matches!(
            NodePath::from_segments(["aiding", ""]),
            Err(SettingsError::EmptySegment { .. })
        ));
        let mut p = path("aiding");
        assert!(p.push("a/b").is_err());
        assert_eq!(
            p,
            path("aiding"),
            "a refused push leaves the path unchanged"
        );
    }

    #[test]
    fn paths_that_leave_the_node_or_reach_an_action_are_refused() {
        for text in [
            ".",
            "..",
            "../reboot",
            "../info",
            "aiding/../../reboot",
            "aiding/./gnss1",
            "aiding/..\\..\\reboot",
            "aiding/gnss1\u{0}",
            "aiding/gnss\n1",
            "default",
            "lock",
            "unlock",
            "import",
            "export",
            "save",
            "import/aiding",
        ] {
            assert!(
                matches!(
                    NodePath::parse(text),
                    Err(SettingsError::ReservedSegment { .. })
                ),
                "{text:?}: {:?}",
                NodePath::parse(text)
            );
        }
        // An action's name deeper down is an ordinary key; so are dots within a key.
        for text in [
            "aiding/default",
            "output/comA/lock",
            "a.b/..c/c..",
            "oem/label",
        ] {
            assert_eq!(
                NodePath::parse(text).map(|p| p.to_string()),
                Ok(text.to_owned())
            );
        }
        let mut root = NodePath::root();
        assert!(root.push("default").is_err());
        assert!(root.push("..").is_err());
        assert!(root.is_root(), "a refused push leaves the path unchanged");
        assert!(path("aiding").push("default").is_ok());
        assert!(NodePath::from_segments(["aiding", ".."]).is_err());
        let message = NodePath::parse("default").unwrap_err().to_string();
        assert!(message.contains("/settings/default"), "{message}");
    }

    #[test]
    fn prefixes_are_segment_wise() {
        assert!(path("aiding/gnss1/model").starts_with(&path("aiding/gnss1")));
        assert!(path("aiding/gnss1").starts_with(&path("aiding/gnss1")));
        assert!(!path("aiding/gnss10").starts_with(&path("aiding/gnss1")));
        assert!(path("aiding").starts_with(&NodePath::root()));
        assert!(path("a/b") < path("a-c"), "segment order, not text order");
        assert!(path("a") < path("a/b"));
    }

    #[test]
    fn get_and_set() {
        let mut tree = json!({"aiding": {"gnss1": {"model": "internal"}}, "oem": "x"});
        assert_eq!(
            get(&tree, &path("aiding/gnss1/model")),
            Some(&json!("internal"))
        );
        assert_eq!(get(&tree, &path("aiding/gnss1/model/deeper")), None);
        assert_eq!(get(&tree, &NodePath::root()), Some(&tree));

        let old = set(&mut tree, &path("aiding/gnss1/model"), json!("ublox")).unwrap();
        assert_eq!(old, Some(json!("internal")));
        let old = set(&mut tree, &path("aiding/gnss2/model"), json!("none")).unwrap();
        assert_eq!(old, None);
        assert_eq!(tree["aiding"]["gnss2"], json!({"model": "none"}));

        let before = tree.clone();
        let error = set(&mut tree, &path("oem/label"), json!("y")).unwrap_err();
        assert_eq!(
            error,
            SettingsError::NotAnObject {
                path: path("oem/label"),
                node: path("oem")
            }
        );
        let error = set(&mut tree, &path("aiding/gnss1/model/x/y"), json!(1)).unwrap_err();
        assert_eq!(
            error,
            SettingsError::NotAnObject {
                path: path("aiding/gnss1/model/x/y"),
                node: path("aiding/gnss1/model")
            }
        );
        assert_eq!(tree, before, "a refused set changes nothing");

        let mut scalar = json!(5);
        assert!(set(&mut scalar, &path("a"), json!(1)).is_err());
        assert_eq!(
            set(&mut scalar, &NodePath::root(), json!({})).unwrap(),
            Some(json!(5))
        );
        assert_eq!(scalar, json!({}));
    }

    #[test]
    fn leaves() {
        let tree = json!({"a": {"b": [1, 2], "c": {}, "d": {"e": null}}, "f": true});
        let paths: Vec<String> = leaf_paths(&tree).iter().map(ToString::to_string).collect();
        assert_eq!(paths, ["a/b", "a/c", "a/d/e", "f"]);
        assert_eq!(leaf_paths(&json!(3)), [NodePath::root()]);
        for p in leaf_paths(&tree) {
            assert!(get(&tree, &p).is_some());
        }
    }
}
