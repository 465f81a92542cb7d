//! An action's description from its doc comment: the text the model reads to choose it.

use syn::{Attribute, Expr, ExprLit, Lit, Meta};

/// The doc comment's text, or `None` when there is none.
///
/// `///` lines come as `#[doc = " text"]`: the one space after `///` goes, and the lines of a
/// paragraph are joined by a space, since their breaks are where the source wrapped, not where
/// the text does. Paragraphs stay apart, and list items and fenced code keep their lines.
pub fn from_doc(attributes: &[Attribute]) -> syn::Result<Option<String>> {
    let mut lines = Vec::new();
    for attribute in attributes.iter().filter(|a| a.path().is_ident("doc")) {
        let Meta::NameValue(pair) = &attribute.meta else {
            // `#[doc(hidden)]` and the like say nothing of the action.
            continue;
        };
        let Expr::Lit(ExprLit { lit: Lit::Str(text), .. }) = &pair.value else {
            return Err(syn::Error::new_spanned(
                &pair.value,
                "#[action] reads the description from doc comments written out, and this one is \
                 computed\n  = help: give it as `#[action(description = ...)]`",
            ));
        };
        lines.extend(text.value().split('\n').map(str::to_owned));
    }
    let text = unwrap(&lines);
    Ok((!text.is_empty()).then_some(text))
}

fn unwrap(lines: &[String]) -> String {
    let mut text = String::new();
    let mut in_code = false;
    let mut blank_before = false;
    let mut keeps_line = false;
    for line in lines {
        let line = line.strip_prefix(' ').unwrap_or(line).trim_end();
        let fence = line.trim_start().starts_with("```");
        // Outside code, indentation is the source's layout, not the text's.
        let line = if in_code { line } else { line.trim_start() };
        if line.is_empty() && !in_code {
            blank_before = true;
            continue;
        }
        let separator = if text.is_empty() {
            ""
        } else if blank_before {
            "\n\n"
        } else if in_code || fence || keeps_line || starts_item(line) {
            "\n"
        } else {
            " "
        };
        text.push_str(separator);
        text.push_str(line);
        blank_before = false;
        // A fence's last line ends its block: what follows it starts a line of its own too.
        keeps_line = fence && in_code;
        if fence {
            in_code = !in_code;
        }
    }
    text
}

/// A list item: `- `, `* ` or `1. `.
fn starts_item(line: &str) -> bool {
    let line = line.trim_start();
    let numbered = line
        .split_once(". ")
        .is_some_and(|(number, _)| !number.is_empty() && number.bytes().all(|b| b.is_ascii_digit()));
    line.starts_with("- ") || line.starts_with("* ") || numbered
}

#[cfg(test)]
mod tests {
    use super::*;
    use syn::parse_quote;

    fn description(attributes: Vec<Attribute>) -> Option<String> {
        from_doc(&attributes).unwrap()
    }

    #[test]
    fn lines_of_a_paragraph_join_and_paragraphs_stay_apart() {
        let attributes: Vec<Attribute> = vec![
            parse_quote!(#[doc = " Read one invoice"]),
            parse_quote!(#[doc = " by its id."]),
            parse_quote!(#[doc = ""]),
            parse_quote!(#[doc = " Amounts are in cents."]),
        ];
        assert_eq!(description(attributes).unwrap(), "Read one invoice by its id.\n\nAmounts are in cents.");
    }

    #[test]
    fn list_items_and_code_keep_their_lines() {
        let attributes: Vec<Attribute> = vec![
            parse_quote!(#[doc = " Statuses:"]),
            parse_quote!(#[doc = " - `open`"]),
            parse_quote!(#[doc = " - `paid`, once"]),
            parse_quote!(#[doc = "   settled"]),
            parse_quote!(#[doc = " 1. first"]),
            parse_quote!(#[doc = " ```json"]),
            parse_quote!(#[doc = " {\"id\": \"inv_1\"}"]),
            parse_quote!(#[doc = ""]),
            parse_quote!(#[doc = " ```"]),
            parse_quote!(#[doc = " After."]),
        ];
        assert_eq!(
            description(attributes).unwrap(),
            "Statuses:\n- `open`\n- `paid`, once settled\n1. first\n```json\n{\"id\": \"inv_1\"}\n\n```\nAfter."
        );
    }

    #[test]
    fn block_comments_hidden_docs_and_no_docs() {
        let block: Vec<Attribute> = vec![parse_quote!(#[doc = "\n Read one\n invoice.\n "])];
        assert_eq!(description(block).unwrap(), "Read one invoice.");
        let hidden: Vec<Attribute> = vec![parse_quote!(#[doc(hidden)]), parse_quote!(#[inline])];
        assert_eq!(description(hidden), None);
        let blank: Vec<Attribute> = vec![parse_quote!(#[doc = "   "])];
        assert_eq!(description(blank), None);
    }

    #[test]
    fn a_computed_doc_comment_asks_for_a_description() {
        let computed: Vec<Attribute> = vec![parse_quote!(#[doc = include_str!("get_invoice.md")])];
        let message = from_doc(&computed).unwrap_err().to_string();
        assert!(message.contains("give it as `#[action(description = ...)]`"), "{message}");
    }
}
