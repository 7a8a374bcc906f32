//! The safe walk of two trees of Python objects ([`Differ`]), and the checked copies
//! and in-place write that `diff` and `apply` build their results with.

use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PyString};
use serde_json::Value;

use super::paths::Paths;
use crate::convert::{self, Kind, Types, join_path, not_json, not_json_type, to_python};

/// The minimal patch between two trees of Python objects (see the module documentation).
pub(super) struct Differ<'py> {
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
    pub(super) fn diff(
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
pub(super) fn copy_value<'py>(
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
pub(super) fn apply_in_place<'py>(
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
