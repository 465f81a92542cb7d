//! The built `billing-server` over Streamable HTTP: the transport, keys no client can choose,
//! bounded subscriptions, and the typed client (over stdio too).

#[path = "../support/mod.rs"]
mod support;

mod client;
mod confirm;
mod export;
mod gone;
mod http;
mod keys;
mod subscriptions;
