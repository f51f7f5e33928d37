import workerpool from "workerpool";
workerpool.worker({ add: (a, b) => a + b });
