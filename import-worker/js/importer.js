// roofline importer: what the viewer loads (as a classic script, so that it loads from file://
// too) the first time a torch.profiler trace or an Nsight Compute CSV is opened, never on first
// paint. It holds the import worker's script and its wasm (gzipped, base64), both written here by
// `cargo xtask web`, and runs each import in a fresh Web Worker made from a Blob URL: nothing is
// uploaded, and the page's thread stays free. The viewer calls:
//
//   rooflineImporter.start(inputs, machine, options, onProgress, config) -> Promise<{bundle: Blob, launches, entries}>
//     inputs: File objects, or URLs (strings) the worker fetches;
//     machine: null, or {name, bytes: Uint8Array} of a machine bundle (as `--machine`);
//     options: null, or `roofline import`'s flags as an array of words (["--arch", "9.0"]),
//     read by the importer as the CLI reads them;
//     onProgress(what, done, total): what is being done (reading, inflating, importing), in
//     bytes (or kernels);
//     config: null, or a model's Hugging Face config.json (a File or a URL), as --model-config;
//     the promise fails with the CLI's message for the same input, or "cancelled".
//   rooflineImporter.groups(files) -> Promise<Array<Array<number>>>: how files opened together
//     are imported, as the importer tells them apart by their content: each torch.profiler
//     trace alone, the Nsight Compute CSV files together (indices into files).
//   rooflineImporter.catalogue() -> Promise<Array<[id, product]>>: the GPU catalogue's entries
//     that give ceilings (`--ceilings datasheet:ID`), asked of the worker once.
//   rooflineImporter.draw(bytes, chart, width, device) -> Promise<[svg, words]>: a chart of a
//     bundle (its bytes) drawn by the importer, so that the viewer's first paint does not carry
//     it: `comm` (its collectives against their links, the roofs of `device` or null) or
//     `sweep` (its machine's ERT-style sweep), as the standalone SVG, `width` pixels wide, and
//     a line of figures (or null); fails with why there is nothing to draw.
//   rooflineImporter.cancel(): stops the imports running (their worker is terminated).
(() => {
  const WORKER = "__ROOFLINE_WORKER__";
  const WASM = "__ROOFLINE_WASM__";
  let compiling = null;
  let workerUrl = null;
  const running = new Set();

  // The worker's wasm, inflated and compiled once; each worker instantiates it.
  function compiled() {
    compiling ??= (async () => {
      if (typeof DecompressionStream !== "function") {
        throw "this browser cannot import traces here (no DecompressionStream); use `roofline import` and open the bundle";
      }
      const gz = Uint8Array.from(atob(WASM), (c) => c.charCodeAt(0));
      const bytes = await new Response(new Blob([gz]).stream().pipeThrough(new DecompressionStream("gzip"))).arrayBuffer();
      return WebAssembly.compile(bytes);
    })();
    return compiling;
  }

  // One request to a fresh worker: `onMessage(m, settle)` handles each of its messages.
  function job(request, onMessage) {
    const j = {};
    const done = new Promise((resolve, reject) => {
      j.fail = (why) => {
        if (j.worker) j.worker.terminate();
        running.delete(j);
        reject(why);
      };
      j.succeed = (value) => {
        j.worker.terminate();
        running.delete(j);
        resolve(value);
      };
      running.add(j);
      compiled().then((module) => {
        if (!running.has(j)) return;
        workerUrl ??= URL.createObjectURL(new Blob([WORKER], { type: "text/javascript" }));
        const worker = new Worker(workerUrl, { name: "roofline import" });
        j.worker = worker;
        worker.onmessage = ({ data: m }) => {
          if (m.type === "error") j.fail(m.message);
          else onMessage(m, j.succeed);
        };
        worker.onerror = (e) => {
          e.preventDefault();
          j.fail("the import stopped: " + (e.message || "the worker failed (out of memory?)"));
        };
        worker.postMessage({ module, ...request });
      }, (e) => j.fail(typeof e === "string" ? e : "the importer could not start: " + ((e && e.message) || e)));
    });
    return done;
  }

  function start(inputs, machine, options, onProgress, config) {
    // The bundle's text arrives in pieces, folded into a Blob every 64 MiB.
    let parts = [], pending = [], pendingBytes = 0;
    return job(
      { kind: "import", inputs, machine, options, config: config || null, created: new Date().toISOString().slice(0, 19) + "Z" },
      (m, succeed) => {
        if (m.type === "progress") {
          onProgress(m.what, m.done, m.total);
        } else if (m.type === "chunk") {
          pending.push(m.bytes);
          pendingBytes += m.bytes.length;
          if (pendingBytes >= 64 << 20) {
            parts.push(new Blob(pending));
            pending = [];
            pendingBytes = 0;
          }
        } else if (m.type === "done") {
          parts.push(...pending);
          succeed({ bundle: new Blob(parts, { type: "application/json" }), launches: m.launches, entries: m.entries });
        }
      },
    );
  }

  function groups(files) {
    return job({ kind: "groups", inputs: files }, (m, succeed) => {
      if (m.type === "groups") succeed(m.groups);
    });
  }

  let entries = null;
  function catalogue() {
    entries ??= job({ kind: "catalogue", inputs: [] }, (m, succeed) => {
      if (m.type === "catalogue") succeed(m.entries);
    }).catch((e) => {
      // Asked again next time (a cancel stops this job too).
      entries = null;
      throw e;
    });
    return entries;
  }

  // A chart of a bundle (its bytes): [svg, words] (see `draw` in the worker's wasm), or the
  // reason there is nothing to draw.
  function draw(bytes, chart, width, device) {
    return job({ kind: "draw", inputs: [], bytes, chart, width, device: device || undefined }, (m, succeed) => {
      if (m.type === "drawn") succeed(m.drawn);
    });
  }

  function cancel() {
    for (const job of [...running]) job.fail("cancelled");
  }

  globalThis.rooflineImporter = { start, groups, catalogue, draw, cancel };
})();
