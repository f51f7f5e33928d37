import { ThreadWorker } from "poolifier";
export default new ThreadWorker((data) => data.a + data.b);
