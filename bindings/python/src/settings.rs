//! `svc_sdk.settings`: settings trees (`svc_core::settings`) — minimal diff, apply,
//! three-way merge, `SettingsTree` for fleets of one schema.
//!
//! [`diff`] works on the Python objects themselves: it walks both trees from Rust, skips
//! shared sub-trees by identity, compares leaves with exact JSON semantics (`True` is
//! not `1`, `1` is not `1.0`: the types are compared before the values) and builds the
//! partial tree only along changed nodes. Its result is the one `svc_core::settings::
//! diff` gives for the same trees as JSON (the tests check it against [`diff_json`]).
//! Trees of exact builtin types are walked on borrowed references (`dict_walk`, the
//! only unsafe code of the crate), the others by the safe [`Differ`], which is also the
//! reference that walk is tested against.

use std::path::PathBuf;
use std::sync::Arc;

use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyBytes, PyDict, PyList, PyString};
use serde_json::Value;
use svc_core::settings::{self as core, NodePath, SettingsTree as CoreTree};

use crate::convert::{self, Kind, ToValue, Types, join_path, not_json, not_json_type, to_python};
use crate::errors::SvcErr;

// --- Node paths --------------------------------------------------------------------

/// The keys of the nodes of a patch, as a tree: each node its parent ([`KeyTree::ROOT`]
/// for a key of the root) and its key. A node on the paths of several changes is kept
/// once.
#[derive(Default)]
pub(crate) struct KeyTree {
    nodes: Vec<(usize, Py<PyAny>)>,
}

impl KeyTree {
    /// The parent of the keys of the root.
    pub(crate) const ROOT: usize = usize::MAX;

    /// An empty tree, with room for `nodes` nodes.
    pub(crate) fn with_capacity(nodes: usize) -> Self {
        Self {
            nodes: Vec::with_capacity(nodes),
        }
    }

    /// Adds the node `key` under `parent`, and returns it.
    pub(crate) fn push(&mut self, parent: usize, key: Py<PyAny>) -> usize {
        self.nodes.push((parent, key));
        self.nodes.len() - 1
    }

    fn len(&self) -> usize {
        self.nodes.len()
    }

    fn parent(&self, node: usize) -> usize {
        self.nodes[node].0
    }

    fn key<'py>(&self, py: Python<'py>, node: usize) -> &Bound<'py, PyAny> {
        self.nodes[node].1.bind(py)
    }

    /// The path of `node` (its keys from the root, joined).
    fn path(&self, py: Python<'_>, node: usize) -> String {
        let mut keys = Vec::new();
        let mut at = node;
        while at != Self::ROOT {
            if let Ok(key) = self.key(py, at).cast::<PyString>() {
                keys.push(key.clone());
            }
            at = self.parent(at);
        }
        keys.reverse();
        join_path(&keys)
    }
}

/// Paths of nodes, kept as nodes of a [`KeyTree`] until read (joining them costs more
/// than the diff of a small change on the stable ABI of Python 3.9).
struct Paths {
    keys: Arc<KeyTree>,
    nodes: Vec<usize>,
    joined: PyOnceLock<Vec<String>>,
}

impl Paths {
    fn from_nodes(keys: Arc<KeyTree>, nodes: Vec<usize>) -> Self {
        Self {
            keys,
            nodes,
            joined: PyOnceLock::new(),
        }
    }

    /// Paths given as their keys from the root, each.
    fn from_keys(paths: Vec<Vec<Py<PyAny>>>) -> Self {
        let mut keys = KeyTree::default();
        let mut nodes = Vec::with_capacity(paths.len());
        for path in paths {
            // An empty path (the root) is kept as no key at all.
            let mut node = KeyTree::ROOT;
            for key in path {
                node = keys.push(node, key);
            }
            nodes.push(node);
        }
        Self::from_nodes(Arc::new(keys), nodes)
    }

    fn from_strings(py: Python<'_>, paths: Vec<String>) -> Self {
        let joined = PyOnceLock::new();
        let _ = joined.set(py, paths);
        Self {
            keys: Arc::default(),
            nodes: Vec::new(),
            joined,
        }
    }

    fn strings(&self, py: Python<'_>) -> &[String] {
        self.joined.get_or_init(py, || {
            self.nodes
                .iter()
                .map(|&node| {
                    if node == KeyTree::ROOT {
                        String::new()
                    } else {
                        self.keys.path(py, node)
                    }
                })
                .collect()
        })
    }

    fn len(&self, py: Python<'_>) -> usize {
        match self.joined.get(py) {
            Some(joined) => joined.len(),
            None => self.nodes.len(),
        }
    }
}

fn node_paths(paths: &[NodePath]) -> Vec<String> {
    paths.iter().map(ToString::to_string).collect()
}

// --- Errors --------------------------------------------------------------------------

fn settings_error(py: Python<'_>, error: &core::SettingsError) -> PyErr {
    // Every error of the functions used here is about the input (files are read here,
    // their errors are `io`).
    let kind = "invalid_input";
    let paths = match error {
        core::SettingsError::RemovalNotExpressible { removed } => node_paths(removed),
        core::SettingsError::UnknownNodes { paths } => node_paths(paths),
        core::SettingsError::NotAnObject { path, .. }
        | core::SettingsError::NonFiniteNumber { path } => {
            vec![path.to_string()]
        }
        _ => Vec::new(),
    };
    let mut failure = SvcErr::new(kind, error.to_string()).subsystem("settings");
    if let Ok(paths) = PyList::new(py, paths) {
        failure = failure.attr("paths", paths.into_any());
    }
    failure.into_pyerr(py)
}

/// The error of a write that cannot express the removed nodes, as
/// `SettingsError::RemovalNotExpressible` words it.
fn removal_error(py: Python<'_>, removed: &[String]) -> PyErr {
    const SHOWN: usize = 10;
    let mut listed = removed
        .iter()
        .take(SHOWN)
        .map(|path| {
            if path.is_empty() {
                "the root"
            } else {
                path.as_str()
            }
        })
        .collect::<Vec<_>>()
        .join(", ");
    if removed.len() > SHOWN {
        listed.push_str(&format!(" and {} more", removed.len() - SHOWN));
    }
    let message =
        format!("the write cannot remove nodes {listed} (a settings write only adds and changes)");
    let mut failure = SvcErr::new("invalid_input", message).subsystem("settings");
    if let Ok(paths) = PyList::new(py, removed) {
        failure = failure.attr("paths", paths.into_any());
    }
    failure.into_pyerr(py)
}

/// A JSON document given as `str` or `bytes` (or `bytearray`, `memoryview`).
enum Text<'py> {
    Bytes(Bound<'py, PyBytes>),
    Owned(Vec<u8>),
}

impl<'py> Text<'py> {
    fn from_object(object: &Bound<'py, PyAny>) -> PyResult<Self> {
        if let Ok(bytes) = object.cast::<PyBytes>() {
            return Ok(Self::Bytes(bytes.clone()));
        }
        if let Ok(text) = object.cast::<PyString>() {
            return Ok(Self::Owned(text.to_cow()?.into_owned().into_bytes()));
        }
        object.extract::<Vec<u8>>().map(Self::Owned).map_err(|_| {
            PyTypeError::new_err(format!(
                "expected JSON as str or bytes, not {}",
                convert::type_name(object)
            ))
        })
    }

    fn as_bytes(&self) -> &[u8] {
        match self {
            Self::Bytes(bytes) => bytes.as_bytes(),
            Self::Owned(bytes) => bytes,
        }
    }
}

// --- diff on Python objects ----------------------------------------------------------

/// The minimal patch between two trees of Python objects (see the module documentation).
struct Differ<'py> {
    py: Python<'py>,
    types: Types,
    /// Keys from the root to the objects being compared.
    stack: Vec<Bound<'py, PyAny>>,
    changed: Vec<Vec<Py<PyAny>>>,
    removed: Vec<Vec<Py<PyAny>>>,
    /// How many containers deep the comparison is (bounded: a tree that contains itself
    /// is an error, not a stack overflow).
    depth: usize,
}

impl<'py> Differ<'py> {
    fn new(py: Python<'py>) -> Self {
        Self {
            py,
            types: Types::new(py),
            stack: Vec::new(),
            changed: Vec::new(),
            removed: Vec::new(),
            depth: 0,
        }
    }

    /// One container deeper (undone by the caller on success; an error ends the walk).
    fn deeper(&mut self) -> PyResult<()> {
        self.depth += 1;
        if self.depth > convert::MAX_DEPTH {
            return Err(self.error(convert::TOO_DEEP));
        }
        Ok(())
    }

    /// The path of the current node (the keys of the stack), for errors.
    fn here(&self) -> String {
        let keys: Vec<Bound<'py, PyString>> = self
            .stack
            .iter()
            .filter_map(|key| key.cast::<PyString>().ok().cloned())
            .collect();
        join_path(&keys)
    }

    fn error(&self, what: &str) -> PyErr {
        not_json(self.py, &self.here(), what)
    }

    fn path_to(&self, key: &Bound<'py, PyAny>) -> Vec<Py<PyAny>> {
        let mut path = Vec::with_capacity(self.stack.len() + 1);
        path.extend(self.stack.iter().map(|key| key.clone().unbind()));
        path.push(key.clone().unbind());
        path
    }

    /// Checks that `key` is a `str` (one pointer comparison for the exact type).
    #[inline]
    fn check_key(&self, key: &Bound<'py, PyAny>) -> PyResult<()> {
        if key.get_type_ptr() == self.types.str || key.is_instance_of::<PyString>() {
            Ok(())
        } else {
            Err(self.key_error(key))
        }
    }

    #[cold]
    fn key_error(&self, key: &Bound<'py, PyAny>) -> PyErr {
        self.error(&format!(
            "a key of type {} is not a string",
            convert::type_name(key)
        ))
    }

    /// The whole diff.
    fn diff(
        mut self,
        old: &Bound<'py, PyAny>,
        new: &Bound<'py, PyAny>,
    ) -> PyResult<(Bound<'py, PyAny>, Paths, Paths)> {
        let tree = match (old.cast::<PyDict>(), new.cast::<PyDict>()) {
            (Ok(old), Ok(new)) => match self.objects(old, new)? {
                Some(tree) => tree.into_any(),
                None => PyDict::new(self.py).into_any(),
            },
            _ => {
                if !self.equal(old, new)? {
                    self.changed.push(Vec::new());
                }
                self.copy(new)?
            }
        };
        Ok((
            tree,
            Paths::from_keys(self.changed),
            Paths::from_keys(self.removed),
        ))
    }

    /// The partial object turning `old` into `new`, `None` when no node changed.
    fn objects(
        &mut self,
        old: &Bound<'py, PyDict>,
        new: &Bound<'py, PyDict>,
    ) -> PyResult<Option<Bound<'py, PyDict>>> {
        if old.is(new) {
            return Ok(None);
        }
        let mut out = None;
        // Each key of `new` looked up in `old`: one hash lookup (the hash of a `str` is
        // kept in the object) costs less than a second iterator and a comparison of the
        // keys on the stable ABI, where every reference count is a call.
        let mut found = 0usize;
        for (key, new_value) in new.iter() {
            self.check_key(&key)?;
            match old.get_item(&key)? {
                Some(old_value) => {
                    found += 1;
                    self.value(&key, &old_value, &new_value, &mut out)?;
                }
                None => self.change(&key, &new_value, &mut out)?,
            }
        }
        // Keys are unique: when every key of `old` was found in `new`, none was removed.
        if found < old.len() {
            for (key, _) in old.iter() {
                if !new.contains(&key)? {
                    self.check_key(&key)?;
                    let path = self.path_to(&key);
                    self.removed.push(path);
                }
            }
        }
        Ok(out)
    }

    /// One node present in both trees, under `key`.
    #[inline]
    fn value(
        &mut self,
        key: &Bound<'py, PyAny>,
        old: &Bound<'py, PyAny>,
        new: &Bound<'py, PyAny>,
        out: &mut Option<Bound<'py, PyDict>>,
    ) -> PyResult<()> {
        if old.is(new) {
            return Ok(());
        }
        let (old_type, new_type) = (old.get_type_ptr(), new.get_type_ptr());
        let types = self.types;
        let equal = if old_type == new_type {
            if new_type == types.dict {
                return self.child_objects(key, old, new, out);
            } else if new_type == types.str || new_type == types.int {
                // C-level comparison of two exact `str`s or two exact `int`s.
                old.eq(new)?
            } else if new_type == types.bool {
                false // Not the same singleton.
            } else {
                self.leaves_equal(key, old, new)?
            }
        } else {
            match (types.kind(old), types.kind(new)) {
                (Kind::Object, Kind::Object) => {
                    return self.child_objects(key, old, new, out);
                }
                _ => self.leaves_equal(key, old, new)?,
            }
        };
        if !equal {
            self.change(key, new, out)?;
        }
        Ok(())
    }

    /// [`Differ::equal`] of the node under `key` (named in errors).
    fn leaves_equal(
        &mut self,
        key: &Bound<'py, PyAny>,
        old: &Bound<'py, PyAny>,
        new: &Bound<'py, PyAny>,
    ) -> PyResult<bool> {
        self.stack.push(key.clone());
        let equal = self.equal(old, new);
        self.stack.pop();
        equal
    }

    fn child_objects(
        &mut self,
        key: &Bound<'py, PyAny>,
        old: &Bound<'py, PyAny>,
        new: &Bound<'py, PyAny>,
        out: &mut Option<Bound<'py, PyDict>>,
    ) -> PyResult<()> {
        self.stack.push(key.clone());
        self.deeper()?;
        let child = self.objects(old.cast::<PyDict>()?, new.cast::<PyDict>()?);
        self.depth -= 1;
        self.stack.pop();
        if let Some(child) = child? {
            out.get_or_insert_with(|| PyDict::new(self.py))
                .set_item(key, child)?;
        }
        Ok(())
    }

    /// Records a changed (or added) node and writes a copy of it into the partial object.
    #[cold]
    #[inline(never)]
    fn change(
        &mut self,
        key: &Bound<'py, PyAny>,
        new: &Bound<'py, PyAny>,
        out: &mut Option<Bound<'py, PyDict>>,
    ) -> PyResult<()> {
        self.stack.push(key.clone());
        let copy = self.copy(new);
        self.stack.pop();
        let copy = copy?;
        let path = self.path_to(key);
        self.changed.push(path);
        out.get_or_insert_with(|| PyDict::new(self.py))
            .set_item(key, copy)?;
        Ok(())
    }

    /// Deep equality with JSON semantics: kinds first (`True` is not `1`, `1` is not
    /// `1.0`), then values; objects whatever their key order, arrays item by item.
    fn equal(&mut self, a: &Bound<'py, PyAny>, b: &Bound<'py, PyAny>) -> PyResult<bool> {
        if a.is(b) {
            return Ok(true);
        }
        let (kind_a, kind_b) = (self.types.kind(a), self.types.kind(b));
        if kind_a == Kind::Other {
            return Err(self.error(&not_json_type(a)));
        }
        if kind_b == Kind::Other {
            return Err(self.error(&not_json_type(b)));
        }
        if kind_a != kind_b {
            return Ok(false);
        }
        match kind_a {
            Kind::Null => Ok(true),
            Kind::Bool => Ok(a.is_truthy()? == b.is_truthy()?),
            Kind::Str => self.strings_equal(a, b),
            Kind::Int => {
                if a.get_type_ptr() == self.types.int && b.get_type_ptr() == self.types.int {
                    a.eq(b)
                } else {
                    let (x, y) = (convert::int_number(a), convert::int_number(b));
                    match (x, y) {
                        (Some(x), Some(y)) => Ok(x == y),
                        _ => Err(self.error("the integer does not fit 64 bits")),
                    }
                }
            }
            Kind::Float => self.floats_equal(a, b),
            Kind::Array | Kind::Object => {
                self.deeper()?;
                let equal = if kind_a == Kind::Array {
                    self.arrays_equal(a, b)?
                } else {
                    self.objects_equal(a.cast::<PyDict>()?, b.cast::<PyDict>()?)?
                };
                self.depth -= 1;
                Ok(equal)
            }
            Kind::Other => Ok(false),
        }
    }

    fn strings_equal(&self, a: &Bound<'py, PyAny>, b: &Bound<'py, PyAny>) -> PyResult<bool> {
        match (a.cast::<PyString>(), b.cast::<PyString>()) {
            (Ok(a), Ok(b)) => {
                if a.get_type_ptr() == self.types.str && b.get_type_ptr() == self.types.str {
                    a.as_any().eq(b.as_any())
                } else {
                    // A subclass: compare the text, not through its `__eq__`.
                    Ok(a.to_cow()? == b.to_cow()?)
                }
            }
            _ => Ok(false),
        }
    }

    fn floats_equal(&self, a: &Bound<'py, PyAny>, b: &Bound<'py, PyAny>) -> PyResult<bool> {
        let (x, y) = (a.extract::<f64>()?, b.extract::<f64>()?);
        if !x.is_finite() || !y.is_finite() {
            return Err(self.error("the number is not finite"));
        }
        Ok(x == y)
    }

    fn arrays_equal(&mut self, a: &Bound<'py, PyAny>, b: &Bound<'py, PyAny>) -> PyResult<bool> {
        if a.len()? != b.len()? {
            return Ok(false);
        }
        for (x, y) in a.try_iter()?.zip(b.try_iter()?) {
            if !self.equal(&x?, &y?)? {
                return Ok(false);
            }
        }
        Ok(true)
    }

    fn objects_equal(&mut self, a: &Bound<'py, PyDict>, b: &Bound<'py, PyDict>) -> PyResult<bool> {
        if a.len() != b.len() {
            return Ok(false);
        }
        for (key, x) in a.iter() {
            self.check_key(&key)?;
            let Some(y) = b.get_item(&key)? else {
                return Ok(false);
            };
            if !self.equal(&x, &y)? {
                return Ok(false);
            }
        }
        Ok(true)
    }

    /// A copy of a value for the partial tree: new `dict`s and `list`s (a `tuple` becomes
    /// a `list`), scalars shared (subclasses of `str`, `int` and `float` become the base
    /// type), every node checked to be JSON.
    fn copy(&mut self, value: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
        copy_value(self.py, &self.types, &mut self.stack, self.depth, value)
    }
}

/// The path of the keys of `stack` (those that are `str`), for errors.
fn path_of(stack: &[Bound<'_, PyAny>]) -> String {
    let keys: Vec<Bound<'_, PyString>> = stack
        .iter()
        .filter_map(|key| key.cast::<PyString>().ok().cloned())
        .collect();
    join_path(&keys)
}

/// A checked copy of a JSON value of Python objects (see [`Differ::copy`]); `stack`
/// holds the keys to `value`, for errors, `depth` how many containers deep it is.
fn copy_value<'py>(
    py: Python<'py>,
    types: &Types,
    stack: &mut Vec<Bound<'py, PyAny>>,
    depth: usize,
    value: &Bound<'py, PyAny>,
) -> PyResult<Bound<'py, PyAny>> {
    let here = path_of;
    let kind = types.kind(value);
    if matches!(kind, Kind::Array | Kind::Object) && depth >= convert::MAX_DEPTH {
        return Err(not_json(py, &here(stack), convert::TOO_DEEP));
    }
    Ok(match kind {
        Kind::Null | Kind::Bool => value.clone(),
        Kind::Str => {
            if value.get_type_ptr() == types.str {
                value.clone()
            } else {
                PyString::new(py, &value.cast::<PyString>()?.to_cow()?).into_any()
            }
        }
        Kind::Int => {
            let number = convert::int_number(value)
                .ok_or_else(|| not_json(py, &here(stack), "the integer does not fit 64 bits"))?;
            if value.get_type_ptr() == types.int {
                value.clone()
            } else {
                to_python(py, &Value::Number(number))?
            }
        }
        Kind::Float => {
            let number = value.extract::<f64>()?;
            if !number.is_finite() {
                return Err(not_json(py, &here(stack), "the number is not finite"));
            }
            if value.get_type_ptr() == types.float {
                value.clone()
            } else {
                number.into_pyobject(py)?.into_any()
            }
        }
        Kind::Array => {
            let list = PyList::empty(py);
            for item in value.try_iter()? {
                list.append(copy_value(py, types, stack, depth + 1, &item?)?)?;
            }
            list.into_any()
        }
        Kind::Object => {
            let dict = value.cast::<PyDict>()?;
            let out = PyDict::new(py);
            for (key, child) in dict.iter() {
                if key.get_type_ptr() != types.str && !key.is_instance_of::<PyString>() {
                    return Err(not_json(
                        py,
                        &here(stack),
                        &format!("a key of type {} is not a string", convert::type_name(&key)),
                    ));
                }
                stack.push(key.clone());
                let child = copy_value(py, types, stack, depth + 1, &child);
                stack.pop();
                out.set_item(key, child?)?;
            }
            out.into_any()
        }
        Kind::Other => return Err(not_json(py, &here(stack), &not_json_type(value))),
    })
}

/// Writes the partial tree `patch` into `tree` (a fresh copy, owned here), as the unit
/// writes settings.
fn apply_in_place<'py>(
    py: Python<'py>,
    types: &Types,
    stack: &mut Vec<Bound<'py, PyAny>>,
    tree: &Bound<'py, PyDict>,
    patch: &Bound<'py, PyDict>,
) -> PyResult<()> {
    if stack.len() >= convert::MAX_DEPTH {
        return Err(not_json(py, &path_of(stack), convert::TOO_DEEP));
    }
    for (key, value) in patch.iter() {
        stack.push(key.clone());
        let result = match (tree.get_item(&key)?, value.cast::<PyDict>()) {
            (Some(node), Ok(value)) if node.get_type_ptr() == types.dict => {
                apply_in_place(py, types, stack, node.cast::<PyDict>()?, value)
            }
            _ => copy_value(py, types, stack, stack.len(), &value)
                .and_then(|copy| tree.set_item(&key, copy)),
        };
        stack.pop();
        result?;
    }
    Ok(())
}

// --- Python classes --------------------------------------------------------------------

/// What turns one settings tree into another: the partial tree to write (`tree`), the
/// changed nodes and the removed ones (which a write cannot express). Made by `diff`
/// and `diff_json`.
#[pyclass(frozen, module = "svc_sdk.settings")]
pub(crate) struct Patch {
    tree: Py<PyAny>,
    changed: Paths,
    removed: Paths,
}

#[pymethods]
impl Patch {
    /// The partial tree: only the changed nodes and the objects on their paths, keys in
    /// the new tree's order (the body of the unit's settings write). Fresh `dict`s and
    /// `list`s: changing them changes neither tree.
    #[getter]
    fn tree(&self, py: Python<'_>) -> Py<PyAny> {
        self.tree.clone_ref(py)
    }

    /// The changed nodes (`"aiding/gnss1/leverArmPrimary"`), in the new tree's order:
    /// every leaf whose value changed (an array is one leaf) and the top of every added
    /// or retyped sub-tree.
    #[getter]
    fn changed(&self, py: Python<'_>) -> Vec<String> {
        self.changed.strings(py).to_vec()
    }

    /// The nodes of the old tree that the new one lacks (normally none: settings trees
    /// have a fixed key set). A write cannot remove them.
    #[getter]
    fn removed(&self, py: Python<'_>) -> Vec<String> {
        self.removed.strings(py).to_vec()
    }

    /// Whether the two trees were equal (nothing changed, nothing removed).
    fn is_empty(&self, py: Python<'_>) -> bool {
        self.changed.len(py) == 0 && self.removed.len(py) == 0
    }

    /// Whether the old tree had nodes that the new one lacks.
    fn has_removals(&self, py: Python<'_>) -> bool {
        self.removed.len(py) > 0
    }

    /// The body of the write turning the old tree into the new one (`tree`).
    ///
    /// Raises `SettingsError` (an `InvalidInputError`, with `paths`) when the patch has
    /// removals: the write would leave them in place.
    fn to_write(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        if self.removed.len(py) > 0 {
            return Err(removal_error(py, self.removed.strings(py)));
        }
        Ok(self.tree.clone_ref(py))
    }

    fn __len__(&self, py: Python<'_>) -> usize {
        self.changed.len(py) + self.removed.len(py)
    }

    fn __repr__(&self, py: Python<'_>) -> String {
        // Paths only: values may be secrets (the NTRIP password).
        format!(
            "Patch(changed={:?}, removed={:?})",
            self.changed.strings(py),
            self.removed.strings(py)
        )
    }
}

impl Patch {
    fn from_core(py: Python<'_>, patch: &core::Patch) -> PyResult<Self> {
        Ok(Self {
            tree: to_python(py, &patch.tree)?.unbind(),
            changed: Paths::from_strings(py, node_paths(&patch.changed)),
            removed: Paths::from_strings(py, node_paths(&patch.removed)),
        })
    }
}

/// The minimal patch from `old` to `new` (see `Patch`): objects compared key by key,
/// arrays and scalars whole, with JSON semantics.
///
/// Two `dict`s of exact builtin types (the usual trees, from `json.loads` or a unit)
/// are compared by `dict_walk` on borrowed references; anything else, or anything that
/// walk does not handle (subclasses, errors), by [`Differ`].
#[pyfunction]
fn diff<'py>(py: Python<'py>, old: &Bound<'py, PyAny>, new: &Bound<'py, PyAny>) -> PyResult<Patch> {
    if let (Ok(old_dict), Ok(new_dict)) = (old.cast_exact::<PyDict>(), new.cast_exact::<PyDict>())
        && let Some(changes) = crate::dict_walk::diff(old_dict, new_dict)?
    {
        return patch_of_changes(py, changes);
    }
    _diff_reference(py, old, new)
}

/// The patch of what `dict_walk` found: the partial tree built along the changed paths
/// (keys in the new tree's order, as `Differ` builds it: a `dict` is made for a node
/// when the first change under it comes), with copies of the changed values.
fn patch_of_changes(py: Python<'_>, changes: crate::dict_walk::Changes) -> PyResult<Patch> {
    let crate::dict_walk::Changes {
        keys,
        changed,
        removed,
    } = changes;
    let types = Types::new(py);
    let root = PyDict::new(py);
    // The `dict` made for each node of `keys`, once made.
    let mut dicts: Vec<Option<Bound<'_, PyDict>>> = vec![None; keys.len()];
    let mut missing = Vec::new();
    let mut changed_nodes = Vec::with_capacity(changed.len());
    for (node, value) in changed {
        // The `dict` of the parent: made, with those of its parents not made yet.
        let mut at = keys.parent(node);
        while at != KeyTree::ROOT && dicts[at].is_none() {
            missing.push(at);
            at = keys.parent(at);
        }
        // (`at` is the root, or a node whose `dict` is made.)
        let mut dict = match dicts.get(at) {
            Some(Some(made)) => made.clone(),
            _ => root.clone(),
        };
        while let Some(next) = missing.pop() {
            let child = PyDict::new(py);
            dict.set_item(keys.key(py, next), &child)?;
            dicts[next] = Some(child.clone());
            dict = child;
        }
        // The walk checked the value (exact builtin JSON types): a scalar is kept as it
        // is, anything else copied, without error (the keys to it, for messages, are not
        // needed).
        let value = value.into_bound(py);
        let value = match types.kind(&value) {
            Kind::Array | Kind::Object => copy_value(py, &types, &mut Vec::new(), 0, &value)?,
            _ => value,
        };
        dict.set_item(keys.key(py, node), value)?;
        changed_nodes.push(node);
    }
    let keys = Arc::new(keys);
    Ok(Patch {
        tree: root.into_any().unbind(),
        changed: Paths::from_nodes(Arc::clone(&keys), changed_nodes),
        removed: Paths::from_nodes(keys, removed),
    })
}

/// `diff` by the walk on borrowed references alone (`dict_walk`), `None` when it leaves
/// the trees to the safe walk: for the tests (not API).
#[pyfunction]
fn _diff_walk<'py>(
    py: Python<'py>,
    old: &Bound<'py, PyAny>,
    new: &Bound<'py, PyAny>,
) -> PyResult<Option<Patch>> {
    match (old.cast_exact::<PyDict>(), new.cast_exact::<PyDict>()) {
        (Ok(old), Ok(new)) => match crate::dict_walk::diff(old, new)? {
            Some(changes) => patch_of_changes(py, changes).map(Some),
            None => Ok(None),
        },
        _ => Ok(None),
    }
}

/// `diff` by the safe walk alone ([`Differ`]): the reference the walk on borrowed
/// references is tested against (not API).
#[pyfunction]
fn _diff_reference<'py>(
    py: Python<'py>,
    old: &Bound<'py, PyAny>,
    new: &Bound<'py, PyAny>,
) -> PyResult<Patch> {
    let (tree, changed, removed) = Differ::new(py).diff(old, new)?;
    Ok(Patch {
        tree: tree.unbind(),
        changed,
        removed,
    })
}

/// The minimal patch between two JSON documents (`str` or `bytes`), compared in Rust
/// with the GIL released and without parsing what is the same in both
/// (`svc_core::settings::diff_json`); only the patch becomes Python objects.
#[pyfunction]
fn diff_json<'py>(
    py: Python<'py>,
    old_text: &Bound<'py, PyAny>,
    new_text: &Bound<'py, PyAny>,
) -> PyResult<Patch> {
    let (old_text, new_text) = (Text::from_object(old_text)?, Text::from_object(new_text)?);
    let (old_bytes, new_bytes) = (old_text.as_bytes(), new_text.as_bytes());
    let patch = py
        .detach(|| core::diff_json_bytes(old_bytes, new_bytes))
        .map_err(|e| settings_error(py, &e))?;
    Patch::from_core(py, &patch)
}

/// `svc_core::settings::diff` of the two documents parsed into `serde_json::Value`s: the
/// reference `diff_json` is tested against (not API).
#[pyfunction]
fn _diff_json_reference<'py>(
    py: Python<'py>,
    old_text: &Bound<'py, PyAny>,
    new_text: &Bound<'py, PyAny>,
) -> PyResult<Patch> {
    let (old_text, new_text) = (Text::from_object(old_text)?, Text::from_object(new_text)?);
    let old: Value = serde_json::from_slice(old_text.as_bytes())
        .map_err(|e| not_json_text(py, "the old tree", &e))?;
    let new: Value = serde_json::from_slice(new_text.as_bytes())
        .map_err(|e| not_json_text(py, "the new tree", &e))?;
    Patch::from_core(py, &core::diff(&old, &new))
}

/// The error of a text that is not JSON: which one, and where (never its content).
fn not_json_text(py: Python<'_>, which: &str, error: &serde_json::Error) -> PyErr {
    SvcErr::new(
        "invalid_input",
        format!(
            "{which} is not JSON (line {}, column {})",
            error.line(),
            error.column()
        ),
    )
    .subsystem("settings")
    .into_pyerr(py)
}

/// `tree` with the partial tree `patch` written into it, as the unit writes settings
/// (objects merged key by key, everything else replaced whole, `None` a value like any
/// other). A new tree: neither argument is changed.
#[pyfunction]
fn apply<'py>(
    py: Python<'py>,
    tree: &Bound<'py, PyAny>,
    patch: &Bound<'py, PyAny>,
) -> PyResult<Bound<'py, PyAny>> {
    let types = Types::new(py);
    let mut stack = Vec::new();
    match (tree.cast::<PyDict>(), patch.cast::<PyDict>()) {
        (Ok(_), Ok(patch)) => {
            let out = copy_value(py, &types, &mut stack, 0, tree)?;
            apply_in_place(py, &types, &mut stack, out.cast::<PyDict>()?, patch)?;
            Ok(out)
        }
        _ => {
            copy_value(py, &types, &mut stack, 0, tree)?; // Checked, as with an object.
            copy_value(py, &types, &mut stack, 0, patch)
        }
    }
}

/// The marker of a node absent from one side of a `Conflict` (`None` is JSON null).
#[pyclass(frozen, module = "svc_sdk.settings")]
pub(crate) struct Absent;

#[pymethods]
impl Absent {
    fn __repr__(&self) -> &'static str {
        "ABSENT"
    }

    fn __bool__(&self) -> bool {
        false
    }
}

static ABSENT: PyOnceLock<Py<Absent>> = PyOnceLock::new();

fn absent(py: Python<'_>) -> PyResult<Py<PyAny>> {
    Ok(ABSENT
        .get_or_try_init(py, || Py::new(py, Absent))?
        .clone_ref(py)
        .into_any())
}

/// A node both sides of a merge changed, differently. A side lacking the node holds
/// `ABSENT`.
#[pyclass(frozen, module = "svc_sdk.settings")]
pub(crate) struct Conflict {
    #[pyo3(get)]
    path: String,
    #[pyo3(get)]
    base: Py<PyAny>,
    #[pyo3(get)]
    ours: Py<PyAny>,
    #[pyo3(get)]
    theirs: Py<PyAny>,
}

#[pymethods]
impl Conflict {
    fn __repr__(&self) -> String {
        // The path only: the values may be secrets.
        format!("Conflict(path={:?})", self.path)
    }
}

/// The result of `merge`: the merged tree (holding ours at each conflict) and the
/// conflicts, in document order.
#[pyclass(frozen, module = "svc_sdk.settings")]
pub(crate) struct Merge {
    #[pyo3(get)]
    tree: Py<PyAny>,
    #[pyo3(get)]
    conflicts: Vec<Py<Conflict>>,
}

#[pymethods]
impl Merge {
    /// Whether the merge had no conflict.
    fn is_clean(&self) -> bool {
        self.conflicts.is_empty()
    }

    fn __repr__(&self, py: Python<'_>) -> String {
        let paths: Vec<String> = self
            .conflicts
            .iter()
            .map(|conflict| conflict.get().path.clone())
            .collect();
        let _ = py;
        format!("Merge(conflicts={paths:?})")
    }
}

/// Three-way merge: `ours` and `theirs` both derive from `base`; the result holds the
/// changes of both, and lists the nodes both changed differently (keeping ours there).
#[pyfunction]
fn merge<'py>(
    py: Python<'py>,
    base: &Bound<'py, PyAny>,
    ours: &Bound<'py, PyAny>,
    theirs: &Bound<'py, PyAny>,
) -> PyResult<Merge> {
    let base = ToValue::new(py).value(base)?;
    let ours = ToValue::new(py).value(ours)?;
    let theirs = ToValue::new(py).value(theirs)?;
    let merged = py.detach(|| core::merge(&base, &ours, &theirs));
    let side = |value: &Option<Value>| -> PyResult<Py<PyAny>> {
        match value {
            Some(value) => Ok(to_python(py, value)?.unbind()),
            None => absent(py),
        }
    };
    let conflicts = merged
        .conflicts
        .iter()
        .map(|conflict| {
            Py::new(
                py,
                Conflict {
                    path: conflict.path.to_string(),
                    base: side(&conflict.base)?,
                    ours: side(&conflict.ours)?,
                    theirs: side(&conflict.theirs)?,
                },
            )
        })
        .collect::<PyResult<Vec<_>>>()?;
    Ok(Merge {
        tree: to_python(py, &merged.tree)?.unbind(),
        conflicts,
    })
}

/// A settings tree laid out for comparing many trees of one schema (a fleet against a
/// reference, successive reads of a unit): trees of one shape diff by comparing two
/// flat arrays of leaves. Immutable.
#[pyclass(frozen, module = "svc_sdk.settings")]
pub(crate) struct SettingsTree {
    tree: CoreTree,
}

#[pymethods]
impl SettingsTree {
    /// The tree of a `dict` (any JSON value).
    #[staticmethod]
    fn from_dict(py: Python<'_>, tree: &Bound<'_, PyAny>) -> PyResult<Self> {
        let value = ToValue::new(py).value(tree)?;
        Ok(Self {
            tree: py.detach(|| CoreTree::from_value(&value)),
        })
    }

    /// The tree of a JSON document (`str` or `bytes`), parsed in Rust.
    #[staticmethod]
    fn from_json(py: Python<'_>, text: &Bound<'_, PyAny>) -> PyResult<Self> {
        let text = Text::from_object(text)?;
        let bytes = text.as_bytes();
        let tree = py
            .detach(|| CoreTree::from_json_bytes(bytes))
            .map_err(|e| settings_error(py, &e))?;
        Ok(Self { tree })
    }

    /// The tree as Python objects (`dict`s, keys in order).
    fn to_dict<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        to_python(py, &self.tree.to_value())
    }

    /// The tree as compact JSON text.
    fn to_json(&self, py: Python<'_>) -> PyResult<String> {
        serde_json::to_string(&self.tree)
            .map_err(|e| SvcErr::new("internal", e.to_string()).into_pyerr(py))
    }

    /// The minimal patch from this tree to `new` (the same as `diff` of the two trees).
    fn diff(&self, new: &SettingsTree) -> TreePatch {
        TreePatch {
            patch: self.tree.diff(&new.tree),
        }
    }

    /// Whether both trees have the same shape (keys, nesting and order): then `diff`
    /// compares their leaves directly.
    fn same_shape(&self, other: &SettingsTree) -> bool {
        self.tree.same_shape(&other.tree)
    }

    /// The number of leaves (scalars, nulls and arrays).
    #[getter]
    fn leaf_count(&self) -> usize {
        self.tree.leaf_count()
    }

    /// The node at `path` (`"aiding/gnss1"`) as Python objects, `default` when there is
    /// none.
    #[pyo3(signature = (path, default = None))]
    fn get<'py>(
        &self,
        py: Python<'py>,
        path: &str,
        default: Option<Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let path = NodePath::parse(path).map_err(|e| settings_error(py, &e))?;
        match self.tree.get(&path) {
            Some(value) => to_python(py, &value),
            None => Ok(default.unwrap_or_else(|| py.None().into_bound(py))),
        }
    }

    fn __eq__(&self, other: &Bound<'_, PyAny>) -> bool {
        other
            .cast::<SettingsTree>()
            .is_ok_and(|other| self.tree == other.get().tree)
    }

    fn __repr__(&self) -> String {
        format!("SettingsTree(leaves={})", self.tree.leaf_count())
    }
}

/// What turns one `SettingsTree` into another (`SettingsTree.diff`): the changed and
/// removed nodes, and the partial tree, read from the new tree's leaves when asked for.
#[pyclass(frozen, module = "svc_sdk.settings")]
pub(crate) struct TreePatch {
    patch: core::TreePatch,
}

#[pymethods]
impl TreePatch {
    /// The changed nodes, in document order.
    #[getter]
    fn changed(&self) -> Vec<String> {
        self.patch.changed().map(ToString::to_string).collect()
    }

    /// The nodes of the old tree that the new one lacks.
    #[getter]
    fn removed(&self) -> Vec<String> {
        node_paths(self.patch.removed())
    }

    /// The partial tree to write, as Python objects.
    #[getter]
    fn tree<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        to_python(py, &self.patch.to_patch().tree)
    }

    /// The partial tree as compact JSON text (the body of the unit's settings write),
    /// serialized straight from the new tree's leaves.
    fn to_json(&self, py: Python<'_>) -> PyResult<String> {
        serde_json::to_string(&self.patch)
            .map_err(|e| SvcErr::new("internal", e.to_string()).into_pyerr(py))
    }

    /// The same patch as a `Patch` (what `diff` gives for the two trees).
    fn to_patch(&self, py: Python<'_>) -> PyResult<Patch> {
        Patch::from_core(py, &self.patch.to_patch())
    }

    /// Whether the two trees were equal.
    fn is_empty(&self) -> bool {
        self.patch.is_empty()
    }

    /// Whether the old tree had nodes that the new one lacks.
    fn has_removals(&self) -> bool {
        self.patch.has_removals()
    }

    fn __repr__(&self) -> String {
        format!(
            "TreePatch(changed={:?}, removed={:?})",
            self.changed(),
            self.removed()
        )
    }
}

// --- Files ---------------------------------------------------------------------------

/// Compares settings files (a fleet's exports) against a reference file: one entry per
/// file, `{"file", "changed", "removed", "patch"}` (`svc_core::settings::diff_files`,
/// the GIL released: every file read, on every core, before any is compared, so a bad
/// one fails the whole call).
#[pyfunction]
fn fleet_diff<'py>(
    py: Python<'py>,
    reference: PathBuf,
    files: Vec<PathBuf>,
) -> PyResult<Bound<'py, PyList>> {
    let entries = py.detach(|| {
        let diffs = core::diff_files(&reference, &files)?;
        let mut entries = Vec::with_capacity(diffs.len());
        for diff in &diffs {
            let patch = &diff.patch;
            entries.push(serde_json::json!({
                "file": diff.file.display().to_string(),
                "changed": node_paths(&patch.changed),
                "removed": node_paths(&patch.removed),
                "patch": patch.tree,
            }));
        }
        Ok::<_, core::SettingsError>(entries)
    });
    let entries = entries.map_err(|e| {
        let kind = e.kind().as_str();
        SvcErr::new(kind, e.to_string())
            .subsystem("settings")
            .into_pyerr(py)
    })?;
    let list = PyList::empty(py);
    for entry in &entries {
        list.append(to_python(py, entry)?)?;
    }
    Ok(list)
}

pub(crate) fn register(module: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = module.py();
    module.add_class::<Patch>()?;
    module.add_class::<Merge>()?;
    module.add_class::<Conflict>()?;
    module.add_class::<SettingsTree>()?;
    module.add_class::<TreePatch>()?;
    module.add_class::<Absent>()?;
    module.add("ABSENT", absent(py)?)?;
    module.add_function(wrap_pyfunction!(diff, module)?)?;
    // Test hooks: attributes of the module, not exported (not in `__all__` nor in the
    // stubs).
    module.setattr(
        "_diff_reference",
        wrap_pyfunction!(_diff_reference, module)?,
    )?;
    module.setattr("_diff_walk", wrap_pyfunction!(_diff_walk, module)?)?;
    module.add_function(wrap_pyfunction!(diff_json, module)?)?;
    module.add_function(wrap_pyfunction!(_diff_json_reference, module)?)?;
    module.add_function(wrap_pyfunction!(apply, module)?)?;
    module.add_function(wrap_pyfunction!(merge, module)?)?;
    module.add_function(wrap_pyfunction!(fleet_diff, module)?)?;
    Ok(())
}
