// The payload benchmark's bare postMessage loop worker (web Worker: Bun): one message in, one out, by
// plain structured clone (no transfer list). {i, bytes} → {i, r: checksum}; {i, size} → {i, bytes}.
self.onmessage = (event) => {
  const m = event.data;
  if (m.text !== undefined) {
    self.postMessage({
      i: m.i,
      r: { length: m.text.length, first: m.text.charCodeAt(0), last: m.text.charCodeAt(m.text.length - 1) },
    });
  } else if (m.bytes !== undefined) {
    self.postMessage({ i: m.i, r: m.bytes.length + m.bytes[0] + m.bytes[m.bytes.length - 1] });
  } else {
    const bytes = new Uint8Array(m.size);
    bytes[0] = 1;
    bytes[m.size - 1] = 2;
    self.postMessage({ i: m.i, bytes });
  }
};
