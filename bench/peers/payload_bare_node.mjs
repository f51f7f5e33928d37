// The payload benchmark's bare postMessage loop worker (node:worker_threads): one message in, one out, by
// plain structured clone (no transfer list). {i, bytes} → {i, r: checksum}; {i, size} → {i, bytes}.
import { parentPort } from "node:worker_threads";
parentPort.on("message", (m) => {
  if (m.text !== undefined) {
    parentPort.postMessage({
      i: m.i,
      r: { length: m.text.length, first: m.text.charCodeAt(0), last: m.text.charCodeAt(m.text.length - 1) },
    });
  } else if (m.bytes !== undefined) {
    parentPort.postMessage({ i: m.i, r: m.bytes.length + m.bytes[0] + m.bytes[m.bytes.length - 1] });
  } else {
    const bytes = new Uint8Array(m.size);
    bytes[0] = 1;
    bytes[m.size - 1] = 2;
    parentPort.postMessage({ i: m.i, bytes });
  }
});
