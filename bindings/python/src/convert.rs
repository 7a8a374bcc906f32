//! JSON values between Python and Rust: Python objects (`dict`, `list`, `tuple`, `str`,
//! `int`, `float`, `bool`, `None`) to `serde_json::Value` and back, and the type
//! checks the settings functions share.
//!
//! A JSON value here is what `serde_json` can hold: object keys are `str`, integers
//! fit 64 bits (signed or unsigned), floats are finite. Anything else is refused with a
//! `SettingsError` (kind `invalid_input`) naming the node, never its value.

use pyo3::PyTypeInfo;
use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyFloat, PyInt, PyList, PyString, PyTuple};
use serde_json::{Map, Number, Value};

use crate::errors::SvcErr;

/// What a Python object is, as JSON.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Kind {
    Null,
    Bool,
    Int,
    Float,
    Str,
    Array,
    Object,
    /// Not a JSON value (a set, bytes, a date, a NumPy scalar...).
    Other,
}

/// The exact types of the JSON values, to classify an object by one pointer
/// comparison (subclasses take the slower checks of [`Types::kind`]).
#[derive(Clone, Copy)]
pub(crate) struct Types {
    pub(crate) dict: *mut ffi::PyTypeObject,
    pub(crate) list: *mut ffi::PyTypeObject,
    pub(crate) tuple: *mut ffi::PyTypeObject,
    pub(crate) str: *mut ffi::PyTypeObject,
    pub(crate) int: *mut ffi::PyTypeObject,
    pub(crate) float: *mut ffi::PyTypeObject,
    pub(crate) bool: *mut ffi::PyTypeObject,
}

impl Types {
    pub(crate) fn new(py: Python<'_>) -> Self {
        // The raw type pointers: no reference is taken (builtin types live as long as
        // the interpreter).
        Self {
            dict: PyDict::type_object_raw(py),
            list: PyList::type_object_raw(py),
            tuple: PyTuple::type_object_raw(py),
            str: PyString::type_object_raw(py),
            int: PyInt::type_object_raw(py),
            float: PyFloat::type_object_raw(py),
            bool: PyBool::type_object_raw(py),
        }
    }

    /// The kind of `object`: one pointer comparison for the exact types, `isinstance`
    /// checks for subclasses (`bool` before `int`).
    #[inline]
    pub(crate) fn kind(&self, object: &Bound<'_, PyAny>) -> Kind {
        let t = object.get_type_ptr();
        if t == self.str {
            Kind::Str
        } else if t == self.dict {
            Kind::Object
        } else if t == self.int {
            Kind::Int
        } else if t == self.float {
            Kind::Float
        } else if t == self.bool {
            Kind::Bool
        } else if t == self.list || t == self.tuple {
            Kind::Array
        } else if object.is_none() {
            Kind::Null
        } else {
            subclass_kind(object)
        }
    }
}

#[cold]
fn subclass_kind(object: &Bound<'_, PyAny>) -> Kind {
    if object.is_instance_of::<PyBool>() {
        Kind::Bool
    } else if object.is_instance_of::<PyInt>() {
        Kind::Int
    } else if object.is_instance_of::<PyFloat>() {
        Kind::Float
    } else if object.is_instance_of::<PyString>() {
        Kind::Str
    } else if object.is_instance_of::<PyDict>() {
        Kind::Object
    } else if object.is_instance_of::<PyList>() || object.is_instance_of::<PyTuple>() {
        Kind::Array
    } else {
        Kind::Other
    }
}

/// The keys from the root to a node, for error messages and changed paths.
pub(crate) fn join_path<T>(keys: &[Bound<'_, T>]) -> String {
    let keys: Vec<_> = keys
        .iter()
        .filter_map(|key| {
            key.as_any()
                .cast::<PyString>()
                .ok()
                .map(|key| key.to_string_lossy())
        })
        .collect();
    keys.join("/")
}

/// The error for a node that is not a JSON value (a `SettingsError` that is an
/// `InvalidInputError`), naming the node and the type, never the value.
pub(crate) fn not_json(py: Python<'_>, path: &str, what: &str) -> PyErr {
    let shown = if path.is_empty() {
        "the root".to_owned()
    } else {
        path.to_owned()
    };
    let paths = PyList::new(py, [path]).map(Bound::into_any);
    let error = SvcErr::new("invalid_input", format!("{shown}: {what}")).subsystem("settings");
    match paths {
        Ok(paths) => error.attr("paths", paths).into_pyerr(py),
        Err(e) => e,
    }
}

/// The type name of `object`, for messages.
pub(crate) fn type_name(object: &Bound<'_, PyAny>) -> String {
    object
        .get_type()
        .name()
        .map(|name| name.to_string())
        .unwrap_or_else(|_| "?".to_owned())
}

/// The message for a value of a type JSON cannot hold.
pub(crate) fn not_json_type(object: &Bound<'_, PyAny>) -> String {
    format!("a value of type {} is not JSON", type_name(object))
}

/// The integer as a JSON number, if it fits 64 bits.
pub(crate) fn int_number(object: &Bound<'_, PyAny>) -> Option<Number> {
    if let Ok(value) = object.extract::<i64>() {
        Some(Number::from(value))
    } else {
        object.extract::<u64>().ok().map(Number::from)
    }
}

/// A Python object as a JSON value; `path` names the node in errors (its keys from
/// the root).
pub(crate) struct ToValue<'py> {
    py: Python<'py>,
    types: Types,
    stack: Vec<Bound<'py, PyAny>>,
    /// How many containers deep the current node is.
    depth: usize,
}

/// How deeply a tree of Python objects may nest (as the JSON parsers, which stop at
/// 128): a deeper tree, or one that contains itself, is refused with a `SettingsError`
/// instead of overflowing the stack.
pub(crate) const MAX_DEPTH: usize = 128;

/// The error text of a tree deeper than [`MAX_DEPTH`].
pub(crate) const TOO_DEEP: &str = "the tree nests deeper than 128 levels (does it contain itself?)";

impl<'py> ToValue<'py> {
    pub(crate) fn new(py: Python<'py>) -> Self {
        Self::at(py, Vec::new(), 0)
    }

    /// For a node reached through the keys `stack`, `depth` containers deep (its
    /// errors name it from the root).
    pub(crate) fn at(py: Python<'py>, stack: Vec<Bound<'py, PyAny>>, depth: usize) -> Self {
        Self {
            py,
            types: Types::new(py),
            stack,
            depth,
        }
    }

    fn error(&self, what: &str) -> PyErr {
        not_json(self.py, &join_path(&self.stack), what)
    }

    /// One container deeper (undone by the caller on success; an error ends the walk).
    fn deeper(&mut self) -> PyResult<()> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return Err(self.error(TOO_DEEP));
        }
        Ok(())
    }

    pub(crate) fn value(&mut self, object: &Bound<'py, PyAny>) -> PyResult<Value> {
        Ok(match self.types.kind(object) {
            Kind::Str => Value::String(object.cast::<PyString>()?.to_cow()?.into_owned()),
            Kind::Object => {
                self.deeper()?;
                let dict = object.cast::<PyDict>()?;
                let mut map = Map::with_capacity(dict.len());
                for (key, child) in dict.iter() {
                    let key = key.cast_into::<PyString>().map_err(|e| {
                        self.error(&format!(
                            "a key of type {} is not a string",
                            type_name(e.into_inner().as_any())
                        ))
                    })?;
                    let name = key.to_cow()?.into_owned();
                    self.stack.push(key.into_any());
                    let child = self.value(&child)?;
                    self.stack.pop();
                    map.insert(name, child);
                }
                self.depth -= 1;
                Value::Object(map)
            }
            Kind::Int => Value::Number(
                int_number(object).ok_or_else(|| self.error("the integer does not fit 64 bits"))?,
            ),
            Kind::Float => {
                let number = object.extract::<f64>()?;
                Value::Number(
                    Number::from_f64(number)
                        .ok_or_else(|| self.error("the number is not finite"))?,
                )
            }
            Kind::Bool => Value::Bool(object.is_truthy()?),
            Kind::Null => Value::Null,
            Kind::Array => {
                self.deeper()?;
                let mut items = Vec::new();
                for item in object.try_iter()? {
                    items.push(self.value(&item?)?);
                }
                self.depth -= 1;
                Value::Array(items)
            }
            Kind::Other => return Err(self.error(&not_json_type(object))),
        })
    }
}

/// A JSON value as Python objects: objects as `dict` (keys in order), arrays as `list`.
pub(crate) fn to_python<'py>(py: Python<'py>, value: &Value) -> PyResult<Bound<'py, PyAny>> {
    Ok(match value {
        Value::Null => py.None().into_bound(py),
        Value::Bool(flag) => PyBool::new(py, *flag).to_owned().into_any(),
        Value::Number(number) => {
            if let Some(int) = number.as_i64() {
                int.into_pyobject(py)?.into_any()
            } else if let Some(uint) = number.as_u64() {
                uint.into_pyobject(py)?.into_any()
            } else {
                number
                    .as_f64()
                    .unwrap_or(f64::NAN)
                    .into_pyobject(py)?
                    .into_any()
            }
        }
        Value::String(text) => PyString::new(py, text).into_any(),
        Value::Array(items) => {
            let list = PyList::empty(py);
            for item in items {
                list.append(to_python(py, item)?)?;
            }
            list.into_any()
        }
        Value::Object(map) => {
            let dict = PyDict::new(py);
            for (key, child) in map {
                dict.set_item(PyString::new(py, key), to_python(py, child)?)?;
            }
            dict.into_any()
        }
    })
}

/// Python's `repr` of a text (quotes and escapes as Python writes them).
pub(crate) fn py_repr(py: Python<'_>, text: &str) -> PyResult<String> {
    Ok(PyString::new(py, text).repr()?.to_string())
}
