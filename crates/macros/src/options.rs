//! The arguments of `#[action(..)]`: each one a call of the `Action` builder, checked here so a
//! misspelt or misused one reads as what was found, what was expected, and what to write.

use proc_macro2::TokenStream;
use quote::{quote, quote_spanned};
use syn::parse::ParseStream;
use syn::punctuated::Punctuated;
use syn::{Expr, LitStr, Meta, Token};

/// What an argument takes, which fixes the forms it may be written in.
#[derive(Clone, Copy)]
enum Takes {
    /// Nothing: `read_only`.
    Nothing,
    /// One value: `timeout = ..` or `timeout(..)`.
    Value,
    /// A flag that may be turned off: `open_world` (true) or `open_world = false`.
    Switch,
    /// Nothing, or the replacement of what is deprecated: `deprecated` (`None`) or
    /// `deprecated = "billing.list_invoices"` (`Some(..)`).
    Replacement,
    /// A field and, optionally, its replacement: `deprecated_field("old", "new")`.
    FieldAndReplacement,
    /// Two values: `middleware_before(Stage::RateLimit, layer)`.
    Two,
    /// How the action runs as a task: `task` (optional), `task = required`.
    Support,
}

/// Every argument, in the order the builder documents them, with how to write it.
const ARGUMENTS: &[(&str, Takes, &str)] = &[
    ("name", Takes::Value, "name = \"get_invoice\""),
    ("description", Takes::Value, "description = \"Read one invoice by id.\""),
    ("title", Takes::Value, "title = \"Get invoice\""),
    ("icon", Takes::Value, "icon = Icon::new(\"https://example.com/invoice.png\")"),
    ("read_only", Takes::Nothing, "read_only"),
    ("destructive", Takes::Nothing, "destructive"),
    ("additive", Takes::Nothing, "additive"),
    ("idempotent", Takes::Nothing, "idempotent"),
    ("open_world", Takes::Switch, "open_world"),
    ("annotations", Takes::Value, "annotations = Annotations { read_only: Some(true), ..Default::default() }"),
    ("timeout", Takes::Value, "timeout = Duration::from_secs(2)"),
    ("requires_identity", Takes::Nothing, "requires_identity"),
    ("scope", Takes::Value, "scope = \"billing:write\""),
    ("rate_limit", Takes::Value, "rate_limit = RateLimit::new(30, Duration::from_secs(60))"),
    ("idempotent_by_key", Takes::Nothing, "idempotent_by_key"),
    ("check_with", Takes::Value, "check_with = \"get_invoice\""),
    ("task", Takes::Support, "task = required"),
    ("questions_before_task", Takes::Nothing, "questions_before_task"),
    ("param_header", Takes::Two, "param_header(\"region\", \"Region\")"),
    ("sensitive", Takes::Value, "sensitive = \"card.number\""),
    ("deprecated", Takes::Replacement, "deprecated = \"billing.list_invoices\""),
    ("deprecated_field", Takes::FieldAndReplacement, "deprecated_field(\"customer\", \"customer_id\")"),
    ("allow_unknown_fields", Takes::Nothing, "allow_unknown_fields"),
    ("middleware", Takes::Value, "middleware = from_fn(audit)"),
    ("middleware_before", Takes::Two, "middleware_before(Stage::RateLimit, from_fn(audit))"),
    ("middleware_after", Takes::Two, "middleware_after(Stage::Auth, from_fn(audit))"),
];

/// The parsed arguments of one `#[action(..)]`.
#[derive(Default)]
pub struct Options {
    /// `name = ".."`: the action's name when it is not the fn's.
    pub name: Option<LitStr>,
    /// `description = ".."`: the description when it is not the doc comment.
    pub description: Option<Expr>,
    /// Every other argument, as the builder call it stands for (`.read_only()`).
    pub calls: Vec<TokenStream>,
}

impl Options {
    /// Parses `read_only, timeout = Duration::from_secs(2), ..`.
    pub fn parse(input: ParseStream<'_>) -> syn::Result<Options> {
        let mut options = Options::default();
        for meta in Punctuated::<Meta, Token![,]>::parse_terminated(input)? {
            options.add(meta)?;
        }
        Ok(options)
    }

    fn add(&mut self, meta: Meta) -> syn::Result<()> {
        let key = meta.path().get_ident().cloned().ok_or_else(|| unknown(&meta))?;
        let key_text = key.to_string();
        let Some(&(_, takes, example)) = ARGUMENTS.iter().find(|(name, ..)| *name == key_text) else {
            return Err(unknown(&meta));
        };
        let values = values(&meta)?;
        let wrong =
            |found: &str| syn::Error::new_spanned(&meta, format!("`{key}` {found}\n  = help: write it as `{example}`"));
        match key_text.as_str() {
            "name" => {
                let [Expr::Lit(syn::ExprLit { lit: syn::Lit::Str(name), .. })] = values.as_slice() else {
                    return Err(wrong("takes the action's name as a string literal"));
                };
                once(&self.name, &meta)?;
                self.name = Some(name.clone());
                return Ok(());
            }
            "description" => {
                let [description] = values.as_slice() else {
                    return Err(wrong("takes one value, the description"));
                };
                once(&self.description, &meta)?;
                self.description = Some(description.clone());
                return Ok(());
            }
            _ => {}
        }
        let span = key.span();
        let call = match (takes, values.as_slice()) {
            (Takes::Nothing, []) => quote_spanned!(span=> .#key()),
            (Takes::Nothing, _) => return Err(wrong("takes no value")),
            (Takes::Value, [value]) => quote_spanned!(span=> .#key(#value)),
            (Takes::Value, []) => return Err(wrong("needs a value")),
            (Takes::Value, _) => return Err(wrong("takes one value")),
            (Takes::Switch, []) => quote_spanned!(span=> .#key(true)),
            (Takes::Switch, [value]) => quote_spanned!(span=> .#key(#value)),
            (Takes::Replacement, []) => quote_spanned!(span=> .#key(::core::option::Option::None)),
            (Takes::Replacement, [value]) => quote_spanned!(span=> .#key(::core::option::Option::Some(#value))),
            (Takes::Switch | Takes::Replacement, _) => return Err(wrong("takes at most one value")),
            (Takes::FieldAndReplacement, [field]) => quote_spanned!(span=> .#key(#field, ::core::option::Option::None)),
            (Takes::FieldAndReplacement, [field, replacement]) => {
                quote_spanned!(span=> .#key(#field, ::core::option::Option::Some(#replacement)))
            }
            (Takes::FieldAndReplacement, _) => return Err(wrong("takes the field and, optionally, its replacement")),
            (Takes::Two, [first, second]) => quote_spanned!(span=> .#key(#first, #second)),
            (Takes::Two, _) => return Err(wrong("takes two values")),
            (Takes::Support, []) => quote_spanned!(span=> .#key(::mcp_fusion::task::TaskSupport::Optional)),
            (Takes::Support, [Expr::Path(path)]) if path.path.is_ident("optional") => {
                quote_spanned!(span=> .#key(::mcp_fusion::task::TaskSupport::Optional))
            }
            (Takes::Support, [Expr::Path(path)]) if path.path.is_ident("required") => {
                quote_spanned!(span=> .#key(::mcp_fusion::task::TaskSupport::Required))
            }
            (Takes::Support, _) => return Err(wrong("takes `optional` (the default) or `required`")),
        };
        self.calls.push(call);
        Ok(())
    }
}

/// The values of `key`, `key = value` or `key(value, ..)`.
fn values(meta: &Meta) -> syn::Result<Vec<Expr>> {
    Ok(match meta {
        Meta::Path(_) => Vec::new(),
        Meta::NameValue(pair) => vec![pair.value.clone()],
        Meta::List(list) => {
            list.parse_args_with(Punctuated::<Expr, Token![,]>::parse_terminated)?.into_iter().collect()
        }
    })
}

fn once<T>(slot: &Option<T>, meta: &Meta) -> syn::Result<()> {
    match slot {
        Some(_) => Err(syn::Error::new_spanned(meta, "given twice\n  = help: keep one of the two")),
        None => Ok(()),
    }
}

/// An argument the attribute does not know, with the closest one it does.
fn unknown(meta: &Meta) -> syn::Error {
    let path = meta.path();
    let found = quote!(#path).to_string().replace(' ', "");
    let closest = ARGUMENTS
        .iter()
        .map(|(name, ..)| (strsim::jaro_winkler(&found, name), *name))
        .filter(|(score, _)| *score > 0.8)
        .max_by(|a, b| a.0.total_cmp(&b.0));
    let help = match closest {
        Some((_, name)) => format!("\n  = help: did you mean `{name}`?"),
        None => String::new(),
    };
    let expected: Vec<&str> = ARGUMENTS.iter().map(|(name, ..)| *name).collect();
    syn::Error::new_spanned(
        path,
        format!("`#[action]` has no argument `{found}`{help}\n  = note: expected one of {}", expected.join(", ")),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(tokens: TokenStream) -> syn::Result<Options> {
        syn::parse::Parser::parse2(Options::parse, tokens)
    }

    fn calls(tokens: TokenStream) -> Vec<String> {
        parse(tokens).unwrap().calls.iter().map(|call| call.to_string().replace(' ', "")).collect()
    }

    fn message(tokens: TokenStream) -> String {
        parse(tokens).err().expect("an error").to_string()
    }

    #[test]
    fn each_argument_is_the_builder_call_of_its_name() {
        let calls = calls(quote!(
            read_only,
            timeout = Duration::from_secs(2),
            scope("billing:write"),
            scope = "billing:read",
            open_world,
            deprecated,
            deprecated = "billing.list_invoices",
            deprecated_field("customer"),
            deprecated_field("customer", "customer_id"),
            middleware_before(Stage::RateLimit, layer),
            task,
            task = required,
        ));
        assert_eq!(
            calls,
            [
                ".read_only()",
                ".timeout(Duration::from_secs(2))",
                ".scope(\"billing:write\")",
                ".scope(\"billing:read\")",
                ".open_world(true)",
                ".deprecated(::core::option::Option::None)",
                ".deprecated(::core::option::Option::Some(\"billing.list_invoices\"))",
                ".deprecated_field(\"customer\",::core::option::Option::None)",
                ".deprecated_field(\"customer\",::core::option::Option::Some(\"customer_id\"))",
                ".middleware_before(Stage::RateLimit,layer)",
                ".task(::mcp_fusion::task::TaskSupport::Optional)",
                ".task(::mcp_fusion::task::TaskSupport::Required)",
            ]
        );
    }

    #[test]
    fn task_takes_optional_or_required_only() {
        assert_eq!(calls(quote!(task = optional)), [".task(::mcp_fusion::task::TaskSupport::Optional)"]);
        assert_eq!(
            message(quote!(task = sometimes)),
            "`task` takes `optional` (the default) or `required`\n  = help: write it as `task = required`"
        );
    }

    #[test]
    fn name_and_description_are_not_builder_calls() {
        let options = parse(quote!(name = "fetch", description = concat!("Read ", "one."))).unwrap();
        assert_eq!(options.name.unwrap().value(), "fetch");
        assert!(options.description.is_some());
        assert!(options.calls.is_empty());
        assert_eq!(parse(quote!()).unwrap().calls.len(), 0);
    }

    #[test]
    fn a_misspelt_argument_names_the_closest_one() {
        let misspelt = message(quote!(reda_only));
        assert!(
            misspelt.starts_with("`#[action]` has no argument `reda_only`\n  = help: did you mean `read_only`?"),
            "{misspelt}"
        );
        assert!(misspelt.contains("expected one of name, description, title, icon, read_only"), "{misspelt}");
        let unrelated = message(quote!(frobnicate));
        assert!(!unrelated.contains("did you mean"), "{unrelated}");
    }

    #[test]
    fn a_misused_argument_shows_how_to_write_it() {
        assert_eq!(message(quote!(read_only = true)), "`read_only` takes no value\n  = help: write it as `read_only`");
        assert_eq!(
            message(quote!(timeout)),
            "`timeout` needs a value\n  = help: write it as `timeout = Duration::from_secs(2)`"
        );
        assert!(message(quote!(name = some_fn())).starts_with("`name` takes the action's name as a string literal"));
        assert!(message(quote!(middleware_before(layer))).starts_with("`middleware_before` takes two values"));
        assert_eq!(message(quote!(name = "a", name = "b")), "given twice\n  = help: keep one of the two");
        assert!(message(quote!(mcp::read_only)).starts_with("`#[action]` has no argument `mcp::read_only`"));
        assert!(parse(quote!(timeout(,))).is_err());
    }
}
