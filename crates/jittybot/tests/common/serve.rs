//! `jittybot serve` started as an operator starts it, on a free port: the address read from
//! its first line, stopped with SIGTERM (or killed when the test ends), and asked over plain
//! HTTP/1.1.

use std::ffi::OsStr;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// How long a request to the server may take before the test fails.
const ANSWER_TIMEOUT: Duration = Duration::from_secs(30);

/// A running `jittybot serve`; killed when dropped, unless [`Server::stop`] stopped it.
pub struct Server {
    pub child: Child,
    /// `127.0.0.1:PORT`.
    pub addr: String,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Server {
    /// SIGTERM, then wait: a graceful stop exits 0.
    pub fn stop(mut self) -> Option<i32> {
        let pid = self.child.id().to_string();
        Command::new("kill").args(["-TERM", &pid]).status().unwrap();
        super::wait_or_kill(&mut self.child, ANSWER_TIMEOUT, "serve after SIGTERM").code()
    }
}

/// The `jittybot` command run through `prefix` (`prlimit ...`) when there is one, with
/// `RUST_LOG` unset and its standard output piped (the address is read from it).
pub fn serve_command(prefix: &[&str]) -> Command {
    let bin = env!("CARGO_BIN_EXE_jittybot");
    let mut command = match prefix.split_first() {
        Some((program, rest)) => {
            let mut command = Command::new(program);
            command.args(rest).arg(bin);
            command
        }
        None => Command::new(bin),
    };
    command
        .env_remove("RUST_LOG")
        .stdout(Stdio::piped())
        .stderr(Stdio::null());
    command
}

/// Starts `command` (a `jittybot serve`) and reads the first line it prints, which names
/// the address it listens on.
pub fn spawn_serve(mut command: Command) -> (Child, String) {
    let mut child = command.spawn().expect("jittybot serve starts");
    let mut line = String::new();
    let stdout = child.stdout.take().expect("its output");
    BufReader::new(stdout)
        .read_line(&mut line)
        .expect("its first line");
    (child, line)
}

/// `jittybot serve --listen 127.0.0.1:0 ARGS` (through `prefix`, see [`serve_command`]),
/// once it listens.
pub fn start_serve<S: AsRef<OsStr>>(prefix: &[&str], args: &[S]) -> Server {
    let mut command = serve_command(prefix);
    command
        .args(["serve", "--listen", "127.0.0.1:0"])
        .args(args);
    let (child, line) = spawn_serve(command);
    let addr = line
        .split("http://")
        .nth(1)
        .and_then(|rest| rest.split('/').next())
        .unwrap_or_else(|| panic!("no address in {line:?}"))
        .to_owned();
    Server { child, addr }
}

/// One request over HTTP/1.1 with `headers` (whole lines, each ending in `\r\n`): the
/// status and the body. Blocking; in async tests call it from `spawn_blocking`.
pub fn http_bytes(
    addr: &str,
    method: &str,
    path: &str,
    headers: &str,
    body: &str,
) -> (u16, Vec<u8>) {
    let mut stream = TcpStream::connect(addr).expect("connect to the service");
    stream.set_read_timeout(Some(ANSWER_TIMEOUT)).unwrap();
    let request = format!(
        "{method} {path} HTTP/1.1\r\nHost: {addr}\r\n{headers}Content-Length: {}\r\n\
         Connection: close\r\n\r\n{body}",
        body.len()
    );
    stream.write_all(request.as_bytes()).unwrap();
    let mut answer = Vec::new();
    stream.read_to_end(&mut answer).expect("an answer");
    let split = answer
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .expect("a head");
    let head = String::from_utf8_lossy(&answer[..split]).into_owned();
    let status = head
        .split(' ')
        .nth(1)
        .and_then(|code| code.parse().ok())
        .expect("a status");
    (status, answer[split + 4..].to_vec())
}

/// Calls `attempt` every `every` until it says it is done or `limit` has passed: its last
/// value (the caller asserts on it, so a timeout fails with what was seen last).
pub fn poll<T>(limit: Duration, every: Duration, mut attempt: impl FnMut() -> (bool, T)) -> T {
    let deadline = Instant::now() + limit;
    loop {
        let (done, value) = attempt();
        if done || Instant::now() > deadline {
            return value;
        }
        std::thread::sleep(every);
    }
}
