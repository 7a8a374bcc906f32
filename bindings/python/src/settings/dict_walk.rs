//! The node access of the settings walk (`svc_core::settings::walk`, where what a
//! change, a removal and an equal leaf are is written) over two trees of exact builtin
//! types (`dict`, `list`, `tuple`, `str`, `int`, `float`, `bool`, `None`), on borrowed
//! references: what `settings.diff` walks the usual trees with.
//!
//! One long file on purpose: it is all of the crate's unsafe code, every part of it held
//! to the one safety invariant below, which is reviewed as a whole in one place.
//!
//! On the stable ABI every reference-count change is a function call (`Py_IncRef`,
//! `Py_DecRef`), and the safe iteration of a `dict` costs several per entry: most of the
//! time of a diff in which little changed. This access only reads: it hands the walk the
//! keys and values of the `dict`s as borrowed references (`PyDict_Next`,
//! `PyDict_GetItemWithError`, `PyList_GetItem`), compares scalars with type-strict
//! C-level comparisons, and keeps an owned reference only to what the walk reports (the
//! keys and values of the changed and removed nodes). The caller builds the partial tree
//! from that afterwards (`settings::patch`), with owned references.
//!
//! Anything else (a subclass, a non-`str` key, a non-finite float, an integer that does
//! not fit 64 bits in a changed node, a value JSON cannot hold) stops the walk with
//! [`Stop::Fallback`]: the caller then runs the same walk through `Bound` references
//! (`settings::differ`) from the start, which gives the result or the error. Since this
//! walk changes nothing, nothing of it is visible then. When it finishes, its result is
//! the other access's (the tests check it on random trees against
//! `_native._diff_reference`, the walk through `Bound` references alone).
//!
//! Two `dict`s are walked side by side while their keys come in the same order (two
//! reads of one schema: no hash lookup), then by lookups. Keys in step are compared
//! once per schema, not once per `dict` ([`Schemas`]): comparing them is most of the
//! cost of a walk otherwise.
//!
//! # Safety invariant
//!
//! A borrowed reference is valid while its container is alive and not modified. Here:
//!
//! - the GIL is held for the whole walk (a `Python<'py>` token; the stable ABI has no
//!   free-threaded build), and the walk never releases it;
//! - the two roots are owned by the caller (`&Bound`) for the whole walk; every other
//!   object is reached through borrowed references from them;
//! - the walk itself is svc-core's, safe code generic over the node access: it reaches
//!   objects only through this file's methods, and hands them back only the nodes
//!   those methods gave it ([`Borrowed`] is made nowhere else: its field is private),
//!   during the one call of [`diff`];
//! - no Python code runs and no object is freed during the walk, so no container can
//!   be modified nor freed: this access calls only `PyDict_Next`, `PyDict_Size`,
//!   `PyDict_GetItemWithError`, `PyDict_Contains`, `PyList_GetItem`, `PyTuple_GetItem`,
//!   `PyUnicode_Compare`, `PyObject_RichCompareBool`, `PyFloat_AsDouble`,
//!   `PyLong_AsLongLongAndOverflow`, `PyErr_Occurred` and `Py_IncRef`, and reads
//!   `Py_TYPE` and `Py_SIZE` (the stable ABI's object headers), each on objects whose
//!   exact type was checked first (`Py_TYPE` pointer equality) to be a builtin one; the
//!   walk allocates Rust memory only:
//!   - they call no Python code: no `__eq__` or `__hash__` of a user type (a `dict` is
//!     looked into only with an exact `str` key, and only after every key of that
//!     `dict` not yet paired was checked to be an exact `str`, so every comparison of
//!     keys is `str`'s own; values are compared only when both are of the same exact
//!     builtin type);
//!   - they allocate no Python object, so the cyclic garbage collector (which could run
//!     finalizers and weak-reference callbacks, and through them any Python code or
//!     other threads) cannot start;
//!   - reference counts only go up (`Py_IncRef`, for what the result keeps): nothing is
//!     released before the walk is over;
//! - a failed call (none is expected on these types) stops the walk at once: the error
//!   stays set and is fetched after the walk, when no borrowed reference is in use;
//! - addresses of objects are kept during the walk only ([`Schemas`]): none is freed
//!   meanwhile, so none is reused for another object.

#![allow(unsafe_code)]

use std::os::raw::c_int;

use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::types::PyDict;
use svc_core::settings::walk::{self, Kind};

use super::paths::KeyTree;
use crate::convert::Types;

/// What the walk found, in owned references: the keys to the changed and removed nodes,
/// each changed node (in the new tree's document order) with its value in the new tree,
/// and each removed node (in the walk's order).
pub(crate) struct Changes {
    pub(crate) keys: KeyTree,
    pub(crate) changed: Vec<(usize, Py<PyAny>)>,
    pub(crate) removed: Vec<usize>,
}

/// Why the walk stopped before its end.
enum Stop {
    /// Something only the walk through `Bound` references handles: run it instead.
    Fallback,
    /// A C call failed; its error is set (fetched once the walk is over).
    Raised,
}

type Step<T> = Result<T, Stop>;

/// The changes from `old` to `new`, or `None` when the trees hold anything but exact
/// builtin JSON types (then the walk through `Bound` references must run).
pub(crate) fn diff<'py>(
    old: &Bound<'py, PyDict>,
    new: &Bound<'py, PyDict>,
) -> PyResult<Option<Changes>> {
    let py = old.py();
    let mut walk = Walk::new(py);
    if old.get_type_ptr() != walk.types.dict || new.get_type_ptr() != walk.types.dict {
        return Ok(None);
    }
    // SAFETY: both roots are exact `dict`s, owned by the caller for the whole walk, with
    // the GIL held (`py`), and the nodes are used during this call only; see the
    // invariant in the module documentation.
    let (old, new) = unsafe { (Borrowed::new(old.as_ptr()), Borrowed::new(new.as_ptr())) };
    match walk::objects(&mut walk, &old, &new) {
        Ok(_) => Ok(Some(Changes {
            keys: walk.nodes,
            changed: walk.changed,
            removed: walk.removed,
        })),
        Err(Stop::Fallback) => Ok(None),
        // The walk is over: no borrowed reference is in use any more.
        Err(Stop::Raised) => Err(PyErr::fetch(py)),
    }
}

/// An object of the trees being walked, borrowed: a root or an object reached from one.
/// Made only in this file (its field is private), so that the walk of svc-core, generic
/// over the node access, can only hand this file's methods the nodes they gave it.
#[derive(Clone, Copy, PartialEq, Eq)]
struct Borrowed(*mut ffi::PyObject);

impl Borrowed {
    /// # Safety
    ///
    /// `object` is a root of the walk or an object reached from one, with the GIL held,
    /// and the `Borrowed` is used during that walk only.
    #[inline]
    unsafe fn new(object: *mut ffi::PyObject) -> Self {
        Self(object)
    }
}

/// What an object of an exact builtin type is, as JSON.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Exact {
    Null,
    Bool,
    Int,
    Float,
    Str,
    Array,
    Object,
}

/// An object's address, kept without a reference (see [`Schemas`]).
type Address = usize;

/// Key sequences found to be the same keys: pairs of `dict`s whose keys were compared
/// one by one in step (exact `str`s of the same text at the same positions), kept as the
/// addresses of their key objects, so that a later pair of `dict`s with the very same
/// key objects in the same order is paired by comparing addresses only. The keys of a
/// `json.loads` tree are one object per name, and `dict`s of one schema come back: in
/// the unit's tree, 899 of the 1,192 keys are in a `dict` whose keys came before. Valid
/// for one walk only (no object is freed during it, so no address is reused; a `str`'s
/// type and text never change).
struct Schemas {
    /// The pairs of key addresses of each schema, one schema after the other.
    keys: Vec<(Address, Address)>,
    /// Direct-mapped by the first pair of a schema: that pair, where the schema starts
    /// in `keys`, and its length (0: none).
    slots: Box<[(Address, Address, usize, usize); Self::SLOTS]>,
}

impl Schemas {
    const SLOTS: usize = 64;

    fn new() -> Self {
        Self {
            keys: Vec::with_capacity(512),
            slots: Box::new([(0, 0, 0, 0); Self::SLOTS]),
        }
    }

    #[inline]
    fn slot(first: Address, second: Address) -> usize {
        // Fibonacci hashing of both addresses (their low bits are alignment).
        let mixed =
            (first as u64 ^ (second as u64).rotate_left(29)).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        (mixed >> 58) as usize % Self::SLOTS
    }

    /// The schema (start, length) starting with the pair of keys `first`, `second`.
    #[inline]
    fn find(&self, first: Address, second: Address) -> Option<(usize, usize)> {
        let (a, b, start, len) = self.slots[Self::slot(first, second)];
        (a == first && b == second && len > 0).then_some((start, len))
    }

    /// Adds a schema (at least one pair), replacing the one of its slot.
    fn insert(&mut self, pairs: &[(Address, Address)]) {
        let Some(&(first, second)) = pairs.first() else {
            return;
        };
        let start = self.keys.len();
        self.keys.extend_from_slice(pairs);
        self.slots[Self::slot(first, second)] = (first, second, start, pairs.len());
    }
}

struct Walk<'py> {
    py: Python<'py>,
    types: Types,
    none: *mut ffi::PyObject,
    /// Keys from the root to the `dict`s being compared (borrowed).
    keys: Vec<*mut ffi::PyObject>,
    /// The node of each key of `keys` in `nodes`, once made ([`KeyTree::ROOT`] until then).
    key_nodes: Vec<usize>,
    /// The keys to the changed and removed nodes (owned).
    nodes: KeyTree,
    changed: Vec<(usize, Py<PyAny>)>,
    removed: Vec<usize>,
    schemas: Schemas,
    /// The key pairs compared in step in the `dict`s being walked, for [`Schemas`]: one
    /// stack for the whole walk, each pair of `dict`s above its parents'.
    pending: Vec<(Address, Address)>,
    /// How many containers deep the comparison is: past `convert::MAX_DEPTH` (a tree
    /// that contains itself) the walk through `Bound` references runs, which raises the error.
    depth: usize,
}

/// Whether a call returning `value` failed (`value` is its error value and an error is
/// set).
///
/// # Safety
///
/// The GIL is held.
#[inline]
unsafe fn raised<T: PartialEq>(value: T, error_value: T) -> bool {
    // SAFETY: the GIL is held (the caller's contract).
    value == error_value && !unsafe { ffi::PyErr_Occurred() }.is_null()
}

/// Two `dict`s walked side by side: the entries of the first, each with the value of the
/// same key in the second. While their keys come in the same order, the entries are
/// paired by position; from the first key out of order, by lookups into the second.
struct Stepper {
    first: *mut ffi::PyObject,
    second: *mut ffi::PyObject,
    first_position: ffi::Py_ssize_t,
    second_position: ffi::Py_ssize_t,
    /// The position of the next entry of the first `dict`.
    index: usize,
    in_step: bool,
    /// The schema the keys in step follow so far (start, length in `Schemas::keys`).
    schema: Option<(usize, usize)>,
    /// Where the key pairs of these `dict`s start in `Walk::pending`.
    pending: usize,
}

impl Stepper {
    fn new(first: *mut ffi::PyObject, second: *mut ffi::PyObject, pending: usize) -> Self {
        Self {
            first,
            second,
            first_position: 0,
            second_position: 0,
            index: 0,
            in_step: true,
            schema: None,
            pending,
        }
    }
}

impl<'py> Walk<'py> {
    fn new(py: Python<'py>) -> Self {
        Self {
            py,
            types: Types::new(py),
            none: py.None().as_ptr(),
            keys: Vec::with_capacity(16),
            key_nodes: Vec::with_capacity(16),
            nodes: KeyTree::with_capacity(32),
            changed: Vec::with_capacity(16),
            removed: Vec::new(),
            schemas: Schemas::new(),
            pending: Vec::with_capacity(128),
            depth: 0,
        }
    }

    /// The kind of an object of an exact builtin JSON type; anything else falls back.
    ///
    /// # Safety
    ///
    /// `object` is a live object, with the GIL held.
    #[inline]
    unsafe fn exact(&self, object: *mut ffi::PyObject) -> Step<Exact> {
        // SAFETY: the caller's contract.
        let t = unsafe { ffi::Py_TYPE(object) };
        let types = &self.types;
        Ok(if t == types.str {
            Exact::Str
        } else if t == types.dict {
            Exact::Object
        } else if t == types.int {
            Exact::Int
        } else if t == types.float {
            Exact::Float
        } else if t == types.bool {
            Exact::Bool
        } else if t == types.list || t == types.tuple {
            Exact::Array
        } else if object == self.none {
            Exact::Null
        } else {
            return Err(Stop::Fallback);
        })
    }

    // --- Pairs of `dict`s ------------------------------------------------------------

    /// The next entry of the first `dict` of `stepper` (key, value) with the value of its
    /// key in the second (null if none). Falls back when a key is not an exact `str`:
    /// every key of the first, and every key of the second before any lookup into it.
    ///
    /// # Safety
    ///
    /// The `dict`s of `stepper` are live exact `dict`s, with the GIL held.
    #[inline(always)]
    #[allow(clippy::type_complexity)]
    unsafe fn next_pair(
        &mut self,
        stepper: &mut Stepper,
    ) -> Step<Option<(*mut ffi::PyObject, *mut ffi::PyObject, *mut ffi::PyObject)>> {
        let mut key = std::ptr::null_mut();
        let mut value = std::ptr::null_mut();
        // SAFETY (every block of this function): the caller's contract; the out pointers
        // are valid locals.
        if unsafe {
            ffi::PyDict_Next(
                stepper.first,
                &mut stepper.first_position,
                &mut key,
                &mut value,
            )
        } == 0
        {
            return Ok(None);
        }
        let index = stepper.index;
        stepper.index += 1;
        if stepper.in_step {
            let mut other_key = std::ptr::null_mut();
            let mut other_value = std::ptr::null_mut();
            if unsafe {
                ffi::PyDict_Next(
                    stepper.second,
                    &mut stepper.second_position,
                    &mut other_key,
                    &mut other_value,
                )
            } != 0
                && unsafe { self.same_key_in_step(stepper, index, key, other_key) }?
            {
                return Ok(Some((key, value, other_value)));
            }
            stepper.in_step = false;
            // SAFETY: the caller's contract.
            unsafe { self.out_of_step(stepper, other_key) }?;
        }
        // SAFETY: the caller's contract; `key` is checked to be an exact `str`, and every
        // key of the second `dict` is one (`out_of_step`): the lookup compares `str`s only.
        unsafe {
            if ffi::Py_TYPE(key) != self.types.str {
                return Err(Stop::Fallback);
            }
            let other = ffi::PyDict_GetItemWithError(stepper.second, key);
            if other.is_null() && !ffi::PyErr_Occurred().is_null() {
                return Err(Stop::Raised);
            }
            Ok(Some((key, value, other)))
        }
    }

    /// Whether `key` (of the first `dict`) and `other_key` (of the second), both at
    /// position `index`, are the same key: the next pair of the schema the keys follow
    /// so far, or exact `str`s of the same text (a key of another type falls back).
    ///
    /// # Safety
    ///
    /// Both keys are live, with the GIL held.
    #[inline(always)]
    unsafe fn same_key_in_step(
        &mut self,
        stepper: &mut Stepper,
        index: usize,
        key: *mut ffi::PyObject,
        other_key: *mut ffi::PyObject,
    ) -> Step<bool> {
        let pair = (key as Address, other_key as Address);
        match stepper.schema {
            Some((start, len)) => {
                if index < len && self.schemas.keys[start + index] == pair {
                    return Ok(true);
                }
                // Off the schema: its pairs so far are the pairs of these `dict`s.
                self.pending
                    .extend_from_slice(&self.schemas.keys[start..start + index]);
                stepper.schema = None;
            }
            None if index == 0 => {
                if let Some(schema) = self.schemas.find(pair.0, pair.1) {
                    stepper.schema = Some(schema);
                    return Ok(true);
                }
            }
            None => {}
        }
        // SAFETY: the caller's contract.
        let same = unsafe { self.same_key(key, other_key) }?;
        if same {
            self.pending.push(pair);
        }
        Ok(same)
    }

    /// Whether two keys are the same: exact `str`s of the same text (a key of another
    /// type falls back).
    ///
    /// # Safety
    ///
    /// Both are live, with the GIL held.
    #[inline(never)]
    unsafe fn same_key(&self, a: *mut ffi::PyObject, b: *mut ffi::PyObject) -> Step<bool> {
        let str_type = self.types.str;
        // SAFETY: the caller's contract; `PyUnicode_Compare` only on exact `str`s.
        unsafe {
            if ffi::Py_TYPE(a) != str_type || ffi::Py_TYPE(b) != str_type {
                return Err(Stop::Fallback);
            }
            if a == b {
                return Ok(true);
            }
            self.strings_equal(a, b)
        }
    }

    /// The walks of two `dict`s are out of step (or the second is over): checks that the
    /// second's keys not paired are exact `str`s (`unpaired`, the one read last, then the
    /// remaining ones), so that a lookup into it compares `str`s only (a key of another
    /// type could have an `__eq__` in Python).
    ///
    /// # Safety
    ///
    /// The `dict`s of `stepper` are live exact `dict`s, `unpaired` null or live, with
    /// the GIL held.
    #[cold]
    #[inline(never)]
    unsafe fn out_of_step(
        &mut self,
        stepper: &mut Stepper,
        unpaired: *mut ffi::PyObject,
    ) -> Step<()> {
        stepper.schema = None;
        let str_type = self.types.str;
        // SAFETY: the caller's contract.
        if !unpaired.is_null() && unsafe { ffi::Py_TYPE(unpaired) } != str_type {
            return Err(Stop::Fallback);
        }
        let mut key = std::ptr::null_mut();
        let mut value = std::ptr::null_mut();
        // SAFETY: the caller's contract; the out pointers are valid locals.
        while unsafe {
            ffi::PyDict_Next(
                stepper.second,
                &mut stepper.second_position,
                &mut key,
                &mut value,
            )
        } != 0
        {
            // SAFETY: as above.
            if unsafe { ffi::Py_TYPE(key) } != str_type {
                return Err(Stop::Fallback);
            }
        }
        Ok(())
    }

    /// The end of the walk of two `dict`s (`paired`: every entry of both was paired in
    /// step): their keys become a schema if they were compared.
    #[inline]
    fn end_pairs(&mut self, stepper: &Stepper, paired: bool) {
        if paired && stepper.schema.is_none() && self.pending.len() > stepper.pending + 1 {
            let (schemas, pending) = (&mut self.schemas, &self.pending);
            schemas.insert(&pending[stepper.pending..]);
        }
        self.pending.truncate(stepper.pending);
    }

    // --- Values ------------------------------------------------------------------------

    /// Whether two exact `str`s hold the same text.
    ///
    /// # Safety
    ///
    /// Both are live exact `str`s, with the GIL held.
    #[inline]
    unsafe fn strings_equal(&self, a: *mut ffi::PyObject, b: *mut ffi::PyObject) -> Step<bool> {
        // SAFETY: the caller's contract (`str`'s own comparison, no allocation).
        let order = unsafe { ffi::PyUnicode_Compare(a, b) };
        if unsafe { raised(order, -1) } {
            return Err(Stop::Raised);
        }
        Ok(order == 0)
    }

    /// `==` of two objects of one exact builtin type (`int` here).
    ///
    /// # Safety
    ///
    /// Both are live objects of the same exact builtin type, with the GIL held.
    #[inline]
    unsafe fn rich_equal(&self, a: *mut ffi::PyObject, b: *mut ffi::PyObject) -> Step<bool> {
        // SAFETY: the caller's contract (the type's own comparison, no allocation).
        match unsafe { ffi::PyObject_RichCompareBool(a, b, ffi::Py_EQ) } {
            1 => Ok(true),
            0 => Ok(false),
            _ => Err(Stop::Raised),
        }
    }

    /// Two exact `float`s: equal values; a non-finite one falls back (the access through `Bound` references
    /// refuses it, naming the node).
    ///
    /// # Safety
    ///
    /// Both are live exact `float`s, with the GIL held.
    #[inline]
    unsafe fn floats_equal(&self, a: *mut ffi::PyObject, b: *mut ffi::PyObject) -> Step<bool> {
        // SAFETY: the caller's contract.
        let (x, y) = unsafe { (ffi::PyFloat_AsDouble(a), ffi::PyFloat_AsDouble(b)) };
        if !x.is_finite() || !y.is_finite() {
            return Err(Stop::Fallback);
        }
        // `-1.0` is also the error value (never returned for an exact `float`).
        if (x == -1.0 || y == -1.0) && !unsafe { ffi::PyErr_Occurred() }.is_null() {
            return Err(Stop::Raised);
        }
        Ok(x == y)
    }

    /// The node of `key` under the `dict` being compared, made with those of the keys to
    /// it not made yet (owned references).
    ///
    /// # Safety
    ///
    /// The keys of the stack and `key` are live, with the GIL held.
    unsafe fn node(&mut self, key: *mut ffi::PyObject) -> usize {
        let mut parent = KeyTree::ROOT;
        for depth in 0..self.keys.len() {
            if self.key_nodes[depth] == KeyTree::ROOT {
                // SAFETY: the caller's contract; `Py_IncRef` runs no code.
                let owned = unsafe { Bound::from_borrowed_ptr(self.py, self.keys[depth]) };
                self.key_nodes[depth] = self.nodes.push(parent, owned.unbind());
            }
            parent = self.key_nodes[depth];
        }
        // SAFETY: as above.
        let owned = unsafe { Bound::from_borrowed_ptr(self.py, key) };
        self.nodes.push(parent, owned.unbind())
    }

    /// Checks that `value` copies without error nor conversion (`copy_value`): exact
    /// builtin types, `str` keys, finite floats, integers of 64 bits (signed; the rare
    /// unsigned ones above `i64::MAX` fall back).
    ///
    /// # Safety
    ///
    /// `value` is live and reached from a root, with the GIL held.
    unsafe fn check(&self, value: *mut ffi::PyObject, depth: usize) -> Step<()> {
        if depth > crate::convert::MAX_DEPTH {
            return Err(Stop::Fallback);
        }
        // SAFETY (every block of this function): the caller's contract; each call is
        // made on an object of the exact type it is for.
        match unsafe { self.exact(value) }? {
            Exact::Null | Exact::Bool | Exact::Str => {}
            Exact::Int => {
                let mut overflow: c_int = 0;
                let number = unsafe { ffi::PyLong_AsLongLongAndOverflow(value, &mut overflow) };
                if overflow != 0 {
                    return Err(Stop::Fallback);
                }
                if unsafe { raised(number, -1) } {
                    return Err(Stop::Raised);
                }
            }
            Exact::Float => {
                let number = unsafe { ffi::PyFloat_AsDouble(value) };
                if !number.is_finite() {
                    return Err(Stop::Fallback);
                }
                if unsafe { raised(number, -1.0) } {
                    return Err(Stop::Raised);
                }
            }
            Exact::Array => {
                let len = unsafe { self.array_len(value) };
                for index in 0..len {
                    unsafe { self.check(self.array_item(value, index)?, depth + 1) }?;
                }
            }
            Exact::Object => {
                let mut position = 0;
                let mut key = std::ptr::null_mut();
                let mut child = std::ptr::null_mut();
                while unsafe { ffi::PyDict_Next(value, &mut position, &mut key, &mut child) } != 0 {
                    if unsafe { ffi::Py_TYPE(key) } != self.types.str {
                        return Err(Stop::Fallback);
                    }
                    unsafe { self.check(child, depth + 1) }?;
                }
            }
        }
        Ok(())
    }

    /// The length of an exact `list` or `tuple` (its `ob_size`, `Py_SIZE`: both are
    /// variable-size objects of the stable ABI).
    ///
    /// # Safety
    ///
    /// `array` is a live exact `list` or `tuple`, with the GIL held.
    #[inline]
    unsafe fn array_len(&self, array: *mut ffi::PyObject) -> ffi::Py_ssize_t {
        // SAFETY: the caller's contract.
        unsafe { ffi::Py_SIZE(array) }
    }

    /// Item `index` (in range) of an exact `list` or `tuple` (borrowed).
    ///
    /// # Safety
    ///
    /// `array` is a live exact `list` or `tuple`, with the GIL held.
    #[inline]
    unsafe fn array_item(
        &self,
        array: *mut ffi::PyObject,
        index: ffi::Py_ssize_t,
    ) -> Step<*mut ffi::PyObject> {
        // SAFETY: the caller's contract.
        let item = unsafe {
            if ffi::Py_TYPE(array) == self.types.list {
                ffi::PyList_GetItem(array, index)
            } else {
                ffi::PyTuple_GetItem(array, index)
            }
        };
        if item.is_null() {
            return Err(Stop::Raised);
        }
        Ok(item)
    }
}

impl Walk<'_> {
    /// [`walk::equal`] of two leaves that are not two `str`s, `int`s or `float`s (most
    /// often two arrays), out of the walk's loop.
    #[inline(never)]
    fn other_leaves_equal(&mut self, old: &Borrowed, new: &Borrowed) -> Step<bool> {
        walk::equal(self, old, new)
    }
}

/// The items of an exact `list` or `tuple`.
struct Items {
    array: *mut ffi::PyObject,
    index: ffi::Py_ssize_t,
    len: ffi::Py_ssize_t,
}

/// The keys of an exact `dict` that another one lacks.
struct Missing {
    object: *mut ffi::PyObject,
    other: *mut ffi::PyObject,
    position: ffi::Py_ssize_t,
}

// Every `Borrowed` these methods are given was made by them (or by `diff`, for the
// roots) during the walk: a live object reached from the roots (see the invariant), so
// each unsafe call below has its contract. Each comparison or container call is made
// only on objects whose exact type was checked to be the one it is for.
impl walk::Nodes for Walk<'_> {
    type Node = Borrowed;
    type Key = Borrowed;
    type Error = Stop;
    type Entries = Stepper;
    type Items = Items;
    type Missing = Missing;

    #[inline(always)]
    fn is_object(&mut self, node: &Borrowed) -> bool {
        // SAFETY: see above.
        unsafe { ffi::Py_TYPE(node.0) == self.types.dict }
    }

    #[inline(always)]
    fn kind(&mut self, node: &Borrowed) -> Step<Kind> {
        // SAFETY: see above.
        Ok(match unsafe { self.exact(node.0) }? {
            Exact::Object => Kind::Object,
            Exact::Array => Kind::Array,
            Exact::Null | Exact::Bool | Exact::Int | Exact::Float | Exact::Str => Kind::Scalar,
        })
    }

    #[inline(always)]
    fn same(&self, a: &Borrowed, b: &Borrowed) -> bool {
        a == b
    }

    #[inline(always)]
    fn scalars_equal(&mut self, a: &Borrowed, b: &Borrowed) -> Step<bool> {
        // SAFETY: see above.
        unsafe {
            let kind = self.exact(a.0)?;
            if kind != self.exact(b.0)? {
                return Ok(false);
            }
            match kind {
                // One object each (`None`, `True`, `False`).
                Exact::Null | Exact::Bool => Ok(a == b),
                Exact::Str => self.strings_equal(a.0, b.0),
                Exact::Int => self.rich_equal(a.0, b.0),
                Exact::Float => self.floats_equal(a.0, b.0),
                Exact::Array | Exact::Object => Ok(false),
            }
        }
    }

    fn len(&mut self, container: &Borrowed) -> Step<usize> {
        // SAFETY: see above.
        let len = unsafe {
            match self.exact(container.0)? {
                Exact::Object => ffi::PyDict_Size(container.0),
                Exact::Array => self.array_len(container.0),
                _ => return Err(Stop::Fallback),
            }
        };
        usize::try_from(len).map_err(|_| Stop::Raised)
    }

    fn items(&mut self, array: &Borrowed) -> Step<Items> {
        // SAFETY: see above.
        if unsafe { self.exact(array.0) }? != Exact::Array {
            return Err(Stop::Fallback);
        }
        Ok(Items {
            array: array.0,
            index: 0,
            // SAFETY: an exact `list` or `tuple`, see above.
            len: unsafe { self.array_len(array.0) },
        })
    }

    #[inline]
    fn next_item(&mut self, items: &mut Items) -> Step<Option<Borrowed>> {
        if items.index >= items.len {
            return Ok(None);
        }
        // SAFETY: see above; the index is in range (nothing changes the array's length
        // during the walk).
        let item = unsafe { self.array_item(items.array, items.index) }?;
        items.index += 1;
        Ok(Some(Borrowed(item)))
    }

    #[inline]
    fn entries(&mut self, object: &Borrowed, other: &Borrowed) -> Step<Stepper> {
        // SAFETY: see above.
        unsafe {
            if ffi::Py_TYPE(object.0) != self.types.dict || ffi::Py_TYPE(other.0) != self.types.dict
            {
                return Err(Stop::Fallback);
            }
        }
        Ok(Stepper::new(object.0, other.0, self.pending.len()))
    }

    #[inline(always)]
    fn next_entry(
        &mut self,
        entries: &mut Stepper,
    ) -> Step<Option<(Borrowed, Borrowed, Option<Borrowed>)>> {
        // SAFETY: the `dict`s of the stepper are exact `dict`s (`entries`), see above.
        let pair = unsafe { self.next_pair(entries) }?;
        Ok(pair.map(|(key, value, other)| {
            (
                Borrowed(key),
                Borrowed(value),
                (!other.is_null()).then_some(Borrowed(other)),
            )
        }))
    }

    #[inline]
    fn end_entries(&mut self, entries: Stepper, every_other_found: bool) {
        self.end_pairs(&entries, entries.in_step && every_other_found);
    }

    fn missing(&mut self, object: &Borrowed, other: &Borrowed) -> Step<Missing> {
        // SAFETY: see above.
        unsafe {
            if ffi::Py_TYPE(object.0) != self.types.dict || ffi::Py_TYPE(other.0) != self.types.dict
            {
                return Err(Stop::Fallback);
            }
        }
        Ok(Missing {
            object: object.0,
            other: other.0,
            position: 0,
        })
    }

    fn next_missing(&mut self, missing: &mut Missing) -> Step<Option<Borrowed>> {
        let mut key = std::ptr::null_mut();
        let mut value = std::ptr::null_mut();
        // SAFETY (every block of this function): see above; both are exact `dict`s
        // (`missing`); the out pointers are valid locals.
        while unsafe {
            ffi::PyDict_Next(missing.object, &mut missing.position, &mut key, &mut value)
        } != 0
        {
            // The key is checked before the other `dict` is searched for it: that
            // `dict`'s keys are all exact `str`s (every one was checked when its entries
            // were walked).
            if unsafe { ffi::Py_TYPE(key) } != self.types.str {
                return Err(Stop::Fallback);
            }
            match unsafe { ffi::PyDict_Contains(missing.other, key) } {
                1 => {}
                0 => return Ok(Some(Borrowed(key))),
                _ => return Err(Stop::Raised),
            }
        }
        Ok(None)
    }

    /// Past `convert::MAX_DEPTH` (a tree that contains itself) the walk through `Bound`
    /// references runs, which raises the error.
    #[inline]
    fn deeper(&mut self) -> Step<()> {
        self.depth += 1;
        if self.depth > crate::convert::MAX_DEPTH {
            return Err(Stop::Fallback);
        }
        Ok(())
    }

    #[inline]
    fn shallower(&mut self) {
        self.depth -= 1;
    }
}

impl walk::Changes for Walk<'_> {
    /// Nothing: the caller builds the partial tree from the changes afterwards.
    type Object = ();

    /// Two `str`s, `int`s or `float`s compared at once, without asking their kinds
    /// (most leaves are); anything else as [`walk::equal`].
    #[inline(always)]
    fn leaves_equal(&mut self, _key: &Borrowed, old: &Borrowed, new: &Borrowed) -> Step<bool> {
        // SAFETY: see above; each comparison on two objects of the exact type it is for.
        unsafe {
            let old_type = ffi::Py_TYPE(old.0);
            if old_type == ffi::Py_TYPE(new.0) {
                let types = &self.types;
                if old_type == types.str {
                    return self.strings_equal(old.0, new.0);
                } else if old_type == types.int {
                    return self.rich_equal(old.0, new.0);
                } else if old_type == types.float {
                    return self.floats_equal(old.0, new.0);
                }
            }
        }
        self.other_leaves_equal(old, new)
    }

    #[inline]
    fn enter(&mut self, key: &Borrowed) -> Step<()> {
        walk::Nodes::deeper(self)?;
        self.keys.push(key.0);
        self.key_nodes.push(KeyTree::ROOT);
        Ok(())
    }

    #[inline]
    fn leave(&mut self) {
        self.keys.pop();
        self.key_nodes.pop();
        walk::Nodes::shallower(self);
    }

    /// Records a changed (or added) node under `key`: its value is checked to be JSON of
    /// exact builtin types (else the walk through `Bound` references copies or refuses
    /// it).
    #[cold]
    #[inline(never)]
    fn changed(&mut self, key: Borrowed, new: &Borrowed, out: &mut Option<()>) -> Step<()> {
        // SAFETY: see above; `Py_IncRef` runs no code.
        unsafe {
            self.check(new.0, self.depth + 1)?;
            let node = self.node(key.0);
            let value = Bound::from_borrowed_ptr(self.py, new.0).unbind();
            self.changed.push((node, value));
        }
        *out = Some(());
        Ok(())
    }

    #[inline]
    fn child(&mut self, _key: Borrowed, (): (), out: &mut Option<()>) -> Step<()> {
        *out = Some(());
        Ok(())
    }

    #[cold]
    fn removed(&mut self, key: Borrowed) -> Step<()> {
        // SAFETY: see above.
        let node = unsafe { self.node(key.0) };
        self.removed.push(node);
        Ok(())
    }

    /// Not reached: the roots are `dict`s ([`diff`] walks their objects).
    fn changed_root(&mut self, _new: &Borrowed) -> Step<()> {
        Err(Stop::Fallback)
    }
}
