//! stdio: requests written on the server's stdin as answers come back on its stdout, so that
//! a fixed number is always in flight.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

use super::{Answer, DriveError, INITIALIZE, INITIALIZED, Plan, Server, Usage, Window, usage_over};

/// Drives the server over its pipes until the window closes.
pub(super) async fn drive(plan: &Plan, server: &mut Server) -> Result<(Window, Usage), DriveError> {
    let child = server.child();
    let mut input = child.stdin.take().ok_or(DriveError::Protocol("no stdin pipe".into()))?;
    let output = child.stdout.take().ok_or(DriveError::Protocol("no stdout pipe".into()))?;
    let mut lines = BufReader::with_capacity(1 << 16, output);
    let mut line = Vec::new();

    let io = DriveError::io("talking to the server over stdio");
    input.write_all(format!("{INITIALIZE}\n{INITIALIZED}\n").as_bytes()).await.map_err(io)?;
    read_line(&mut lines, &mut line).await?;

    let mut window = Window::new(plan);
    let (opens, closes) = (window.opens, window.closes);
    let calls = async {
        let mut sent_at = HashMap::with_capacity(plan.concurrency * 2);
        let mut next_id = 1;
        let mut batch = Vec::new();
        for _ in 0..plan.concurrency {
            batch.extend_from_slice(&plan.request(next_id));
            batch.push(b'\n');
            sent_at.insert(next_id, Instant::now());
            next_id += 1;
        }
        input.write_all(&batch).await.map_err(DriveError::io("writing requests"))?;
        loop {
            read_line(&mut lines, &mut line).await?;
            let Some(id) = Answer::read(&line, plan.call)? else { continue };
            let sent =
                sent_at.remove(&id).ok_or_else(|| DriveError::Protocol(format!("an answer to {id}, not asked")))?;
            if !window.record(sent) {
                return Ok::<_, DriveError>(());
            }
            let mut request = plan.request(next_id);
            request.push(b'\n');
            sent_at.insert(next_id, Instant::now());
            next_id += 1;
            input.write_all(&request).await.map_err(DriveError::io("writing requests"))?;
        }
    };
    let (called, cpu) = tokio::join!(calls, usage_over(opens, closes, &*server));
    called?;
    Ok((window, cpu?))
}

/// Reads one line into `line`, within a generous bound.
async fn read_line(lines: &mut BufReader<tokio::process::ChildStdout>, line: &mut Vec<u8>) -> Result<(), DriveError> {
    line.clear();
    let read = tokio::time::timeout(Duration::from_secs(30), lines.read_until(b'\n', line))
        .await
        .map_err(|_| DriveError::Timeout("no answer on stdout for 30 s"))?
        .map_err(DriveError::io("reading the server's stdout"))?;
    if read == 0 {
        return Err(DriveError::Protocol("the server closed its stdout".into()));
    }
    Ok(())
}
