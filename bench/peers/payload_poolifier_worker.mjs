// The payload benchmark's task for poolifier: {bytes} → checksum; {size} → fresh bytes (structured clone).
import { ThreadWorker } from "poolifier";
export default new ThreadWorker(({ bytes, size, text }) => {
  if (text !== undefined) {
    return { length: text.length, first: text.charCodeAt(0), last: text.charCodeAt(text.length - 1) };
  }
  if (bytes !== undefined) return bytes.length + bytes[0] + bytes[bytes.length - 1];
  const out = new Uint8Array(size);
  out[0] = 1;
  out[size - 1] = 2;
  return out;
});
