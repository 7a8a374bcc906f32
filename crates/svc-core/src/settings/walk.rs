//! The settings semantics, written once for every representation of a tree.
//!
//! What a diff reports, how two nodes compare and how a write merges into a tree are
//! defined here and nowhere else: [`diff`], [`equal`] and [`apply`] walk trees through
//! a small trait of node access ([`Nodes`]: a node's [`Kind`], an object's keys in
//! order, scalar equality), and record what they find through [`Changes`] (a diff) or
//! write through [`Write`] (a write). Each representation implements those traits for
//! itself: `serde_json::Value` ([`diff`](super::diff()), [`apply`](super::apply())), the
//! flat nodes of a JSON text (the general path of [`diff_json`](super::diff_json)), the
//! shape of a [`SettingsTree`](super::SettingsTree) (its write of leaves), and, with the
//! `unstable-settings-walk` feature, trees a binding holds as its own objects.
//!
//! Private to the crate unless that feature is on; then reachable but not part of the
//! stable API (hidden from the documentation, outside semantic versioning).
//!
//! The semantics it defines is written out in the [settings module](super)'s
//! documentation.
//!
//! Fast paths that stay specialised, for fleets (two [`SettingsTree`](super::SettingsTree)s
//! of one shape compared as two arrays of leaves; texts compared byte by byte with a
//! kept reference text), use this walk's equality at each difference and give up where
//! it would decide otherwise; the property tests and the fuzz target check them against
//! it.

/// What a node is, to the semantics.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// An object: compared and written key by key.
    Object,
    /// An array: a leaf, compared item by item and written whole.
    Array,
    /// A string, number, boolean or null: a leaf.
    Scalar,
}

/// Read access to the nodes of one representation of JSON trees: what [`diff`] and
/// [`equal`] walk. A node may belong to either tree of a comparison.
///
/// The cursors ([`Nodes::Entries`], [`Nodes::Items`], [`Nodes::Missing`]) are made and
/// advanced by the implementation, so that it can keep what it needs between steps (an
/// object's iterator, a lookup table built once).
pub trait Nodes {
    /// A node (a reference to one, or an index).
    type Node: Clone;
    /// An object's key.
    type Key: Clone;
    /// Why a walk stopped (a node that is not JSON, a failed call); `Infallible` for
    /// representations that hold JSON only.
    type Error;
    /// The entries of an object, each with the node under the same key in another one.
    type Entries;
    /// The items of an array.
    type Items;
    /// The keys of an object that another one lacks.
    type Missing;

    /// Whether `node` is an object (a node that is not JSON is not one: [`Nodes::kind`]
    /// finds it when the node is compared).
    fn is_object(&mut self, node: &Self::Node) -> bool;

    /// What `node` is; an error for a node that is not JSON.
    ///
    /// # Errors
    ///
    /// As the representation defines.
    fn kind(&mut self, node: &Self::Node) -> Result<Kind, Self::Error>;

    /// Whether `a` and `b` are one node (equal without comparing them): a shortcut, the
    /// result is the same without it.
    fn same(&self, a: &Self::Node, b: &Self::Node) -> bool {
        let _ = (a, b);
        false
    }

    /// Whether two [`Kind::Scalar`]s are equal as JSON: the same kind of scalar (string,
    /// number, boolean, null) and the same value; an integer never equals a float.
    ///
    /// # Errors
    ///
    /// As the representation defines (a number JSON cannot hold).
    fn scalars_equal(&mut self, a: &Self::Node, b: &Self::Node) -> Result<bool, Self::Error>;

    /// How many entries an object has, or items an array.
    ///
    /// # Errors
    ///
    /// As the representation defines.
    fn len(&mut self, container: &Self::Node) -> Result<usize, Self::Error>;

    /// The items of the array `array`, in order.
    ///
    /// # Errors
    ///
    /// As the representation defines.
    fn items(&mut self, array: &Self::Node) -> Result<Self::Items, Self::Error>;

    /// The next item.
    ///
    /// # Errors
    ///
    /// As the representation defines.
    fn next_item(&mut self, items: &mut Self::Items) -> Result<Option<Self::Node>, Self::Error>;

    /// The entries of the object `object`, in its order, each with the node under the
    /// same key in the object `other` (if it has one).
    ///
    /// # Errors
    ///
    /// As the representation defines.
    fn entries(
        &mut self,
        object: &Self::Node,
        other: &Self::Node,
    ) -> Result<Self::Entries, Self::Error>;

    /// The next entry: its key, its node, and the node under that key in the other
    /// object.
    ///
    /// # Errors
    ///
    /// As the representation defines (a key that is not a string).
    #[allow(clippy::type_complexity)]
    fn next_entry(
        &mut self,
        entries: &mut Self::Entries,
    ) -> Result<Option<(Self::Key, Self::Node, Option<Self::Node>)>, Self::Error>;

    /// The end of [`Nodes::entries`]: `every_other_found` when each entry of the other
    /// object was met (the objects hold the same keys). Nothing by default.
    fn end_entries(&mut self, entries: Self::Entries, every_other_found: bool) {
        let _ = (entries, every_other_found);
    }

    /// The keys of the object `object` that the object `other` lacks, in `object`'s
    /// order.
    ///
    /// # Errors
    ///
    /// As the representation defines.
    fn missing(
        &mut self,
        object: &Self::Node,
        other: &Self::Node,
    ) -> Result<Self::Missing, Self::Error>;

    /// The next key of [`Nodes::missing`].
    ///
    /// # Errors
    ///
    /// As the representation defines.
    fn next_missing(
        &mut self,
        missing: &mut Self::Missing,
    ) -> Result<Option<Self::Key>, Self::Error>;

    /// One container deeper, before comparing the items or entries of two containers
    /// (a representation whose trees can contain themselves bounds the depth here).
    ///
    /// # Errors
    ///
    /// As the representation defines (too deep).
    fn deeper(&mut self) -> Result<(), Self::Error> {
        Ok(())
    }

    /// Back from [`Nodes::deeper`].
    fn shallower(&mut self) {}
}

/// What a [`diff`] records as it walks: the partial tree and the paths of the changed
/// and removed nodes, in the representation's own form.
pub trait Changes: Nodes {
    /// A partial object being built (the objects of the partial tree that hold a
    /// change); `()` when the partial tree is built afterwards.
    type Object;

    /// The walk goes into the objects under `key` (both trees hold one there).
    ///
    /// # Errors
    ///
    /// As the representation defines (too deep).
    fn enter(&mut self, key: &Self::Key) -> Result<(), Self::Error>;

    /// Back from [`Changes::enter`].
    fn leave(&mut self);

    /// Whether the nodes under `key`, not both objects, are [`equal`]. A representation
    /// may compare its common leaves faster, with the same result.
    ///
    /// # Errors
    ///
    /// As [`equal`].
    #[inline]
    fn leaves_equal(
        &mut self,
        key: &Self::Key,
        old: &Self::Node,
        new: &Self::Node,
    ) -> Result<bool, Self::Error> {
        let _ = key;
        equal(self, old, new)
    }

    /// The node under `key` changed (or was added): `new` is the new tree's node, to
    /// write into `out`, the partial object of the object being walked.
    ///
    /// # Errors
    ///
    /// As the representation defines (a node that is not JSON).
    fn changed(
        &mut self,
        key: Self::Key,
        new: &Self::Node,
        out: &mut Option<Self::Object>,
    ) -> Result<(), Self::Error>;

    /// The objects under `key` hold changes: `child` is their partial object, to write
    /// into `out`.
    ///
    /// # Errors
    ///
    /// As the representation defines.
    fn child(
        &mut self,
        key: Self::Key,
        child: Self::Object,
        out: &mut Option<Self::Object>,
    ) -> Result<(), Self::Error>;

    /// The old tree's node under `key` is not in the new tree.
    ///
    /// # Errors
    ///
    /// As the representation defines (a key that is not a string).
    fn removed(&mut self, key: Self::Key) -> Result<(), Self::Error>;

    /// The roots are not both objects and differ: the whole tree changed.
    ///
    /// # Errors
    ///
    /// As the representation defines.
    fn changed_root(&mut self, new: &Self::Node) -> Result<(), Self::Error>;
}

/// What [`diff`] found at the root.
#[derive(Debug)]
pub enum Root<O> {
    /// Both roots are objects: their partial object (`None` when nothing changed).
    Objects(Option<O>),
    /// The roots are not both objects: the whole tree is the partial tree (its write
    /// replaces the tree, or changes nothing when the roots are equal).
    Leaves,
}

/// The diff from `old` to `new` (see the [module documentation](self)): every change
/// and removal recorded through `changes`, in order.
///
/// # Errors
///
/// The first error of the representation.
#[inline]
pub fn diff<C: Changes + ?Sized>(
    changes: &mut C,
    old: &C::Node,
    new: &C::Node,
) -> Result<Root<C::Object>, C::Error> {
    if changes.is_object(old) && changes.is_object(new) {
        return objects(changes, old, new).map(Root::Objects);
    }
    if !equal(changes, old, new)? {
        changes.changed_root(new)?;
    }
    Ok(Root::Leaves)
}

/// The diff of two objects: their partial object, `None` when no node changed.
///
/// # Errors
///
/// The first error of the representation.
pub fn objects<C: Changes + ?Sized>(
    changes: &mut C,
    old: &C::Node,
    new: &C::Node,
) -> Result<Option<C::Object>, C::Error> {
    if changes.same(old, new) {
        return Ok(None);
    }
    let mut out = None;
    // Each key of `new`, in its order, with the node of `old` under it.
    let mut entries = changes.entries(new, old)?;
    let mut found = 0usize;
    while let Some((key, new_child, old_child)) = changes.next_entry(&mut entries)? {
        match old_child {
            Some(old_child) => {
                found += 1;
                node(changes, key, &old_child, &new_child, &mut out)?;
            }
            None => changes.changed(key, &new_child, &mut out)?,
        }
    }
    let old_len = changes.len(old)?;
    changes.end_entries(entries, found == old_len);
    // Keys are unique: when every key of `old` was found in `new`, none was removed.
    if found < old_len {
        let mut missing = changes.missing(old, new)?;
        while let Some(key) = changes.next_missing(&mut missing)? {
            changes.removed(key)?;
        }
    }
    Ok(out)
}

/// One node present in both trees, under `key`.
#[inline(always)]
fn node<C: Changes + ?Sized>(
    changes: &mut C,
    key: C::Key,
    old: &C::Node,
    new: &C::Node,
    out: &mut Option<C::Object>,
) -> Result<(), C::Error> {
    if changes.same(old, new) {
        return Ok(());
    }
    if changes.is_object(old) && changes.is_object(new) {
        changes.enter(&key)?;
        let child = objects(changes, old, new);
        changes.leave();
        if let Some(child) = child? {
            changes.child(key, child, out)?;
        }
        return Ok(());
    }
    if !changes.leaves_equal(&key, old, new)? {
        changes.changed(key, new, out)?;
    }
    Ok(())
}

/// Whether two nodes are equal as JSON: the same kind, then objects with the same keys
/// whatever their order and equal nodes under each, arrays with equal items in order,
/// equal scalars ([`Nodes::scalars_equal`]).
///
/// # Errors
///
/// The first error of the representation.
#[inline(always)]
pub fn equal<N: Nodes + ?Sized>(nodes: &mut N, a: &N::Node, b: &N::Node) -> Result<bool, N::Error> {
    if nodes.same(a, b) {
        return Ok(true);
    }
    let kind = nodes.kind(a)?;
    if kind != nodes.kind(b)? {
        return Ok(false);
    }
    // Scalars inline (most leaves are), containers in a call of their own.
    match kind {
        Kind::Scalar => nodes.scalars_equal(a, b),
        Kind::Array | Kind::Object => containers_equal(nodes, kind, a, b),
    }
}

/// [`equal`] of two arrays or two objects.
fn containers_equal<N: Nodes + ?Sized>(
    nodes: &mut N,
    kind: Kind,
    a: &N::Node,
    b: &N::Node,
) -> Result<bool, N::Error> {
    nodes.deeper()?;
    let equal = if kind == Kind::Array {
        arrays_equal(nodes, a, b)?
    } else {
        objects_equal(nodes, a, b)?
    };
    nodes.shallower();
    Ok(equal)
}

fn arrays_equal<N: Nodes + ?Sized>(
    nodes: &mut N,
    a: &N::Node,
    b: &N::Node,
) -> Result<bool, N::Error> {
    if nodes.len(a)? != nodes.len(b)? {
        return Ok(false);
    }
    let (mut a_items, mut b_items) = (nodes.items(a)?, nodes.items(b)?);
    while let (Some(x), Some(y)) = (
        nodes.next_item(&mut a_items)?,
        nodes.next_item(&mut b_items)?,
    ) {
        if !equal(nodes, &x, &y)? {
            return Ok(false);
        }
    }
    Ok(true)
}

fn objects_equal<N: Nodes + ?Sized>(
    nodes: &mut N,
    a: &N::Node,
    b: &N::Node,
) -> Result<bool, N::Error> {
    if nodes.len(a)? != nodes.len(b)? {
        return Ok(false);
    }
    let mut entries = nodes.entries(a, b)?;
    while let Some((_, x, y)) = nodes.next_entry(&mut entries)? {
        let same = match y {
            Some(y) => equal(nodes, &x, &y)?,
            None => false,
        };
        if !same {
            nodes.end_entries(entries, false);
            return Ok(false);
        }
    }
    // The same number of keys, each of `a` found in `b`: every key of `b` was met.
    nodes.end_entries(entries, true);
    Ok(true)
}

/// A tree being written: a write (a partial tree, read through the representation's
/// own access) merged into it as the unit merges it.
pub trait Write {
    /// A node of the write.
    type Node;
    /// A key of the write.
    type Key;
    /// Why the write stopped.
    type Error;
    /// The entries of an object of the write.
    type Entries;
    /// An object of the tree being written (a mutable reference, a handle, an index).
    type Object<'t>
    where
        Self: 't;

    /// Whether a node of the write is an object.
    fn is_object(&mut self, node: &Self::Node) -> bool;

    /// The entries of an object of the write, in order.
    ///
    /// # Errors
    ///
    /// As the representation defines.
    fn entries(&mut self, object: &Self::Node) -> Result<Self::Entries, Self::Error>;

    /// The next entry.
    ///
    /// # Errors
    ///
    /// As the representation defines.
    #[allow(clippy::type_complexity)]
    fn next_entry(
        &mut self,
        entries: &mut Self::Entries,
    ) -> Result<Option<(Self::Key, Self::Node)>, Self::Error>;

    /// The entry under `key` is being written (its node is then merged or set).
    ///
    /// # Errors
    ///
    /// As the representation defines.
    fn enter(&mut self, key: &Self::Key) -> Result<(), Self::Error> {
        let _ = key;
        Ok(())
    }

    /// Back from [`Write::enter`].
    fn leave(&mut self) {}

    /// The object under `key` in the tree's object `object`, `None` when there is no
    /// node under `key` or it is not an object.
    ///
    /// # Errors
    ///
    /// As the representation defines.
    fn object<'t>(
        &mut self,
        object: &'t mut Self::Object<'_>,
        key: &Self::Key,
    ) -> Result<Option<Self::Object<'t>>, Self::Error>;

    /// Sets the node under `key` in the tree's object `object` to the write's node
    /// `node` (replacing one, or adding the key at the end).
    ///
    /// # Errors
    ///
    /// As the representation defines.
    fn set(
        &mut self,
        object: &mut Self::Object<'_>,
        key: Self::Key,
        node: &Self::Node,
    ) -> Result<(), Self::Error>;
}

/// Writes the object `patch` (a node of the write) into the tree's object `object`
/// (see the [module documentation](self)): key by key, an object into an object,
/// anything else set whole.
///
/// At the root, a write merges only when both the tree and the write are objects; any
/// other write replaces the tree whole.
///
/// # Errors
///
/// The first error of the representation.
pub fn apply<W: Write + ?Sized>(
    write: &mut W,
    object: &mut W::Object<'_>,
    patch: &W::Node,
) -> Result<(), W::Error> {
    let mut entries = write.entries(patch)?;
    while let Some((key, node)) = write.next_entry(&mut entries)? {
        write.enter(&key)?;
        let merged = if write.is_object(&node) {
            match write.object(object, &key)? {
                Some(mut child) => {
                    apply(write, &mut child, &node)?;
                    true
                }
                None => false,
            }
        } else {
            false
        };
        if !merged {
            write.set(object, key, &node)?;
        }
        write.leave();
    }
    Ok(())
}
