//! Running the `jittybot` binary as a user runs it, shared by the command tests.

// Each test file uses its own part of this module.
#![allow(dead_code)]

pub mod crawl;
pub mod serve;

use std::ffi::OsStr;
use std::io::{Read, Write};
use std::process::{Child, Command, ExitStatus, Output, Stdio};
use std::time::{Duration, Instant};

use testweb::TestWeb;

/// Runs `jittybot ARGS`, feeding `stdin` (if any) to it, and waits for it to exit.
///
/// Blocking is fine in the async tests too: the test web serves from the runtime's worker
/// threads while the test's own thread waits here.
pub fn jittybot<S: AsRef<OsStr>>(args: &[S], stdin: Option<&str>) -> Output {
    jittybot_with_env(args, stdin, &[])
}

/// [`jittybot`] with environment variables set (`RUST_LOG`).
pub fn jittybot_with_env<S: AsRef<OsStr>>(
    args: &[S],
    stdin: Option<&str>,
    env: &[(&str, &str)],
) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_jittybot"))
        .args(args)
        .env_remove("RUST_LOG")
        .envs(env.iter().copied())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("jittybot runs");
    let mut input = child.stdin.take().expect("stdin");
    if let Some(text) = stdin {
        // A usage error exits before reading: a broken pipe is then expected.
        let _ = input.write_all(text.as_bytes());
    }
    drop(input);
    // Read both pipes on their own threads so a chatty child never blocks on a full pipe while
    // the deadline below is watched.
    let drain = |pipe: Option<Box<dyn Read + Send>>| {
        std::thread::spawn(move || {
            let mut bytes = Vec::new();
            if let Some(mut pipe) = pipe {
                let _ = pipe.read_to_end(&mut bytes);
            }
            bytes
        })
    };
    let out = drain(
        child
            .stdout
            .take()
            .map(|p| Box::new(p) as Box<dyn Read + Send>),
    );
    let err = drain(
        child
            .stderr
            .take()
            .map(|p| Box::new(p) as Box<dyn Read + Send>),
    );
    let status = wait_or_kill(&mut child, COMMAND_DEADLINE, "jittybot");
    Output {
        status,
        stdout: out.join().expect("stdout reader"),
        stderr: err.join().expect("stderr reader"),
    }
}

/// The page about the crawler its User-Agent points to in the tests (`crawl` starts only
/// with one).
pub const INFO_URL: &str = "http://jittybot.test/bot";

/// The longest any one command of these tests may run: a command that hangs fails its test
/// with this message instead of hanging the whole suite.
pub const COMMAND_DEADLINE: Duration = Duration::from_secs(180);

/// Waits for `child` to exit, at most `deadline`; past it the child is killed and the test
/// fails, naming `what`. Blocking: call it from `spawn_blocking` in async tests that serve.
pub fn wait_or_kill(child: &mut Child, deadline: Duration, what: &str) -> ExitStatus {
    let start = Instant::now();
    loop {
        if let Some(status) = child.try_wait().expect("waiting for a child") {
            return status;
        }
        if start.elapsed() >= deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("{what} was still running after {deadline:?}: killed");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// The options that let the binary reach `host` on the test web (loopback, pinned by name).
pub fn reach(web: &TestWeb, host: &str) -> Vec<String> {
    let mut args = vec!["--allow-private-addresses".to_owned()];
    for pin in web.pins(host) {
        args.push("--resolve".to_owned());
        args.push(pin);
    }
    args
}

/// `jittybot COMMAND URL` (`robots`, `analyze`) for `path` on `host` of `web`, with the
/// options that reach it ([`reach`]) and `extra`.
pub fn url_command(
    command: &str,
    web: &TestWeb,
    host: &str,
    path: &str,
    extra: &[&str],
) -> Vec<String> {
    let mut args = vec![command.to_owned(), web.http_url(host, path)];
    args.extend(reach(web, host));
    args.extend(extra.iter().map(|s| (*s).to_owned()));
    args
}

/// The standard output, as text.
pub fn stdout(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

/// The standard error, as text.
pub fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

/// Serves on `host` a hostile robots.txt, scaled down: a chain of five redirects
/// answered after 300 ms each, the file (allowing everything) after 1.8 s.
pub fn slow_redirect_chain(web: &TestWeb, host: &str) {
    for hop in 0..5 {
        let from = match hop {
            0 => "/robots.txt".to_owned(),
            n => format!("/r{n}"),
        };
        web.site(host).path(&from).respond(
            testweb::Reply::redirect(301, &format!("/r{}", hop + 1))
                .delay(std::time::Duration::from_millis(300)),
        );
    }
    web.site(host).path("/r5").respond(
        testweb::Reply::robots_txt("User-agent: *\nAllow: /\n")
            .delay(std::time::Duration::from_millis(300)),
    );
    web.site(host)
        .path("/")
        .respond(testweb::Reply::ok().body("<head></head>"));
}
