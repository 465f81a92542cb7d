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
        // The fn as written stays, so one mistake in the attribute is one error, not one more
        // at every place that names the fn.
        Err(error) => {
            let error = error.into_compile_error();
            quote::quote!(#error #item).into()
        }
    }
}
