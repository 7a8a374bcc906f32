//! The OpenAPI document `openapi/ins-device.yaml` read as data, so that the emulated
//! unit has no second, hand-kept copy of the wire contract:
//!
//! - [`Spec::operations`]: every route (method, path template, `operationId`,
//!   `x-required-right`, `x-requires-login`);
//! - [`Rights`]: the `x-role-order` and the `x-access-rights` matrix;
//! - [`Schema`]: the `Settings` schema compiled into a tree (references resolved) that
//!   validates every node of a write (types, integer vs number, array lengths, string
//!   patterns, enumerations, `x-closed` objects, `x-message-names` maps, ranges) and
//!   tells which changes need a reboot (`x-need-reboot`).

use std::collections::BTreeMap;
use std::fmt;

use indexmap::IndexMap;
use serde_json::{Map, Value};

/// The document, embedded at build time from the crate's own byte-identical copy of
/// `openapi/ins-device.yaml` (written by `cargo xtask generate`, checked by its
/// `--check`), so that the crate builds from its folder alone (`cargo package`, an sdist).
pub(crate) const DOCUMENT: &str = include_str!("ins-device.yaml");

/// The document does not have the shape this module reads.
#[derive(Debug, thiserror::Error)]
pub enum SpecError {
    #[error("openapi/ins-device.yaml is not valid YAML: {0}")]
    Yaml(#[from] serde_yaml::Error),
    #[error("openapi/ins-device.yaml: {0}")]
    Shape(String),
}

fn shape(message: impl Into<String>) -> SpecError {
    SpecError::Shape(message.into())
}

/// The HTTP methods of the API (the specification has only GET and POST).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Method {
    Get,
    Post,
}

impl Method {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Get => "GET",
            Self::Post => "POST",
        }
    }
}

/// A right a route requires: a category of the matrix and a level in it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Right {
    pub category: String,
    pub level: String,
}

/// One operation of the document.
#[derive(Clone, Debug)]
pub struct Operation {
    pub id: String,
    pub method: Method,
    /// The path template, e.g. `/api/v1/settings/{path}`.
    pub template: String,
    /// `None` for login (`x-required-right: null`).
    pub right: Option<Right>,
    /// `x-requires-login`: a token is needed (the default user does not count).
    pub requires_login: bool,
}

impl Operation {
    /// Matches a request path against the template. A `{name}` segment at the end
    /// captures the rest of the path, slashes included (the settings node path);
    /// returns the captured part (empty without a parameter), `None` when no match.
    pub fn matches(&self, path: &str) -> Option<String> {
        let mut template = self.template.split('/');
        let mut segments = path.split('/');
        loop {
            match (template.next(), segments.next()) {
                (None, None) => return Some(String::new()),
                (Some(t), Some(s)) if t.starts_with('{') && t.ends_with('}') => {
                    if template.next().is_some() || s.is_empty() {
                        return None;
                    }
                    let rest: Vec<&str> = std::iter::once(s).chain(segments).collect();
                    return Some(rest.join("/"));
                }
                (Some(t), Some(s)) if t == s => {}
                _ => return None,
            }
        }
    }

    fn is_templated(&self) -> bool {
        self.template.contains('{')
    }
}

/// The users' rights: the role order and the rights matrix of the document.
#[derive(Clone, Debug)]
pub struct Rights {
    /// `x-role-order`, lowest first.
    pub roles: Vec<String>,
    /// `x-access-rights`: role → category → level.
    pub matrix: BTreeMap<String, BTreeMap<String, String>>,
}

impl Rights {
    /// The level `role` holds in `category`.
    pub fn level(&self, role: &str, category: &str) -> Option<&str> {
        self.matrix.get(role)?.get(category).map(String::as_str)
    }

    /// The rank of a level within a category: the position (in role order) of the
    /// first role holding it. Every category's levels only grow along the role order
    /// (checked when the document is read), so ranks order the levels without a
    /// hand-kept list such as NO < VIEW < USE.
    fn rank(&self, category: &str, level: &str) -> Option<usize> {
        self.roles
            .iter()
            .position(|role| self.level(role, category) == Some(level))
    }

    /// Whether `role` holds at least `right`.
    pub fn allows(&self, role: &str, right: &Right) -> bool {
        let (Some(held), Some(needed)) = (
            self.level(role, &right.category)
                .and_then(|level| self.rank(&right.category, level)),
            self.rank(&right.category, &right.level),
        ) else {
            return false;
        };
        held >= needed
    }

    /// Position of a role in the role order.
    pub fn position(&self, role: &str) -> Option<usize> {
        self.roles.iter().position(|r| r == role)
    }
}

/// One invalid node of a settings write.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Invalid {
    /// Path from the settings root, `/` between levels (empty for the root).
    pub path: String,
    pub message: String,
}

/// A compiled schema of the settings tree.
#[derive(Clone, Debug)]
pub struct Schema {
    pub kind: Kind,
    /// `x-need-reboot`: a change anywhere under this node takes effect after a reboot.
    pub need_reboot: bool,
}

/// A compiled string pattern (ECMA-262 syntax, as OpenAPI says).
#[derive(Clone)]
pub struct Pattern {
    pub source: String,
    regex: regress::Regex,
}

impl fmt::Debug for Pattern {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.source)
    }
}

#[derive(Clone, Debug)]
pub enum Kind {
    /// An object with named properties; `closed` (`x-closed`) rejects other keys.
    Object {
        properties: IndexMap<String, Schema>,
        closed: bool,
    },
    /// An object keyed by name (`additionalProperties`); with `x-message-names` only
    /// those keys are accepted.
    Map {
        names: Option<Vec<String>>,
        values: Box<Schema>,
    },
    Array {
        items: Box<Schema>,
        min_items: Option<usize>,
        max_items: Option<usize>,
    },
    String {
        pattern: Option<Pattern>,
        values: Option<Vec<String>>,
    },
    Integer {
        minimum: Option<f64>,
        maximum: Option<f64>,
    },
    Number {
        minimum: Option<f64>,
        maximum: Option<f64>,
    },
    Boolean,
    /// No type: any JSON value.
    Any,
}

fn json_type(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(n) if n.is_f64() => "a number",
        Value::Number(_) => "an integer",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

fn join(path: &str, key: &str) -> String {
    if path.is_empty() {
        key.to_owned()
    } else {
        format!("{path}/{key}")
    }
}

impl Schema {
    /// The schema of a direct child (an object property, or a map entry whose name the
    /// map accepts).
    pub fn child(&self, key: &str) -> Option<&Schema> {
        match &self.kind {
            Kind::Object { properties, .. } => properties.get(key),
            Kind::Map { names, values } => match names {
                Some(names) if !names.iter().any(|n| n == key) => None,
                _ => Some(values),
            },
            _ => None,
        }
    }

    /// The schema at a node path (`aiding/gnss1`); `None` when the path is not in
    /// the tree.
    pub fn at<'a>(&self, path: impl IntoIterator<Item = &'a str>) -> Option<&Schema> {
        path.into_iter()
            .try_fold(self, |schema, segment| schema.child(segment))
    }

    /// The `x-message-names` of a map node.
    pub fn message_names(&self) -> &[String] {
        match &self.kind {
            Kind::Map {
                names: Some(names), ..
            } => names,
            _ => &[],
        }
    }

    /// Writes `value` (already valid) as the unit stores it: a whole number written to
    /// a `number` node becomes a float (`1` → `1.0`), as the unit holds numbers, so a
    /// later read, `delta` and `needReboot` compare values, not spellings.
    pub fn normalize(&self, value: &mut Value) {
        match (&self.kind, value) {
            (Kind::Number { .. }, Value::Number(n)) => {
                if !n.is_f64()
                    && let Some(f) = n.as_f64().and_then(serde_json::Number::from_f64)
                {
                    *n = f;
                }
            }
            (Kind::Object { properties, .. }, Value::Object(map)) => {
                for (key, child) in map.iter_mut() {
                    if let Some(schema) = properties.get(key) {
                        schema.normalize(child);
                    }
                }
            }
            (Kind::Map { values, .. }, Value::Object(map)) => {
                for child in map.values_mut() {
                    values.normalize(child);
                }
            }
            (Kind::Array { items, .. }, Value::Array(list)) => {
                for child in list {
                    items.normalize(child);
                }
            }
            _ => {}
        }
    }

    /// Validates `value` against this schema, adding every invalid node to `errors`.
    /// `complete`: every property of every object and every name of every map must
    /// be present (a whole tree); otherwise absent keys are fine (a partial write).
    pub fn validate(&self, value: &Value, path: &str, complete: bool, errors: &mut Vec<Invalid>) {
        let mut invalid = |message: String| {
            errors.push(Invalid {
                path: path.to_owned(),
                message,
            })
        };
        match &self.kind {
            Kind::Any => {}
            Kind::Boolean => {
                if !value.is_boolean() {
                    invalid(format!("expected a boolean, got {}", json_type(value)));
                }
            }
            Kind::Integer { minimum, maximum } => match value {
                Value::Number(n) if n.is_i64() || n.is_u64() => {
                    check_range(n.as_f64(), *minimum, *maximum, &mut invalid);
                }
                // A whole number beyond 64 bits is read as a float: say what it is.
                Value::Number(n)
                    if n.as_f64()
                        .is_some_and(|f| f.fract() == 0.0 && f.abs() >= 9.2e18) =>
                {
                    invalid("expected an integer within 64 bits, got a larger one".to_owned());
                }
                _ => invalid(format!("expected an integer, got {}", json_type(value))),
            },
            Kind::Number { minimum, maximum } => match value {
                Value::Number(n) => check_range(n.as_f64(), *minimum, *maximum, &mut invalid),
                _ => invalid(format!("expected a number, got {}", json_type(value))),
            },
            Kind::String { pattern, values } => match value {
                Value::String(s) => {
                    if let Some(values) = values
                        && !values.iter().any(|v| v == s)
                    {
                        invalid(format!("`{s}` is not one of: {}", values.join(", ")));
                    } else if let Some(pattern) = pattern
                        && pattern.regex.find(s).is_none()
                    {
                        invalid(format!(
                            "`{s}` does not match the pattern {}",
                            pattern.source
                        ));
                    }
                }
                _ => invalid(format!("expected a string, got {}", json_type(value))),
            },
            Kind::Array {
                items,
                min_items,
                max_items,
            } => match value {
                Value::Array(elements) => {
                    let n = elements.len();
                    match (min_items, max_items) {
                        (Some(min), Some(max)) if min == max && n != *min => {
                            invalid(format!("expected {min} items, got {n}"));
                        }
                        (Some(min), _) if n < *min => {
                            invalid(format!("expected at least {min} items, got {n}"));
                        }
                        (_, Some(max)) if n > *max => {
                            invalid(format!("expected at most {max} items, got {n}"));
                        }
                        _ => {
                            for (i, element) in elements.iter().enumerate() {
                                items.validate(
                                    element,
                                    &join(path, &i.to_string()),
                                    complete,
                                    errors,
                                );
                            }
                        }
                    }
                }
                _ => invalid(format!("expected an array, got {}", json_type(value))),
            },
            Kind::Object { properties, closed } => match value {
                Value::Object(object) => {
                    for (key, child) in object {
                        match properties.get(key) {
                            Some(schema) => {
                                schema.validate(child, &join(path, key), complete, errors)
                            }
                            None if *closed => errors.push(Invalid {
                                path: join(path, key),
                                message: format!("unknown key `{key}`"),
                            }),
                            None => {}
                        }
                    }
                    if complete {
                        for key in properties.keys().filter(|k| !object.contains_key(*k)) {
                            errors.push(Invalid {
                                path: join(path, key),
                                message: "missing".to_owned(),
                            });
                        }
                    }
                }
                _ => invalid(format!("expected an object, got {}", json_type(value))),
            },
            Kind::Map { names, values } => match value {
                Value::Object(object) => {
                    for (key, child) in object {
                        let known = names.as_ref().is_none_or(|n| n.iter().any(|n| n == key));
                        if known {
                            values.validate(child, &join(path, key), complete, errors);
                        } else {
                            errors.push(Invalid {
                                path: join(path, key),
                                message: format!("unknown message name `{key}`"),
                            });
                        }
                    }
                    if complete && let Some(names) = names {
                        for name in names.iter().filter(|n| !object.contains_key(*n)) {
                            errors.push(Invalid {
                                path: join(path, name),
                                message: "missing".to_owned(),
                            });
                        }
                    }
                }
                _ => invalid(format!("expected an object, got {}", json_type(value))),
            },
        }
    }

    /// Whether going from `old` to `new` changes a node under an `x-need-reboot`
    /// schema.
    pub fn changes_need_reboot(&self, old: &Value, new: &Value) -> bool {
        if old == new {
            return false;
        }
        if self.need_reboot {
            return true;
        }
        match (old, new) {
            (Value::Object(a), Value::Object(b)) => {
                a.keys().chain(b.keys()).any(|key| match self.child(key) {
                    Some(child) => child.changes_need_reboot(
                        a.get(key).unwrap_or(&Value::Null),
                        b.get(key).unwrap_or(&Value::Null),
                    ),
                    None => false,
                })
            }
            _ => false,
        }
    }
}

fn check_range(
    value: Option<f64>,
    minimum: Option<f64>,
    maximum: Option<f64>,
    invalid: &mut impl FnMut(String),
) {
    let Some(value) = value else { return };
    if let Some(min) = minimum
        && value < min
    {
        invalid(format!("{value} is below the minimum {min}"));
    }
    if let Some(max) = maximum
        && value > max
    {
        invalid(format!("{value} is above the maximum {max}"));
    }
}

/// What the emulated unit reads from the document.
#[derive(Clone, Debug)]
pub struct Spec {
    /// `info.version` ("Major.Minor"), answered as `apiVersion`.
    pub api_version: String,
    /// Exact routes first, then templated ones.
    pub operations: Vec<Operation>,
    pub rights: Rights,
    /// The compiled `Settings` schema.
    pub settings: Schema,
    /// The values of `SettingsFormat` (`compact`, `pretty`).
    pub formats: Vec<String>,
}

/// How a request path maps to the operations.
pub enum Route<'a> {
    Found(&'a Operation, String),
    /// The path exists with other methods.
    MethodNotAllowed,
    NotFound,
}

impl Spec {
    /// Reads the embedded document.
    pub fn load() -> Result<Self, SpecError> {
        let doc: Value = serde_yaml::from_str(DOCUMENT)?;
        let schemas = doc
            .pointer("/components/schemas")
            .and_then(Value::as_object)
            .ok_or_else(|| shape("no components.schemas"))?;
        let api_version = doc
            .pointer("/info/version")
            .and_then(Value::as_str)
            .ok_or_else(|| shape("no info.version"))?
            .to_owned();
        let rights = read_rights(&doc)?;
        let mut operations = read_operations(&doc)?;
        operations.sort_by_key(Operation::is_templated);
        for op in &operations {
            if let Some(right) = &op.right
                && rights.rank(&right.category, &right.level).is_none()
            {
                return Err(shape(format!(
                    "{}: no role holds {} {}",
                    op.id, right.category, right.level
                )));
            }
        }
        let settings = compile(
            &Value::String("#/components/schemas/Settings".to_owned()),
            schemas,
            0,
        )?;
        let formats = string_enum(schemas.get("SettingsFormat"))
            .ok_or_else(|| shape("SettingsFormat has no enum"))?;
        Ok(Self {
            api_version,
            operations,
            rights,
            settings,
            formats,
        })
    }

    /// The methods the operations at `path` answer (for the `Allow` header of a 405),
    /// in the order `GET`, `POST`.
    pub fn methods(&self, path: &str) -> Vec<Method> {
        let mut methods = Vec::new();
        for method in [Method::Get, Method::Post] {
            if self.serving(path).any(|(op, _)| op.method == method) {
                methods.push(method);
            }
        }
        methods
    }

    /// The operations of the path item `path` belongs to, with the captured path
    /// parameter: a concrete path item (`/settings/default`) wins over a templated
    /// one (`/settings/{path}`) for every method, as OpenAPI matches paths.
    fn serving<'s>(&'s self, path: &str) -> impl Iterator<Item = (&'s Operation, String)> + 's {
        let concrete = self
            .operations
            .iter()
            .any(|op| !op.is_templated() && op.matches(path).is_some());
        let path = path.to_owned();
        self.operations
            .iter()
            .filter(move |op| !concrete || !op.is_templated())
            .filter_map(move |op| op.matches(&path).map(|captured| (op, captured)))
    }

    /// The operation serving `method` on `path` (a path under `/api/v1`, e.g.
    /// `/api/v1/settings/aiding/gnss1`), with the captured path parameter.
    pub fn route(&self, method: Option<Method>, path: &str) -> Route<'_> {
        let mut path_exists = false;
        for (op, captured) in self.serving(path) {
            if Some(op.method) == method {
                return Route::Found(op, captured);
            }
            path_exists = true;
        }
        if path_exists {
            Route::MethodNotAllowed
        } else {
            Route::NotFound
        }
    }
}

fn string_enum(schema: Option<&Value>) -> Option<Vec<String>> {
    schema?
        .get("enum")?
        .as_array()?
        .iter()
        .map(|v| v.as_str().map(str::to_owned))
        .collect()
}

fn read_rights(doc: &Value) -> Result<Rights, SpecError> {
    let roles: Vec<String> = doc
        .get("x-role-order")
        .and_then(Value::as_array)
        .ok_or_else(|| shape("no x-role-order"))?
        .iter()
        .map(|r| r.as_str().map(str::to_owned))
        .collect::<Option<_>>()
        .ok_or_else(|| shape("x-role-order holds a non-string"))?;
    let matrix_doc = doc
        .get("x-access-rights")
        .and_then(Value::as_object)
        .ok_or_else(|| shape("no x-access-rights"))?;
    let mut matrix = BTreeMap::new();
    for role in &roles {
        let levels = matrix_doc
            .get(role)
            .and_then(Value::as_object)
            .ok_or_else(|| shape(format!("x-access-rights has no role {role}")))?;
        let mut row = BTreeMap::new();
        for (category, level) in levels {
            let level = level.as_str().ok_or_else(|| {
                shape(format!("x-access-rights.{role}.{category} is not a string"))
            })?;
            row.insert(category.clone(), level.to_owned());
        }
        matrix.insert(role.clone(), row);
    }
    let rights = Rights { roles, matrix };
    // Levels must only grow along the role order, so that ranks order them.
    for row in rights.matrix.values() {
        for category in row.keys() {
            let mut best = 0;
            for role in &rights.roles {
                let rank = rights
                    .level(role, category)
                    .and_then(|level| rights.rank(category, level))
                    .ok_or_else(|| shape(format!("{role} has no {category} level")))?;
                if rank < best {
                    return Err(shape(format!(
                        "the {category} right shrinks along the role order at {role}"
                    )));
                }
                best = rank;
            }
        }
    }
    Ok(rights)
}

fn read_operations(doc: &Value) -> Result<Vec<Operation>, SpecError> {
    let paths = doc
        .get("paths")
        .and_then(Value::as_object)
        .ok_or_else(|| shape("no paths"))?;
    let mut operations = Vec::new();
    for (template, item) in paths {
        let item = item
            .as_object()
            .ok_or_else(|| shape(format!("{template} is not an object")))?;
        for (method, op) in item {
            let method = match method.as_str() {
                "get" => Method::Get,
                "post" => Method::Post,
                other => {
                    return Err(shape(format!(
                        "{template}: method {other} is not GET or POST"
                    )));
                }
            };
            let id = op
                .get("operationId")
                .and_then(Value::as_str)
                .ok_or_else(|| shape(format!("{template}: no operationId")))?
                .to_owned();
            let right = match op.get("x-required-right") {
                Some(Value::Null) => None,
                Some(right) => Some(Right {
                    category: right
                        .get("category")
                        .and_then(Value::as_str)
                        .ok_or_else(|| shape(format!("{id}: x-required-right has no category")))?
                        .to_owned(),
                    level: right
                        .get("level")
                        .and_then(Value::as_str)
                        .ok_or_else(|| shape(format!("{id}: x-required-right has no level")))?
                        .to_owned(),
                }),
                None => return Err(shape(format!("{id}: no x-required-right"))),
            };
            let requires_login = op
                .get("x-requires-login")
                .and_then(Value::as_bool)
                .unwrap_or(false);
            operations.push(Operation {
                id,
                method,
                template: template.clone(),
                right,
                requires_login,
            });
        }
    }
    Ok(operations)
}

fn compile(
    schema: &Value,
    schemas: &Map<String, Value>,
    depth: usize,
) -> Result<Schema, SpecError> {
    if depth > 64 {
        return Err(shape("schema references nest too deeply"));
    }
    let (schema, by_ref) = match schema {
        Value::String(reference) => (resolve(reference, schemas)?, None),
        Value::Object(object) => match object.get("$ref").and_then(Value::as_str) {
            Some(reference) => (resolve(reference, schemas)?, Some(object)),
            None => (schema, None),
        },
        _ => return Err(shape("a schema is not an object")),
    };
    let flag = |name: &str| {
        schema.get(name).and_then(Value::as_bool).unwrap_or(false)
            || by_ref.is_some_and(|o| o.get(name).and_then(Value::as_bool).unwrap_or(false))
    };
    let need_reboot = flag("x-need-reboot");
    let closed = flag("x-closed");
    let number = |name: &str| schema.get(name).and_then(Value::as_f64);
    let count = |name: &str| {
        schema
            .get(name)
            .and_then(Value::as_u64)
            .and_then(|n| usize::try_from(n).ok())
    };
    let kind = match schema.get("type").and_then(Value::as_str) {
        Some("object") => match schema.get("additionalProperties") {
            Some(values @ Value::Object(_)) => Kind::Map {
                names: match schema.get("x-message-names") {
                    Some(names) => Some(
                        names
                            .as_array()
                            .ok_or_else(|| shape("x-message-names is not a list"))?
                            .iter()
                            .map(|n| n.as_str().map(str::to_owned))
                            .collect::<Option<Vec<_>>>()
                            .ok_or_else(|| shape("x-message-names holds a non-string"))?,
                    ),
                    None => None,
                },
                values: Box::new(compile(values, schemas, depth + 1)?),
            },
            _ => {
                let mut properties = IndexMap::new();
                if let Some(props) = schema.get("properties").and_then(Value::as_object) {
                    for (name, property) in props {
                        properties.insert(name.clone(), compile(property, schemas, depth + 1)?);
                    }
                }
                Kind::Object { properties, closed }
            }
        },
        Some("array") => Kind::Array {
            items: Box::new(compile(
                schema
                    .get("items")
                    .ok_or_else(|| shape("an array schema has no items"))?,
                schemas,
                depth + 1,
            )?),
            min_items: count("minItems"),
            max_items: count("maxItems"),
        },
        Some("string") => Kind::String {
            pattern: match schema.get("pattern").and_then(Value::as_str) {
                Some(source) => Some(Pattern {
                    source: source.to_owned(),
                    regex: regress::Regex::new(source)
                        .map_err(|e| shape(format!("pattern {source}: {e}")))?,
                }),
                None => None,
            },
            values: string_enum(Some(schema)),
        },
        Some("integer") => Kind::Integer {
            minimum: number("minimum"),
            maximum: number("maximum"),
        },
        Some("number") => Kind::Number {
            minimum: number("minimum"),
            maximum: number("maximum"),
        },
        Some("boolean") => Kind::Boolean,
        Some(other) => return Err(shape(format!("unsupported schema type {other}"))),
        None => Kind::Any,
    };
    Ok(Schema { kind, need_reboot })
}

fn resolve<'a>(reference: &str, schemas: &'a Map<String, Value>) -> Result<&'a Value, SpecError> {
    let name = reference
        .strip_prefix("#/components/schemas/")
        .ok_or_else(|| shape(format!("unsupported reference {reference}")))?;
    schemas
        .get(name)
        .ok_or_else(|| shape(format!("unknown schema {name}")))
}
