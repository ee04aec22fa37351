// roofline import worker: after wasm-bindgen's `no-modules` glue for roofline-import-worker,
// which defines `wasm_bindgen` (inlined above in the same classic script: a page opened from
// file:// may start a worker from a Blob URL only as a classic script). The page (importer.js)
// posts one request: the compiled wasm module, the inputs (File objects, or URLs to fetch), the
// machine bundle (a URL to fetch, or its name and bytes), the options (flag words) and the
// provenance's time, for an import; or the inputs alone, to be grouped into imports. Each input
// reaches the wasm as Blobs: the file as stored and, when it is gzip, its text inflated by the
// browser's DecompressionStream (kept as a Blob, so never whole in this worker's memory nor ever
// a JavaScript string). The wasm reads them synchronously with FileReaderSync. Progress, the
// bundle's text in pieces, and the outcome or the CLI's message go back to the page; the page
// cancels by terminating the worker.

const post = (m, transfer) => self.postMessage(m, transfer || []);

// Progress at most every 50 ms (and always at the end of a phase).
let lastProgress = 0;
function progress(what, done, total) {
  const now = performance.now();
  if (now - lastProgress < 50 && done < total) return;
  lastProgress = now;
  post({ type: "progress", what, done, total });
}

// A name for a URL's body: its last path segment.
function urlName(url) {
  const path = url.split(/[?#]/)[0];
  return decodeURIComponent(path.slice(path.lastIndexOf("/") + 1)) || url;
}

async function fetched(url) {
  let resp;
  try {
    resp = await fetch(url);
  } catch (e) {
    throw `could not fetch ${url}: the server did not answer, or it does not allow this page to read it (CORS: the server must send Access-Control-Allow-Origin)`;
  }
  if (!resp.ok) throw `could not fetch ${url}: the server answered HTTP ${resp.status} ${resp.statusText}`;
  return resp.blob();
}

// The gzip stream inflated as far as the browser can, as a Blob, and why it stopped early.
async function inflate(name, blob) {
  let read = 0;
  const counted = new TransformStream({
    transform(chunk, c) {
      read += chunk.length;
      progress("inflating", read, blob.size);
      c.enqueue(chunk);
    },
  });
  const reader = blob.stream().pipeThrough(counted).pipeThrough(new DecompressionStream("gzip")).getReader();
  const parts = [];
  let pending = [], pendingBytes = 0, error;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      pending.push(value);
      pendingBytes += value.length;
      // Folded into a Blob every 16 MiB: the browser keeps it, this worker does not.
      if (pendingBytes >= 16 << 20) {
        parts.push(new Blob(pending));
        pending = [];
        pendingBytes = 0;
      }
    }
  } catch (e) {
    error = String((e && e.message) || e);
  }
  parts.push(new Blob(pending));
  return { plain: new Blob(parts), error };
}

// The first `n` bytes of a gzip stream once inflated (for telling inputs apart), and why it
// stopped early, if it did before them.
async function inflateHead(blob, n) {
  const reader = blob.stream().pipeThrough(new DecompressionStream("gzip")).getReader();
  const parts = [];
  let got = 0, error;
  try {
    while (got < n) {
      const { done, value } = await reader.read();
      if (done) break;
      parts.push(value);
      got += value.length;
    }
  } catch (e) {
    error = String((e && e.message) || e);
  }
  reader.cancel().catch(() => {});
  return { plain: new Blob(parts).slice(0, n), error };
}

self.onmessage = async ({ data: req }) => {
  try {
    await wasm_bindgen({ module_or_path: req.module });
    if (req.kind === "catalogue") {
      post({ type: "catalogue", entries: wasm_bindgen.catalogue_entries() });
      return;
    }
    if (req.kind === "draw") {
      post({ type: "drawn", drawn: wasm_bindgen.draw(req.bytes, req.chart, req.width, req.device) });
      return;
    }
    const inputs = [];
    for (const i of req.inputs) {
      const name = typeof i === "string" ? urlName(i) : i.name;
      const raw = typeof i === "string" ? await fetched(i) : i;
      const magic = new Uint8Array(await raw.slice(0, 2).arrayBuffer());
      const input = { name, raw };
      if (magic[0] === 0x1f && magic[1] === 0x8b) {
        // Grouping reads only each input's first 4 KiB (roofline_import::input::HEAD).
        Object.assign(input, req.kind === "groups" ? await inflateHead(raw, 4096) : await inflate(name, raw));
      }
      inputs.push(input);
    }
    // The machine bundle: fetched from its URL, or its name and bytes.
    let machine = req.machine;
    if (typeof machine === "string") {
      machine = { name: urlName(machine), bytes: new Uint8Array(await (await fetched(machine)).arrayBuffer()) };
    } else if (Array.isArray(machine)) {
      machine = { name: machine[0], bytes: machine[1] };
    }
    if (req.kind === "groups") {
      post({ type: "groups", groups: wasm_bindgen.group_inputs(inputs) });
      return;
    }
    // A model's config.json opened with the trace (--model-config), read as the inputs are.
    let config = null;
    if (req.config) {
      const raw = typeof req.config === "string" ? await fetched(req.config) : req.config;
      config = { name: typeof req.config === "string" ? urlName(req.config) : req.config.name, raw };
    }
    const summary = wasm_bindgen.import_files(
      inputs,
      machine,
      req.options || null,
      req.created,
      progress,
      (bytes) => post({ type: "chunk", bytes }, [bytes.buffer]),
      config,
    );
    post({ type: "done", launches: summary.launches, entries: summary.entries });
  } catch (e) {
    post({ type: "error", message: typeof e === "string" ? e : String((e && e.message) || e) });
  }
};
