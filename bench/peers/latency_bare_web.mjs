// The latency benchmark's bare loop worker (web Worker: Bun): one task at a time, replies its start time.
// The body is bench/latency_tasks.ts's spin.
self.onmessage = (event) => {
  const started = performance.timeOrigin + performance.now();
  const end = performance.now() + event.data;
  while (performance.now() < end) { /* spin */ }
  self.postMessage(started);
};
