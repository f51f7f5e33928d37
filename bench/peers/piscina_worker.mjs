// piscina and tinypool call the default export with the submitted object.
export default function add({ a, b }) {
  return a + b;
}
