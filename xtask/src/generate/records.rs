//! Tolerant records: the fields a reader may do without but the service always writes
//! (nullable or defaulted) keep being written by the generated types.

use std::collections::{BTreeMap, BTreeSet};

use openapiv3::{OpenAPI, ReferenceOr, SchemaKind, Type};

/// Object properties that are optional for a reader yet always written: those declared
/// `nullable` (absent and `null` read alike, as `None`, and `None` is written as `null`)
/// or with a `default` (absent reads as the default, which is written). The documents
/// require only the fields a client may rely on (ids, `status`, `eventType`); the service
/// sends the others too, and so does the emulator, which serializes the same types. By
/// schema name, each with the properties' wire names.
pub(super) fn always_written(spec: &OpenAPI) -> BTreeMap<String, BTreeSet<String>> {
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
pub(super) fn keep_written(file: &mut syn::File, fields: &BTreeMap<String, BTreeSet<String>>) {
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
