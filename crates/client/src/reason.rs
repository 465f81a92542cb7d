//! Transport failures told as one sentence: what failed, where, why (the system's own words,
//! not the transport's type names), and what to try.

use std::error::Error;
use std::io;
use std::net::{TcpStream, ToSocketAddrs as _};
use std::time::Duration;

use rmcp::ServiceError;
use rmcp::service::ClientInitializeError;

/// How long the probe that looks for the system's reason waits for a connection.
const PROBE_TIMEOUT: Duration = Duration::from_secs(5);

/// Why a spawned stdio server did not complete `initialize`.
pub(crate) fn stdio_initialize(error: &ClientInitializeError) -> String {
    match error {
        ClientInitializeError::ConnectionClosed(_) => exited(),
        ClientInitializeError::TransportError { error, .. } => {
            // Writing `initialize` to a server that already exited fails with a broken pipe
            // rather than an end of its stdout: the same story.
            match innermost_io(error.error.as_ref()) {
                Some(io) if io.kind() == io::ErrorKind::BrokenPipe => exited(),
                _ => format!(
                    "the server's stdio failed before it answered initialize ({}); run it by hand to see why",
                    plain(error.error.as_ref())
                ),
            }
        }
        other => initialize_answer(other),
    }
}

fn exited() -> String {
    "the server exited before answering initialize; run it by hand to see why".to_owned()
}

/// Why the Streamable HTTP endpoint at `url` did not complete `initialize`; `token` whether a
/// bearer token was sent. Looks for the system's reason with a connection of its own when the
/// HTTP client's error does not carry it.
pub(crate) async fn http_initialize(url: &str, token: bool, error: &ClientInitializeError) -> String {
    let why = match error {
        _ if error.is_authorization_required() => {
            if token {
                "the server refused the bearer token sent (HTTP 401); check the token".to_owned()
            } else {
                "the server requires a bearer token (HTTP 401) and none was sent; send the server's token"
                    .to_owned()
            }
        }
        ClientInitializeError::TransportError { error, .. } => {
            let said = plain(error.error.as_ref());
            if said.contains("HTTP 404") {
                "the server has no MCP endpoint at that path (HTTP 404 Not Found); check the URL's path, like /mcp"
                    .to_owned()
            } else if said.starts_with("HTTP ") || said.contains("unexpected server response") {
                format!("the server answered {said}; check that the URL is the server's MCP endpoint")
            } else {
                match probe(url).await {
                    Probe::NotAUrl => not_a_url(),
                    Probe::Unresolved { host, error } => {
                        format!("cannot resolve the host {host} ({}); check the host name in the URL", plain_io(&error))
                    }
                    Probe::Refused(error) => format!("{}; {}", plain_io(&error), connect_hint(&error)),
                    Probe::Connects => {
                        format!("{said}; check the URL (http or https, host, port and path) and that it is an MCP endpoint")
                    }
                }
            }
        }
        ClientInitializeError::ConnectionClosed(_) => {
            "the server closed the connection before answering initialize; check that the URL is the server's MCP endpoint"
                .to_owned()
        }
        other => initialize_answer(other),
    };
    format!("cannot connect to {url}: {why}")
}

/// The URL's problem when it is not one a connection can be made to.
pub(crate) fn check_url(url: &str) -> Result<(), String> {
    match authority(url) {
        Some(_) => Ok(()),
        None => Err(format!("cannot connect to {url}: {}", not_a_url())),
    }
}

fn not_a_url() -> String {
    "it is not an http:// or https:// URL; give one like http://127.0.0.1:8080/mcp".to_owned()
}

/// The other failures of `initialize`: the server answered, but not as an MCP server does.
fn initialize_answer(error: &ClientInitializeError) -> String {
    match error {
        ClientInitializeError::JsonRpcError(data) => {
            format!("the server refused initialize (JSON-RPC error {}: {})", data.code.0, data.message)
        }
        ClientInitializeError::NoCompatibleProtocolVersion { .. } => {
            "the server speaks no MCP protocol version this client does; upgrade the older of the two".to_owned()
        }
        ClientInitializeError::Cancelled => "the connection was cancelled before initialize completed".to_owned(),
        ClientInitializeError::ExpectedInitResponse(_)
        | ClientInitializeError::ExpectedInitResult(_)
        | ClientInitializeError::ConflictInitResponseId(..)
        | ClientInitializeError::UncorrelatedErrorResponse { .. } => {
            "the server's answer to initialize is not an MCP initialize result; is it an MCP server?".to_owned()
        }
        other => format!("initialize failed: {}", plain(other)),
    }
}

/// A failure of a request after `initialize`, other than the server's JSON-RPC error.
pub(crate) fn service(error: &ServiceError) -> String {
    match error {
        ServiceError::TransportClosed => {
            "the connection to the server closed (the server exited, or the network dropped)".to_owned()
        }
        ServiceError::TransportSend(error) => {
            format!("cannot send to the server: {}", plain(error.error.as_ref()))
        }
        ServiceError::Timeout { timeout } => {
            format!("the server did not answer within {} ms", timeout.as_millis())
        }
        ServiceError::Cancelled { reason } => match reason {
            Some(reason) => format!("the request was cancelled: {reason}"),
            None => "the request was cancelled".to_owned(),
        },
        ServiceError::UnexpectedResponse => "the server answered with a response of another kind".to_owned(),
        other => plain(other),
    }
}

/// The innermost error of the chain, in its own words, without the transport's wrapping
/// (`Client error: `, `Io error: `).
fn plain(error: &(dyn Error + 'static)) -> String {
    let mut innermost = error;
    while let Some(source) = innermost.source() {
        innermost = source;
    }
    let said = innermost.to_string();
    let mut said = said.as_str();
    for wrapping in ["Client error: ", "Io error: ", "SSE error: "] {
        said = said.strip_prefix(wrapping).unwrap_or(said);
    }
    said.trim_end_matches([':', ' ']).to_owned()
}

fn innermost_io<'a>(error: &'a (dyn Error + 'static)) -> Option<&'a io::Error> {
    let mut found = None;
    let mut current = Some(error);
    while let Some(error) = current {
        if let Some(io) = error.downcast_ref::<io::Error>() {
            found = Some(io);
        }
        current = error.source();
    }
    found
}

/// The system's words for `error`, as a sentence goes on: `connection refused`, without the
/// `(os error 111)`.
fn plain_io(error: &io::Error) -> String {
    let said = error.to_string();
    let said = match said.rfind(" (os error ") {
        Some(at) if said.ends_with(')') => &said[..at],
        _ => said.as_str(),
    };
    let mut chars = said.chars();
    match (chars.next(), chars.next()) {
        // `Connection refused` → `connection refused`; `HTTP …` stays.
        (Some(first), Some(second)) if first.is_uppercase() && second.is_lowercase() => {
            first.to_lowercase().chain(said[first.len_utf8()..].chars()).collect()
        }
        _ => said.to_owned(),
    }
}

fn connect_hint(error: &io::Error) -> &'static str {
    match error.kind() {
        io::ErrorKind::ConnectionRefused => "is the server running, and listening on that port?",
        io::ErrorKind::TimedOut => "is the server reachable from here, and the port right?",
        _ => "check the URL, and that the server is running and reachable",
    }
}

/// What a plain TCP connection to the URL's host and port finds.
enum Probe {
    NotAUrl,
    Unresolved { host: String, error: io::Error },
    Refused(io::Error),
    Connects,
}

async fn probe(url: &str) -> Probe {
    let Some((host, port)) = authority(url) else { return Probe::NotAUrl };
    let probing = tokio::task::spawn_blocking(move || {
        let addresses = match (host.as_str(), port).to_socket_addrs() {
            Ok(addresses) => addresses.collect::<Vec<_>>(),
            Err(error) => return Probe::Unresolved { host, error },
        };
        let mut last = None;
        for address in addresses {
            match TcpStream::connect_timeout(&address, PROBE_TIMEOUT) {
                Ok(_) => return Probe::Connects,
                Err(error) => last = Some(error),
            }
        }
        match last {
            Some(error) => Probe::Refused(error),
            None => Probe::Unresolved { host, error: io::Error::other("it resolves to no address") },
        }
    });
    probing.await.unwrap_or(Probe::Connects)
}

/// The host (without brackets) and port of an `http://` or `https://` URL.
fn authority(url: &str) -> Option<(String, u16)> {
    let lower = url.get(..8).unwrap_or(url).to_ascii_lowercase();
    let (rest, default_port) = if lower.starts_with("http://") {
        (&url[7..], 80)
    } else if lower.starts_with("https://") {
        (&url[8..], 443)
    } else {
        return None;
    };
    let authority = rest.split(['/', '?', '#']).next().unwrap_or("");
    let authority = authority.rsplit_once('@').map_or(authority, |(_, host)| host);
    let (host, port) = if let Some(bracketed) = authority.strip_prefix('[') {
        let (host, after) = bracketed.split_once(']')?;
        (host, after.strip_prefix(':'))
    } else {
        match authority.rsplit_once(':') {
            Some((host, port)) => (host, Some(port)),
            None => (authority, None),
        }
    };
    if host.is_empty() {
        return None;
    }
    let port = match port {
        None | Some("") => default_port,
        Some(port) => port.parse().ok()?,
    };
    Some((host.to_owned(), port))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_authority_of_a_url() {
        let of = |url: &str| authority(url);
        assert_eq!(of("http://127.0.0.1:8080/mcp"), Some(("127.0.0.1".into(), 8080)));
        assert_eq!(of("HTTPS://example.com/mcp?x=1"), Some(("example.com".into(), 443)));
        assert_eq!(of("http://user:pw@localhost/mcp"), Some(("localhost".into(), 80)));
        assert_eq!(of("http://[::1]:9/mcp"), Some(("::1".into(), 9)));
        assert_eq!(of("http://[::1]/mcp"), Some(("::1".into(), 80)));
        assert_eq!(of("http://h:notaport/mcp"), None);
        assert_eq!(of("notaurl"), None);
        assert_eq!(of("ftp://h/mcp"), None);
        assert_eq!(of("http:///mcp"), None);
    }

    #[test]
    fn the_systems_words_without_the_error_number() {
        assert_eq!(plain_io(&io::Error::from_raw_os_error(111)), "connection refused");
        assert_eq!(plain_io(&io::Error::other("HTTP thing")), "HTTP thing");
        assert_eq!(
            plain_io(&io::Error::other("failed to lookup address information: Name or service not known")),
            "failed to lookup address information: Name or service not known"
        );
    }
}
