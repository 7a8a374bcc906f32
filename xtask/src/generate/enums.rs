//! Named string enums, generated as open enums (an `Unknown(String)` variant keeps a
//! value this version does not know).

use std::collections::BTreeSet;

use super::Document;
use anyhow::{Result, bail};
use openapiv3::{OpenAPI, ReferenceOr, Schema, SchemaKind, Type};
use proc_macro2::TokenStream;
use quote::{format_ident, quote};

pub(super) fn is_named_enum(spec: &OpenAPI, name: &str) -> bool {
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

/// A named string enum of a document, generated as an open enum.
pub(super) struct OpenEnum {
    pub(super) name: String,
    description: Option<String>,
    pub(super) values: Vec<String>,
    variants: Vec<String>,
}

pub(super) fn named_enums(doc: &Document) -> Result<Vec<OpenEnum>> {
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
    pub(super) fn tokens(&self) -> TokenStream {
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
