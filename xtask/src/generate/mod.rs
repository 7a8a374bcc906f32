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
//!
//! One file per step: this one runs the pipeline (the targets, `generate_all`);
//! `conventions` checks the documents, `enums` makes the open enums, `rights` the
//! unit's rights tables, `records` keeps typify from skipping fields a reader may rely
//! on being written, `generator` runs progenitor and names the operation it fails on.

mod conventions;
mod enums;
mod generator;
mod records;
mod rights;

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::Path;

use anyhow::{Context, Result, anyhow, bail};
use openapiv3::{OpenAPI, ReferenceOr, StatusCode};
use proc_macro2::TokenStream;
use progenitor::{GenerationSettings, HooksMode, InterfaceStyle, TagStyle, TypeImpl};
use quote::quote;
use sha2::{Digest, Sha256};

pub use conventions::check_conventions;
use conventions::shared_schemas;
use enums::{OpenEnum, is_named_enum, named_enums};
use generator::run_progenitor;
use records::{always_written, keep_written};
use rights::rights_tokens;

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
/// The unit's secrets (above) and:
/// - `SettingsFile` and `SettingsNode` (free-form settings JSON, which may hold the NTRIP
///   caster's password) are newtypes over the JSON whose `Debug` redacts every value
///   under a key naming a password.
const DEVICE_REPLACEMENTS: &[(&str, &str)] = &[
    ("Password", "crate::Password"),
    ("AuthToken", "crate::AuthToken"),
    ("SettingsFile", "crate::SettingsFile"),
    ("SettingsNode", "crate::SettingsNode"),
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

/// "A client treats every 2xx as success" (`openapi/cloud.yaml` and
/// `openapi/notification.yaml`, "Success answers"). Each documented `200` becomes `2XX`,
/// which also stands for another documented 2xx with the same body (`201`).
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
                // Another 2xx with the same body (201 on a creation) is that success.
                let body = |answer: &ReferenceOr<openapiv3::Response>| {
                    answer.as_item().map(|r| r.content.clone())
                };
                let same = body(&ok);
                op.responses.responses.retain(|code, answer| {
                    !(matches!(code, StatusCode::Code(c) if (200..300).contains(c))
                        && body(answer) == same)
                });
                op.responses.responses.insert(StatusCode::Range(2), ok);
            }
        }
    }
}

/// A document parsed from YAML, for the tests of the steps.
#[cfg(test)]
fn spec(yaml: &str) -> OpenAPI {
    serde_yaml::from_str(yaml).unwrap()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_201_with_the_200s_body_is_the_same_2xx_success() {
        let body = "content: {application/json: {schema: {type: string}}}";
        let mut document = spec(&format!(
            "openapi: 3.0.3\ninfo: {{title: t, version: '1'}}\npaths:\n  /a:\n    post:\n      \
             responses:\n        '200': {{description: ok, {body}}}\n        \
             '201': {{description: created, {body}}}\n        '202': {{description: other}}\n        \
             '404': {{description: missing}}\n"
        ));
        widen_success(&mut document);
        let ReferenceOr::Item(item) = &document.paths.paths["/a"] else {
            panic!("an item")
        };
        let codes: Vec<String> = item
            .post
            .as_ref()
            .unwrap()
            .responses
            .responses
            .keys()
            .map(ToString::to_string)
            .collect();
        assert_eq!(codes, ["202", "404", "2XX"]);
    }
}
