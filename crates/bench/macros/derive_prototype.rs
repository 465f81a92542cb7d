//! The derive `#[action]` was measured against: `#[derive(Action)]` on an action's input type,
//! whose doc comment becomes the description and whose `#[action(handler = .., state = ..)]`
//! names the handler, the state, and the builder calls. `measure.py` builds it into a scratch
//! proc-macro crate; it is not shipped.

use proc_macro::TokenStream;
use quote::quote;
use syn::punctuated::Punctuated;
use syn::{DeriveInput, Expr, Meta, Token, parse_macro_input};

#[proc_macro_derive(Action, attributes(action))]
pub fn derive_action(input: TokenStream) -> TokenStream {
    let input = parse_macro_input!(input as DeriveInput);
    let input_type = &input.ident;
    let mut handler = None;
    let mut state = quote!(());
    let mut calls = Vec::new();
    for attribute in input.attrs.iter().filter(|a| a.path().is_ident("action")) {
        let metas = match attribute.parse_args_with(Punctuated::<Meta, Token![,]>::parse_terminated) {
            Ok(metas) => metas,
            Err(error) => return error.into_compile_error().into(),
        };
        for meta in metas {
            match meta {
                Meta::NameValue(pair) if pair.path.is_ident("handler") => handler = Some(pair.value),
                Meta::NameValue(pair) if pair.path.is_ident("state") => {
                    let value = pair.value;
                    state = quote!(#value);
                }
                Meta::NameValue(pair) => {
                    let (key, value) = (pair.path, pair.value);
                    calls.push(quote!(.#key(#value)));
                }
                Meta::Path(key) => calls.push(quote!(.#key())),
                Meta::List(list) => {
                    let (key, arguments) = (list.path, list.tokens);
                    calls.push(quote!(.#key(#arguments)));
                }
            }
        }
    }
    let Some(handler) = handler else {
        return syn::Error::new_spanned(input_type, "#[action(handler = ..)] is missing").into_compile_error().into();
    };
    let name = match &handler {
        Expr::Path(path) => path.path.segments.last().map(|s| s.ident.to_string()).unwrap_or_default(),
        _ => String::new(),
    };
    let description = input
        .attrs
        .iter()
        .filter_map(|a| match &a.meta {
            Meta::NameValue(pair) if pair.path.is_ident("doc") => match &pair.value {
                Expr::Lit(syn::ExprLit { lit: syn::Lit::Str(text), .. }) => Some(text.value().trim().to_owned()),
                _ => None,
            },
            _ => None,
        })
        .collect::<Vec<_>>()
        .join(" ");
    quote! {
        impl #input_type {
            /// The action this type is the input of.
            pub fn action() -> ::mcp_fusion::Action<#state> {
                ::mcp_fusion::Action::new(#name, #description).handler(#handler) #(#calls)*
            }
        }
    }
    .into()
}
