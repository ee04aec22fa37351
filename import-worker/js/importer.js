// roofline importer: what the viewer loads (as a classic script, so that it loads from file://
// too) the first time a torch.profiler trace or an Nsight Compute CSV is opened, never on first
// paint. It holds the import worker's script and its wasm (gzipped, base64), both written here by
// `cargo xtask web`, and runs each import in a fresh Web Worker made from a Blob URL: nothing is
// uploaded, and the page's thread stays free. The viewer calls:
//
//   rooflineImporter.start(inputs, machine, options, onProgress) -> Promise<{bundle: Blob, launches, entries}>
//     inputs: File objects, or URLs (strings) the worker fetches;
//     machine: null, or {name, bytes: Uint8Array} of a machine bundle (as `--machine`);
//     options: null, or {arch, convention, allow_partial, allow_machine_mismatch}, as
//     `roofline import`'s flags of those names;
//     onProgress(what, done, total): what is being done (reading, inflating, importing), in
//     bytes (or kernels);
//     the promise fails with the CLI's message for the same input, or "cancelled".
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

  function start(inputs, machine, options, onProgress) {
    const job = {};
    const done = new Promise((resolve, reject) => {
      job.fail = (why) => {
        if (job.worker) job.worker.terminate();
        running.delete(job);
        reject(why);
      };
      running.add(job);
      compiled().then((module) => {
        if (!running.has(job)) return;
        workerUrl ??= URL.createObjectURL(new Blob([WORKER], { type: "text/javascript" }));
        const worker = new Worker(workerUrl, { name: "roofline import" });
        job.worker = worker;
        // The bundle's text arrives in pieces, folded into a Blob every 64 MiB.
        let parts = [], pending = [], pendingBytes = 0;
        worker.onmessage = ({ data: m }) => {
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
            worker.terminate();
            running.delete(job);
            parts.push(...pending);
            resolve({ bundle: new Blob(parts, { type: "application/json" }), launches: m.launches, entries: m.entries });
          } else if (m.type === "error") {
            job.fail(m.message);
          }
        };
        worker.onerror = (e) => {
          e.preventDefault();
          job.fail("the import stopped: " + (e.message || "the worker failed (out of memory?)"));
        };
        worker.postMessage({
          module,
          inputs,
          machine,
          options,
          created: new Date().toISOString().slice(0, 19) + "Z",
        });
      }, (e) => job.fail(typeof e === "string" ? e : "the importer could not start: " + ((e && e.message) || e)));
    });
    return done;
  }

  function cancel() {
    for (const job of [...running]) job.fail("cancelled");
  }

  globalThis.rooflineImporter = { start, cancel };
})();
