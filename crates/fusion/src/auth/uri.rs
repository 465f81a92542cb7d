//! The URIs OAuth names (a protected resource, an issuer, its endpoints) and its scope tokens,
//! checked where they are configured.

/// Hosts for which plain `http` is accepted: a token sent there never leaves the machine.
pub(crate) const LOOPBACK_HOSTS: [&str; 3] = ["localhost", "127.0.0.1", "::1"];

/// The origin (`scheme://authority`) and path of `uri`, when it may name a protected resource,
/// an authorization server or one of its endpoints: absolute, `https` (or `http` on a loopback
/// host), without a fragment or user information, with nothing a quoted header value cannot
/// hold; a query only where `query` allows it. The error is the reason, to follow "because".
pub(crate) fn split_uri(uri: &str, query: bool) -> Result<(&str, &str), &'static str> {
    if !uri.bytes().all(|b| b.is_ascii_graphic() && b != b'"' && b != b'\\') {
        return Err("it holds a space, a quote, a backslash or a character that is not printable ASCII");
    }
    if uri.contains('#') {
        return Err("it has a fragment");
    }
    if !query && uri.contains('?') {
        return Err("it has a query");
    }
    const NOT_ABSOLUTE: &str = "it is not an absolute URI (scheme://host/path)";
    let parsed: http::Uri = uri.parse().map_err(|_| NOT_ABSOLUTE)?;
    let (Some(scheme), Some(authority)) = (parsed.scheme_str(), parsed.authority()) else {
        return Err(NOT_ABSOLUTE);
    };
    let host = authority.host();
    let loopback =
        LOOPBACK_HOSTS.iter().any(|loopback| host.trim_start_matches('[').trim_end_matches(']') == *loopback);
    match scheme {
        "https" => {}
        "http" if loopback => {}
        "http" => return Err("plain http is accepted for a loopback host only; use https"),
        _ => return Err("its scheme is neither https nor http"),
    }
    if authority.as_str().contains('@') {
        return Err("it carries user information");
    }
    let origin_len = scheme.len() + "://".len() + authority.as_str().len();
    Ok((&uri[..origin_len], &uri[origin_len..]))
}

/// Whether `scope` is a scope token of RFC 6749 §3.3: `%x21 / %x23-5B / %x5D-7E`, one or more.
pub(crate) fn is_scope_token(scope: &str) -> bool {
    !scope.is_empty() && scope.bytes().all(|b| matches!(b, 0x21 | 0x23..=0x5B | 0x5D..=0x7E))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loopback_http_and_https_pass_and_the_rest_says_why() {
        assert_eq!(split_uri("https://id.example.com/tenant", false), Ok(("https://id.example.com", "/tenant")));
        assert_eq!(split_uri("http://[::1]:8080/mcp", false), Ok(("http://[::1]:8080", "/mcp")));
        assert_eq!(split_uri("http://127.0.0.1", false), Ok(("http://127.0.0.1", "")));
        assert!(split_uri("https://id.example.com/introspect?x=1", true).is_ok());
        for (uri, why) in [
            ("http://id.example.com/", "loopback"),
            ("ftp://localhost/", "scheme"),
            ("https://u:p@id.example.com/", "user information"),
            ("https://id.example.com/#f", "fragment"),
            ("https://id.example.com/?q", "query"),
            ("https://id.example.com/a b", "space"),
            ("/relative", "absolute"),
            ("", "absolute"),
            ("https://id.\u{e9}xample.com/", "printable"),
        ] {
            let reason = split_uri(uri, false).unwrap_err();
            assert!(reason.contains(why), "{uri}: {reason}");
        }
        assert!(
            is_scope_token("billing:read") && !is_scope_token("a b") && !is_scope_token("") && !is_scope_token("\"")
        );
    }
}
