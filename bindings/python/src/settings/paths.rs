//! Node paths: the keys of a patch's nodes as a tree ([`KeyTree`]), joined into
//! `"a/b/c"` strings only when read ([`Paths`]).

use std::sync::Arc;

use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::PyString;
use svc_core::settings::NodePath;

use crate::convert::join_path;

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

    /// Adds the node `key` under `parent`, and returns it.
    pub(crate) fn push(&mut self, parent: usize, key: Py<PyAny>) -> usize {
        self.nodes.push((parent, key));
        self.nodes.len() - 1
    }

    pub(super) fn parent(&self, node: usize) -> usize {
        self.nodes[node].0
    }

    pub(super) fn key<'py>(&self, py: Python<'py>, node: usize) -> &Bound<'py, PyAny> {
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
pub(super) struct Paths {
    keys: Arc<KeyTree>,
    nodes: Vec<usize>,
    joined: PyOnceLock<Vec<String>>,
}

impl Paths {
    pub(super) fn from_nodes(keys: Arc<KeyTree>, nodes: Vec<usize>) -> Self {
        Self {
            keys,
            nodes,
            joined: PyOnceLock::new(),
        }
    }

    /// Paths given as their keys from the root, each.
    pub(super) fn from_keys(paths: Vec<Vec<Py<PyAny>>>) -> Self {
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

    pub(super) fn from_strings(py: Python<'_>, paths: Vec<String>) -> Self {
        let joined = PyOnceLock::new();
        let _ = joined.set(py, paths);
        Self {
            keys: Arc::default(),
            nodes: Vec::new(),
            joined,
        }
    }

    pub(super) fn strings(&self, py: Python<'_>) -> &[String] {
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

    pub(super) fn len(&self, py: Python<'_>) -> usize {
        match self.joined.get(py) {
            Some(joined) => joined.len(),
            None => self.nodes.len(),
        }
    }
}

pub(super) fn node_paths(paths: &[NodePath]) -> Vec<String> {
    paths.iter().map(ToString::to_string).collect()
}
