//! The `#[action]` attribute of [MCP Fusion](https://docs.rs/mcp-fusion): an async fn becomes
//! an action, its doc comment the description the model reads.
//!
//! Use it as `mcp_fusion::action`; its documentation, with examples, is there. The attribute is
//! sugar over the builder: `#[action(read_only)] async fn get_invoice(..)` becomes a
//! `fn get_invoice() -> Action<S>` that returns
//! `Action::new("get_invoice", "<the doc comment>").handler(..).read_only()`.

mod description;
mod expand;
mod options;

use proc_macro::TokenStream;

/// Turns an async fn into a function that returns its [`Action`]: the fn's name is the
/// action's, its doc comment the description, and each attribute argument a builder call.
///
/// Documented, with examples, as `mcp_fusion::action`.
///
/// [`Action`]: https://docs.rs/mcp-fusion/latest/mcp_fusion/struct.Action.html
#[proc_macro_attribute]
pub fn action(attribute: TokenStream, item: TokenStream) -> TokenStream {
    let item = proc_macro2::TokenStream::from(item);
    let expanded = syn::parse::Parser::parse(options::Options::parse, attribute)
        .and_then(|options| expand::action(options, syn::parse2(item.clone())?));
    match expanded {
        Ok(tokens) => tokens.into(),
        Err(error) => {
            let error = error.into_compile_error();
            let stub = syn::parse2::<syn::ItemFn>(item.clone()).map_or(item, |function| stub(&function));
            quote::quote!(#error #stub).into()
        }
    }
}

/// What stands for the fn when its attribute or signature is wrong: a `fn name() -> Action<S>`
/// for any state, as a correct expansion would be, so the attribute's own error is the only
/// one — `.action(name())` neither misses arguments nor finds a future where it wants an
/// action. It is never run: the crate does not compile.
fn stub(function: &syn::ItemFn) -> proc_macro2::TokenStream {
    let (attributes, visibility, ident) = (&function.attrs, &function.vis, &function.sig.ident);
    let attributes = attributes
        .iter()
        .filter(|attribute| ["doc", "cfg", "deprecated"].iter().any(|name| attribute.path().is_ident(name)));
    quote::quote! {
        #(#attributes)*
        #[allow(dead_code, unreachable_code)]
        #visibility fn #ident<__FusionState: ::core::marker::Send + ::core::marker::Sync + 'static>() -> ::mcp_fusion::Action<__FusionState> {
            ::core::unreachable!("`#[action]` reported an error for this fn; the crate does not build")
        }
    }
}
