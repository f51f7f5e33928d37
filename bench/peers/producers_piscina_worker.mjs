// The producers benchmark's piscina worker: piscina calls the default export with the message the main
// thread relayed, { task, args }. The bodies are bench/producers_tasks.ts's add and spinAdd.
export default function run({ task, args }) {
  const [a, b, us] = args;
  if (task === "spinAdd") {
    const end = performance.now() + us / 1000;
    while (performance.now() < end) { /* spin */ }
  }
  return a + b;
}
