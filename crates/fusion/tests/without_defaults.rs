//! What a server built with `default-features = false` keeps: `#[action]`, and a server of its
//! actions served in process. `.ci/run` runs this file without the default features.

use mcp_fusion::prelude::*;
use mcp_fusion::transport::RequestInfo;

/// Count the tasks.
#[action(read_only)]
async fn count_tasks() -> Result<String> {
    Ok("3 tasks".into())
}

#[tokio::test]
async fn an_action_attribute_builds_a_server_without_the_default_features() {
    let server = FusionServer::builder("tasks", "1.0.0").action(count_tasks()).build(()).unwrap();
    let tool = &server.tools()[0];
    assert_eq!((tool.name.as_ref(), tool.description.as_deref()), ("count_tasks", Some("Count the tasks.")));
    let result = server.call("count_tasks", None, RequestInfo::default()).await;
    assert_eq!(result.content[0].as_text().unwrap().text, "3 tasks");
}
