//! The access of the settings walk (`svc_core::settings::walk`, where the semantics is
//! written) to trees of Python objects through `Bound` references: any objects,
//! subclasses of the JSON types included, anything else refused with its path. The
//! changed nodes of the partial tree are checked copies (converted to JSON and back).

use pyo3::prelude::*;
use pyo3::types::dict::BoundDictIterator;
use pyo3::types::{PyDict, PyIterator, PyString};
use svc_core::settings::walk::{self, Kind as NodeKind};

use crate::convert::{self, Kind, ToValue, Types, join_path, not_json, not_json_type, to_python};

/// Two trees of Python objects, read by the walk ([`walk::Nodes`]), and the patch of a
/// diff of them, built as Python objects ([`walk::Changes`]).
pub(super) struct Objects<'py> {
    py: Python<'py>,
    types: Types,
    /// Keys from the root to the objects being compared (and, while a node is compared
    /// or copied, its key), for errors.
    stack: Vec<Bound<'py, PyAny>>,
    changed: Vec<String>,
    removed: Vec<String>,
    /// How many containers deep the comparison is (bounded: a tree that contains itself
    /// is an error, not a stack overflow).
    depth: usize,
}

/// The entries of a `dict`, each with the value of the same key in another one (looked
/// up: one hash lookup, the hash of a `str` being kept in the object, costs less than a
/// second iterator and a comparison of the keys on the stable ABI, where every reference
/// count is a call).
pub(super) struct Entries<'py> {
    entries: BoundDictIterator<'py>,
    other: Bound<'py, PyDict>,
}

impl<'py> Objects<'py> {
    pub(super) fn new(py: Python<'py>) -> Self {
        Self {
            py,
            types: Types::new(py),
            stack: Vec::new(),
            changed: Vec::new(),
            removed: Vec::new(),
            depth: 0,
        }
    }

    /// The path of the current node (the keys of the stack), for errors.
    fn here(&self) -> String {
        join_path(&self.stack)
    }

    fn error(&self, what: &str) -> PyErr {
        not_json(self.py, &self.here(), what)
    }

    /// The path of the node under `key` in the current object.
    fn path_to(&mut self, key: &Bound<'py, PyAny>) -> String {
        self.stack.push(key.clone());
        let path = self.here();
        self.stack.pop();
        path
    }

    /// Checks that `key` is a `str` (one pointer comparison for the exact type).
    #[inline]
    fn check_key(&self, key: &Bound<'py, PyAny>) -> PyResult<()> {
        if key.get_type_ptr() == self.types.str || key.is_instance_of::<PyString>() {
            return Ok(());
        }
        let type_name = convert::type_name(key);
        Err(self.error(&format!("a key of type {type_name} is not a string")))
    }

    /// The whole diff: the partial tree and the changed and removed paths.
    pub(super) fn diff(
        mut self,
        old: &Bound<'py, PyAny>,
        new: &Bound<'py, PyAny>,
    ) -> PyResult<(Bound<'py, PyAny>, Vec<String>, Vec<String>)> {
        let tree = match walk::diff(&mut self, old, new)? {
            walk::Root::Objects(Some(tree)) => tree.into_any(),
            walk::Root::Objects(None) => PyDict::new(self.py).into_any(),
            walk::Root::Leaves => self.copy(new)?,
        };
        Ok((tree, self.changed, self.removed))
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

    /// A copy of a value for the partial tree, every node checked to be JSON: new
    /// objects of the base types (a `tuple` becomes a `list`, a subclass of `str`, `int`
    /// or `float` its base type).
    fn copy(&mut self, value: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
        let value = ToValue::at(self.py, self.stack.clone(), self.depth).value(value)?;
        to_python(self.py, &value)
    }
}

impl<'py> walk::Nodes for Objects<'py> {
    type Node = Bound<'py, PyAny>;
    type Key = Bound<'py, PyAny>;
    type Error = PyErr;
    type Entries = Entries<'py>;
    type Items = Bound<'py, PyIterator>;
    type Missing = Entries<'py>;

    fn is_object(&mut self, node: &Bound<'py, PyAny>) -> bool {
        self.types.kind(node) == Kind::Object
    }

    fn kind(&mut self, node: &Bound<'py, PyAny>) -> PyResult<NodeKind> {
        match self.types.kind(node) {
            Kind::Object => Ok(NodeKind::Object),
            Kind::Array => Ok(NodeKind::Array),
            Kind::Other => Err(self.error(&not_json_type(node))),
            Kind::Null | Kind::Bool | Kind::Int | Kind::Float | Kind::Str => Ok(NodeKind::Scalar),
        }
    }

    fn same(&self, a: &Bound<'py, PyAny>, b: &Bound<'py, PyAny>) -> bool {
        a.is(b)
    }

    /// Kinds first (`True` is not `1`, `1` is not `1.0`), then values.
    fn scalars_equal(&mut self, a: &Bound<'py, PyAny>, b: &Bound<'py, PyAny>) -> PyResult<bool> {
        let kind = self.types.kind(a);
        if kind != self.types.kind(b) {
            return Ok(false);
        }
        match kind {
            Kind::Null => Ok(true),
            Kind::Bool => Ok(a.is_truthy()? == b.is_truthy()?),
            Kind::Str => self.strings_equal(a, b),
            Kind::Int => {
                if a.get_type_ptr() == self.types.int && b.get_type_ptr() == self.types.int {
                    a.eq(b)
                } else {
                    match (convert::int_number(a), convert::int_number(b)) {
                        (Some(x), Some(y)) => Ok(x == y),
                        _ => Err(self.error("the integer does not fit 64 bits")),
                    }
                }
            }
            Kind::Float => self.floats_equal(a, b),
            Kind::Array | Kind::Object | Kind::Other => Ok(false),
        }
    }

    fn len(&mut self, container: &Bound<'py, PyAny>) -> PyResult<usize> {
        match container.cast::<PyDict>() {
            Ok(dict) => Ok(dict.len()),
            Err(_) => container.len(),
        }
    }

    fn items(&mut self, array: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyIterator>> {
        array.try_iter()
    }

    fn next_item(
        &mut self,
        items: &mut Bound<'py, PyIterator>,
    ) -> PyResult<Option<Bound<'py, PyAny>>> {
        items.next().transpose()
    }

    fn entries(
        &mut self,
        object: &Bound<'py, PyAny>,
        other: &Bound<'py, PyAny>,
    ) -> PyResult<Entries<'py>> {
        Ok(Entries {
            entries: object.cast::<PyDict>()?.iter(),
            other: other.cast::<PyDict>()?.clone(),
        })
    }

    #[allow(clippy::type_complexity)]
    fn next_entry(
        &mut self,
        entries: &mut Entries<'py>,
    ) -> PyResult<
        Option<(
            Bound<'py, PyAny>,
            Bound<'py, PyAny>,
            Option<Bound<'py, PyAny>>,
        )>,
    > {
        let Some((key, value)) = entries.entries.next() else {
            return Ok(None);
        };
        self.check_key(&key)?;
        let other = entries.other.get_item(&key)?;
        Ok(Some((key, value, other)))
    }

    fn missing(
        &mut self,
        object: &Bound<'py, PyAny>,
        other: &Bound<'py, PyAny>,
    ) -> PyResult<Entries<'py>> {
        self.entries(object, other)
    }

    fn next_missing(&mut self, missing: &mut Entries<'py>) -> PyResult<Option<Bound<'py, PyAny>>> {
        for (key, _) in missing.entries.by_ref() {
            if !missing.other.contains(&key)? {
                return Ok(Some(key));
            }
        }
        Ok(None)
    }

    fn deeper(&mut self) -> PyResult<()> {
        self.depth += 1;
        if self.depth > convert::MAX_DEPTH {
            return Err(self.error(convert::TOO_DEEP));
        }
        Ok(())
    }

    fn shallower(&mut self) {
        self.depth -= 1;
    }
}

impl<'py> walk::Changes for Objects<'py> {
    type Object = Bound<'py, PyDict>;

    fn enter(&mut self, key: &Bound<'py, PyAny>) -> PyResult<()> {
        self.stack.push(key.clone());
        walk::Nodes::deeper(self)
    }

    fn leave(&mut self) {
        walk::Nodes::shallower(self);
        self.stack.pop();
    }

    /// [`walk::equal`], errors naming the node under `key`. Two `str`s, `int`s or
    /// `bool`s of the exact types (most leaves) are compared at once, as it would.
    fn leaves_equal(
        &mut self,
        key: &Bound<'py, PyAny>,
        old: &Bound<'py, PyAny>,
        new: &Bound<'py, PyAny>,
    ) -> PyResult<bool> {
        let (t, types) = (old.get_type_ptr(), &self.types);
        if t == new.get_type_ptr() && (t == types.str || t == types.int || t == types.bool) {
            return old.eq(new);
        }
        self.stack.push(key.clone());
        let equal = walk::equal(self, old, new);
        self.stack.pop();
        equal
    }

    /// Records a changed (or added) node and writes a copy of it into the partial object.
    fn changed(
        &mut self,
        key: Bound<'py, PyAny>,
        new: &Bound<'py, PyAny>,
        out: &mut Option<Bound<'py, PyDict>>,
    ) -> PyResult<()> {
        self.stack.push(key.clone());
        let copy = self.copy(new);
        self.stack.pop();
        let copy = copy?;
        let path = self.path_to(&key);
        self.changed.push(path);
        out.get_or_insert_with(|| PyDict::new(self.py))
            .set_item(key, copy)
    }

    fn child(
        &mut self,
        key: Bound<'py, PyAny>,
        child: Bound<'py, PyDict>,
        out: &mut Option<Bound<'py, PyDict>>,
    ) -> PyResult<()> {
        out.get_or_insert_with(|| PyDict::new(self.py))
            .set_item(key, child)
    }

    fn removed(&mut self, key: Bound<'py, PyAny>) -> PyResult<()> {
        self.check_key(&key)?;
        let path = self.path_to(&key);
        self.removed.push(path);
        Ok(())
    }

    fn changed_root(&mut self, _new: &Bound<'py, PyAny>) -> PyResult<()> {
        self.changed.push(String::new());
        Ok(())
    }
}
