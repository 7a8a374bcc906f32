//! `cargo xtask generate [--check]`: the OpenAPI documents under `openapi/` become
//! the committed client code under `crates/*/src/generated/`.
//!
//! Besides running progenitor (builder interface, typify types), this step:
//! - checks the conventions the generator and the SDK rely on (unique operation ids,
//!   no `default` responses, every value set a named schema, shared schemas identical);
//! - widens each documented `200` success to any 2xx (the documents' "Success answers":
//!   the real service answers 201 on some creations, and a client treats every 2xx as
//!   success);
//! - generates every named string enum as an *open* enum with an `Unknown(String)`
//!   variant (forward compatibility) and tells typify to use it in place of the
//!   closed enum it would generate;
//! - maps schemas that notification.yaml shares with cloud.yaml onto the cloud types,
//!   so that one Rust type exists per wire type;
//! - copies, byte for byte, the documents a crate embeds with `include_str!` into that
//!   crate (`DOCUMENT_COPIES`), so that the crate builds from its own folder alone.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::Path;

use anyhow::{Context, Result, anyhow, bail};
use openapiv3::{OpenAPI, ReferenceOr, Schema, SchemaKind, StatusCode, Type};
use proc_macro2::TokenStream;
use progenitor::{GenerationSettings, Generator, HooksMode, InterfaceStyle, TagStyle, TypeImpl};
use quote::{format_ident, quote};
use sha2::{Digest, Sha256};

/// One generated Rust file.
pub struct Output {
    pub path: String,
    pub contents: String,
}

/// A document and how its client is generated.
struct Target {
    doc: &'static str,
    out: &'static str,
    /// The hand-written state type the generated client carries (hooks read it).
    inner_type: &'static str,
    /// Where the crate's open enums live, as seen from generated code.
    enums_path: &'static str,
    /// Another document whose identical schemas are reused instead of generated again.
    shares_with: Option<(&'static str, &'static str)>,
    /// Schemas mapped onto hand-written types, with why.
    replacements: &'static [(&'static str, &'static str)],
    /// The type of `format: date-time` strings, when not chrono's.
    timestamp: Option<&'static str>,
}

/// - `Metadata` limits (50 keys, 40-character names, 500-character values) are checked by
///   the SDK before sending, with an error naming the key; decoding a response stays
///   lenient so that a service that raises a limit never breaks an older client.
/// - `UploadFields` must be sent back unchanged *and in the order received*; a struct
///   would reorder them, an ordered map keeps them (and any field storage adds).
/// - `ContainerPath` is checked by the SDK with an error naming the path and the rule
///   (`svc_core::limits`); a plain string keeps one type for the one concept.
/// - Secrets (`WebhookSecret`, the unit's `Password` and `AuthToken`) are newtypes whose
///   `Debug` prints `[redacted]`.
const CLOUD_REPLACEMENTS: &[(&str, &str)] = &[
    ("Metadata", "crate::Metadata"),
    ("UploadFields", "crate::UploadFields"),
    ("ContainerPath", "crate::ContainerPath"),
    ("WebhookSecret", "crate::WebhookSecret"),
];
const DEVICE_REPLACEMENTS: &[(&str, &str)] = &[
    ("Password", "crate::Password"),
    ("AuthToken", "crate::AuthToken"),
];

const TARGETS: &[Target] = &[
    Target {
        doc: "openapi/cloud.yaml",
        out: "crates/svc-cloud-api/src/generated/cloud.rs",
        inner_type: "crate::hooks::CloudState",
        enums_path: "crate::enums",
        shares_with: None,
        replacements: CLOUD_REPLACEMENTS,
        timestamp: Some("crate::Timestamp"),
    },
    Target {
        doc: "openapi/notification.yaml",
        out: "crates/svc-cloud-api/src/generated/notification.rs",
        inner_type: "crate::hooks::CloudState",
        enums_path: "crate::enums",
        shares_with: Some(("openapi/cloud.yaml", "crate::cloud::types")),
        replacements: CLOUD_REPLACEMENTS,
        timestamp: Some("crate::Timestamp"),
    },
    Target {
        doc: "openapi/ins-device.yaml",
        out: "crates/ins-device-api/src/generated/device.rs",
        inner_type: "crate::hooks::DeviceState",
        enums_path: "crate::enums",
        shares_with: None,
        replacements: DEVICE_REPLACEMENTS,
        timestamp: None,
    },
];

/// The open-enum files: each gathers the named enums of its documents.
const ENUM_OUTPUTS: &[(&str, &[&str])] = &[
    (
        "crates/svc-cloud-api/src/generated/enums.rs",
        &["openapi/cloud.yaml", "openapi/notification.yaml"],
    ),
    (
        "crates/ins-device-api/src/generated/enums.rs",
        &["openapi/ins-device.yaml"],
    ),
];

/// The unit's rights matrix and each operation's required right, as data.
const RIGHTS_OUTPUT: &str = "crates/ins-device-api/src/generated/rights.rs";

/// Documents embedded by a crate (`include_str!`), copied into that crate: `cargo
/// package` and a wheel's sdist (maturin) take only the crate's own folder, so a path
/// reaching `openapi/` from there would not build. The copy is the document's exact
/// bytes (no header), so `--check` is a plain comparison.
const DOCUMENT_COPIES: &[(&str, &str)] = &[(
    "openapi/ins-device.yaml",
    "crates/svc-emulator/src/device/ins-device.yaml",
)];

/// A parsed document with the raw text it came from.
pub struct Document {
    pub path: String,
    pub text: String,
    pub yaml: serde_json::Value,
    pub spec: OpenAPI,
}

pub fn load(root: &Path, rel: &str) -> Result<Document> {
    let path = root.join(rel);
    let text = std::fs::read_to_string(&path).with_context(|| format!("reading {rel}"))?;
    let yaml: serde_json::Value =
        serde_yaml::from_str(&text).with_context(|| format!("{rel} is not valid YAML"))?;
    let spec: OpenAPI = serde_json::from_value(yaml.clone())
        .with_context(|| format!("{rel} is not an OpenAPI 3.0 document"))?;
    Ok(Document {
        path: rel.to_owned(),
        text,
        yaml,
        spec,
    })
}

fn sha256_hex(bytes: &[u8]) -> String {
    Sha256::digest(bytes)
        .iter()
        .fold(String::new(), |mut s, b| {
            let _ = write!(s, "{b:02x}");
            s
        })
}

/// Generates every output file in memory.
pub fn generate_all(root: &Path) -> Result<Vec<Output>> {
    let mut docs: BTreeMap<&str, Document> = BTreeMap::new();
    for t in TARGETS {
        docs.insert(t.doc, load(root, t.doc)?);
    }
    for d in docs.values() {
        check_conventions(d)?;
    }

    let mut outputs = Vec::new();
    for (src, copy) in DOCUMENT_COPIES {
        let text = match docs.get(src) {
            Some(doc) => doc.text.clone(),
            None => {
                std::fs::read_to_string(root.join(src)).with_context(|| format!("reading {src}"))?
            }
        };
        outputs.push(Output {
            path: (*copy).to_owned(),
            contents: text,
        });
    }
    for (out, sources) in ENUM_OUTPUTS {
        let mut enums: BTreeMap<String, (OpenEnum, &str)> = BTreeMap::new();
        for src in *sources {
            let doc = &docs[src];
            for e in named_enums(doc)? {
                if let Some((prev, prev_doc)) = enums.get(&e.name) {
                    if prev.values != e.values {
                        bail!(
                            "enum schema `{}` differs between {prev_doc} and {src}: {:?} vs {:?}",
                            e.name,
                            prev.values,
                            e.values
                        );
                    }
                    continue;
                }
                enums.insert(e.name.clone(), (e, src));
            }
        }
        let header = header_for(sources.iter().map(|s| &docs[s]));
        let tokens = enums.values().map(|(e, _)| e.tokens()).collect::<Vec<_>>();
        outputs.push(Output {
            path: (*out).to_owned(),
            contents: format!("{header}{}", pretty(quote! { #(#tokens)* })?),
        });
    }

    let device = &docs["openapi/ins-device.yaml"];
    outputs.push(Output {
        path: RIGHTS_OUTPUT.to_owned(),
        contents: format!(
            "{}{}",
            header_for(std::iter::once(device)),
            pretty(rights_tokens(device)?)?
        ),
    });

    for t in TARGETS {
        let doc = &docs[t.doc];
        let mut settings = GenerationSettings::default();
        settings
            .with_interface(InterfaceStyle::Builder)
            .with_tag(TagStyle::Merged)
            .with_hooks(HooksMode::Expected)
            .with_inner_type(
                t.inner_type
                    .parse::<TokenStream>()
                    .map_err(|e| anyhow!("{e}"))?,
            )
            .with_map_type("::indexmap::IndexMap")
            .with_derive("PartialEq");
        for e in named_enums(doc)? {
            settings.with_replacement(
                &e.name,
                format!("{}::{}", t.enums_path, e.name),
                [TypeImpl::FromStr, TypeImpl::Display].into_iter(),
            );
        }
        for (name, path) in t.replacements {
            settings.with_replacement(name, path, std::iter::empty());
        }
        if let Some(timestamp) = t.timestamp {
            // Every `format: date-time` (descriptions aside): the service writes UTC with
            // millisecond precision, always with three digits; chrono's own serializer
            // leaves them out at whole seconds.
            let schema = schemars::schema::SchemaObject {
                instance_type: Some(schemars::schema::InstanceType::String.into()),
                format: Some("date-time".to_owned()),
                ..Default::default()
            };
            settings.with_conversion(
                schema,
                timestamp,
                [TypeImpl::Display, TypeImpl::FromStr].into_iter(),
            );
        }
        if let Some((other, other_types)) = t.shares_with {
            for name in shared_schemas(&docs[other], doc)? {
                if !is_named_enum(&doc.spec, &name)
                    && !t.replacements.iter().any(|(r, _)| *r == name)
                {
                    settings.with_replacement(
                        &name,
                        format!("{other_types}::{name}"),
                        std::iter::empty(),
                    );
                }
            }
        }
        let mut spec = doc.spec.clone();
        widen_success(&mut spec);
        let tokens = run_progenitor(&settings, &spec, &doc.path)?;
        let mut file: syn::File = syn::parse2(tokens).context("generated code does not parse")?;
        keep_written(&mut file, &always_written(&spec));
        let header = header_for(std::iter::once(doc));
        outputs.push(Output {
            path: t.out.to_owned(),
            contents: format!("{header}{}", prettyplease::unparse(&file)),
        });
    }
    Ok(outputs)
}

fn header_for<'a>(docs: impl Iterator<Item = &'a Document>) -> String {
    let mut h = String::from("// @generated by `cargo xtask generate`. Do not edit by hand.\n");
    for d in docs {
        let _ = writeln!(
            h,
            "// Source: {} (sha256 {})",
            d.path,
            sha256_hex(d.text.as_bytes())
        );
    }
    h.push('\n');
    h
}

fn pretty(tokens: TokenStream) -> Result<String> {
    let file: syn::File = syn::parse2(tokens).context("generated code does not parse")?;
    Ok(prettyplease::unparse(&file))
}

/// Runs progenitor; an error or a panic is reported with the operation that causes it.
fn run_progenitor(settings: &GenerationSettings, spec: &OpenAPI, doc: &str) -> Result<TokenStream> {
    match attempt(settings, spec) {
        Ok(tokens) => Ok(tokens),
        Err(whole) => {
            let culprits = failing_operations(settings, spec);
            if culprits.is_empty() {
                bail!("{doc}: code generation failed: {whole}");
            }
            bail!("{doc}: code generation failed in {}", culprits.join("; "))
        }
    }
}

fn attempt(
    settings: &GenerationSettings,
    spec: &OpenAPI,
) -> std::result::Result<TokenStream, String> {
    let previous = std::panic::take_hook();
    std::panic::set_hook(Box::new(|_| {}));
    let result = catch_unwind(AssertUnwindSafe(|| {
        Generator::new(settings).generate_tokens(spec)
    }));
    std::panic::set_hook(previous);
    match result {
        Ok(Ok(tokens)) => Ok(tokens),
        Ok(Err(e)) => Err(e.to_string()),
        Err(panic) => Err(panic_text(&panic)),
    }
}

fn panic_text(panic: &Box<dyn std::any::Any + Send>) -> String {
    if let Some(s) = panic.downcast_ref::<&str>() {
        format!("generator panicked: {s}")
    } else if let Some(s) = panic.downcast_ref::<String>() {
        format!("generator panicked: {s}")
    } else {
        "generator panicked".to_owned()
    }
}

/// Generates each operation alone to find which ones the generator rejects.
fn failing_operations(settings: &GenerationSettings, spec: &OpenAPI) -> Vec<String> {
    let mut found = Vec::new();
    for (path, item) in spec.paths.iter() {
        let ReferenceOr::Item(item) = item else {
            continue;
        };
        for (method, op) in item.iter() {
            let mut alone = spec.clone();
            let mut only = item.clone();
            for (m, slot) in [
                ("get", &mut only.get),
                ("put", &mut only.put),
                ("post", &mut only.post),
                ("delete", &mut only.delete),
                ("options", &mut only.options),
                ("head", &mut only.head),
                ("patch", &mut only.patch),
                ("trace", &mut only.trace),
            ] {
                if m != method {
                    *slot = None;
                }
            }
            alone.paths.paths = [(path.clone(), ReferenceOr::Item(only))]
                .into_iter()
                .collect();
            if let Err(e) = attempt(settings, &alone) {
                let id = op.operation_id.as_deref().unwrap_or("(no operationId)");
                found.push(format!(
                    "operation `{id}` ({} {path}): {e}",
                    method.to_uppercase()
                ));
            }
        }
    }
    found
}

/// Object properties that are optional for a reader yet always written: those declared
/// `nullable` (absent and `null` read alike, as `None`, and `None` is written as `null`)
/// or with a `default` (absent reads as the default, which is written). The documents
/// require only the fields a client may rely on (ids, `status`, `eventType`); the service
/// sends the others too, and so does the emulator, which serializes the same types. By
/// schema name, each with the properties' wire names.
fn always_written(spec: &OpenAPI) -> BTreeMap<String, BTreeSet<String>> {
    let mut found = BTreeMap::new();
    let Some(components) = &spec.components else {
        return found;
    };
    for (name, schema) in &components.schemas {
        let ReferenceOr::Item(schema) = schema else {
            continue;
        };
        let SchemaKind::Type(Type::Object(object)) = &schema.schema_kind else {
            continue;
        };
        let props: BTreeSet<String> = object
            .properties
            .iter()
            .filter(|(prop, _)| !object.required.contains(prop))
            .filter(|(_, p)| match p {
                ReferenceOr::Item(p) => p.schema_data.nullable || p.schema_data.default.is_some(),
                ReferenceOr::Reference { .. } => false,
            })
            .map(|(prop, _)| prop.clone())
            .collect();
        if !props.is_empty() {
            found.insert(name.clone(), props);
        }
    }
    found
}

/// Removes typify's `skip_serializing_if` from the fields [`always_written`] names.
fn keep_written(file: &mut syn::File, fields: &BTreeMap<String, BTreeSet<String>>) {
    fn visit(items: &mut [syn::Item], fields: &BTreeMap<String, BTreeSet<String>>) {
        for item in items {
            match item {
                syn::Item::Mod(m) => {
                    if let Some((_, inner)) = &mut m.content {
                        visit(inner, fields);
                    }
                }
                syn::Item::Struct(st) => {
                    if let Some(props) = fields.get(&st.ident.to_string()) {
                        for field in st.fields.iter_mut() {
                            unskip(field, props);
                        }
                    }
                }
                _ => {}
            }
        }
    }
    visit(&mut file.items, fields);
}

fn unskip(field: &mut syn::Field, props: &BTreeSet<String>) {
    use syn::punctuated::Punctuated;
    let Some(ident) = &field.ident else {
        return;
    };
    for attr in &mut field.attrs {
        if !attr.path().is_ident("serde") {
            continue;
        }
        let Ok(list) =
            attr.parse_args_with(Punctuated::<syn::Meta, syn::Token![,]>::parse_terminated)
        else {
            continue;
        };
        let wire = list
            .iter()
            .find_map(|m| match m {
                syn::Meta::NameValue(nv) if nv.path.is_ident("rename") => match &nv.value {
                    syn::Expr::Lit(syn::ExprLit {
                        lit: syn::Lit::Str(s),
                        ..
                    }) => Some(s.value()),
                    _ => None,
                },
                _ => None,
            })
            .unwrap_or_else(|| ident.to_string().trim_start_matches("r#").to_owned());
        if !props.contains(&wire) {
            continue;
        }
        let kept: Punctuated<syn::Meta, syn::Token![,]> = list
            .into_iter()
            .filter(|m| !m.path().is_ident("skip_serializing_if"))
            .collect();
        *attr = if kept.is_empty() {
            syn::parse_quote!(#[serde()])
        } else {
            syn::parse_quote!(#[serde(#kept)])
        };
    }
    field
        .attrs
        .retain(|a| !matches!(&a.meta, syn::Meta::List(l) if l.path.is_ident("serde") && l.tokens.is_empty()));
}

/// "A client treats every 2xx as success" (`openapi/cloud.yaml` and
/// `openapi/notification.yaml`, "Success answers"). Each documented `200` becomes `2XX`.
fn widen_success(spec: &mut OpenAPI) {
    for (_, item) in spec.paths.paths.iter_mut() {
        let ReferenceOr::Item(item) = item else {
            continue;
        };
        for op in [
            &mut item.get,
            &mut item.put,
            &mut item.post,
            &mut item.delete,
            &mut item.patch,
        ]
        .into_iter()
        .flatten()
        {
            if let Some(ok) = op.responses.responses.shift_remove(&StatusCode::Code(200)) {
                op.responses.responses.insert(StatusCode::Range(2), ok);
            }
        }
    }
}

/// Conventions the generator and the SDK rely on; each violation is named.
pub fn check_conventions(doc: &Document) -> Result<()> {
    let mut problems = Vec::new();
    let mut ids = BTreeSet::new();
    for (path, item) in doc.spec.paths.iter() {
        let ReferenceOr::Item(item) = item else {
            problems.push(format!("{path}: external path items are not supported"));
            continue;
        };
        for (method, op) in item.iter() {
            let here = format!("{} {path}", method.to_uppercase());
            match &op.operation_id {
                None => problems.push(format!("{here}: no operationId")),
                Some(id) if !ids.insert(id.clone()) => {
                    problems.push(format!("{here}: operationId `{id}` is used twice"))
                }
                Some(_) => {}
            }
            if op.responses.default.is_some() {
                problems.push(format!("{here}: `default` response (use explicit codes)"));
            }
        }
    }
    // Every value set must be a named schema so that it becomes an open enum.
    find_inline_enums(&doc.yaml, "", true, &mut problems);
    if problems.is_empty() {
        Ok(())
    } else {
        bail!(
            "{} breaks the generator conventions:\n  {}",
            doc.path,
            problems.join("\n  ")
        )
    }
}

fn find_inline_enums(v: &serde_json::Value, at: &str, top: bool, problems: &mut Vec<String>) {
    match v {
        serde_json::Value::Object(map) => {
            let is_named = at.starts_with("/components/schemas/") && at.matches('/').count() == 3;
            if map.contains_key("enum") && !is_named && !top {
                problems.push(format!(
                    "{at}: inline `enum` (make it a named schema under components/schemas)"
                ));
            }
            for (k, child) in map {
                // Extensions (x-...) and examples hold data, not schemas.
                if k.starts_with("x-") || k == "example" || k == "examples" {
                    continue;
                }
                let key = k.replace('~', "~0").replace('/', "~1");
                find_inline_enums(child, &format!("{at}/{key}"), false, problems);
            }
        }
        serde_json::Value::Array(items) => {
            for (i, child) in items.iter().enumerate() {
                find_inline_enums(child, &format!("{at}/{i}"), false, problems);
            }
        }
        _ => {}
    }
}

/// Names of component schemas present in both documents; they must be identical.
fn shared_schemas(base: &Document, doc: &Document) -> Result<Vec<String>> {
    let schemas = |d: &Document| {
        d.yaml
            .pointer("/components/schemas")
            .cloned()
            .unwrap_or_default()
    };
    let (a, b) = (schemas(base), schemas(doc));
    let (Some(a), Some(b)) = (a.as_object(), b.as_object()) else {
        return Ok(Vec::new());
    };
    let mut shared = Vec::new();
    for (name, schema) in b {
        if let Some(other) = a.get(name) {
            if other != schema {
                bail!(
                    "schema `{name}` is in both {} and {} but differs; shared schemas must be identical",
                    base.path,
                    doc.path
                );
            }
            shared.push(name.clone());
        }
    }
    Ok(shared)
}

fn is_named_enum(spec: &OpenAPI, name: &str) -> bool {
    spec.components
        .as_ref()
        .and_then(|c| c.schemas.get(name))
        .and_then(|s| s.as_item())
        .is_some_and(|s| string_enum_values(s).is_some())
}

fn string_enum_values(schema: &Schema) -> Option<Vec<String>> {
    match &schema.schema_kind {
        SchemaKind::Type(Type::String(s)) if !s.enumeration.is_empty() => {
            Some(s.enumeration.iter().flatten().cloned().collect())
        }
        _ => None,
    }
}

/// `x-role-order`, `x-access-rights` and each operation's `x-required-right` /
/// `x-requires-login` of the unit document, as constant tables, so that a caller can ask
/// "may this user do that?" before trying, from the same source the emulator enforces.
fn rights_tokens(doc: &Document) -> Result<TokenStream> {
    let y = &doc.yaml;
    let strings = |v: &serde_json::Value, what: &str| -> Result<Vec<String>> {
        v.as_array()
            .ok_or_else(|| anyhow!("{}: `{what}` must be a list", doc.path))?
            .iter()
            .map(|s| {
                s.as_str()
                    .map(str::to_owned)
                    .ok_or_else(|| anyhow!("{}: `{what}` holds a non-string", doc.path))
            })
            .collect()
    };
    let roles = strings(&y["x-role-order"], "x-role-order")?;
    let matrix = y["x-access-rights"]
        .as_object()
        .ok_or_else(|| anyhow!("{}: `x-access-rights` must be a map", doc.path))?;
    let mut rows = Vec::new();
    for role in &roles {
        let cells = matrix
            .get(role)
            .and_then(|r| r.as_object())
            .ok_or_else(|| anyhow!("{}: `x-access-rights` has no row for `{role}`", doc.path))?;
        let cells = cells
            .iter()
            .map(|(category, level)| {
                let level = level
                    .as_str()
                    .ok_or_else(|| anyhow!("{}: right {role}/{category}", doc.path))?;
                Ok(quote! { (#category, #level) })
            })
            .collect::<Result<Vec<_>>>()?;
        rows.push(quote! { (#role, &[#(#cells),*]) });
    }
    let mut operations = Vec::new();
    for (path, item) in doc.spec.paths.iter() {
        let ReferenceOr::Item(item) = item else {
            continue;
        };
        for (method, op) in item.iter() {
            let id = op.operation_id.clone().unwrap_or_default();
            let required = op
                .extensions
                .get("x-required-right")
                .filter(|v| !v.is_null());
            let right = match required {
                Some(r) => {
                    let category = r["category"]
                        .as_str()
                        .ok_or_else(|| anyhow!("{id}: x-required-right.category"))?;
                    let level = r["level"]
                        .as_str()
                        .ok_or_else(|| anyhow!("{id}: x-required-right.level"))?;
                    quote! { Some((#category, #level)) }
                }
                None => quote! { None },
            };
            let login = op
                .extensions
                .get("x-requires-login")
                .and_then(|v| v.as_bool())
                .unwrap_or(false);
            let method = method.to_uppercase();
            operations.push(quote! {
                OperationRight { operation_id: #id, method: #method, path: #path, right: #right, requires_login: #login }
            });
        }
    }
    Ok(quote! {
        /// What one operation of the unit needs (`x-required-right`, `x-requires-login`).
        #[derive(Clone, Copy, Debug, PartialEq, Eq)]
        pub struct OperationRight {
            pub operation_id: &'static str,
            pub method: &'static str,
            pub path: &'static str,
            /// The category of the rights matrix and the least level it needs; `None`: no right (login).
            pub right: Option<(&'static str, &'static str)>,
            /// Whether the operation needs a session token (the default user cannot do it).
            pub requires_login: bool,
        }

        /// Users from the lowest role to the highest (`x-role-order`).
        pub const ROLE_ORDER: &[&str] = &[#(#roles),*];

        /// The rights matrix (`x-access-rights`): for each user, each category's level.
        pub const ACCESS_RIGHTS: &[(&str, &[(&str, &str)])] = &[#(#rows),*];

        /// Every operation with the right it needs.
        pub const OPERATION_RIGHTS: &[OperationRight] = &[#(#operations),*];
    })
}

/// A named string enum of a document, generated as an open enum.
struct OpenEnum {
    name: String,
    description: Option<String>,
    values: Vec<String>,
    variants: Vec<String>,
}

fn named_enums(doc: &Document) -> Result<Vec<OpenEnum>> {
    let mut out = Vec::new();
    let Some(components) = &doc.spec.components else {
        return Ok(out);
    };
    for (name, schema) in &components.schemas {
        let ReferenceOr::Item(schema) = schema else {
            continue;
        };
        let Some(values) = string_enum_values(schema) else {
            continue;
        };
        // `x-enum-varnames` (the openapi-generator convention) names variants explicitly.
        let explicit = doc
            .yaml
            .pointer(&format!("/components/schemas/{name}/x-enum-varnames"))
            .and_then(|v| v.as_array())
            .map(|a| {
                a.iter()
                    .filter_map(|v| v.as_str().map(str::to_owned))
                    .collect::<Vec<_>>()
            });
        let variants = match explicit {
            Some(v) if v.len() == values.len() => v,
            Some(_) => bail!(
                "{}: `{name}` has x-enum-varnames of the wrong length",
                doc.path
            ),
            None => values.iter().map(|v| variant_name(v)).collect(),
        };
        let unique: BTreeSet<_> = variants.iter().collect();
        if unique.len() != variants.len() || unique.contains(&"Unknown".to_owned()) {
            bail!(
                "{}: `{name}` values map to clashing variant names {variants:?}",
                doc.path
            );
        }
        out.push(OpenEnum {
            name: name.clone(),
            description: schema.schema_data.description.clone(),
            values,
            variants,
        });
    }
    Ok(out)
}

/// `cloud:processing-ended` → `CloudProcessingEnded`, `eu-west-3` → `EuWest3`, `1ms` → `Ms1`.
fn variant_name(value: &str) -> String {
    let mut name = String::new();
    for part in value
        .split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|p| !p.is_empty())
    {
        let mut chars = part.chars();
        if let Some(first) = chars.next() {
            name.push(first.to_ascii_uppercase());
            name.push_str(chars.as_str());
        }
    }
    // A leading number (`1ms`) moves behind its unit: `Ms1`.
    if name.starts_with(|c: char| c.is_ascii_digit()) {
        let digits: String = name.chars().take_while(|c| c.is_ascii_digit()).collect();
        let rest = &name[digits.len()..];
        let mut rest = rest.to_owned();
        if let Some(first) = rest.get(..1).map(str::to_ascii_uppercase) {
            rest.replace_range(..1, &first);
        }
        name = format!("{rest}{digits}");
        if name.starts_with(|c: char| c.is_ascii_digit()) {
            name = format!("V{name}");
        }
    }
    if name.is_empty() {
        "Empty".to_owned()
    } else {
        name
    }
}

impl OpenEnum {
    fn tokens(&self) -> TokenStream {
        let name = format_ident!("{}", self.name);
        let idents: Vec<_> = self.variants.iter().map(|v| format_ident!("{v}")).collect();
        let values = &self.values;
        let doc = self
            .description
            .clone()
            .unwrap_or_else(|| format!("Values of `{}`.", self.name));
        let doc = format!(
            "{doc}\n\nAn open enumeration: a value this version does not know is kept as \
             [`{}::Unknown`] instead of failing to decode.",
            self.name
        );
        let value_docs = values.iter().map(|v| format!("`{v}`"));
        quote! {
            #[doc = #doc]
            #[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
            pub enum #name {
                #( #[doc = #value_docs] #idents, )*
                /// A value not known to this version of the SDK, kept as sent.
                Unknown(::std::string::String),
            }

            impl #name {
                /// Every value this version knows, in the document's order.
                pub const KNOWN: &'static [&'static str] = &[#(#values),*];

                /// The value as written on the wire.
                pub fn as_str(&self) -> &str {
                    match self {
                        #( Self::#idents => #values, )*
                        Self::Unknown(other) => other.as_str(),
                    }
                }

                /// Whether this version of the SDK knows the value.
                pub fn is_known(&self) -> bool {
                    !matches!(self, Self::Unknown(_))
                }
            }

            impl ::std::convert::From<&str> for #name {
                fn from(value: &str) -> Self {
                    match value {
                        #( #values => Self::#idents, )*
                        other => Self::Unknown(other.to_owned()),
                    }
                }
            }

            impl ::std::convert::From<::std::string::String> for #name {
                fn from(value: ::std::string::String) -> Self {
                    match value.as_str() {
                        #( #values => Self::#idents, )*
                        _ => Self::Unknown(value),
                    }
                }
            }

            impl ::std::str::FromStr for #name {
                type Err = ::std::convert::Infallible;
                fn from_str(value: &str) -> ::std::result::Result<Self, Self::Err> {
                    Ok(Self::from(value))
                }
            }

            impl ::std::fmt::Display for #name {
                fn fmt(&self, f: &mut ::std::fmt::Formatter<'_>) -> ::std::fmt::Result {
                    f.write_str(self.as_str())
                }
            }

            impl ::serde::Serialize for #name {
                fn serialize<S: ::serde::Serializer>(&self, serializer: S) -> ::std::result::Result<S::Ok, S::Error> {
                    serializer.serialize_str(self.as_str())
                }
            }

            impl<'de> ::serde::Deserialize<'de> for #name {
                fn deserialize<D: ::serde::Deserializer<'de>>(deserializer: D) -> ::std::result::Result<Self, D::Error> {
                    ::std::string::String::deserialize(deserializer).map(Self::from)
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::variant_name;

    #[test]
    fn variant_names_follow_rust_conventions() {
        assert_eq!(
            variant_name("cloud:processing-ended"),
            "CloudProcessingEnded"
        );
        assert_eq!(variant_name("eu-west-3"), "EuWest3");
        assert_eq!(variant_name("base_station"), "BaseStation");
        assert_eq!(variant_name("onChange"), "OnChange");
        assert_eq!(variant_name("1000ms"), "Ms1000");
        assert_eq!(variant_name("powerUser"), "PowerUser");
    }
}

#[cfg(test)]
mod generator_errors {
    use super::*;

    fn spec(yaml: &str) -> OpenAPI {
        serde_yaml::from_str(yaml).unwrap()
    }

    #[test]
    fn a_generator_panic_names_the_operation() {
        // Two distinct success body types in one operation make progenitor panic.
        let spec = spec(
            r#"
openapi: 3.0.3
info: {title: t, version: '1'}
paths:
  /fine:
    get:
      operationId: fineOperation
      responses:
        '200': {description: ok, content: {application/json: {schema: {type: string}}}}
  /broken:
    get:
      operationId: brokenOperation
      responses:
        '200': {description: ok, content: {application/json: {schema: {type: string}}}}
        '201': {description: ok, content: {application/json: {schema: {type: integer}}}}
"#,
        );
        let err = run_progenitor(&GenerationSettings::default(), &spec, "test.yaml").unwrap_err();
        let text = err.to_string();
        assert!(
            text.contains("operation `brokenOperation` (GET /broken)"),
            "{text}"
        );
        assert!(!text.contains("fineOperation"), "{text}");
    }

    #[test]
    fn conventions_are_checked_with_locations() {
        let yaml = r#"
openapi: 3.0.3
info: {title: t, version: '1'}
paths:
  /a:
    get:
      responses:
        default: {description: any}
  /b:
    get:
      operationId: same
      parameters:
        - {name: mode, in: query, schema: {type: string, enum: [x, y]}}
      responses:
        '200': {description: ok}
  /c:
    get:
      operationId: same
      responses:
        '200': {description: ok}
"#;
        let doc = Document {
            path: "test.yaml".into(),
            text: yaml.into(),
            yaml: serde_yaml::from_str(yaml).unwrap(),
            spec: spec(yaml),
        };
        let text = check_conventions(&doc).unwrap_err().to_string();
        for expected in [
            "GET /a: no operationId",
            "GET /a: `default` response",
            "GET /c: operationId `same` is used twice",
            "/paths/~1b/get/parameters/0/schema: inline `enum`",
        ] {
            assert!(text.contains(expected), "missing {expected:?} in:\n{text}");
        }
    }
}

#[cfg(test)]
mod tolerant_records {
    use super::*;

    /// A reader relies on the required fields only; the nullable ones and those with a
    /// default are still written (as `null`, or their value), the others left out when
    /// absent.
    #[test]
    fn nullable_and_defaulted_fields_are_always_written() {
        let spec: OpenAPI = serde_yaml::from_str(
            r#"
openapi: 3.0.3
info: { title: t, version: "1" }
paths: {}
components:
  schemas:
    Thing:
      type: object
      required: [id]
      properties:
        id: { type: string }
        note: { type: string, nullable: true }
        tags: { type: array, items: { type: string }, default: [] }
        when: { type: string }
"#,
        )
        .unwrap();
        let written = always_written(&spec);
        assert_eq!(
            written["Thing"]
                .iter()
                .map(String::as_str)
                .collect::<Vec<_>>(),
            ["note", "tags"]
        );
        let mut file: syn::File = syn::parse_quote! {
            pub struct Thing {
                pub id: String,
                #[serde(skip_serializing_if = "::std::option::Option::is_none")]
                pub note: Option<String>,
                #[serde(default, skip_serializing_if = "::std::vec::Vec::is_empty")]
                pub tags: Vec<String>,
                #[serde(skip_serializing_if = "::std::option::Option::is_none")]
                pub when: Option<String>,
            }
        };
        keep_written(&mut file, &written);
        let text = prettyplease::unparse(&file);
        let fields: Vec<&str> = text.lines().map(str::trim).collect();
        let attrs_of = |field: &str| {
            let at = fields
                .iter()
                .position(|l| l.starts_with(&format!("pub {field}:")))
                .unwrap();
            fields[..at]
                .iter()
                .rev()
                .take_while(|l| l.starts_with("#["))
                .copied()
                .collect::<Vec<_>>()
        };
        assert!(attrs_of("note").is_empty(), "{text}");
        assert_eq!(attrs_of("tags"), ["#[serde(default)]"], "{text}");
        assert_eq!(
            attrs_of("when"),
            ["#[serde(skip_serializing_if = \"::std::option::Option::is_none\")]"],
            "{text}"
        );
    }
}
