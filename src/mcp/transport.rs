//! The stdio transport under rmcp: one JSON-RPC message per line, and an
//! answer to every line. rmcp's own reader drops a line that is not JSON or
//! is over its size limit without a word, which leaves a client waiting for
//! that id forever; here such a line gets a JSON-RPC error (`-32700` with
//! `id: null` for one that is not JSON, `-32600` for one too large or not
//! a request) and the server reads on.
//!
//! Lines are read through a bounded buffer, so a line without an end never
//! grows memory past [`MAX_LINE`]. Everything written, rmcp's messages and
//! these errors, goes through one writer task as whole lines, so they never
//! interleave and a cancelled read (rmcp polls `receive` in a `select!`)
//! never leaves half a line on stdout.
//!
//! The reader stops while [`MAX_OWED`] answers are owed: requests handed to rmcp and not
//! answered yet, and lines not yet written. A client that writes and never reads then fills
//! its own pipe instead of the server's memory.

use std::collections::{HashSet, VecDeque};
use std::io;
use std::sync::{Arc, Mutex};

use rmcp::service::{RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::Transport;
use rmcp::RoleServer;
use serde_json::{json, Value};
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::sync::{mpsc, oneshot, Notify};
use tokio::task::JoinHandle;

/// The largest message read, newline included (16 MiB, as rmcp's default).
pub const MAX_LINE: usize = 16 * 1024 * 1024;

/// How many answers may be owed before the reader waits: enough for any client's pipelining,
/// small enough that what they hold stays a few MiB.
pub const MAX_OWED: usize = 64;

/// JSON-RPC's codes for a line that is not JSON, and for JSON that is not
/// a request.
const PARSE_ERROR: i64 = -32700;
const INVALID_REQUEST: i64 = -32600;

/// A whole line to write, and who waits to hear it was written.
type Outgoing = (Vec<u8>, Option<oneshot::Sender<io::Result<()>>>);

pub struct LineTransport<R> {
    read: BufReader<R>,
    /// The line read so far (kept across cancelled reads).
    line: Vec<u8>,
    /// Dropping the rest of a line already answered as too large.
    skipping: bool,
    /// Lines read but not handed to rmcp yet: the end of the input has a
    /// last line without its newline.
    ended: bool,
    out: Option<mpsc::UnboundedSender<Outgoing>>,
    /// Errors answered while rmcp was not listening, still to send.
    queued: VecDeque<Vec<u8>>,
    /// What is owed to the client, shared with the writer task.
    flow: Arc<Flow>,
}

/// The answers owed: requests rmcp has not answered (by id), lines not written yet. The
/// writer task wakes the reader each time it writes one.
#[derive(Default)]
struct Flow {
    owed: Mutex<Owed>,
    written: Notify,
}

#[derive(Default)]
struct Owed {
    requests: HashSet<String>,
    unwritten: usize,
}

impl Flow {
    fn room(&self) -> bool {
        let owed = self.owed.lock().unwrap_or_else(|e| e.into_inner());
        owed.requests.len() + owed.unwritten < MAX_OWED
    }

    fn update(&self, change: impl FnOnce(&mut Owed)) {
        change(&mut self.owed.lock().unwrap_or_else(|e| e.into_inner()));
    }

    /// Waits until fewer than [`MAX_OWED`] answers are owed. Safe to cancel.
    async fn wait_for_room(&self) {
        while !self.room() {
            self.written.notified().await;
        }
    }
}

/// A request id as a key (JSON text, so `1` and `"1"` stay apart).
fn id_key<T: serde::Serialize>(id: &T) -> String {
    serde_json::to_string(id).unwrap_or_default()
}

/// The transport over `read` and `write`, and the writer task: await it
/// after the server stops, so that every answer is written before exit.
pub fn line_transport<R, W>(read: R, write: W) -> (LineTransport<R>, JoinHandle<()>)
where
    R: AsyncRead + Unpin + Send + 'static,
    W: AsyncWrite + Unpin + Send + 'static,
{
    let (tx, rx) = mpsc::unbounded_channel();
    let flow = Arc::new(Flow::default());
    let writer = tokio::spawn(write_lines(write, rx, flow.clone()));
    let transport = LineTransport {
        read: BufReader::new(read),
        line: Vec::new(),
        skipping: false,
        ended: false,
        out: Some(tx),
        queued: VecDeque::new(),
        flow,
    };
    (transport, writer)
}

async fn write_lines<W: AsyncWrite + Unpin>(
    mut write: W,
    mut lines: mpsc::UnboundedReceiver<Outgoing>,
    flow: Arc<Flow>,
) {
    while let Some((line, done)) = lines.recv().await {
        let written = match write.write_all(&line).await {
            Ok(()) => write.flush().await,
            Err(e) => Err(e),
        };
        flow.update(|o| o.unwritten = o.unwritten.saturating_sub(1));
        flow.written.notify_one();
        let failed = written.is_err();
        if let Some(done) = done {
            let _ = done.send(written);
        }
        if failed {
            // The client is gone; the senders hear it as a closed channel.
            return;
        }
    }
}

fn closed() -> io::Error {
    io::Error::new(
        io::ErrorKind::NotConnected,
        "the MCP client closed the connection",
    )
}

/// What one read of the input gave.
enum Read {
    /// A whole line is in `line` (without its newline).
    Line,
    /// A line went over [`MAX_LINE`]; the rest of it is being dropped.
    TooLong,
    End,
}

impl<R: AsyncRead + Unpin + Send> LineTransport<R> {
    /// Reads the next line into `self.line`, never holding more than
    /// [`MAX_LINE`] of it. Safe to cancel: what was read stays in `self`.
    async fn read_line(&mut self) -> io::Result<Read> {
        loop {
            let available = self.read.fill_buf().await?;
            if available.is_empty() {
                self.skipping = false;
                if self.line.is_empty() || self.ended {
                    return Ok(Read::End);
                }
                self.ended = true;
                return Ok(Read::Line);
            }
            let newline = available.iter().position(|&b| b == b'\n');
            let take = newline.map_or(available.len(), |i| i + 1);
            let mut read = None;
            if self.skipping {
                self.skipping = newline.is_none();
            } else if self.line.len() + take > MAX_LINE {
                self.line.clear();
                self.skipping = newline.is_none();
                read = Some(Read::TooLong);
            } else {
                self.line.extend_from_slice(&available[..take]);
                if newline.is_some() {
                    self.line.pop();
                    read = Some(Read::Line);
                }
            }
            self.read.consume(take);
            if let Some(read) = read {
                return Ok(read);
            }
        }
    }

    /// Queues an error answer; it is sent at once, or at the next read.
    fn answer(&mut self, id: Value, code: i64, message: String) {
        let doc = json!({
            "jsonrpc": "2.0",
            "id": id,
            "error": { "code": code, "message": message },
        });
        let mut line = doc.to_string().into_bytes();
        line.push(b'\n');
        self.queued.push_back(line);
        self.flush_answers();
    }

    fn flush_answers(&mut self) {
        let Some(out) = &self.out else {
            self.queued.clear();
            return;
        };
        while let Some(line) = self.queued.pop_front() {
            self.flow.update(|o| o.unwritten += 1);
            if out.send((line, None)).is_err() {
                self.flow
                    .update(|o| o.unwritten = o.unwritten.saturating_sub(1));
                self.queued.clear();
                return;
            }
        }
    }
}

/// The message on a line, or the error to answer it with. A notification
/// (no `id`) that is not one rmcp knows is dropped, as JSON-RPC never
/// answers a notification.
fn parse(line: &[u8]) -> Result<Option<RxJsonRpcMessage<RoleServer>>, (Value, i64, String)> {
    match serde_json::from_slice::<RxJsonRpcMessage<RoleServer>>(line) {
        Ok(msg) => Ok(Some(msg)),
        Err(e) if e.is_syntax() || e.is_eof() => Err((
            Value::Null,
            PARSE_ERROR,
            format!("Parse error: the line is not JSON ({e})"),
        )),
        Err(e) => {
            let value: Value = serde_json::from_slice(line).unwrap_or(Value::Null);
            let id = value
                .get("id")
                .filter(|id| id.is_string() || id.is_number());
            match id {
                None if value.get("method").is_some_and(Value::is_string) => Ok(None),
                _ => Err((
                    id.cloned().unwrap_or(Value::Null),
                    INVALID_REQUEST,
                    format!("Invalid Request: not a JSON-RPC message ctxkeep reads ({e})"),
                )),
            }
        }
    }
}

impl<R> LineTransport<R> {
    /// Hands a line to the writer task; resolves once it is written.
    async fn deliver(
        out: Option<mpsc::UnboundedSender<Outgoing>>,
        line: serde_json::Result<Vec<u8>>,
    ) -> io::Result<()> {
        let line = line.map_err(io::Error::other)?;
        let (done, written) = oneshot::channel();
        out.ok_or_else(closed)?
            .send((line, Some(done)))
            .map_err(|_| closed())?;
        written.await.map_err(|_| closed())?
    }
}

/// The request a `notifications/cancelled` names, as an id key. Read from the typed message:
/// turning it back into JSON linked in the serializers of every client message (0.1 MB).
fn cancelled_request(msg: &RxJsonRpcMessage<RoleServer>) -> Option<String> {
    use rmcp::model::{ClientNotification, JsonRpcMessage};
    let JsonRpcMessage::Notification(n) = msg else {
        return None;
    };
    match &n.notification {
        ClientNotification::CancelledNotification(c) => c.params.request_id.as_ref().map(id_key),
        // One whose parameters rmcp could not type (a request id neither number nor string).
        ClientNotification::CustomNotification(c) if c.method == "notifications/cancelled" => {
            c.params.as_ref()?.get("requestId").map(id_key)
        }
        _ => None,
    }
}

impl<R: AsyncRead + Unpin + Send> Transport<RoleServer> for LineTransport<R> {
    type Error = io::Error;

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleServer>,
    ) -> impl std::future::Future<Output = Result<(), Self::Error>> + Send + 'static {
        let line = serde_json::to_vec(&item).map(|mut l| {
            l.push(b'\n');
            l
        });
        let out = self.out.clone();
        // An answer moves from owed by rmcp to owed by the writer; counted here, when rmcp
        // hands it over, not when the future runs (rmcp spawns it).
        let id = match &item {
            rmcp::model::JsonRpcMessage::Response(r) => Some(id_key(&r.id)),
            rmcp::model::JsonRpcMessage::Error(e) => e.id.as_ref().map(id_key),
            _ => None,
        };
        self.flow.update(|o| {
            if let Some(id) = &id {
                o.requests.remove(id);
            }
            o.unwritten += 1;
        });
        let flow = self.flow.clone();
        async move {
            let sent = Self::deliver(out, line).await;
            if sent.is_err() {
                // Not written, and never will be: the client is gone.
                flow.update(|o| o.unwritten = o.unwritten.saturating_sub(1));
                flow.written.notify_one();
            }
            sent
        }
    }

    async fn receive(&mut self) -> Option<RxJsonRpcMessage<RoleServer>> {
        loop {
            self.flush_answers();
            // Backpressure: nothing more is read while the client is owed this much.
            self.flow.wait_for_room().await;
            match self.read_line().await {
                Ok(Read::Line) => {}
                Ok(Read::TooLong) => {
                    self.answer(
                        Value::Null,
                        INVALID_REQUEST,
                        format!(
                            "Invalid Request: a message over {MAX_LINE} bytes ({} MiB) on one line; it was not read",
                            MAX_LINE >> 20
                        ),
                    );
                    continue;
                }
                Ok(Read::End) | Err(_) => return None,
            }
            let line = std::mem::take(&mut self.line);
            let text = line.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(&line);
            let text = text.strip_suffix(b"\r").unwrap_or(text);
            if text.iter().all(u8::is_ascii_whitespace) {
                continue;
            }
            let parsed = parse(text);
            // Keep the buffer's capacity for the next line.
            self.line = line;
            self.line.clear();
            match parsed {
                Ok(Some(msg)) => {
                    if let rmcp::model::JsonRpcMessage::Request(r) = &msg {
                        let id = id_key(&r.id);
                        self.flow.update(|o| {
                            o.requests.insert(id);
                        });
                    }
                    if let Some(cancelled) = cancelled_request(&msg) {
                        // rmcp drops the answer to a cancelled request: none is owed.
                        self.flow.update(|o| {
                            o.requests.remove(&cancelled);
                        });
                    }
                    return Some(msg);
                }
                Ok(None) => {}
                Err((id, code, message)) => self.answer(id, code, message),
            }
        }
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        self.flush_answers();
        self.out = None;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_bad_line_gets_the_right_error() {
        let (id, code, msg) = parse(b"{not json").unwrap_err();
        assert_eq!((id, code), (Value::Null, PARSE_ERROR));
        assert!(msg.starts_with("Parse error"), "{msg}");
        let (id, code, _) = parse(b"\xff\xfe").unwrap_err();
        assert_eq!((id, code), (Value::Null, PARSE_ERROR));
        let (id, code, _) = parse(br#"{"jsonrpc":"2.0","id":7,"params":{}}"#).unwrap_err();
        assert_eq!((id, code), (json!(7), INVALID_REQUEST));
        let (id, code, _) = parse(b"[1,2]").unwrap_err();
        assert_eq!((id, code), (Value::Null, INVALID_REQUEST));
        // A notification is never answered, even one that does not parse.
        assert!(parse(br#"{"jsonrpc":"2.0","method":"notifications/nope"}"#).is_ok());
        assert!(
            parse(br#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":5}"#)
                .unwrap()
                .is_none()
        );
        assert!(parse(br#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#)
            .unwrap()
            .is_some());
    }

    #[test]
    fn a_cancellation_names_its_request_as_the_answer_is_keyed() {
        let named = |line: &str| cancelled_request(&parse(line.as_bytes()).unwrap().unwrap());
        let answer_key = |id| id_key(&id);
        assert_eq!(
            named(
                r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":7,"reason":"user"}}"#
            ),
            Some(answer_key(rmcp::model::NumberOrString::Number(7)))
        );
        // A string id stays apart from the number of the same digits.
        let text = named(
            r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"7"}}"#,
        );
        assert_eq!(
            text,
            Some(answer_key(rmcp::model::NumberOrString::String("7".into())))
        );
        assert_ne!(text.as_deref(), Some("7"));
        assert_eq!(
            named(r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{}}"#),
            None
        );
        assert_eq!(
            named(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#),
            None
        );
        assert_eq!(named(r#"{"jsonrpc":"2.0","id":7,"method":"ping"}"#), None);
    }
}
