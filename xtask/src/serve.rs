//! `cargo xtask serve`: a minimal static file server for the built site.

use std::path::Path;

/// The `Content-Type` of a file of the site, by its extension.
fn content_type(path: &Path) -> &'static str {
    match path.extension().and_then(|e| e.to_str()) {
        Some("html") => "text/html; charset=utf-8",
        Some("js") => "text/javascript; charset=utf-8",
        Some("wasm") => "application/wasm",
        Some("json") => "application/json",
        Some("svg") => "image/svg+xml",
        Some("css") => "text/css; charset=utf-8",
        Some("png") => "image/png",
        _ => "application/octet-stream",
    }
}

/// A minimal static file server for `dist/` on 127.0.0.1 (GET and HEAD only).
pub fn serve(dist: &Path, port: u16) -> Result<(), String> {
    use std::io::{BufRead, BufReader, Write};
    let listener = std::net::TcpListener::bind(("127.0.0.1", port))
        .map_err(|e| format!("cannot listen on 127.0.0.1:{port}: {e}"))?;
    eprintln!(
        "\nserving {} at http://127.0.0.1:{port}/ (Ctrl-C to stop)",
        dist.display()
    );
    for stream in listener.incoming() {
        let Ok(mut stream) = stream else { continue };
        // Read the whole request head: closing a socket with unread input resets the
        // connection and truncates the response.
        let mut reader = BufReader::new(&stream);
        let mut request_line = String::new();
        if reader.read_line(&mut request_line).is_err() {
            continue;
        }
        let mut header = String::new();
        while reader.read_line(&mut header).is_ok_and(|n| n > 0) && header.trim() != "" {
            header.clear();
        }
        let mut parts = request_line.split_whitespace();
        let (method, target) = (parts.next().unwrap_or(""), parts.next().unwrap_or("/"));
        let path = target.split(['?', '#']).next().unwrap_or("/");
        let rel = path.trim_start_matches('/');
        let rel = if rel.is_empty() { "index.html" } else { rel };
        let file = dist.join(rel);
        let safe = !rel.split('/').any(|c| c == "..");
        let response = match (method, safe, std::fs::read(&file)) {
            ("GET" | "HEAD", true, Ok(body)) => {
                let head = format!(
                    "HTTP/1.1 200 OK\r\nContent-Type: {}\r\nContent-Length: {}\r\nCache-Control: no-store\r\nConnection: close\r\n\r\n",
                    content_type(&file),
                    body.len()
                );
                let mut r = head.into_bytes();
                if method == "GET" {
                    r.extend(body);
                }
                r
            }
            _ => {
                b"HTTP/1.1 404 Not Found\r\nContent-Length: 9\r\nConnection: close\r\n\r\nnot found"
                    .to_vec()
            }
        };
        let _ = stream.write_all(&response);
        let _ = stream.flush();
        let _ = stream.shutdown(std::net::Shutdown::Write);
    }
    Ok(())
}
