//! `ctxkeep mcp`: the checkpoint as Model Context Protocol tools, over stdio.
//! The protocol is rmcp's; every tool calls the service its command calls,
//! so a checkpoint written here is written exactly as `ctxkeep checkpoint`
//! writes one (lock, redaction, atomic write, archive, events). A failure is
//! a tool result with `isError` and the CLI's one-line message and code,
//! never a dropped connection. The project is looked up on every call, so
//! the server outlives a missing or damaged state file.
//!
//! The async runtime is built here, only when `mcp` runs: a current-thread
//! one, with the tools' file and git work on its blocking pool.

mod tools;
mod transport;

use std::sync::Arc;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, GetPromptRequestParams,
    GetPromptResponse, GetPromptResult, Implementation, ListPromptsResult, ListResourcesResult,
    ListToolsResult, PaginatedRequestParams, Prompt, PromptArgument, PromptMessage,
    ReadResourceRequestParams, ReadResourceResponse, ReadResourceResult, Resource,
    ResourceContents, Role, ServerCapabilities, ServerConfig,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData as McpError, RoleServer, ServerHandler, ServiceExt};

use crate::domain::workspace::{Locate, Workspace};
use crate::system::error::Error;

/// What the server is started with.
#[derive(Debug, Clone)]
pub struct Options {
    /// `--state`, `--lock-timeout`; the project is found from the working
    /// directory otherwise.
    pub locate: Locate,
    /// The session checkpoints record when a call names none (`--session`,
    /// `CTXKEEP_SESSION`).
    pub session: Option<String>,
}

/// The resources a client can attach.
pub const STATE_URI: &str = "ctxkeep://state";
pub const CHECKPOINT_URI: &str = "ctxkeep://checkpoint";

const INSTRUCTIONS: &str = "ctxkeep keeps this project's working state in project-state.md so that \
a fresh session can resume cold. Call `checkpoint` after a decision, before you stop, and whenever \
a ctxkeep stage tells you to: it records the phase, task, next action and decisions, and answers \
with `verify`'s findings so you can fix a gap at once. Call `resume` to read where the work stands, \
`status` for how full the context is, and `ack` with the nonce a resume prompt gave you.";

/// Serves MCP on stdin and stdout until the client closes them.
pub fn serve(opts: Options) -> anyhow::Result<()> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| Error::io("<runtime>", "cannot start the MCP server's runtime", e))?;
    let result = runtime.block_on(async {
        let server = Server {
            opts: Arc::new(opts),
        };
        // Pipes (as clients start servers) are read on the reactor; a
        // terminal falls back to blocking reads. Every line is answered
        // (`transport.rs`), a bad one with a JSON-RPC error.
        let (read, write) = rmcp::transport::stdio_pipes();
        let (transport, writer) = transport::line_transport(read, write);
        let served = match server.serve(transport).await {
            Ok(running) => running
                .waiting()
                .await
                .map(|_| ())
                .map_err(|e| anyhow::anyhow!("mcp: the server stopped: {e}")),
            // The client went away before it initialized: nothing to serve.
            Err(rmcp::service::ServerInitializeError::ConnectionClosed(_)) => Ok(()),
            Err(e) => Err(anyhow::anyhow!(
                "mcp: the client's initialization failed: {e}"
            )),
        };
        // The answers still queued (an error for the client's last line) go out first.
        let _ = writer.await;
        served
    });
    // A blocking stdin read cannot be cancelled; do not wait for it.
    runtime.shutdown_timeout(std::time::Duration::from_millis(100));
    result
}

#[derive(Clone)]
struct Server {
    opts: Arc<Options>,
}

impl Server {
    fn workspace(&self) -> Result<Workspace, Error> {
        Workspace::resolve(&self.opts.locate, false)
    }
}

/// Runs `job` on the blocking pool: the tools read files, take the lock
/// and run git (git's answers shared within the call: `git::share_reads`).
async fn blocking<T: Send + 'static>(
    job: impl FnOnce() -> T + Send + 'static,
) -> Result<T, McpError> {
    tokio::task::spawn_blocking(|| {
        // One call reads the repository once; the next call reads it afresh.
        let _reads = crate::system::git::share_reads();
        job()
    })
    .await
    .map_err(|e| McpError::internal_error(format!("the call failed: {e}"), None))
}

/// An error as the CLI reports it: `isError`, the one-line message and the
/// `--json` error document as the structured content.
fn error_result(err: &anyhow::Error) -> CallToolResult {
    let (msg, doc) = crate::system::error::report(err);
    let mut result =
        CallToolResult::error(vec![ContentBlock::text(format!("ctxkeep: error: {msg}"))]);
    result.structured_content = Some(doc);
    result
}

/// An error of a resource or prompt read: these have no `isError`, so the
/// CLI's message travels in a JSON-RPC error, with its code as data.
fn protocol_error(err: &anyhow::Error) -> McpError {
    let (msg, doc) = crate::system::error::report(err);
    McpError::internal_error(format!("ctxkeep: error: {msg}"), Some(doc["error"].clone()))
}

impl ServerHandler for Server {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(
            ServerCapabilities::builder()
                .enable_tools()
                .enable_resources()
                .enable_prompts()
                .build(),
        )
        .with_server_info(Implementation::new("ctxkeep", env!("CARGO_PKG_VERSION")))
        .with_instructions(INSTRUCTIONS)
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, McpError> {
        Ok(ListToolsResult::with_all_items(tools::list()))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        let name = request.name.to_string();
        if !tools::NAMES.contains(&name.as_str()) {
            return Err(McpError::invalid_params(
                format!(
                    "no tool {name:?}; the tools are {}",
                    tools::NAMES.join(", ")
                ),
                None,
            ));
        }
        let args = serde_json::Value::Object(request.arguments.unwrap_or_default());
        let server = self.clone();
        let result = blocking(move || {
            let ws = server.workspace().map_err(anyhow::Error::from);
            ws.and_then(|ws| tools::call(&name, args, &ws, &server.opts))
        })
        .await?;
        Ok(match result {
            Ok(done) => done,
            Err(e) => error_result(&e),
        }
        .into())
    }

    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, McpError> {
        Ok(ListResourcesResult::with_all_items(vec![
            Resource::new(STATE_URI, "project-state.md")
                .with_description(
                    "The project's state file: the working state and the current checkpoint",
                )
                .with_mime_type("text/markdown"),
            Resource::new(CHECKPOINT_URI, "checkpoint")
                .with_description(
                    "The current checkpoint record, as JSON (`?session=ID`: that agent session's newest)",
                )
                .with_mime_type("application/json"),
        ]))
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, McpError> {
        let uri = request.uri;
        // `ctxkeep://checkpoint?session=ID`: that agent session's line of work.
        let line = uri
            .strip_prefix(CHECKPOINT_URI)
            .and_then(|q| q.strip_prefix("?session="))
            .map(str::to_string);
        if uri != STATE_URI && uri != CHECKPOINT_URI && line.is_none() {
            return Err(McpError::resource_not_found(
                format!("no resource {uri:?}; there are {STATE_URI}, {CHECKPOINT_URI} and {CHECKPOINT_URI}?session=ID"),
                None,
            ));
        }
        let server = self.clone();
        let read = blocking(move || -> anyhow::Result<ResourceContents> {
            let ws = server.workspace()?;
            if uri == STATE_URI {
                let text = tools::state_text(&ws)?;
                Ok(ResourceContents::text(text, uri).with_mime_type("text/markdown"))
            } else {
                let record = match &line {
                    Some(session) => tools::line_checkpoint(&ws, session)?,
                    None => tools::current_checkpoint(&ws)?,
                };
                Ok(
                    ResourceContents::text(serde_json::to_string_pretty(&record)?, uri)
                        .with_mime_type("application/json"),
                )
            }
        })
        .await?;
        match read {
            Ok(contents) => Ok(ReadResourceResult::new(vec![contents]).into()),
            Err(e) => Err(protocol_error(&e)),
        }
    }

    async fn list_prompts(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListPromptsResult, McpError> {
        Ok(ListPromptsResult::with_all_items(vec![Prompt::new(
            "resume",
            Some(
                "Continue the work from the last checkpoint: the continuation prompt `ctxkeep resume` prints, \
                 opening a session with its restore nonce",
            ),
            Some(vec![PromptArgument::new("agent")
                .with_description("The agent that will read it (claude-code, codex, gemini, ...)")
                .with_required(false)]),
        )]))
    }

    async fn get_prompt(
        &self,
        request: GetPromptRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, McpError> {
        if request.name != "resume" {
            return Err(McpError::invalid_params(
                format!("no prompt {:?}; there is `resume`", request.name),
                None,
            ));
        }
        let agent = request
            .arguments
            .as_ref()
            .and_then(|a| a.get("agent"))
            .and_then(|a| a.as_str())
            .filter(|a| !a.is_empty())
            .map(str::to_string);
        let server = self.clone();
        let rendered = blocking(move || {
            let ws = server.workspace()?;
            tools::resume_prompt(&ws, agent)
        })
        .await?;
        match rendered {
            Ok((description, prompt)) => {
                let mut result = GetPromptResult::new(vec![PromptMessage::new(
                    Role::User,
                    ContentBlock::text(prompt),
                )]);
                result.description = Some(description);
                Ok(result.into())
            }
            Err(e) => Err(protocol_error(&e)),
        }
    }
}
