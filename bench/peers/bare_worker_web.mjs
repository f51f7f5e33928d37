// The bare postMessage loop's worker (web Worker: Deno, Bun): one message in, one message out.
self.onmessage = (event) => self.postMessage({ i: event.data.i, r: event.data.a + event.data.b });
