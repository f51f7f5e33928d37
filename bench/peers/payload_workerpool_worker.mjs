// The payload benchmark's tasks for workerpool (structured clone, no transfer).
import workerpool from "workerpool";
workerpool.worker({
  takeBytes: (bytes) => bytes.length + bytes[0] + bytes[bytes.length - 1],
  takeText: (text) => ({ length: text.length, first: text.charCodeAt(0), last: text.charCodeAt(text.length - 1) }),
  makeBytes: (size) => {
    const out = new Uint8Array(size);
    out[0] = 1;
    out[size - 1] = 2;
    return out;
  },
});
