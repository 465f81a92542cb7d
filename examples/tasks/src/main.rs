//! `tasks-server [--file PATH]`: the task-file server on stdio (default file `./tasks.json`).

use std::process::ExitCode;

use tasks_server::store::Store;

#[tokio::main]
async fn main() -> ExitCode {
    let _log = mcp_fusion::logging::init();
    let mut args = std::env::args().skip(1);
    let file = match (args.next().as_deref(), args.next(), args.next()) {
        (None, ..) => "tasks.json".to_owned(),
        (Some("--file"), Some(file), None) => file,
        _ => {
            eprintln!("tasks-server: error: usage: tasks-server [--file PATH]");
            return ExitCode::from(2);
        }
    };
    let served = match tasks_server::server(Store::open(file)) {
        Ok(server) => mcp_fusion::serve_stdio(server).await,
        Err(error) => {
            eprintln!("tasks-server: error: {error}");
            return ExitCode::FAILURE;
        }
    };
    match served {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("tasks-server: error: {error}");
            ExitCode::FAILURE
        }
    }
}
