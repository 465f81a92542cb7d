//! Where to listen, as a person writes it: `HOST:PORT` with an IP address or a name
//! (`127.0.0.1:8080`, `localhost:8080`, `[::1]:8080`), resolved to the addresses a server tries
//! in turn.

use std::fmt;
use std::net::{SocketAddr, ToSocketAddrs as _};
use std::str::FromStr;

/// What a wrong address is told with, after what is wrong.
const EXPECTED: &str = "give HOST:PORT, like 127.0.0.1:8080, localhost:8080 or [::1]:8080 (port 0 picks a free one)";

/// A `HOST:PORT` resolved to the addresses to try, in the resolver's order: a name may resolve
/// to an IPv6 address the machine lacks before an IPv4 one. Parsed with [`str::parse`], so a
/// command line takes it as a flag's type.
///
/// ```
/// use mcp_fusion::http::ListenAddress;
///
/// let address: ListenAddress = "127.0.0.1:0".parse().unwrap();
/// assert_eq!(address.addrs()[0].port(), 0);
/// assert!("localhost:8080".parse::<ListenAddress>().is_ok());
/// assert_eq!(
///     "127.0.0.1".parse::<ListenAddress>().unwrap_err().to_string(),
///     "no port; give HOST:PORT, like 127.0.0.1:8080, localhost:8080 or [::1]:8080 (port 0 picks a free one)"
/// );
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ListenAddress {
    text: String,
    addrs: Vec<SocketAddr>,
}

/// Why a text is no address to listen on; each message says what to give instead. The
/// messages leave the text out: whoever reports one shows it (a command line's
/// `invalid value '127.0.0.1' for '--http'`).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ListenAddressError {
    /// No `:PORT`.
    #[error("no port; {EXPECTED}")]
    NoPort,
    /// Nothing before the `:PORT`.
    #[error("no host; {EXPECTED}")]
    NoHost,
    /// `[::1` without its `]`.
    #[error("no closing bracket; {EXPECTED}")]
    NoClosingBracket,
    /// `::1:8080`: an IPv6 address without brackets.
    #[error("an IPv6 address needs brackets, like [::1]:8080; {EXPECTED}")]
    BareIpv6,
    /// The port is not a number from 0 to 65535.
    #[error("the port {0:?} is not a number from 0 to 65535; {EXPECTED}")]
    Port(String),
    /// The host name does not resolve.
    #[error(
        "cannot resolve the host {host} ({reason}); give an IP address or a name this machine resolves, like 127.0.0.1:8080 or localhost:8080"
    )]
    Unresolved {
        /// The host part.
        host: String,
        /// What the resolver said.
        reason: String,
    },
}

impl ListenAddress {
    /// The addresses to try, in order; never empty.
    pub fn addrs(&self) -> &[SocketAddr] {
        &self.addrs
    }
}

/// What [`HttpConfig::new`](super::HttpConfig::new) listens on: a [`SocketAddr`], a
/// [`ListenAddress`], or `HOST:PORT` text (`"localhost:8090"`, `"127.0.0.1:0"`), resolved
/// when the config is made; a text that is no address is reported by
/// [`HttpServer::bind`](super::HttpServer::bind).
pub trait IntoListenAddress {
    /// The address, or why the text is none.
    fn into_listen_address(self) -> Result<ListenAddress, ListenAddressError>;
}

impl IntoListenAddress for SocketAddr {
    fn into_listen_address(self) -> Result<ListenAddress, ListenAddressError> {
        Ok(self.into())
    }
}

impl IntoListenAddress for ListenAddress {
    fn into_listen_address(self) -> Result<ListenAddress, ListenAddressError> {
        Ok(self)
    }
}

impl IntoListenAddress for &ListenAddress {
    fn into_listen_address(self) -> Result<ListenAddress, ListenAddressError> {
        Ok(self.clone())
    }
}

impl IntoListenAddress for &str {
    fn into_listen_address(self) -> Result<ListenAddress, ListenAddressError> {
        self.parse()
    }
}

impl IntoListenAddress for String {
    fn into_listen_address(self) -> Result<ListenAddress, ListenAddressError> {
        self.parse()
    }
}

impl From<SocketAddr> for ListenAddress {
    fn from(addr: SocketAddr) -> ListenAddress {
        ListenAddress { text: addr.to_string(), addrs: vec![addr] }
    }
}

impl fmt::Display for ListenAddress {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

impl FromStr for ListenAddress {
    type Err = ListenAddressError;

    fn from_str(text: &str) -> Result<ListenAddress, ListenAddressError> {
        let text = text.to_owned();
        if let Ok(addr) = text.parse::<SocketAddr>() {
            return Ok(ListenAddress { text, addrs: vec![addr] });
        }
        let (host, port) = match text.strip_prefix('[').map(|rest| rest.split_once(']')) {
            Some(Some((host, after))) => (host, after.strip_prefix(':').ok_or(ListenAddressError::NoPort)?),
            Some(None) => return Err(ListenAddressError::NoClosingBracket),
            None => match text.rsplit_once(':') {
                None => return Err(ListenAddressError::NoPort),
                Some((host, _)) if host.contains(':') => return Err(ListenAddressError::BareIpv6),
                Some(pair) => pair,
            },
        };
        if host.is_empty() {
            return Err(ListenAddressError::NoHost);
        }
        let port: u16 = port.parse().map_err(|_| ListenAddressError::Port(port.to_owned()))?;
        let unresolved = |reason: String| ListenAddressError::Unresolved { host: host.to_owned(), reason };
        let addrs: Vec<SocketAddr> = (host, port).to_socket_addrs().map_err(|e| unresolved(e.to_string()))?.collect();
        if addrs.is_empty() {
            return Err(unresolved("no address".into()));
        }
        Ok(ListenAddress { text, addrs })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn addresses_and_names_parse() {
        let ip: ListenAddress = "127.0.0.1:8080".parse().unwrap();
        assert_eq!(ip.addrs(), ["127.0.0.1:8080".parse::<SocketAddr>().unwrap()]);
        assert_eq!(ip.to_string(), "127.0.0.1:8080");
        let v6: ListenAddress = "[::1]:0".parse().unwrap();
        assert!(v6.addrs()[0].is_ipv6());
        let name: ListenAddress = "localhost:8080".parse().unwrap();
        assert!(name.addrs().iter().all(|addr| addr.port() == 8080 && addr.ip().is_loopback()), "{name:?}");
    }

    #[test]
    fn garbage_is_one_sentence_each() {
        let said = |text: &str| text.parse::<ListenAddress>().unwrap_err().to_string();
        let expected = "give HOST:PORT, like 127.0.0.1:8080, localhost:8080 or [::1]:8080 (port 0 picks a free one)";
        assert_eq!(said("127.0.0.1"), format!("no port; {expected}"));
        assert_eq!(said(":8080"), format!("no host; {expected}"));
        assert_eq!(said("[::1:8080"), format!("no closing bracket; {expected}"));
        assert_eq!(said("[::1]"), format!("no port; {expected}"));
        assert_eq!(said("::1:8080"), format!("an IPv6 address needs brackets, like [::1]:8080; {expected}"));
        assert_eq!(said("localhost:http"), format!("the port \"http\" is not a number from 0 to 65535; {expected}"));
        assert!(said("localhost:70000").starts_with("the port \"70000\""));
        assert!(said("nohost.invalid:80").starts_with("cannot resolve the host nohost.invalid ("));
        assert_eq!(said(""), format!("no port; {expected}"));
    }
}
