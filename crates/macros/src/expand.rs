//! The expansion: the async fn moves inside a fn of the same name that builds its `Action`.

use proc_macro2::TokenStream;
use quote::{format_ident, quote, quote_spanned};
use syn::ext::IdentExt;
use syn::spanned::Spanned;
use syn::{FnArg, GenericArgument, ItemFn, PathArguments, ReturnType, Type};

use crate::description;
use crate::options::Options;

/// `#[action(..)] async fn name(ctx: Ctx<S>, input: I) -> R { .. }` becomes
///
/// ```text
/// fn name() -> Action<S> {
///     async fn name(ctx: Ctx<S>, input: I) -> R { .. }
///     Action::new("name", "<doc comment>").handler(name)<one call per argument>
/// }
/// ```
///
/// The context and the input may each be left out; the handler given to the builder then
/// takes them and drops them (the input as `NoInput`, an empty object).
pub fn action(options: Options, function: ItemFn) -> syn::Result<TokenStream> {
    check_signature(&function)?;
    let parameters = Parameters::of(&function)?;
    let signature = &function.sig;
    let name = match &options.name {
        Some(name) => name.value(),
        None => signature.ident.unraw().to_string(),
    };
    let description = describe(&options, &function, &name)?;

    let fusion = quote!(::mcp_fusion);
    let ident = &signature.ident;
    let (_, type_generics, where_clause) = signature.generics.split_for_impl();
    let state_parameter = format_ident!("__FusionState");
    let state = match &parameters.context {
        Some(context) => state_of(context),
        None => quote!(#state_parameter),
    };
    let handler = {
        let turbofish = type_generics.as_turbofish();
        parameters.handler(quote!(#ident #turbofish), &state)
    };

    // Without a context the action serves any state: its builder fn is generic over it.
    let mut outer_generics = signature.generics.clone();
    if parameters.context.is_none() {
        outer_generics
            .params
            .push(syn::parse_quote!(#state_parameter: ::core::marker::Send + ::core::marker::Sync + 'static));
    }
    let (outer_generics, ..) = outer_generics.split_for_impl();

    // The builder fn carries what describes or gates the item; the handler keeps the rest
    // (`#[allow]`, `#[tracing::instrument]`).
    let (outer_attributes, inner_attributes): (Vec<_>, Vec<_>) = function
        .attrs
        .iter()
        .partition(|attribute| ["doc", "cfg", "deprecated"].iter().any(|name| attribute.path().is_ident(name)));
    let visibility = &function.vis;
    let mut inner = function.clone();
    inner.attrs = inner_attributes.into_iter().cloned().collect();
    inner.vis = syn::Visibility::Inherited;
    let name_literal = syn::LitStr::new(&name, ident.span());
    let calls = &options.calls;

    Ok(quote! {
        #(#outer_attributes)*
        #visibility fn #ident #outer_generics() -> #fusion::Action<#state> #where_clause {
            #inner
            #fusion::Action::new(#name_literal, #description).handler(#handler) #(#calls)*
        }
    })
}

/// What a handler's signature cannot be: not async, generic over a lifetime, returning nothing.
fn check_signature(function: &ItemFn) -> syn::Result<()> {
    let signature = &function.sig;
    if signature.asyncness.is_none() {
        return Err(syn::Error::new_spanned(
            signature.fn_token,
            "#[action] goes on an async fn\n  = help: write `async fn`; a handler that does not wait still returns a future",
        ));
    }
    if let Some(lifetime) = signature.generics.lifetimes().next() {
        return Err(syn::Error::new_spanned(
            lifetime,
            "an action's handler outlives every borrow: it cannot take a lifetime parameter\n  = help: take owned values",
        ));
    }
    if let ReturnType::Default = signature.output {
        return Err(syn::Error::new(
            signature.paren_token.span.close(),
            "an action returns `Result<Output, Error>`, and this fn returns nothing\n  = help: write `-> Result<Json<T>, ToolError>` (or any `IntoOutput` and error)",
        ));
    }
    Ok(())
}

/// The description: `description = ..` if given, else the doc comment, which is required.
fn describe(options: &Options, function: &ItemFn, name: &str) -> syn::Result<TokenStream> {
    if let Some(description) = &options.description {
        return Ok(quote!(#description));
    }
    match description::from_doc(&function.attrs)? {
        Some(description) => Ok(quote!(#description)),
        None => Err(syn::Error::new_spanned(
            &function.sig.ident,
            format!(
                "the action `{name}` has no description\n  = help: write a doc comment (`/// What it does.`) on the fn: \
                 the model reads it to choose the action"
            ),
        )),
    }
}

/// The handler's context and input types, each of which may be left out.
struct Parameters {
    context: Option<Type>,
    input: Option<Type>,
}

impl Parameters {
    fn of(function: &ItemFn) -> syn::Result<Parameters> {
        let mut types = Vec::new();
        for argument in &function.sig.inputs {
            match argument {
                FnArg::Typed(typed) => types.push((*typed.ty).clone()),
                FnArg::Receiver(receiver) => {
                    return Err(syn::Error::new_spanned(
                        receiver,
                        "an action is a free fn, not a method\n  = help: keep what it needs in the server's state and take it as `Ctx<S>`",
                    ));
                }
            }
        }
        match types.as_slice() {
            [] => Ok(Parameters { context: None, input: None }),
            [only] if is_context(only) => Ok(Parameters { context: Some(only.clone()), input: None }),
            [only] => Ok(Parameters { context: None, input: Some(only.clone()) }),
            [_, input] if is_context(input) => {
                Err(syn::Error::new(input.span(), "the context comes first: `(ctx: Ctx<S>, input: Input)`"))
            }
            // Of two, the first is the context whatever its type is called (an alias); the
            // compiler says so if it is not one.
            [context, input] => Ok(Parameters { context: Some(context.clone()), input: Some(input.clone()) }),
            [_, _, extra, ..] => Err(syn::Error::new(
                extra.span(),
                "an action takes at most two arguments, its context `Ctx<S>` and then its input\n  = help: gather the input's fields in one struct",
            )),
        }
    }

    /// What the builder is given: the handler itself when it takes both, else a closure that
    /// takes both and passes on what it takes.
    fn handler(&self, handler: TokenStream, state: &TokenStream) -> TokenStream {
        let context_type = quote!(::mcp_fusion::Ctx<#state>);
        let no_input = quote!(::mcp_fusion::input::NoInput);
        match (&self.context, &self.input) {
            (Some(_), Some(_)) => handler,
            (Some(context), None) => quote!(|context: #context, _: #no_input| #handler(context)),
            (None, Some(input)) => quote!(|_: #context_type, input: #input| #handler(input)),
            (None, None) => quote!(|_: #context_type, _: #no_input| #handler()),
        }
    }
}

/// Whether a parameter's type is the context: a path whose last name ends in `Ctx` (`Ctx<S>`,
/// `mcp_fusion::Ctx<S>`, an alias like `AppCtx`).
fn is_context(ty: &Type) -> bool {
    matches!(ty, Type::Path(path) if path.qself.is_none()
        && path.path.segments.last().is_some_and(|s| s.ident.to_string().ends_with("Ctx")))
}

/// The state type of a context type: `S` of `Ctx<S>`, or, when the path does not show it (an
/// alias), what the framework's `ContextState` projection says.
fn state_of(context: &Type) -> TokenStream {
    if let Type::Path(path) = context
        && let Some(segment) = path.path.segments.last()
        && let PathArguments::AngleBracketed(arguments) = &segment.arguments
        && let [GenericArgument::Type(state)] = arguments.args.iter().collect::<Vec<_>>().as_slice()
    {
        return quote!(#state);
    }
    // Spanned at the type, so a first argument that is no context is reported there.
    quote_spanned!(context.span()=> <#context as ::mcp_fusion::__macro::ContextState>::State)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn expand(options: TokenStream, function: TokenStream) -> syn::Result<String> {
        let options = syn::parse::Parser::parse2(Options::parse, options)?;
        Ok(action(options, syn::parse2(function)?)?.to_string())
    }

    fn error(options: TokenStream, function: TokenStream) -> String {
        expand(options, function).expect_err("an error").to_string()
    }

    #[test]
    fn the_fn_becomes_the_builder_of_its_action() {
        let expanded = expand(
            quote!(read_only, timeout = Duration::from_secs(2)),
            quote! {
                /// Read one invoice by id.
                #[allow(unused)]
                pub async fn get_invoice(ctx: Ctx<Db>, input: GetInvoice) -> Result<Json<Invoice>, ToolError> { todo() }
            },
        )
        .unwrap();
        let expected = quote! {
            #[doc = r" Read one invoice by id."]
            pub fn get_invoice() -> ::mcp_fusion::Action<Db> {
                #[allow(unused)]
                async fn get_invoice(ctx: Ctx<Db>, input: GetInvoice) -> Result<Json<Invoice>, ToolError> { todo() }
                ::mcp_fusion::Action::new("get_invoice", "Read one invoice by id.").handler(get_invoice)
                    .read_only().timeout(Duration::from_secs(2))
            }
        };
        assert_eq!(expanded, expected.to_string());
    }

    #[test]
    fn what_is_left_out_is_taken_and_dropped() {
        let no_input = expand(
            quote!(),
            quote!(
                /** Ping. */
                async fn ping(ctx: Ctx<()>) -> Result<(), E> {
                    x
                }
            ),
        )
        .unwrap();
        assert!(
            no_input
                .contains("handler (| context : Ctx < () > , _ : :: mcp_fusion :: input :: NoInput | ping (context))"),
            "{no_input}"
        );
        let no_context = expand(
            quote!(),
            quote!(
                /** Echo. */
                async fn echo(input: Echo) -> Result<(), E> {
                    x
                }
            ),
        )
        .unwrap();
        assert!(no_context.contains("fn echo < __FusionState : :: core :: marker :: Send"), "{no_context}");
        assert!(no_context.contains("-> :: mcp_fusion :: Action < __FusionState >"), "{no_context}");
        assert!(
            no_context.contains("| _ : :: mcp_fusion :: Ctx < __FusionState > , input : Echo | echo (input)"),
            "{no_context}"
        );
        let nothing = expand(
            quote!(),
            quote!(
                /** Now. */
                async fn now() -> Result<u64, E> {
                    x
                }
            ),
        )
        .unwrap();
        assert!(nothing.contains("_ : :: mcp_fusion :: input :: NoInput | now ()"), "{nothing}");
    }

    #[test]
    fn name_description_generics_and_aliases() {
        let expanded = expand(
            quote!(name = "fetch", description = "Fetch it."),
            quote!(
                async fn r#get<T: Clone>(ctx: AppCtx, input: In<T>) -> Result<(), E>
                where
                    T: Send,
                {
                    x
                }
            ),
        )
        .unwrap();
        assert!(
            expanded.starts_with("fn r#get < T : Clone > () -> :: mcp_fusion :: Action < < AppCtx as"),
            "{expanded}"
        );
        assert!(
            expanded.contains("Action :: new (\"fetch\" , \"Fetch it.\") . handler (r#get :: < T >)"),
            "{expanded}"
        );
        assert!(expanded.contains("where T : Send"), "{expanded}");
        let alone = expand(
            quote!(),
            quote!(
                /// D.
                async fn f(ctx: AppCtx) -> Result<(), E> {
                    x
                }
            ),
        )
        .unwrap();
        assert!(
            alone.contains(
                "-> :: mcp_fusion :: Action < < AppCtx as :: mcp_fusion :: __macro :: ContextState > :: State >"
            ),
            "{alone}"
        );
        let raw = expand(
            quote!(),
            quote!(
                /// Type.
                async fn r#type(ctx: Ctx<()>, input: I) -> Result<(), E> {
                    x
                }
            ),
        )
        .unwrap();
        assert!(raw.contains("Action :: new (\"type\""), "{raw}");
    }

    #[test]
    fn each_mistake_says_what_to_write() {
        let body = quote!(-> Result<(), E> { x });
        assert!(
            error(
                quote!(),
                quote!(/// D.
        fn f(ctx: Ctx<()>) #body)
            )
            .starts_with("#[action] goes on an async fn")
        );
        assert!(
            error(
                quote!(),
                quote!(/// D.
        async fn f<'a>(ctx: Ctx<()>) #body)
            )
            .contains("lifetime")
        );
        assert!(
            error(
                quote!(),
                quote!(
                    /// D.
                    async fn f(ctx: Ctx<()>) {
                        x
                    }
                )
            )
            .contains("returns nothing")
        );
        assert!(
            error(
                quote!(),
                quote!(/// D.
        async fn f(&self) #body)
            )
            .starts_with("an action is a free fn")
        );
        assert!(
            error(
                quote!(),
                quote!(/// D.
        async fn f(a: Ctx<()>, b: B, c: C) #body)
            )
            .starts_with("an action takes at most two arguments")
        );
        assert!(
            error(
                quote!(),
                quote!(/// D.
        async fn f(input: I, ctx: Ctx<()>) #body)
            )
            .starts_with("the context comes first")
        );
        let message = error(quote!(), quote!(async fn get_invoice(ctx: Ctx<()>) #body));
        assert!(
            message.starts_with("the action `get_invoice` has no description\n  = help: write a doc comment"),
            "{message}"
        );
        assert!(expand(quote!(description = "D."), quote!(async fn f(ctx: Ctx<()>) #body)).is_ok());
    }
}
