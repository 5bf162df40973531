// boot.js starts the playground: it compiles app.wasm (served as
// application/wasm, so it compiles while it downloads) and runs it with Go's
// wasm_exec.js. A failure is shown on the page, never a blank screen.
//
// It also defines window.pipeplanWorkers, the page's Web Worker pool: long
// jobs (layer-profile plans, trace simulations) run in worker.js, which runs
// the same compiled module, so the page never freezes and a job is
// cancelled at once by terminating its worker.
"use strict";
(function () {
	const mount = document.getElementById("vugu_mount_point");
	function fail(err) {
		const p = document.createElement("p");
		p.className = "error";
		p.setAttribute("role", "alert");
		p.textContent = "pipeplan failed to load: " + err + ". If you run it from a checkout, build it with ./build.sh.";
		mount.replaceChildren(p);
	}
	let module = null; // the compiled app.wasm, shared with the workers
	let idle = null; // a started worker waiting for a job
	// quiet handles the errors of a worker no job listens to (a spare, or one
	// terminated while it loaded): they are recorded, not thrown at the page,
	// and a failed spare is never given a job.
	function quiet(e) {
		e.preventDefault();
		this.failed = e.message || "unknown error";
	}
	function spawn() {
		const w = new Worker("worker.js");
		w.onerror = quiet;
		w.postMessage({module: module});
		return w;
	}
	window.pipeplanWorkers = {
		// run starts job (a JSON string) in a worker; onProgress(done, total)
		// reports its progress and onDone(answerJSON) its answer. It returns
		// stop, which terminates the worker at once (onDone is then not called).
		run(job, onProgress, onDone) {
			const w = idle && !idle.failed ? idle : spawn();
			idle = null;
			let finished = false;
			const detach = () => { finished = true; w.onmessage = null; w.onerror = quiet; };
			// Progress is delivered once per turn of the event loop, the
			// latest only: a delivery may re-render the page, and messages
			// that queued up during a render must not each render again.
			let progress = null;
			const deliver = () => {
				const p = progress;
				progress = null;
				if (p && !finished) onProgress(p.done, p.total);
			};
			w.onmessage = (e) => {
				const m = e.data;
				if (finished) return;
				if (m.type === "progress") {
					if (progress === null) setTimeout(deliver, 0);
					progress = m;
				} else if (m.type === "answer") {
					progress = null;
					detach();
					if (idle === null) idle = w; else w.terminate();
					onDone(m.answer);
				}
			};
			w.onerror = (e) => {
				e.preventDefault();
				if (finished) return;
				detach();
				w.terminate();
				onDone(JSON.stringify({error: "the background worker failed: " + (e.message || "unknown error")}));
			};
			w.postMessage({job: job});
			return () => {
				if (finished) return;
				detach();
				w.terminate();
				if (idle === null) idle = spawn(); // the next job starts warm
			};
		},
	};
	const go = new Go();
	WebAssembly.compileStreaming(fetch("app.wasm"))
		.then((m) => {
			module = m;
			// The first plan's worker starts now, beside the page's own start.
			idle = spawn();
			return WebAssembly.instantiate(m, go.importObject);
		})
		.then((instance) => go.run(instance))
		.catch(fail);
})();
