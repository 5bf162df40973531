// boot.js starts the playground: it fetches app.wasm (served as
// application/wasm, so it compiles while it downloads) and runs it with Go's
// wasm_exec.js. A failure is shown on the page, never a blank screen.
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
	const go = new Go();
	WebAssembly.instantiateStreaming(fetch("app.wasm"), go.importObject)
		.then((result) => go.run(result.instance))
		.catch(fail);
})();
