//! Independent coverage test of the three OpenAPI documents against the specification.
//!
//! The expectations below were written by reading, line by line, the specifications of the
//! cloud service and of the unit together with the decisions taken on their open points
//! (see `docs/specification.md`); nothing here is derived from the YAML. Every test
//! collects all missing or wrong items and reports them in one message, so a single run
//! lists everything a document lacks.

use std::collections::BTreeSet;
use std::sync::OnceLock;

use serde_json::{Map, Value};

// ---------------------------------------------------------------------------------------
// Loading
// ---------------------------------------------------------------------------------------

#[derive(Clone, Copy)]
struct Doc {
    name: &'static str,
    root: &'static Value,
}

fn parse(path: &str) -> Value {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("cannot read {path}: {e}"));
    serde_yaml::from_str::<Value>(&text).unwrap_or_else(|e| panic!("{path}: invalid YAML: {e}"))
}

fn cloud() -> Doc {
    static D: OnceLock<Value> = OnceLock::new();
    Doc {
        name: "cloud.yaml",
        root: D.get_or_init(|| {
            parse(concat!(
                env!("CARGO_MANIFEST_DIR"),
                "/../openapi/cloud.yaml"
            ))
        }),
    }
}

fn notification() -> Doc {
    static D: OnceLock<Value> = OnceLock::new();
    Doc {
        name: "notification.yaml",
        root: D.get_or_init(|| {
            parse(concat!(
                env!("CARGO_MANIFEST_DIR"),
                "/../openapi/notification.yaml"
            ))
        }),
    }
}

fn unit() -> Doc {
    static D: OnceLock<Value> = OnceLock::new();
    Doc {
        name: "ins-device.yaml",
        root: D.get_or_init(|| {
            parse(concat!(
                env!("CARGO_MANIFEST_DIR"),
                "/../openapi/ins-device.yaml"
            ))
        }),
    }
}

// ---------------------------------------------------------------------------------------
// Checker: counts items and collects every miss
// ---------------------------------------------------------------------------------------

struct Ck {
    area: &'static str,
    n: usize,
    missing: Vec<String>,
}

impl Ck {
    fn new(area: &'static str) -> Self {
        Ck {
            area,
            n: 0,
            missing: Vec::new(),
        }
    }

    fn check(&mut self, ok: bool, what: impl FnOnce() -> String) -> bool {
        self.n += 1;
        if !ok {
            self.missing.push(what());
        }
        ok
    }

    fn result(&mut self, r: Result<(), String>) -> bool {
        self.n += 1;
        match r {
            Ok(()) => true,
            Err(e) => {
                self.missing.push(e);
                false
            }
        }
    }

    fn finish(self) {
        println!(
            "{}: {} items checked, {} missing or wrong",
            self.area,
            self.n,
            self.missing.len()
        );
        assert!(
            self.missing.is_empty(),
            "{}: {} of {} checked items are missing or wrong:\n  - {}",
            self.area,
            self.missing.len(),
            self.n,
            self.missing.join("\n  - ")
        );
    }
}

// ---------------------------------------------------------------------------------------
// Schema helpers
// ---------------------------------------------------------------------------------------

/// Target of a local `$ref` (`#/...`).
fn lookup<'a>(doc: &'a Value, r: &str) -> Option<&'a Value> {
    r.strip_prefix('#').and_then(|p| doc.pointer(p))
}

/// Follows `$ref`s until a node without one.
fn deref<'a>(doc: &'a Value, v: &'a Value) -> &'a Value {
    let mut cur = v;
    for _ in 0..32 {
        match cur
            .get("$ref")
            .and_then(Value::as_str)
            .and_then(|r| lookup(doc, r))
        {
            Some(next) => cur = next,
            None => break,
        }
    }
    cur
}

/// One object holding the effective keywords of a schema: `$ref` resolved, `allOf`
/// (and `oneOf`/`anyOf` members) merged, `properties` merged and `required` united; the
/// outer keywords (e.g. `nullable` beside an `allOf`) win.
fn flatten(doc: &Value, v: &Value) -> Value {
    let mut out = Map::new();
    flatten_into(doc, v, &mut out, 0);
    Value::Object(out)
}

fn flatten_into(doc: &Value, v: &Value, out: &mut Map<String, Value>, depth: usize) {
    if depth > 32 {
        return;
    }
    let Some(obj) = v.as_object() else {
        return;
    };
    if let Some(target) = obj
        .get("$ref")
        .and_then(Value::as_str)
        .and_then(|r| lookup(doc, r))
    {
        flatten_into(doc, target, out, depth + 1);
    }
    for key in ["allOf", "oneOf", "anyOf"] {
        if let Some(parts) = obj.get(key).and_then(Value::as_array) {
            for part in parts {
                flatten_into(doc, part, out, depth + 1);
            }
        }
    }
    for (k, val) in obj {
        match k.as_str() {
            "$ref" | "allOf" | "oneOf" | "anyOf" => {}
            "properties" => {
                let entry = out
                    .entry("properties")
                    .or_insert_with(|| Value::Object(Map::new()));
                if let (Some(dst), Some(src)) = (entry.as_object_mut(), val.as_object()) {
                    for (pk, pv) in src {
                        dst.insert(pk.clone(), pv.clone());
                    }
                }
            }
            "required" => {
                let entry = out
                    .entry("required")
                    .or_insert_with(|| Value::Array(Vec::new()));
                if let (Some(dst), Some(src)) = (entry.as_array_mut(), val.as_array()) {
                    for r in src {
                        if !dst.contains(r) {
                            dst.push(r.clone());
                        }
                    }
                }
            }
            _ => {
                out.insert(k.clone(), val.clone());
            }
        }
    }
}

/// Names of the schemas a node refers to directly (`$ref`) or through
/// `allOf`/`oneOf`/`anyOf` members.
fn ref_names(v: &Value) -> Vec<String> {
    fn push(x: &Value, out: &mut Vec<String>) {
        if let Some(r) = x.get("$ref").and_then(Value::as_str) {
            out.push(r.rsplit('/').next().unwrap_or(r).to_string());
        }
    }
    let mut out = Vec::new();
    push(v, &mut out);
    for key in ["allOf", "oneOf", "anyOf"] {
        if let Some(parts) = v.get(key).and_then(Value::as_array) {
            for part in parts {
                push(part, &mut out);
            }
        }
    }
    out
}

fn refers_to(v: &Value, name: &str) -> bool {
    ref_names(v).iter().any(|n| n == name)
}

fn schema(doc: Doc, name: &str) -> Option<&'static Value> {
    doc.root.pointer(&format!("/components/schemas/{name}"))
}

fn str_of<'a>(v: &'a Value, key: &str) -> &'a str {
    v.get(key).and_then(Value::as_str).unwrap_or("")
}

fn required_of(flat: &Value) -> BTreeSet<String> {
    flat.get("required")
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(Value::as_str)
                .map(str::to_string)
                .collect()
        })
        .unwrap_or_default()
}

fn enum_values(doc: &Value, v: &Value) -> Vec<String> {
    flatten(doc, v)
        .get("enum")
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(|x| x.as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default()
}

/// Walks a dotted path of property names from a schema (`[]` steps into `items`) and
/// returns the raw (unflattened) node found there.
fn walk(doc: &Value, root: &Value, path: &str) -> Result<Value, String> {
    let mut cur = root.clone();
    let mut done: Vec<&str> = Vec::new();
    for seg in path.split('.') {
        let flat = flatten(doc, &cur);
        let next = if seg == "[]" {
            flat.get("items").cloned()
        } else {
            flat.get("properties").and_then(|p| p.get(seg)).cloned()
        };
        match next {
            Some(n) => cur = n,
            None => {
                let at = if done.is_empty() {
                    "<root>".to_string()
                } else {
                    done.join(".")
                };
                return Err(format!("`{seg}` missing under `{at}`"));
            }
        }
        done.push(seg);
    }
    Ok(cur)
}

/// Expected JSON shape of a field.
#[derive(Clone, Copy, Debug)]
enum T {
    /// string
    S,
    /// integer
    I,
    /// number
    N,
    /// boolean
    B,
    /// object
    O,
    /// string, format uuid
    Uuid,
    /// string, format date-time
    Dt,
    /// string (URL), format uri
    Url,
    /// `$ref` (possibly inside allOf) to the named schema
    R(&'static str),
    /// array whose items refer to the named schema
    Arr(&'static str),
    /// array of strings
    ArrS,
    /// object whose additionalProperties refer to the named schema
    Map(&'static str),
}

fn check_shape(doc: &Value, node: &Value, t: T) -> Result<(), String> {
    let flat = flatten(doc, node);
    let ty = str_of(&flat, "type");
    let fmt = str_of(&flat, "format");
    let ok = match t {
        T::S => ty == "string",
        T::I => ty == "integer",
        T::N => ty == "number",
        T::B => ty == "boolean",
        T::O => ty == "object",
        T::Uuid => ty == "string" && fmt == "uuid",
        T::Dt => ty == "string" && fmt == "date-time",
        T::Url => ty == "string" && (fmt == "uri" || fmt == "url"),
        T::R(name) => refers_to(node, name),
        T::Arr(name) => ty == "array" && flat.get("items").is_some_and(|i| refers_to(i, name)),
        T::ArrS => {
            ty == "array"
                && flat
                    .get("items")
                    .is_some_and(|i| str_of(&flatten(doc, i), "type") == "string")
        }
        T::Map(name) => {
            ty == "object"
                && flat
                    .get("additionalProperties")
                    .is_some_and(|a| refers_to(a, name))
        }
    };
    if ok {
        Ok(())
    } else {
        Err(format!(
            "expected {t:?}, found type={ty:?} format={fmt:?} refs={:?}",
            ref_names(node)
        ))
    }
}

/// Checks every `(dotted field path, shape)` under `root`.
fn check_fields(ck: &mut Ck, doc: Doc, label: &str, root: &Value, fields: &[(&str, T)]) {
    for (path, t) in fields {
        let r = walk(doc.root, root, path)
            .and_then(|node| check_shape(doc.root, &node, *t))
            .map_err(|e| format!("{}: {label}.{path}: {e}", doc.name));
        ck.result(r);
    }
}

// ---------------------------------------------------------------------------------------
// Operation helpers
// ---------------------------------------------------------------------------------------

const METHODS: [&str; 8] = [
    "get", "put", "post", "delete", "options", "head", "patch", "trace",
];

fn operation(doc: Doc, method: &str, path: &str) -> Option<&'static Value> {
    doc.root.get("paths")?.get(path)?.get(method)
}

fn all_operations(doc: Doc) -> Vec<(String, String, &'static Value)> {
    let mut out = Vec::new();
    if let Some(paths) = doc.root.get("paths").and_then(Value::as_object) {
        for (p, item) in paths {
            for m in METHODS {
                if let Some(op) = item.get(m) {
                    out.push((m.to_string(), p.clone(), op));
                }
            }
        }
    }
    out
}

/// Parameters of an operation (path-level ones overridden by operation-level ones).
fn parameters(doc: Doc, method: &str, path: &str) -> Vec<Value> {
    let mut out: Vec<Value> = Vec::new();
    let item = doc.root.get("paths").and_then(|p| p.get(path));
    let lists = [
        item.and_then(|i| i.get("parameters")),
        item.and_then(|i| i.get(method))
            .and_then(|o| o.get("parameters")),
    ];
    for list in lists.into_iter().flatten() {
        for p in list.as_array().into_iter().flatten() {
            let p = deref(doc.root, p).clone();
            out.retain(|q| !(q.get("name") == p.get("name") && q.get("in") == p.get("in")));
            out.push(p);
        }
    }
    out
}

fn parameter(doc: Doc, method: &str, path: &str, name: &str, loc: &str) -> Option<Value> {
    parameters(doc, method, path)
        .into_iter()
        .find(|p| str_of(p, "name") == name && str_of(p, "in") == loc)
}

fn json_schema_of(doc: Doc, holder: &Value) -> Option<Value> {
    let holder = deref(doc.root, holder);
    let content = holder.get("content")?.as_object()?;
    content
        .get("application/json")
        .or_else(|| content.values().next())
        .and_then(|c| c.get("schema"))
        .cloned()
}

fn request_schema(doc: Doc, op: &Value) -> Option<Value> {
    json_schema_of(doc, op.get("requestBody")?)
}

fn response_schema(doc: Doc, op: &Value, code: &str) -> Option<Value> {
    json_schema_of(doc, op.get("responses")?.get(code)?)
}

fn response_codes(op: &Value) -> BTreeSet<String> {
    op.get("responses")
        .and_then(Value::as_object)
        .map(|m| m.keys().cloned().collect())
        .unwrap_or_default()
}

/// All description/summary/title strings of a document, lowercased.
fn texts(doc: Doc) -> Vec<String> {
    fn collect(v: &Value, out: &mut Vec<String>) {
        match v {
            Value::Object(m) => {
                for (k, x) in m {
                    if matches!(k.as_str(), "description" | "summary" | "title")
                        && let Some(s) = x.as_str()
                    {
                        out.push(s.to_lowercase());
                    }
                    collect(x, out);
                }
            }
            Value::Array(a) => {
                for x in a {
                    collect(x, out);
                }
            }
            _ => {}
        }
    }
    let mut out = Vec::new();
    collect(doc.root, &mut out);
    out
}

/// Checks that one description holds all `parts` (one of the alternatives of each).
fn check_text(ck: &mut Ck, doc: Doc, all: &[String], parts: &[&[&str]], rule: &str) {
    let found = all.iter().any(|t| {
        parts
            .iter()
            .all(|alts| alts.iter().any(|a| t.contains(&a.to_lowercase())))
    });
    ck.check(found, || {
        format!(
            "{}: no description states the rule \"{rule}\" (looked for {parts:?})",
            doc.name
        )
    });
}

// ---------------------------------------------------------------------------------------
// Expectations taken from the specification
// ---------------------------------------------------------------------------------------

const ORG_CONTAINERS: &str = "/api/v2/organizations/{organizationId}/containers";
const CONTAINER: &str = "/api/v2/containers/{containerId}";
const CONTAINER_FILES: &str = "/api/v2/containers/{containerId}/files";
const CONTAINER_FILE: &str = "/api/v2/container-files/{containerFileId}";
const ORG_PROCESSINGS: &str = "/api/v2/organizations/{organizationId}/processings";
const PROCESSING: &str = "/api/v2/processings/{processingId}";
const PROCESSING_ARCHIVE: &str = "/api/v2/processings/{processingId}/archive";
const PROCESSING_OUTPUT: &str = "/api/v2/processings/{processingId}/output";
const PROCESSING_ERRORS: &str = "/api/v2/processings/{processingId}/errors";
const INFO_V1: &str = "/api/v1/info";
const ORG_WEBHOOKS: &str = "/api/v2/organizations/{organizationId}/webhook-endpoints";
const WEBHOOK: &str = "/api/v2/webhook-endpoints/{webhookEndpointId}";
const MISSED: &str = "/api/v2/webhook-endpoints/{webhookEndpointId}/missed-webhooks";

/// (method, path, status codes the specification and its decided points imply)
const CLOUD_OPS: &[(&str, &str, &[&str])] = &[
    ("get", INFO_V1, &["200", "401", "403", "500"]),
    // list: 422 out of range, 400 missing page/perPage
    (
        "get",
        ORG_CONTAINERS,
        &["200", "400", "401", "403", "404", "422", "500"],
    ),
    // create: 422 invalid region/metadata/path, 409 duplicate file path in `files`
    (
        "post",
        ORG_CONTAINERS,
        &["200", "400", "401", "403", "404", "409", "422", "500"],
    ),
    ("get", CONTAINER, &["200", "401", "403", "404", "500"]),
    // update metadata: 422 metadata over limits
    (
        "patch",
        CONTAINER,
        &["200", "400", "401", "403", "404", "422", "500"],
    ),
    // delete: 409 while a processing is pending or processing
    (
        "delete",
        CONTAINER,
        &["200", "401", "403", "404", "409", "500"],
    ),
    // add files: 409 path collision, 422 invalid path
    (
        "post",
        CONTAINER_FILES,
        &["200", "400", "401", "403", "404", "409", "422", "500"],
    ),
    // update file: 409 path collision, 422 invalid path
    (
        "patch",
        CONTAINER_FILE,
        &["200", "400", "401", "403", "404", "409", "422", "500"],
    ),
    (
        "delete",
        CONTAINER_FILE,
        &["200", "401", "403", "404", "500"],
    ),
    (
        "get",
        ORG_PROCESSINGS,
        &["200", "400", "401", "403", "404", "422", "500"],
    ),
    // start: 409 ongoing processing / file not ready, 403 no credit left
    (
        "post",
        ORG_PROCESSINGS,
        &["200", "400", "401", "403", "404", "409", "422", "500"],
    ),
    ("get", PROCESSING, &["200", "401", "403", "404", "500"]),
    // cancel: only a pending or running processing (409 otherwise)
    (
        "post",
        PROCESSING,
        &["200", "401", "403", "404", "409", "500"],
    ),
    (
        "post",
        PROCESSING_ARCHIVE,
        &["200", "401", "403", "404", "500"],
    ),
    // outputs: only for status processed (409 otherwise)
    (
        "get",
        PROCESSING_OUTPUT,
        &["200", "401", "403", "404", "409", "500"],
    ),
    (
        "get",
        PROCESSING_ERRORS,
        &["200", "401", "403", "404", "500"],
    ),
];

const NOTIFICATION_OPS: &[(&str, &str, &[&str])] = &[
    (
        "get",
        ORG_WEBHOOKS,
        &["200", "400", "401", "403", "404", "422", "500"],
    ),
    (
        "post",
        ORG_WEBHOOKS,
        &["200", "400", "401", "403", "404", "422", "500"],
    ),
    (
        "patch",
        WEBHOOK,
        &["200", "400", "401", "403", "404", "422", "500"],
    ),
    ("delete", WEBHOOK, &["200", "401", "403", "404", "500"]),
    (
        "get",
        MISSED,
        &["200", "400", "401", "403", "404", "422", "500"],
    ),
];

/// Right an operation of the unit needs (the rights checked per route;
/// `docs/specification.md`, "Unit users and rights").
#[derive(Clone, Copy)]
enum Right {
    /// GET routes: Monitor or Setting VIEW
    View,
    /// settings writes, default, import, lock: Setting WRITE
    SettingWrite,
    /// reboot: Reboot YES
    Reboot,
    /// data logger start/stop: Logger USE
    LoggerUse,
    /// not stated by the specification: `x-required-right` must only be present
    Any,
    /// login: no right (it is how a token is obtained)
    None,
}

const UNIT_OPS: &[(&str, &str, &[&str], Right)] = &[
    // read all settings: 422 bad `format` value
    (
        "get",
        "/api/v1/settings",
        &["200", "401", "422", "500"],
        Right::View,
    ),
    // settings writes: 400 syntax, 403 rights, 409 lock held by another, 422 invalid
    (
        "post",
        "/api/v1/settings",
        &["200", "400", "401", "403", "409", "422", "500"],
        Right::SettingWrite,
    ),
    (
        "get",
        "/api/v1/settings/{path}",
        &["200", "401", "404", "500"],
        Right::View,
    ),
    (
        "post",
        "/api/v1/settings/{path}",
        &["200", "400", "401", "403", "404", "409", "422", "500"],
        Right::SettingWrite,
    ),
    (
        "post",
        "/api/v1/settings/default",
        &["200", "401", "403", "409", "500"],
        Right::SettingWrite,
    ),
    (
        "post",
        "/api/v1/settings/import",
        &["200", "400", "401", "403", "409", "422", "500"],
        Right::SettingWrite,
    ),
    (
        "get",
        "/api/v1/settings/export",
        &["200", "401", "500"],
        Right::View,
    ),
    (
        "post",
        "/api/v1/settings/lock",
        &["200", "401", "403", "409", "500"],
        Right::SettingWrite,
    ),
    (
        "post",
        "/api/v1/settings/unlock",
        &["200", "401", "500"],
        Right::Any,
    ),
    (
        "post",
        "/api/v1/reboot",
        &["200", "401", "403", "500"],
        Right::Reboot,
    ),
    ("get", "/api/v1/info", &["200", "401", "500"], Right::View),
    // login: wrong user or password 401
    (
        "post",
        "/api/v1/user/login",
        &["200", "400", "401", "500"],
        Right::None,
    ),
    (
        "post",
        "/api/v1/user/logout",
        &["200", "401", "500"],
        Right::Any,
    ),
    // change password: without auth 401, another user's by anyone but setup 403
    (
        "post",
        "/api/v1/user/password",
        &["200", "400", "401", "403", "500"],
        Right::Any,
    ),
    (
        "get",
        "/api/v1/dataLogger",
        &["200", "401", "500"],
        Right::View,
    ),
    (
        "post",
        "/api/v1/dataLogger/start",
        &["200", "401", "403", "500"],
        Right::LoggerUse,
    ),
    (
        "post",
        "/api/v1/dataLogger/stop",
        &["200", "401", "403", "500"],
        Right::LoggerUse,
    ),
];

const REGIONS: &[&str] = &["eu-west-3", "us-west-1", "ap-northeast-1", "ap-southeast-2"];

/// (schema, values) — value sets of the specification and its decided points.
const CLOUD_VALUE_SETS: &[(&str, &[&str])] = &[
    ("ContainerRegion", REGIONS),
    ("ContainerFileType", &["input", "resources"]),
    ("ContainerStatus", &["empty", "valid", "archived"]),
    (
        "ContainerFileStatus",
        &["pending", "ready", "deleting", "deleted"],
    ),
    (
        "ProcessingStatus",
        &["pending", "processing", "processed", "canceled", "archived"],
    ),
    ("ProcessingResult", &["succeeded", "failed"]),
    ("ProcessingType", &["gnss", "ins"]),
    (
        "ProcessingStep",
        &[
            "import",
            "base_station",
            "preprocessing",
            "processing",
            "export",
            "report",
        ],
    ),
    ("ProcessingErrorLevel", &["error", "warning"]),
    ("RegionStatus", &["online", "degraded", "offline"]),
];

const EVENT_TYPES: &[&str] = &[
    "cloud:processing-ended",
    "cloud:processing-progress",
    "cloud:processing-error",
];

const NOTIFICATION_VALUE_SETS: &[(&str, &[&str])] = &[
    ("EventType", EVENT_TYPES),
    // shared copies used by the Processing payload
    ("ContainerRegion", REGIONS),
    (
        "ProcessingStatus",
        &["pending", "processing", "processed", "canceled", "archived"],
    ),
    ("ProcessingResult", &["succeeded", "failed"]),
    ("ProcessingType", &["gnss", "ins"]),
    (
        "ProcessingStep",
        &[
            "import",
            "base_station",
            "preprocessing",
            "processing",
            "export",
            "report",
        ],
    ),
];

const USERS: &[&str] = &["viewer", "operator", "powerUser", "setup", "factory"];

const TRIGGERS: &[&str] = &[
    "off", "onChange", "1ms", "2ms", "4ms", "5ms", "8ms", "10ms", "20ms", "25ms", "40ms", "50ms",
    "100ms", "200ms", "500ms", "1000ms",
];

const UNIT_VALUE_SETS: &[(&str, &[&str])] = &[
    ("SettingsFormat", &["compact", "pretty"]),
    ("UserName", USERS),
    ("MessageTrigger", TRIGGERS),
];

const PROCESSING_FIELDS: &[(&str, T)] = &[
    ("id", T::Uuid),
    ("name", T::S),
    ("type", T::R("ProcessingType")),
    ("status", T::R("ProcessingStatus")),
    ("region", T::R("ContainerRegion")),
    ("processingResult", T::R("ProcessingResult")),
    ("processingDuration", T::I),
    ("processingStep", T::R("ProcessingStep")),
    ("processingProgress", T::N),
    ("archiveScheduledAt", T::Dt),
    ("createdAt", T::Dt),
    ("updatedAt", T::Dt),
    ("creatorId", T::Uuid),
    ("organizationId", T::Uuid),
    ("containerId", T::Uuid),
    ("errorCount", T::O),
    ("errorCount.errors", T::I),
    ("errorCount.warnings", T::I),
    ("missionLength", T::I),
    ("missionLocationCountry", T::S),
    ("missionLocationRegion", T::S),
    ("missionLocationPlace", T::S),
    ("metadata", T::R("Metadata")),
    ("processingJson", T::O),
];

const CONTAINER_FILE_FIELDS: &[(&str, T)] = &[
    ("id", T::Uuid),
    ("type", T::R("ContainerFileType")),
    ("status", T::R("ContainerFileStatus")),
    ("size", T::I),
    ("path", T::S),
    ("createdAt", T::Dt),
    ("updatedAt", T::Dt),
    ("creatorId", T::Uuid),
    ("metadata", T::R("Metadata")),
    ("uploadInfo", T::O),
    ("uploadInfo.url", T::Url),
    ("uploadInfo.fields", T::O),
    // decided: the fields carried by uploadInfo.fields
    ("uploadInfo.fields.key", T::S),
    ("uploadInfo.fields.bucket", T::S),
    ("uploadInfo.fields.X-Amz-Algorithm", T::S),
    ("uploadInfo.fields.X-Amz-Credential", T::S),
    ("uploadInfo.fields.X-Amz-Date", T::S),
    ("uploadInfo.fields.Policy", T::S),
    ("uploadInfo.fields.X-Amz-Signature", T::S),
];

const UPLOAD_FIELDS_ORDER: &[&str] = &[
    "key",
    "bucket",
    "X-Amz-Algorithm",
    "X-Amz-Credential",
    "X-Amz-Date",
    "Policy",
    "X-Amz-Signature",
];

/// Top-level schemas of the cloud document and their fields.
const CLOUD_SCHEMA_FIELDS: &[(&str, &[(&str, T)])] = &[
    (
        "Container",
        &[
            ("id", T::Uuid),
            ("status", T::R("ContainerStatus")),
            ("region", T::R("ContainerRegion")),
            ("expirationDate", T::Dt),
            ("createdAt", T::Dt),
            ("updatedAt", T::Dt),
            ("creatorId", T::Uuid),
            ("organizationId", T::Uuid),
            ("metadata", T::R("Metadata")),
            ("files", T::Arr("ContainerFile")),
        ],
    ),
    ("ContainerFile", CONTAINER_FILE_FIELDS),
    (
        "CreateContainerFile",
        &[
            ("path", T::S),
            ("type", T::R("ContainerFileType")),
            ("size", T::I),
            ("metadata", T::R("Metadata")),
        ],
    ),
    ("Processing", PROCESSING_FIELDS),
    ("ErrorCount", &[("errors", T::I), ("warnings", T::I)]),
    (
        "ProcessingError",
        &[
            ("id", T::Uuid),
            ("level", T::R("ProcessingErrorLevel")),
            ("message", T::S),
            ("date", T::Dt),
        ],
    ),
    (
        "ServerInfo",
        &[
            ("version", T::S),
            ("engineVersions", T::ArrS),
            ("apiVersion", T::S),
            ("regionsStatus", T::Map("RegionStatus")),
        ],
    ),
    (
        "ContainerList",
        &[("numItems", T::I), ("containers", T::Arr("Container"))],
    ),
    (
        "ProcessingList",
        &[("numItems", T::I), ("processings", T::Arr("Processing"))],
    ),
    ("OutputFile", &[("path", T::S), ("url", T::Url)]),
    ("UploadInfo", &[("url", T::Url), ("fields", T::O)]),
    ("Error", &[("title", T::S), ("details", T::S)]),
];

const NOTIFICATION_SCHEMA_FIELDS: &[(&str, &[(&str, T)])] = &[
    (
        "WebhookEndpoint",
        &[
            ("id", T::Uuid),
            ("url", T::Url),
            ("enabledEventTypes", T::Arr("EventType")),
            ("secret", T::S),
            ("enabled", T::B),
            ("metadata", T::R("Metadata")),
        ],
    ),
    (
        "WebhookEvent",
        &[
            ("id", T::Uuid),
            ("eventType", T::R("EventType")),
            ("createdAt", T::Dt),
            ("endpointMetadata", T::O),
            ("payload", T::R("Processing")),
        ],
    ),
    (
        "MissedWebhook",
        &[
            ("id", T::Uuid),
            ("eventType", T::R("EventType")),
            ("payload", T::O),
            ("createdAt", T::Dt),
            ("endpointMetadata", T::O),
        ],
    ),
    ("Processing", PROCESSING_FIELDS),
    ("Error", &[("title", T::S), ("details", T::S)]),
];

/// Request bodies: (method, path, fields, required fields, optional fields, body optional)
type BodySpec = (
    &'static str,
    &'static str,
    &'static [(&'static str, T)],
    &'static [&'static str],
    &'static [&'static str],
    bool,
);

const CLOUD_BODIES: &[BodySpec] = &[
    (
        "post",
        ORG_CONTAINERS,
        &[
            ("region", T::R("ContainerRegion")),
            ("metadata", T::R("Metadata")),
            ("files", T::Arr("CreateContainerFile")),
        ],
        &["region"],
        &["metadata", "files"],
        false,
    ),
    (
        "patch",
        CONTAINER,
        &[("metadata", T::R("Metadata"))],
        &[],
        &["metadata"],
        true,
    ),
    (
        "post",
        CONTAINER_FILES,
        &[("files", T::Arr("CreateContainerFile"))],
        &["files"],
        &[],
        false,
    ),
    (
        "patch",
        CONTAINER_FILE,
        &[
            ("type", T::R("ContainerFileType")),
            ("path", T::S),
            ("metadata", T::R("Metadata")),
        ],
        &[],
        &["type", "path", "metadata"],
        true,
    ),
    (
        "post",
        ORG_PROCESSINGS,
        &[
            ("containerId", T::Uuid),
            ("processingJson", T::O),
            ("name", T::S),
            ("metadata", T::R("Metadata")),
        ],
        &["containerId", "processingJson"],
        &["name", "metadata"],
        false,
    ),
];

const NOTIFICATION_BODIES: &[BodySpec] = &[
    (
        "post",
        ORG_WEBHOOKS,
        &[
            ("url", T::Url),
            ("enabledEventTypes", T::Arr("EventType")),
            ("metadata", T::R("Metadata")),
        ],
        &["url", "enabledEventTypes"],
        &["metadata"],
        false,
    ),
    (
        "patch",
        WEBHOOK,
        &[
            ("url", T::Url),
            ("enabledEventTypes", T::Arr("EventType")),
            ("metadata", T::R("Metadata")),
            ("enabled", T::B),
        ],
        &[],
        &["url", "enabledEventTypes", "metadata", "enabled"],
        true,
    ),
];

const UNIT_BODIES: &[BodySpec] = &[
    (
        "post",
        "/api/v1/user/login",
        &[("user", T::R("UserName")), ("password", T::S)],
        &["user", "password"],
        &[],
        false,
    ),
    (
        "post",
        "/api/v1/user/password",
        &[("user", T::R("UserName")), ("password", T::S)],
        &["password"],
        &["user"],
        false,
    ),
    ("post", "/api/v1/settings", &[], &[], &[], false),
    ("post", "/api/v1/settings/import", &[], &[], &[], false),
];

/// Success bodies: (method, path, schema name, bare array of it?)
const CLOUD_RESPONSES: &[(&str, &str, &str, bool)] = &[
    ("get", INFO_V1, "ServerInfo", false),
    ("get", ORG_CONTAINERS, "ContainerList", false),
    ("post", ORG_CONTAINERS, "Container", false),
    ("get", CONTAINER, "Container", false),
    ("patch", CONTAINER, "Container", false),
    ("post", CONTAINER_FILES, "ContainerFile", true),
    ("patch", CONTAINER_FILE, "ContainerFile", false),
    ("get", ORG_PROCESSINGS, "ProcessingList", false),
    ("post", ORG_PROCESSINGS, "Processing", false),
    ("get", PROCESSING, "Processing", false),
    ("post", PROCESSING_ARCHIVE, "Processing", false),
    ("get", PROCESSING_OUTPUT, "OutputFile", true),
    ("get", PROCESSING_ERRORS, "ProcessingError", true),
];

const NOTIFICATION_RESPONSES: &[(&str, &str, &str, bool)] = &[
    // the specification: list, create and update all answer an array of WebhookEndpoint
    ("get", ORG_WEBHOOKS, "WebhookEndpoint", true),
    ("post", ORG_WEBHOOKS, "WebhookEndpoint", true),
    ("patch", WEBHOOK, "WebhookEndpoint", true),
    ("get", MISSED, "MissedWebhook", true),
];

const UNIT_RESPONSES: &[(&str, &str, &str, bool)] = &[
    ("get", "/api/v1/settings", "Settings", false),
    ("post", "/api/v1/settings", "WriteResult", false),
    ("post", "/api/v1/settings/{path}", "WriteResult", false),
    ("post", "/api/v1/settings/default", "WriteResult", false),
    ("post", "/api/v1/settings/import", "WriteResult", false),
    ("get", "/api/v1/settings/export", "SettingsFile", false),
    ("get", "/api/v1/info", "DeviceInfo", false),
    ("post", "/api/v1/user/login", "LoginResponse", false),
];

const DEVICE_INFO_FIELDS: &[&str] = &[
    "productCode",
    "serialNumber",
    "hwRevision",
    "mnfVersion",
    "mnfDate",
    "macAddress",
    "productType",
    "fmwVersion",
    "btVersion",
    "eComVersion",
    "apiVersion",
];

const CATEGORIES: [&str; 9] = [
    "Monitor",
    "Setting",
    "Calibration",
    "Reboot",
    "Logger",
    "FTP",
    "Firmware",
    "License",
    "Factory",
];

const RIGHTS: [(&str, [&str; 9]); 5] = [
    (
        "viewer",
        [
            "VIEW", "VIEW", "VIEW", "NO", "VIEW", "READ", "NO", "NO", "NO",
        ],
    ),
    (
        "operator",
        [
            "VIEW", "VIEW", "VIEW", "YES", "USE", "WRITE", "NO", "NO", "NO",
        ],
    ),
    (
        "powerUser",
        [
            "VIEW", "WRITE", "USE", "YES", "USE", "WRITE", "NO", "NO", "NO",
        ],
    ),
    (
        "setup",
        [
            "VIEW", "WRITE", "USE", "YES", "USE", "WRITE", "YES", "YES", "NO",
        ],
    ),
    (
        "factory",
        [
            "VIEW", "WRITE", "USE", "YES", "USE", "WRITE", "YES", "YES", "YES",
        ],
    ),
];

const CAN_MESSAGES: &[&str] = &[
    "status01",
    "status02",
    "status03",
    "utc0",
    "utc1",
    "imuInfo",
    "imuAccel",
    "imuGyro",
    "imuDeltaVel",
    "imuDeltaAngle",
    "ekfInfo",
    "ekfQuat",
    "ekfEuler",
    "ekfOrientationAcc",
    "ekfPos",
    "ekfAltitude",
    "ekfPosAcc",
    "ekfVelNed",
    "ekfVelNedAcc",
    "ekfVelBody",
    "autoTrackSlipCurv",
    "shipMotionInfo",
    "shipMotion0",
    "shipMotion1",
    "shipMotion2",
    "shipMotionHpInfo",
    "shipMotionHp0",
    "shipMotionHp1",
    "shipMotionHp2",
    "mag0",
    "mag1",
    "mag2",
    "odoInfo",
    "odoVel",
    "airDataInfo",
    "airDataAltitude",
    "airDataAirSpeed",
    "depthInfo",
    "depthAltitude",
];

const PORT_MESSAGES: &[&str] = &[
    "status",
    "diag",
    "sessionInfo",
    "utcTime",
    "ptpStatus",
    "imuData",
    "imuShort",
    "mag",
    "magCalib",
    "ekfEuler",
    "ekfQuat",
    "ekfNav",
    "ekfVelBody",
    "ekfRotAccelBody",
    "ekfRotAccelNed",
    "ekfDebug",
    "shipMotion",
    "shipMotionHp",
    "gps1Vel",
    "gps1Pos",
    "gps1Hdt",
    "gps1Raw",
    "gps1Sat",
    "gps2Vel",
    "gps2Pos",
    "gps2Hdt",
    "gps2Raw",
    "gps2Sat",
    "rtcmRaw",
    "odoVel",
    "dvlBottomTrack",
    "dvlWaterTrack",
    "airData",
    "usbl",
    "depth",
    "eventA",
    "eventB",
    "eventC",
    "eventD",
    "eventE",
    "eventOutA",
    "eventOutB",
    "GGA",
    "RMC",
    "VTG",
    "ZDA",
    "HDT",
    "ROT",
    "GST",
    "VBW",
    "DPT",
    "GSV",
    "gnssGGA",
    "gnssRMC",
    "gnssVTG",
    "gnssHDT",
    "PRDID",
    "PHINF",
    "PHTRO",
    "PHLIN",
    "PHOCT",
    "INDYN",
    "GGK",
    "PPS",
];

const OUTPUT_PORTS: &[&str] = &[
    "dataLogger",
    "comA",
    "comB",
    "comC",
    "comD",
    "comE",
    "eth0",
    "eth1",
    "eth2",
    "eth3",
    "eth4",
];

/// Kind of a settings leaf.
#[derive(Clone, Copy, Debug)]
enum K {
    S,
    N,
    I,
    B,
    /// 3-number array
    V3,
    /// 9-number array
    V9,
    /// {rough: [string x2], fine: [number x3]}
    Align,
}

fn add(out: &mut Vec<(String, K)>, prefix: &str, fields: &[(&str, K)]) {
    for (f, k) in fields {
        out.push((format!("{prefix}.{f}"), *k));
    }
}

/// The spec's settings table, one entry per leaf.
fn settings_leaves() -> Vec<(String, K)> {
    use K::*;
    let mut v = Vec::new();
    add(&mut v, "oem", &[("label", S)]);
    add(
        &mut v,
        "imu",
        &[
            ("model", S),
            ("refPoint", S),
            ("customRefPoint", V3),
            ("alignment", Align),
        ],
    );
    add(
        &mut v,
        "mechanicalSetup",
        &[
            ("alignment", Align),
            ("leverArms.cog", V3),
            ("leverArms.output1", V3),
            ("leverArms.output2", V3),
            ("leverArms.output3", V3),
            ("outputFrames.output1.rotation", Align),
            ("outputFrames.output2.rotation", Align),
            ("outputFrames.output3.rotation", Align),
            ("vehicleSize.customSize", B),
            ("vehicleSize.size", V3),
        ],
    );
    add(
        &mut v,
        "insFilter",
        &[
            ("motionProfile", S),
            ("useRtkHeave", B),
            ("validityThresholds.rollPitch", N),
            ("validityThresholds.heading", N),
            ("validityThresholds.velocity", N),
            ("validityThresholds.position", N),
        ],
    );
    for g in ["gnss1", "gnss2"] {
        add(
            &mut v,
            &format!("aiding.{g}"),
            &[
                ("model", S),
                ("source", S),
                ("sync", S),
                ("antenna", S),
                ("headingMode", S),
                ("leverArmPrimary", V3),
                ("leverArmSecondary", V3),
                ("usePosition", S),
                ("useDualAntenna", S),
            ],
        );
    }
    add(
        &mut v,
        "aiding.odometer",
        &[
            ("model", S),
            ("source", S),
            ("leverArm", V3),
            ("gain", N),
            ("gainError", N),
            ("reverse", B),
            ("useVelocity", S),
        ],
    );
    add(
        &mut v,
        "aiding.airData",
        &[
            ("model", S),
            ("source", S),
            ("leverArm", V3),
            ("useAirSpeed", S),
            ("useAltitude", S),
        ],
    );
    add(
        &mut v,
        "aiding.dvl",
        &[
            ("model", S),
            ("source", S),
            ("sync", S),
            ("leverArm", V3),
            ("alignment", Align),
            ("useWaterVel", S),
            ("useBottomVel", S),
        ],
    );
    add(
        &mut v,
        "aiding.depth",
        &[("model", S), ("source", S), ("useDepth", S)],
    );
    add(
        &mut v,
        "aiding.usbl",
        &[("model", S), ("source", S), ("usePosition", S)],
    );
    add(
        &mut v,
        "aiding.diffCorr",
        &[("source", S), ("ggaInterval", S)],
    );
    add(
        &mut v,
        "aiding.magnetometer",
        &[
            ("model", S),
            ("source", S),
            ("alignment", Align),
            ("useMagData", S),
            ("hardIronCorrection", V3),
            ("softIronCorrection", V9),
            ("calibrationMode", S),
        ],
    );
    add(
        &mut v,
        "localParam",
        &[
            ("latitude", N),
            ("longitude", N),
            ("height", N),
            ("date", S),
            ("useOnBoardWMM", B),
            ("magneticRef", V3),
        ],
    );
    add(
        &mut v,
        "network.ipv4",
        &[
            ("mode", S),
            ("ip", S),
            ("ipGnss", S),
            ("netmask", S),
            ("gateway", S),
            ("dns1", S),
            ("dns2", S),
        ],
    );
    add(
        &mut v,
        "network.ntrip",
        &[
            ("hostname", S),
            ("port", I),
            ("encryptionEnabled", B),
            ("mountPoint", S),
            ("authEnabled", B),
            ("username", S),
            ("password", S),
        ],
    );
    add(&mut v, "network.ntp", &[("enabled", B)]);
    add(
        &mut v,
        "network.ptp",
        &[
            ("enabled", B),
            ("mode", S),
            ("priority1", I),
            ("priority2", I),
            ("timeScale", S),
            ("timeScaleOffset", I),
        ],
    );
    add(&mut v, "ports.can", &[("mode", S), ("bitrate", I)]);
    for c in ["comA", "comB", "comC", "comD", "comE"] {
        add(
            &mut v,
            &format!("ports.{c}"),
            &[("mode", S), ("parity", S), ("baudrate", I)],
        );
    }
    for e in ["eth0", "eth1", "eth2", "eth3", "eth4"] {
        add(
            &mut v,
            &format!("ports.{e}"),
            &[
                ("protocol", S),
                ("udpIp", S),
                ("tcpClientHost", S),
                ("udpOutPort", I),
                ("udpInPort", I),
                ("tcpClientPort", I),
                ("tcpServerPort", I),
            ],
        );
    }
    for e in ["eventInA", "eventInB", "eventInC", "eventInD", "eventInE"] {
        add(
            &mut v,
            &format!("events.{e}"),
            &[("trigger", S), ("delay", N)],
        );
    }
    for e in ["eventOutA", "eventOutB"] {
        add(
            &mut v,
            &format!("events.{e}"),
            &[
                ("trigger", S),
                ("polarity", S),
                ("duration", N),
                ("distance", N),
            ],
        );
    }
    add(
        &mut v,
        "output.can",
        &[("leverArm", S), ("startThreshold", S)],
    );
    for p in OUTPUT_PORTS {
        add(
            &mut v,
            &format!("output.{p}"),
            &[
                ("nmea.talkerId", S),
                ("nmea.mode", S),
                ("nmea.alwaysOutputTime", B),
                ("leverArm", S),
                ("startThreshold", S),
            ],
        );
    }
    add(
        &mut v,
        "clock",
        &[("source", S), ("mode", S), ("leapSec", I)],
    );
    add(
        &mut v,
        "dataLogger",
        &[("mode", S), ("sessionName", S), ("sessionNameLocked", B)],
    );
    v
}

fn check_array(doc: &Value, node: &Value, item_type: &str, len: u64) -> Result<(), String> {
    let flat = flatten(doc, node);
    let items = flat.get("items").map(|i| flatten(doc, i));
    let ok = str_of(&flat, "type") == "array"
        && flat.get("minItems").and_then(Value::as_u64) == Some(len)
        && flat.get("maxItems").and_then(Value::as_u64) == Some(len)
        && items.as_ref().map(|i| str_of(i, "type")) == Some(item_type);
    if ok {
        Ok(())
    } else {
        Err(format!(
            "expected array of {len} {item_type}s (minItems = maxItems = {len}), found type={:?} minItems={:?} maxItems={:?} items.type={:?}",
            str_of(&flat, "type"),
            flat.get("minItems"),
            flat.get("maxItems"),
            items.as_ref().map(|i| str_of(i, "type").to_string())
        ))
    }
}

fn check_leaf(doc: &Value, node: &Value, k: K) -> Result<(), String> {
    let simple = |want: &str| {
        let flat = flatten(doc, node);
        let ty = str_of(&flat, "type");
        if ty == want {
            Ok(())
        } else {
            Err(format!("expected type {want}, found {ty:?}"))
        }
    };
    match k {
        K::S => simple("string"),
        K::N => simple("number"),
        K::I => simple("integer"),
        K::B => simple("boolean"),
        K::V3 => check_array(doc, node, "number", 3),
        K::V9 => check_array(doc, node, "number", 9),
        K::Align => {
            let flat = flatten(doc, node);
            let rough = flat
                .get("properties")
                .and_then(|p| p.get("rough"))
                .ok_or_else(|| "`rough` missing".to_string())
                .and_then(|r| check_array(doc, r, "string", 2).map_err(|e| format!("rough: {e}")));
            let fine = flat
                .get("properties")
                .and_then(|p| p.get("fine"))
                .ok_or_else(|| "`fine` missing".to_string())
                .and_then(|f| check_array(doc, f, "number", 3).map_err(|e| format!("fine: {e}")));
            match (rough, fine) {
                (Ok(()), Ok(())) => Ok(()),
                (a, b) => Err([a.err(), b.err()]
                    .into_iter()
                    .flatten()
                    .collect::<Vec<_>>()
                    .join("; ")),
            }
        }
    }
}

/// The root of the settings tree: the body of `GET /api/v1/settings`.
fn settings_root(doc: Doc) -> Value {
    operation(doc, "get", "/api/v1/settings")
        .and_then(|op| response_schema(doc, op, "200"))
        .or_else(|| schema(doc, "Settings").cloned())
        .expect(
            "ins-device.yaml: no settings tree (GET /api/v1/settings 200 body or schema Settings)",
        )
}

fn effective_security(doc: Doc, op: &Value) -> Vec<Value> {
    op.get("security")
        .or_else(|| doc.root.get("security"))
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default()
}

// ---------------------------------------------------------------------------------------
// 0. Documents
// ---------------------------------------------------------------------------------------

#[test]
fn documents_are_openapi_3_0_3() {
    let mut ck = Ck::new("documents_are_openapi_3_0_3");
    for doc in [cloud(), notification(), unit()] {
        ck.check(str_of(doc.root, "openapi") == "3.0.3", || {
            format!("{}: `openapi` is not 3.0.3", doc.name)
        });
    }
    ck.finish();
}

// ---------------------------------------------------------------------------------------
// 1. Operations and responses
// ---------------------------------------------------------------------------------------

fn check_operations(ck: &mut Ck, doc: Doc, expected: &[(&str, &str, &[&str])]) {
    for (method, path, codes) in expected {
        let Some(op) = operation(doc, method, path) else {
            ck.check(false, || {
                format!(
                    "{}: operation {} {path} missing",
                    doc.name,
                    method.to_uppercase()
                )
            });
            continue;
        };
        ck.check(!str_of(op, "operationId").is_empty(), || {
            format!(
                "{}: {} {path} has no operationId",
                doc.name,
                method.to_uppercase()
            )
        });
        let have = response_codes(op);
        for code in *codes {
            ck.check(have.contains(*code), || {
                format!(
                    "{}: {} {path} lacks response {code}",
                    doc.name,
                    method.to_uppercase()
                )
            });
        }
    }
    // nothing beyond the specified operations
    let known: BTreeSet<(String, String)> = expected
        .iter()
        .map(|(m, p, _)| (m.to_string(), p.to_string()))
        .collect();
    for (m, p, _) in all_operations(doc) {
        ck.check(known.contains(&(m.clone(), p.clone())), || {
            format!(
                "{}: operation {} {p} is not in the specification",
                doc.name,
                m.to_uppercase()
            )
        });
    }
}

#[test]
fn cloud_operations_and_responses() {
    let mut ck = Ck::new("cloud_operations_and_responses");
    check_operations(&mut ck, cloud(), CLOUD_OPS);
    ck.finish();
}

#[test]
fn notification_operations_and_responses() {
    let mut ck = Ck::new("notification_operations_and_responses");
    check_operations(&mut ck, notification(), NOTIFICATION_OPS);
    ck.finish();
}

#[test]
fn unit_operations_responses_and_rights() {
    let mut ck = Ck::new("unit_operations_responses_and_rights");
    let doc = unit();
    let plain: Vec<(&str, &str, &[&str])> =
        UNIT_OPS.iter().map(|(m, p, c, _)| (*m, *p, *c)).collect();
    check_operations(&mut ck, doc, &plain);
    // only GET and POST exist on the unit
    for (m, p, _) in all_operations(doc) {
        ck.check(m == "get" || m == "post", || {
            format!(
                "ins-device.yaml: {} {p}: only GET and POST are supported by the unit",
                m.to_uppercase()
            )
        });
    }
    for (method, path, _, right) in UNIT_OPS {
        let Some(op) = operation(doc, method, path) else {
            continue;
        };
        let r = op.get("x-required-right");
        let cat = r.map(|r| str_of(r, "category")).unwrap_or("");
        let level = r.map(|r| str_of(r, "level")).unwrap_or("");
        let what = || format!("ins-device.yaml: {} {path}", method.to_uppercase());
        match right {
            Right::None => continue,
            Right::Any => {
                ck.check(r.is_some(), || {
                    format!("{}: x-required-right missing", what())
                });
            }
            Right::View => {
                ck.check(
                    (cat == "Monitor" || cat == "Setting") && level == "VIEW",
                    || format!("{}: x-required-right must be Monitor or Setting VIEW, found {cat:?} {level:?}", what()),
                );
            }
            Right::SettingWrite => {
                ck.check(cat == "Setting" && level == "WRITE", || {
                    format!(
                        "{}: x-required-right must be Setting WRITE, found {cat:?} {level:?}",
                        what()
                    )
                });
            }
            Right::Reboot => {
                ck.check(cat == "Reboot" && level == "YES", || {
                    format!(
                        "{}: x-required-right must be Reboot YES, found {cat:?} {level:?}",
                        what()
                    )
                });
            }
            Right::LoggerUse => {
                ck.check(cat == "Logger" && level == "USE", || {
                    format!(
                        "{}: x-required-right must be Logger USE, found {cat:?} {level:?}",
                        what()
                    )
                });
            }
        }
        if r.is_some() {
            ck.check(CATEGORIES.contains(&cat), || {
                format!(
                    "{}: x-required-right category {cat:?} is not a rights column",
                    what()
                )
            });
        }
    }
    ck.finish();
}

#[test]
fn operation_ids_unique() {
    let mut ck = Ck::new("operation_ids_unique");
    for doc in [cloud(), notification(), unit()] {
        let mut seen = BTreeSet::new();
        for (m, p, op) in all_operations(doc) {
            let id = str_of(op, "operationId").to_string();
            ck.check(!id.is_empty(), || {
                format!("{}: {} {p} has no operationId", doc.name, m.to_uppercase())
            });
            if !id.is_empty() {
                ck.check(seen.insert(id.clone()), || {
                    format!("{}: operationId {id} used twice", doc.name)
                });
            }
        }
    }
    ck.finish();
}

#[test]
fn path_parameters() {
    let mut ck = Ck::new("path_parameters");
    for doc in [cloud(), notification(), unit()] {
        for (m, p, _) in all_operations(doc) {
            let names: Vec<&str> = p
                .split('/')
                .filter_map(|s| s.strip_prefix('{').and_then(|s| s.strip_suffix('}')))
                .collect();
            for name in names {
                let what = || {
                    format!(
                        "{}: {} {p}: path parameter `{name}`",
                        doc.name,
                        m.to_uppercase()
                    )
                };
                let Some(param) = parameter(doc, &m, &p, name, "path") else {
                    ck.check(false, || format!("{} not declared", what()));
                    continue;
                };
                ck.check(param.get("required") == Some(&Value::Bool(true)), || {
                    format!("{} not required", what())
                });
                let flat = flatten(doc.root, param.get("schema").unwrap_or(&Value::Null));
                if name == "path" {
                    ck.check(str_of(&flat, "type") == "string", || {
                        format!("{} is not a string", what())
                    });
                } else {
                    ck.check(
                        str_of(&flat, "type") == "string" && str_of(&flat, "format") == "uuid",
                        || format!("{} is not a uuid string", what()),
                    );
                }
            }
        }
    }
    ck.finish();
}

// ---------------------------------------------------------------------------------------
// 2. Fields of resources, request and response bodies
// ---------------------------------------------------------------------------------------

fn check_schema_fields(ck: &mut Ck, doc: Doc, table: &[(&str, &[(&str, T)])]) {
    for (name, fields) in table {
        let Some(s) = schema(doc, name) else {
            ck.check(false, || format!("{}: schema {name} missing", doc.name));
            continue;
        };
        check_fields(ck, doc, name, s, fields);
    }
}

#[test]
fn cloud_resource_fields() {
    let mut ck = Ck::new("cloud_resource_fields");
    let doc = cloud();
    check_schema_fields(&mut ck, doc, CLOUD_SCHEMA_FIELDS);
    // the upload form fields, in the decided order
    if let Ok(fields) = schema(doc, "ContainerFile")
        .ok_or_else(String::new)
        .and_then(|s| walk(doc.root, s, "uploadInfo.fields"))
    {
        let flat = flatten(doc.root, &fields);
        let order: Vec<String> = flat
            .get("properties")
            .and_then(Value::as_object)
            .map(|m| m.keys().cloned().collect())
            .unwrap_or_default();
        let listed: Vec<&String> = order
            .iter()
            .filter(|k| UPLOAD_FIELDS_ORDER.contains(&k.as_str()))
            .collect();
        ck.check(listed == UPLOAD_FIELDS_ORDER, || {
            format!("cloud.yaml: uploadInfo.fields properties are not in the order {UPLOAD_FIELDS_ORDER:?} (found {order:?})")
        });
        let req = required_of(&flat);
        for f in UPLOAD_FIELDS_ORDER {
            ck.check(req.contains(*f), || {
                format!("cloud.yaml: uploadInfo.fields.{f} is not required")
            });
        }
        // every entry is a string form field
        let extra_ok = match flat.get("additionalProperties") {
            None | Some(Value::Bool(_)) => true,
            Some(a) => str_of(&flatten(doc.root, a), "type") == "string",
        };
        ck.check(extra_ok, || {
            "cloud.yaml: uploadInfo.fields additional entries must be strings".to_string()
        });
    }
    ck.finish();
}

#[test]
fn notification_resource_fields() {
    let mut ck = Ck::new("notification_resource_fields");
    let doc = notification();
    check_schema_fields(&mut ck, doc, NOTIFICATION_SCHEMA_FIELDS);
    // the delivered payload is a full Processing
    if let Some(ev) = schema(doc, "WebhookEvent") {
        let payload: Vec<(String, T)> = PROCESSING_FIELDS
            .iter()
            .map(|(f, t)| (format!("payload.{f}"), *t))
            .collect();
        let payload: Vec<(&str, T)> = payload.iter().map(|(f, t)| (f.as_str(), *t)).collect();
        check_fields(&mut ck, doc, "WebhookEvent", ev, &payload);
    }
    ck.finish();
}

fn check_bodies(ck: &mut Ck, doc: Doc, bodies: &[BodySpec]) {
    for (method, path, fields, required, optional, body_optional) in bodies {
        let label = format!("{} {path} request body", method.to_uppercase());
        let Some(op) = operation(doc, method, path) else {
            ck.check(false, || {
                format!("{}: {label}: operation missing", doc.name)
            });
            continue;
        };
        let Some(body) = request_schema(doc, op) else {
            ck.check(false, || format!("{}: {label} missing", doc.name));
            continue;
        };
        let rb = deref(doc.root, op.get("requestBody").unwrap_or(&Value::Null));
        let body_required = rb.get("required") == Some(&Value::Bool(true));
        if *body_optional {
            ck.check(!body_required, || {
                format!(
                    "{}: {label} must be optional (requestBody.required is true)",
                    doc.name
                )
            });
        } else {
            ck.check(body_required, || {
                format!("{}: {label} must be required", doc.name)
            });
        }
        check_fields(ck, doc, &label, &body, fields);
        let flat = flatten(doc.root, &body);
        let req = required_of(&flat);
        for f in *required {
            ck.check(req.contains(*f), || {
                format!("{}: {label}: `{f}` must be required", doc.name)
            });
        }
        for f in *optional {
            ck.check(!req.contains(*f), || {
                format!("{}: {label}: `{f}` must be optional", doc.name)
            });
        }
    }
}

#[test]
fn request_bodies() {
    let mut ck = Ck::new("request_bodies");
    check_bodies(&mut ck, cloud(), CLOUD_BODIES);
    check_bodies(&mut ck, notification(), NOTIFICATION_BODIES);
    check_bodies(&mut ck, unit(), UNIT_BODIES);
    // settings writes and import take the settings tree
    let doc = unit();
    for path in ["/api/v1/settings", "/api/v1/settings/import"] {
        let body = operation(doc, "post", path).and_then(|op| request_schema(doc, op));
        ck.check(
            body.as_ref().is_some_and(|b| refers_to(b, "Settings")),
            || format!("ins-device.yaml: POST {path} body must be the Settings tree"),
        );
    }
    // the node write takes a JSON body
    let node =
        operation(doc, "post", "/api/v1/settings/{path}").and_then(|op| request_schema(doc, op));
    ck.check(node.is_some(), || {
        "ins-device.yaml: POST /api/v1/settings/{path} has no JSON request body".to_string()
    });
    ck.finish();
}

fn check_responses(ck: &mut Ck, doc: Doc, table: &[(&str, &str, &'static str, bool)]) {
    for (method, path, name, array) in table {
        let what = format!("{}: {} {path} 200 body", doc.name, method.to_uppercase());
        let body = operation(doc, method, path).and_then(|op| response_schema(doc, op, "200"));
        let Some(body) = body else {
            ck.check(false, || format!("{what} missing"));
            continue;
        };
        let r = if *array {
            check_shape(doc.root, &body, T::Arr(name))
        } else {
            check_shape(doc.root, &body, T::R(name))
        };
        ck.result(r.map_err(|e| format!("{what}: {e}")));
    }
}

#[test]
fn response_bodies() {
    let mut ck = Ck::new("response_bodies");
    check_responses(&mut ck, cloud(), CLOUD_RESPONSES);
    check_responses(&mut ck, notification(), NOTIFICATION_RESPONSES);
    check_responses(&mut ck, unit(), UNIT_RESPONSES);
    ck.finish();
}

#[test]
fn nullable_fields() {
    let mut ck = Ck::new("nullable_fields");
    let nullable = |doc: Doc, root: &Value, path: &str| -> bool {
        walk(doc.root, root, path)
            .map(|n| flatten(doc.root, &n).get("nullable") == Some(&Value::Bool(true)))
            .unwrap_or(false)
    };
    for doc in [cloud(), notification()] {
        let Some(p) = schema(doc, "Processing") else {
            ck.check(false, || format!("{}: schema Processing missing", doc.name));
            continue;
        };
        for f in [
            "name",
            "containerId",
            "processingResult",
            "processingStep",
            "processingProgress",
        ] {
            ck.check(nullable(doc, p, f), || {
                format!("{}: Processing.{f} must be nullable", doc.name)
            });
        }
    }
    let doc = cloud();
    if let Some(body) =
        operation(doc, "post", ORG_PROCESSINGS).and_then(|op| request_schema(doc, op))
    {
        ck.check(nullable(doc, &body, "name"), || {
            "cloud.yaml: start processing body `name` must be nullable".to_string()
        });
    } else {
        ck.check(false, || {
            "cloud.yaml: start processing body missing".to_string()
        });
    }
    ck.finish();
}

// ---------------------------------------------------------------------------------------
// 3. Value sets
// ---------------------------------------------------------------------------------------

fn check_value_sets(ck: &mut Ck, doc: Doc, sets: &[(&str, &[&str])]) {
    for (name, values) in sets {
        let Some(s) = schema(doc, name) else {
            ck.check(false, || format!("{}: value set {name} missing", doc.name));
            continue;
        };
        ck.check(str_of(&flatten(doc.root, s), "type") == "string", || {
            format!("{}: {name} is not `type: string`", doc.name)
        });
        let have = enum_values(doc.root, s);
        for v in *values {
            ck.check(have.iter().any(|h| h == v), || {
                format!("{}: {name} lacks value `{v}`", doc.name)
            });
        }
        for h in &have {
            ck.check(values.contains(&h.as_str()), || {
                format!(
                    "{}: {name} has value `{h}` the specification does not define",
                    doc.name
                )
            });
        }
    }
}

#[test]
fn value_sets() {
    let mut ck = Ck::new("value_sets");
    check_value_sets(&mut ck, cloud(), CLOUD_VALUE_SETS);
    check_value_sets(&mut ck, notification(), NOTIFICATION_VALUE_SETS);
    check_value_sets(&mut ck, unit(), UNIT_VALUE_SETS);
    // the `format` query parameter of settings reads uses SettingsFormat
    let doc = unit();
    {
        let path = "/api/v1/settings";
        let p = parameter(doc, "get", path, "format", "query");
        ck.check(
            p.as_ref()
                .and_then(|p| p.get("schema"))
                .is_some_and(|s| refers_to(s, "SettingsFormat")),
            || format!("ins-device.yaml: GET {path}: query `format` must refer to SettingsFormat"),
        );
    }
    ck.finish();
}

#[test]
fn unit_query_parameters() {
    let mut ck = Ck::new("unit_query_parameters");
    let doc = unit();
    let cases: &[(&str, &str, &str, &str)] = &[
        ("get", "/api/v1/settings", "delta", "boolean"),
        ("post", "/api/v1/settings", "checkOnly", "boolean"),
    ];
    for (m, path, name, ty) in cases {
        let p = parameter(doc, m, path, name, "query");
        let what = format!(
            "ins-device.yaml: {} {path}: query `{name}`",
            m.to_uppercase()
        );
        let Some(p) = p else {
            ck.check(false, || format!("{what} missing"));
            continue;
        };
        ck.check(p.get("required") != Some(&Value::Bool(true)), || {
            format!("{what} must be optional")
        });
        let flat = flatten(doc.root, p.get("schema").unwrap_or(&Value::Null));
        ck.check(str_of(&flat, "type") == *ty, || {
            format!("{what} must be {ty}")
        });
    }
    let p = parameter(doc, "get", "/api/v1/settings", "format", "query");
    ck.check(
        p.is_some_and(|p| p.get("required") != Some(&Value::Bool(true))),
        || "ins-device.yaml: GET /api/v1/settings: query `format` missing or required".to_string(),
    );
    ck.finish();
}

// ---------------------------------------------------------------------------------------
// 4. Limits
// ---------------------------------------------------------------------------------------

#[test]
fn limits_metadata_and_progress() {
    let mut ck = Ck::new("limits_metadata_and_progress");
    for doc in [cloud(), notification()] {
        let Some(m) = schema(doc, "Metadata") else {
            ck.check(false, || format!("{}: schema Metadata missing", doc.name));
            continue;
        };
        let flat = flatten(doc.root, m);
        ck.check(str_of(&flat, "type") == "object", || {
            format!("{}: Metadata is not an object", doc.name)
        });
        ck.check(
            flat.get("maxProperties").and_then(Value::as_u64) == Some(50),
            || format!("{}: Metadata maxProperties must be 50", doc.name),
        );
        ck.check(
            flat.get("x-max-key-length").and_then(Value::as_u64) == Some(40),
            || format!("{}: Metadata x-max-key-length must be 40", doc.name),
        );
        let add = flat
            .get("additionalProperties")
            .map(|a| flatten(doc.root, a));
        ck.check(
            add.as_ref().is_some_and(|a| str_of(a, "type") == "string"),
            || format!("{}: Metadata values must be strings", doc.name),
        );
        ck.check(
            add.as_ref()
                .and_then(|a| a.get("maxLength"))
                .and_then(Value::as_u64)
                == Some(500),
            || format!("{}: Metadata value maxLength must be 500", doc.name),
        );
        if let Some(p) = schema(doc, "Processing") {
            let prog = walk(doc.root, p, "processingProgress").map(|n| flatten(doc.root, &n));
            let min = prog
                .as_ref()
                .ok()
                .and_then(|f| f.get("minimum"))
                .and_then(Value::as_f64);
            let max = prog
                .as_ref()
                .ok()
                .and_then(|f| f.get("maximum"))
                .and_then(Value::as_f64);
            ck.check(min == Some(0.0), || {
                format!(
                    "{}: Processing.processingProgress minimum must be 0",
                    doc.name
                )
            });
            ck.check(max == Some(1.0), || {
                format!(
                    "{}: Processing.processingProgress maximum must be 1",
                    doc.name
                )
            });
        }
    }
    ck.finish();
}

#[test]
fn limits_paging_parameters() {
    let mut ck = Ck::new("limits_paging_parameters");
    let lists = [
        (cloud(), ORG_CONTAINERS),
        (cloud(), ORG_PROCESSINGS),
        (notification(), ORG_WEBHOOKS),
        (notification(), MISSED),
    ];
    for (doc, path) in lists {
        for (name, min, max) in [("page", 0, None), ("perPage", 1, Some(100))] {
            let what = format!("{}: GET {path}: query `{name}`", doc.name);
            let Some(p) = parameter(doc, "get", path, name, "query") else {
                ck.check(false, || format!("{what} missing"));
                continue;
            };
            ck.check(p.get("required") == Some(&Value::Bool(true)), || {
                format!("{what} must be required")
            });
            let flat = flatten(doc.root, p.get("schema").unwrap_or(&Value::Null));
            ck.check(str_of(&flat, "type") == "integer", || {
                format!("{what} must be an integer")
            });
            ck.check(
                flat.get("minimum").and_then(Value::as_i64) == Some(min),
                || format!("{what} minimum must be {min}"),
            );
            ck.check(
                flat.get("exclusiveMinimum") != Some(&Value::Bool(true)),
                || format!("{what} minimum must be inclusive"),
            );
            if let Some(max) = max {
                ck.check(
                    flat.get("maximum").and_then(Value::as_i64) == Some(max),
                    || format!("{what} maximum must be {max}"),
                );
                ck.check(
                    flat.get("exclusiveMaximum") != Some(&Value::Bool(true)),
                    || format!("{what} maximum must be inclusive"),
                );
            }
        }
    }
    ck.finish();
}

// ---------------------------------------------------------------------------------------
// 5. Error bodies and unit answers
// ---------------------------------------------------------------------------------------

fn check_error_responses(ck: &mut Ck, doc: Doc, fields: &[&str]) {
    for (m, p, op) in all_operations(doc) {
        for code in response_codes(op) {
            if !(code.starts_with('4') || code.starts_with('5')) {
                continue;
            }
            let what = format!("{}: {} {p} {code}", doc.name, m.to_uppercase());
            let body = response_schema(doc, op, &code);
            let props = body
                .as_ref()
                .map(|b| flatten(doc.root, b))
                .and_then(|f| f.get("properties").cloned())
                .unwrap_or(Value::Null);
            for f in fields {
                ck.check(props.get(*f).is_some(), || {
                    format!("{what}: error body lacks `{f}`")
                });
            }
        }
    }
}

#[test]
fn cloud_error_bodies() {
    let mut ck = Ck::new("cloud_error_bodies");
    for doc in [cloud(), notification()] {
        if let Some(e) = schema(doc, "Error") {
            let req = required_of(&flatten(doc.root, e));
            for f in ["title", "details"] {
                ck.check(req.contains(f), || {
                    format!("{}: Error.{f} must be required", doc.name)
                });
            }
        }
        check_error_responses(&mut ck, doc, &["title", "details"]);
    }
    ck.finish();
}

/// (label, body schema, fields)
type AnswerCase = (&'static str, Option<Value>, Vec<(&'static str, T)>);

#[test]
fn unit_error_and_result_bodies() {
    let mut ck = Ck::new("unit_error_and_result_bodies");
    let doc = unit();
    if let Some(e) = schema(doc, "Error") {
        check_fields(
            &mut ck,
            doc,
            "Error",
            e,
            &[
                ("status", T::I),
                ("title", T::S),
                ("detail", T::S),
                ("errors.[].path", T::S),
                ("errors.[].message", T::S),
            ],
        );
        let req = required_of(&flatten(doc.root, e));
        for f in ["status", "title", "detail"] {
            ck.check(req.contains(f), || {
                format!("ins-device.yaml: Error.{f} must be required")
            });
        }
    } else {
        ck.check(false, || {
            "ins-device.yaml: schema Error missing".to_string()
        });
    }
    check_error_responses(&mut ck, doc, &["status", "title", "detail"]);
    // a 422 on settings writes carries `errors`
    for path in [
        "/api/v1/settings",
        "/api/v1/settings/{path}",
        "/api/v1/settings/import",
    ] {
        let body = operation(doc, "post", path).and_then(|op| response_schema(doc, op, "422"));
        let ok = body
            .as_ref()
            .is_some_and(|b| walk(doc.root, b, "errors.[].path").is_ok());
        ck.check(ok, || {
            format!("ins-device.yaml: POST {path} 422 body lacks errors[].path/message")
        });
    }
    // WriteResult, DeviceInfo, login, change password
    let write =
        operation(doc, "post", "/api/v1/settings").and_then(|op| response_schema(doc, op, "200"));
    let info = operation(doc, "get", "/api/v1/info").and_then(|op| response_schema(doc, op, "200"));
    let login_res =
        operation(doc, "post", "/api/v1/user/login").and_then(|op| response_schema(doc, op, "200"));
    let device_fields: Vec<(&str, T)> = DEVICE_INFO_FIELDS.iter().map(|f| (*f, T::S)).collect();
    let cases: Vec<AnswerCase> = vec![
        (
            "WriteResult",
            write,
            vec![("title", T::S), ("needReboot", T::B)],
        ),
        ("DeviceInfo", info, device_fields),
        ("LoginResponse", login_res, vec![("token", T::S)]),
    ];
    for (label, body, fields) in cases {
        let Some(body) = body else {
            ck.check(false, || format!("ins-device.yaml: {label} body missing"));
            continue;
        };
        check_fields(&mut ck, doc, label, &body, &fields);
        let req = required_of(&flatten(doc.root, &body));
        for (f, _) in &fields {
            ck.check(req.contains(*f), || {
                format!("ins-device.yaml: {label}.{f} must be required")
            });
        }
    }
    ck.finish();
}

// ---------------------------------------------------------------------------------------
// 6. + 7. Settings tree and message names
// ---------------------------------------------------------------------------------------

#[test]
fn settings_tree() {
    let mut ck = Ck::new("settings_tree");
    let doc = unit();
    let root = settings_root(doc);
    // the body of a write holds only the modules to change: nothing of the tree is required
    let mut seen_required = BTreeSet::new();
    for (path, k) in settings_leaves() {
        let node = walk(doc.root, &root, &path);
        let r = node.and_then(|n| check_leaf(doc.root, &n, k));
        ck.result(r.map_err(|e| format!("ins-device.yaml: Settings.{path} ({k:?}): {e}")));
        let segs: Vec<&str> = path.split('.').collect();
        for i in 0..segs.len() {
            let prefix = segs[..i].join(".");
            if !seen_required.insert(prefix.clone()) {
                continue;
            }
            let node = if prefix.is_empty() {
                Ok(root.clone())
            } else {
                walk(doc.root, &root, &prefix)
            };
            if let Ok(n) = node {
                let req = required_of(&flatten(doc.root, &n));
                ck.check(req.is_empty(), || {
                    format!("ins-device.yaml: Settings.{prefix} requires {req:?}, but a write carries only the keys it changes")
                });
            }
        }
    }
    ck.finish();
}

#[test]
fn settings_message_names() {
    let mut ck = Ck::new("settings_message_names");
    let doc = unit();
    let root = settings_root(doc);
    let names_of = |flat: &Value| -> Vec<String> {
        flat.get("x-message-names")
            .and_then(Value::as_array)
            .map(|a| {
                a.iter()
                    .filter_map(|x| x.as_str().map(str::to_string))
                    .collect()
            })
            .unwrap_or_default()
    };
    // CAN
    match walk(doc.root, &root, "output.can.messages") {
        Err(e) => {
            ck.check(false, || {
                format!("ins-device.yaml: Settings.output.can.messages: {e}")
            });
        }
        Ok(node) => {
            let flat = flatten(doc.root, &node);
            ck.check(str_of(&flat, "type") == "object", || {
                "ins-device.yaml: output.can.messages is not an object".to_string()
            });
            let names = names_of(&flat);
            for n in CAN_MESSAGES {
                ck.check(names.iter().any(|x| x == n), || {
                    format!("ins-device.yaml: output.can.messages x-message-names lacks `{n}`")
                });
            }
            match flat.get("additionalProperties") {
                Some(entry) if entry.is_object() => {
                    check_fields(
                        &mut ck,
                        doc,
                        "output.can.messages.<name>",
                        entry,
                        &[
                            ("id", T::I),
                            ("extended", T::B),
                            ("trigger", T::R("MessageTrigger")),
                        ],
                    );
                }
                _ => {
                    ck.check(false, || {
                        "ins-device.yaml: output.can.messages entries ({id, extended, trigger}) not described by additionalProperties".to_string()
                    });
                }
            }
        }
    }
    // serial, Ethernet and data logger outputs
    for port in OUTPUT_PORTS {
        let path = format!("output.{port}.messages");
        match walk(doc.root, &root, &path) {
            Err(e) => {
                ck.check(false, || format!("ins-device.yaml: Settings.{path}: {e}"));
            }
            Ok(node) => {
                let flat = flatten(doc.root, &node);
                let names = names_of(&flat);
                for n in PORT_MESSAGES {
                    ck.check(names.iter().any(|x| x == n), || {
                        format!("ins-device.yaml: {path} x-message-names lacks `{n}`")
                    });
                }
                ck.check(
                    str_of(&flat, "type") == "object"
                        && flat
                            .get("additionalProperties")
                            .is_some_and(|a| refers_to(a, "MessageTrigger")),
                    || format!("ins-device.yaml: {path} values must be MessageTrigger strings"),
                );
            }
        }
    }
    ck.finish();
}

// ---------------------------------------------------------------------------------------
// 8. Rights, security, webhook callback
// ---------------------------------------------------------------------------------------

#[test]
fn unit_rights_matrix_and_role_order() {
    let mut ck = Ck::new("unit_rights_matrix_and_role_order");
    let doc = unit();
    let order: Vec<&str> = doc
        .root
        .get("x-role-order")
        .and_then(Value::as_array)
        .map(|a| a.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    ck.check(order == USERS, || {
        format!("ins-device.yaml: x-role-order must be {USERS:?}, found {order:?}")
    });
    let rights = doc.root.get("x-access-rights");
    ck.check(rights.is_some_and(Value::is_object), || {
        "ins-device.yaml: x-access-rights missing".to_string()
    });
    let rights = rights.cloned().unwrap_or(Value::Null);
    for (user, levels) in RIGHTS {
        for (cat, level) in CATEGORIES.iter().zip(levels) {
            let have = rights
                .get(user)
                .and_then(|u| u.get(*cat))
                .and_then(Value::as_str);
            ck.check(have == Some(level), || {
                format!(
                    "ins-device.yaml: x-access-rights.{user}.{cat} must be {level}, found {have:?}"
                )
            });
        }
    }
    if let Some(m) = rights.as_object() {
        for (user, cats) in m {
            ck.check(USERS.contains(&user.as_str()), || {
                format!("ins-device.yaml: x-access-rights has unknown user {user}")
            });
            for cat in cats
                .as_object()
                .map(|c| c.keys().cloned().collect::<Vec<_>>())
                .unwrap_or_default()
            {
                ck.check(CATEGORIES.contains(&cat.as_str()), || {
                    format!("ins-device.yaml: x-access-rights.{user} has unknown category {cat}")
                });
            }
        }
    }
    ck.finish();
}

fn check_oidc(ck: &mut Ck, doc: Doc, scope: &str) {
    let schemes = doc
        .root
        .pointer("/components/securitySchemes")
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default();
    let oidc: Vec<String> = schemes
        .iter()
        .filter(|(_, s)| str_of(deref(doc.root, s), "type") == "openIdConnect")
        .map(|(k, _)| k.clone())
        .collect();
    ck.check(!oidc.is_empty(), || {
        format!("{}: no openIdConnect security scheme", doc.name)
    });
    for k in &oidc {
        let s = deref(doc.root, &schemes[k]);
        ck.check(
            str_of(s, "openIdConnectUrl").ends_with("/.well-known/openid-configuration"),
            || {
                format!(
                    "{}: scheme {k}: openIdConnectUrl must be the discovery document",
                    doc.name
                )
            },
        );
    }
    for (m, p, op) in all_operations(doc) {
        let sec = effective_security(doc, op);
        let ok = !sec.is_empty()
            && sec.iter().all(|req| {
                req.as_object().is_some_and(|r| {
                    r.iter().any(|(k, scopes)| {
                        oidc.contains(k)
                            && scopes
                                .as_array()
                                .is_some_and(|a| a.iter().any(|s| s.as_str() == Some(scope)))
                    })
                })
            });
        ck.check(ok, || {
            format!(
                "{}: {} {p} must require the OpenID Connect scope `{scope}` (no anonymous access)",
                doc.name,
                m.to_uppercase()
            )
        });
    }
}

#[test]
fn security_schemes_and_scopes() {
    let mut ck = Ck::new("security_schemes_and_scopes");
    check_oidc(&mut ck, cloud(), "cloud:api-key");
    check_oidc(&mut ck, notification(), "notification:user");
    let doc = unit();
    let schemes = doc
        .root
        .pointer("/components/securitySchemes")
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default();
    let auth: Vec<String> = schemes
        .iter()
        .filter(|(_, s)| {
            let s = deref(doc.root, s);
            str_of(s, "type") == "apiKey"
                && str_of(s, "in") == "query"
                && str_of(s, "name") == "auth"
        })
        .map(|(k, _)| k.clone())
        .collect();
    ck.check(!auth.is_empty(), || {
        "ins-device.yaml: no apiKey security scheme in query named `auth`".to_string()
    });
    for (k, s) in &schemes {
        let s = deref(doc.root, s);
        ck.check(
            str_of(s, "type") == "apiKey" && str_of(s, "in") == "query",
            || format!("ins-device.yaml: security scheme {k} is not a query token (header-based tokens are unsupported)"),
        );
    }
    for (m, p, op) in all_operations(doc) {
        if p == "/api/v1/user/login" {
            continue;
        }
        let sec = effective_security(doc, op);
        let ok = sec.iter().any(|req| {
            req.as_object()
                .is_some_and(|r| r.keys().any(|k| auth.contains(k)))
        });
        ck.check(ok, || {
            format!(
                "ins-device.yaml: {} {p} does not accept the `auth` query token",
                m.to_uppercase()
            )
        });
    }
    ck.finish();
}

#[test]
fn webhook_callback() {
    let mut ck = Ck::new("webhook_callback");
    let doc = notification();
    let op = operation(doc, "post", ORG_WEBHOOKS);
    let deliveries: Vec<Value> = op
        .and_then(|o| o.get("callbacks"))
        .and_then(Value::as_object)
        .map(|cbs| {
            cbs.values()
                .map(|cb| deref(doc.root, cb))
                .filter_map(Value::as_object)
                .flat_map(|exprs| exprs.values())
                .filter_map(|item| item.get("post").cloned())
                .collect()
        })
        .unwrap_or_default();
    ck.check(!deliveries.is_empty(), || {
        "notification.yaml: createWebhookEndpoint has no callback with a POST delivery".to_string()
    });
    let Some(post) = deliveries.first() else {
        ck.finish();
        return;
    };
    let params: Vec<Value> = post
        .get("parameters")
        .and_then(Value::as_array)
        .map(|a| a.iter().map(|p| deref(doc.root, p).clone()).collect())
        .unwrap_or_default();
    for h in ["Svc-Timestamp", "Svc-Signature"] {
        let p = params
            .iter()
            .find(|p| str_of(p, "in") == "header" && str_of(p, "name").eq_ignore_ascii_case(h));
        ck.check(p.is_some(), || {
            format!("notification.yaml: webhook delivery lacks header {h}")
        });
        ck.check(
            p.is_some_and(|p| p.get("required") == Some(&Value::Bool(true))),
            || format!("notification.yaml: webhook delivery header {h} must be required"),
        );
    }
    let body = json_schema_of(doc, post.get("requestBody").unwrap_or(&Value::Null));
    ck.check(
        body.as_ref().is_some_and(|b| refers_to(b, "WebhookEvent")),
        || "notification.yaml: webhook delivery body must be a WebhookEvent".to_string(),
    );
    let codes = response_codes(post);
    ck.check(codes.iter().any(|c| c.starts_with('2')), || {
        "notification.yaml: webhook delivery must declare a 2xx answer".to_string()
    });
    ck.finish();
}

// ---------------------------------------------------------------------------------------
// 9. Rules carried by descriptions
// ---------------------------------------------------------------------------------------

#[test]
fn cloud_description_rules() {
    let mut ck = Ck::new("cloud_description_rules");
    let doc = cloud();
    let t = texts(doc);
    let rules: &[(&str, &[&[&str]])] = &[
        (
            "401 without token: No bearer token found in the authorization header",
            &[&["no bearer token found in the authorization header"]],
        ),
        (
            "upload policy content-length-range",
            &[&["content-length-range"]],
        ),
        (
            "upload: `file` is the last form field",
            &[&["`file`"], &["last"]],
        ),
        ("upload: multipart/form-data", &[&["multipart/form-data"]]),
        ("upload: fields unchanged", &[&["unchanged", "unmodified"]]),
        (
            "upload: modified field answers 403",
            &[&["modified"], &["403"]],
        ),
        ("upload: storage answers 204", &[&["204"]]),
        (
            "upload: X-Amz-Algorithm AWS4-HMAC-SHA256",
            &[&["aws4-hmac-sha256"]],
        ),
        (
            "upload: Content-Length, no chunked",
            &[&["content-length"], &["chunked"]],
        ),
        ("expirationDate = createdAt + 30 days", &[&["30 days"]]),
        ("size in bytes", &[&["bytes"]]),
        (
            "processingDuration and missionLength in seconds",
            &[&["seconds"]],
        ),
        ("every 2xx is success", &[&["2xx"]]),
        ("real service answers 201", &[&["201"]]),
        ("path longer than 1024 bytes answers 422", &[&["1024"]]),
        ("path containing `..` answers 422", &[&[".."]]),
        ("credits: one per processing, 403 without", &[&["credit"]]),
        ("organization administrator", &[&["administrator"]]),
        (
            "one ongoing processing per organization (409)",
            &[&["ongoing", "already has"], &["409"]],
        ),
        ("delete is immediate and irreversible", &[&["irreversible"]]),
        (
            "after container deletion processings keep containerId null",
            &[&["containerid"], &["null"]],
        ),
        (
            "OIDC discovery document",
            &[&["/.well-known/openid-configuration"]],
        ),
        ("discovery gives token_endpoint", &[&["token_endpoint"]]),
        ("discovery gives issuer", &[&["issuer"]]),
        (
            "token request grant_type=password",
            &[&["password"], &["grant_type"]],
        ),
        (
            "token request client_id=api-key",
            &[&["api-key"], &["client_id"]],
        ),
        ("token request scope=openid", &[&["openid"]]),
        ("alternative client_credentials", &[&["client_credentials"]]),
        ("expires_in 300 seconds", &[&["300"]]),
        ("bearer credential", &[&["bearer"]]),
        (
            "version format Major.Minor.Build-Qualifier",
            &[&["major.minor.build-qualifier"]],
        ),
        (
            "v1 logic must not be reused against v2",
            &[&["v1"], &["v2"]],
        ),
        ("unknown enumerated value kept", &[&["unknown"]]),
        (
            "page below 0 / perPage outside 1..100 answers 422, missing 400",
            &[&["422"], &["400"], &["perpage"]],
        ),
        ("metadata update replaces the whole object", &[&["replace"]]),
        (
            "output files only for status processed",
            &[&["processed"], &["output"]],
        ),
        (
            "archive deletes the result files",
            &[&["archive"], &["result files"]],
        ),
        ("file path is a valid POSIX path", &[&["posix"]]),
        (
            "file path unique within the container (409)",
            &[&["unique"], &["409"]],
        ),
        (
            "resource files must be uploaded if the configuration references them",
            &[&["resource"], &["referenc"]],
        ),
        (
            "storage answers 400 when the length differs or `file` is not last",
            &[&["400"], &["length"]],
        ),
        ("expired policy answers 403", &[&["expire"], &["403"]]),
        (
            "expired or invalid token answers 401",
            &[&["expired"], &["401"]],
        ),
        ("webhooks preferred to polling", &[&["polling"]]),
        ("webhook delivery retries: 10", &[&["retries"], &["10"]]),
    ];
    for (rule, parts) in rules {
        check_text(&mut ck, doc, &t, parts, rule);
    }
    ck.finish();
}

#[test]
fn notification_description_rules() {
    let mut ck = Ck::new("notification_description_rules");
    let doc = notification();
    let t = texts(doc);
    let rules: &[(&str, &[&[&str]])] = &[
        ("signature HMAC-SHA256", &[&["hmac-sha256"]]),
        ("signature keyed with the secret", &[&["hmac"], &["secret"]]),
        (
            "signature over timestamp + \".\" + raw body",
            &[&["timestamp"], &["raw"], &["body"]],
        ),
        ("signature lowercase hex", &[&["lowercase"], &["hex"]]),
        ("secret is whsec_ + 32 random bytes hex", &[&["whsec_"]]),
        ("Svc-Timestamp header", &[&["svc-timestamp"]]),
        ("Svc-Signature header", &[&["svc-signature"]]),
        (
            "timestamp: whole seconds since the Unix epoch",
            &[&["unix epoch", "unix time"]],
        ),
        ("up to 10 retries", &[&["10 retries"]]),
        ("retry spacing doubling", &[&["doubl"]]),
        ("retry spacing capped at 1 hour", &[&["1 hour", "one hour"]]),
        ("no answer within 10 s fails", &[&["10 s", "10 seconds"]]),
        (
            "after the retries a missed event is recorded",
            &[&["missed"]],
        ),
        ("receiver answers 2xx", &[&["2xx"]]),
        ("receiver accepts POST", &[&["post"]]),
        (
            "disabled endpoint receives nothing",
            &[&["enabled"], &["false"]],
        ),
        (
            "processing-ended on processed or canceled",
            &[&["cloud:processing-ended"], &["canceled", "cancelled"]],
        ),
        (
            "processing-error on level error or result failed",
            &[&["cloud:processing-error"], &["failed"]],
        ),
        (
            "processing-progress on status/step/progress change",
            &[&["cloud:processing-progress"], &["step"]],
        ),
        (
            "receiver identifies the processing from payload",
            &[&["payload"]],
        ),
        ("OIDC scope notification:user", &[&["notification:user"]]),
        ("delete is immediate and irreversible", &[&["irreversible"]]),
        ("unknown enumerated value kept", &[&["unknown"]]),
    ];
    for (rule, parts) in rules {
        check_text(&mut ck, doc, &t, parts, rule);
    }
    ck.finish();
}

#[test]
fn unit_description_rules() {
    let mut ck = Ck::new("unit_description_rules");
    let doc = unit();
    let t = texts(doc);
    let rules: &[(&str, &[&[&str]])] = &[
        (
            "lock ends after 60 s without a request",
            &[&["60 s", "60 seconds"], &["lock"]],
        ),
        (
            "default user: highest-role user without a password",
            &[&["default user"], &["highest"]],
        ),
        (
            "every user has a password: no auth answers 401",
            &[
                &["every user has a password", "all users have a password"],
                &["401"],
            ],
        ),
        (
            "setup becomes default when operator has a password",
            &[&["setup"], &["operator"], &["default"]],
        ),
        (
            "password change takes effect on the default user at the next reboot",
            &[&["next reboot"]],
        ),
        (
            "token only in the `auth` query parameter; header unsupported",
            &[&["auth"], &["header"]],
        ),
        ("tokens die at power-on, reset, reboot", &[&["power-on"]]),
        (
            "reboot ends every token and lock",
            &[&["reboot"], &["token"], &["lock"]],
        ),
        (
            "only setup changes other users' passwords",
            &[&["setup"], &["password"], &["403"]],
        ),
        ("an empty password clears it", &[&["empty"], &["clear"]]),
        (
            "factory password held by the manufacturer",
            &[&["manufacturer"]],
        ),
        ("HTTP port 80 only", &[&["80"]]),
        ("HTTPS unsupported", &[&["https"]]),
        (
            "unencrypted HTTP: passwords can be intercepted",
            &[&["intercept", "unencrypted"]],
        ),
        (
            "PUT, PATCH and DELETE unsupported",
            &[&["put"], &["patch"], &["delete"]],
        ),
        (
            "write answer: request successful",
            &[&["request successful"]],
        ),
        ("checkOnly validates without applying", &[&["checkonly"]]),
        (
            "409: another user is already editing the settings",
            &[&["another user is already editing the settings"]],
        ),
        (
            "422 lists every invalid node (aiding/gnss1/model)",
            &[&["aiding/gnss1/model"]],
        ),
        ("write merged recursively", &[&["merge"]]),
        ("arrays and scalars replaced whole", &[&["replaced"]]),
        (
            "write is all or nothing",
            &[&["all or nothing", "all-or-nothing", "changes nothing"]],
        ),
        (
            "unknown key, wrong type, wrong length answer 422",
            &[&["unknown key"], &["422"]],
        ),
        (
            "paths use / between levels",
            &[&["output/coma/messages/imushort"]],
        ),
        (
            "delta: only settings changed from default",
            &[&["default"], &["delta", "changed"]],
        ),
        ("sbgECom frame 0xFF 0x5A", &[&["0xff"], &["0x5a"]]),
        ("frame end 0x33", &[&["0x33"]]),
        ("frame length 0..4086", &[&["4086"]]),
        ("CRC-16/KERMIT", &[&["crc-16/kermit", "kermit"]]),
        ("CRC polynomial 0x8408", &[&["0x8408"]]),
        ("CRC check value 0x2189", &[&["0x2189"]]),
        ("large frames: class bit 0x80", &[&["0x80"]]),
        ("large frames: at most 4081 data bytes a page", &[&["4081"]]),
        ("REST over serial: class 0x10", &[&["0x10"]]),
        (
            "POST is id 47, GET is id 48, older GET 46",
            &[&["47"], &["48"], &["46"]],
        ),
        ("ACK in place of a reply is an error", &[&["ack"]]),
        (
            "reboot takes about 2 s; the unit does not answer",
            &[&["2 s", "2 seconds"]],
        ),
        (
            "version format Major.Minor.Build-Qualifier",
            &[&["major.minor"]],
        ),
        ("apiVersion is Major.Minor (e.g. 1.3)", &[&["1.3"]]),
        ("unknown enumerated value kept", &[&["unknown"]]),
        (
            "binary output logs deliver high-frequency data, not the API",
            &[&["binary"], &["log"]],
        ),
        (
            "serial request data: path NUL query NUL [body NUL]",
            &[&["nul"], &["query"]],
        ),
        (
            "serial reply: status u16 LE then the body",
            &[&["u16"], &["status"]],
        ),
        ("localParam.date is YYYY-MM-DD", &[&["yyyy-mm-dd"]]),
        ("viewer downloads logger files", &[&["download"]]),
    ];
    for (rule, parts) in rules {
        check_text(&mut ck, doc, &t, parts, rule);
    }
    // the decided sbgECom test vectors, compared without whitespace
    let compact: Vec<String> = t
        .iter()
        .map(|s| s.chars().filter(|c| !c.is_whitespace()).collect())
        .collect();
    let vectors = [
        (
            "GET /api/v1/info frame",
            "ff 5a 30 10 0e 00 2f 61 70 69 2f 76 31 2f 69 6e 66 6f 00 00 88 93 33",
        ),
        (
            "reply 200 `{}` frame",
            "ff 5a 30 10 05 00 c8 00 7b 7d 00 e3 5b 33",
        ),
        (
            "ACK class 0x10 id 48 code 0 frame",
            "ff 5a 00 10 04 00 30 10 00 00 02 6c 33",
        ),
        (
            "large page frame",
            "ff 5a 30 90 08 00 00 00 00 02 00 61 62 63 7e fa 33",
        ),
    ];
    for (label, hex) in vectors {
        let want: String = hex.chars().filter(|c| !c.is_whitespace()).collect();
        ck.check(compact.iter().any(|s| s.contains(&want)), || {
            format!(
                "ins-device.yaml: sbgECom test vector \"{label}\" ({hex}) not in any description"
            )
        });
    }
    ck.finish();
}
