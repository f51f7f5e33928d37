// The latency benchmark's piscina worker: piscina calls the default export with the submitted value (the
// task's length in ms) and returns its start time. The body is bench/latency_tasks.ts's spin.
export default function spin(ms) {
  const started = performance.timeOrigin + performance.now();
  const end = performance.now() + ms;
  while (performance.now() < end) { /* spin */ }
  return started;
}
