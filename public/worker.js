// worker.js runs the playground's program (app.wasm, compiled once by the
// page and posted here) in a Web Worker: the page sends {module} first, then
// {job} messages; the program answers with {type: "progress"} and
// {type: "answer"} messages (wasm/worker.go). The page cancels a job by
// terminating the worker.
"use strict";
importScripts("wasm_exec.js");
let ready = false;
const queue = [];
self.pipeplanWorkerReady = () => {
	ready = true;
	for (const job of queue.splice(0)) self.pipeplanRunJob(job);
};
self.onmessage = (e) => {
	const m = e.data;
	if (m.module) {
		const go = new Go();
		WebAssembly.instantiate(m.module, go.importObject)
			.then((instance) => go.run(instance))
			.catch((err) => self.postMessage({type: "answer", answer: JSON.stringify({error: "the background worker failed to start: " + err})}));
		return;
	}
	if (ready) self.pipeplanRunJob(m.job);
	else queue.push(m.job);
};
