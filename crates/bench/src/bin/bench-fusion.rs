//! `bench-fusion`: the benchmark's tool on MCP Fusion: a group with one action, its input
//! checked against the schema derived from its type.

use clap::Parser;
use fusion_bench::serve::ServeArgs;
use mcp_fusion::http::{HttpConfig, HttpServer};
use mcp_fusion::wire::ToolError;
use mcp_fusion::{Action, Ctx, FusionServer, Group};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct GetInvoice {
    /// The invoice's id.
    #[schemars(length(min = 1))]
    id: String,
}

async fn get_invoice(_ctx: Ctx<()>, input: GetInvoice) -> Result<Value, ToolError> {
    fusion_bench::serve::spend_extra_cpu();
    Ok(fusion_bench::invoice(&input.id))
}

fn server() -> anyhow::Result<FusionServer> {
    let billing = Group::new("billing", "Invoices.")
        .action(Action::new("get_invoice", "Reads one invoice by id.").read_only().handler(get_invoice));
    Ok(FusionServer::builder("bench-fusion", env!("CARGO_PKG_VERSION")).group(billing).build(())?)
}

fn main() -> anyhow::Result<()> {
    let args = ServeArgs::parse();
    args.install_slowdown();
    args.runtime()?.block_on(serve(args))
}

async fn serve(args: ServeArgs) -> anyhow::Result<()> {
    let server = server()?;
    let Some(addr) = args.http else {
        if args.blocking_stdio {
            anyhow::bail!("--blocking-stdio is raw rmcp's: the framework serves stdio one way");
        }
        mcp_fusion::serve_stdio(server).await?;
        return Ok(());
    };
    let http = HttpServer::bind(server, HttpConfig::new(addr).stateless(!args.stateful)).await?;
    http.serve(std::future::pending()).await?;
    Ok(())
}
