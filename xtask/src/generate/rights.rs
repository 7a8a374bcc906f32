//! The unit's rights matrix and each operation's required right, as constant tables.

use super::Document;
use anyhow::{Result, anyhow};
use openapiv3::ReferenceOr;
use proc_macro2::TokenStream;
use quote::quote;

/// `x-role-order`, `x-access-rights` and each operation's `x-required-right` /
/// `x-requires-login` of the unit document, as constant tables, so that a caller can ask
/// "may this user do that?" before trying, from the same source the emulator enforces.
pub(super) fn rights_tokens(doc: &Document) -> Result<TokenStream> {
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
