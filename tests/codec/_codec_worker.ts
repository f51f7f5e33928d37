/**
 * The worker side of the codec's cross-thread test: decodes a value from the shared payload area, bumps
 * `shared[0]` through the decoded view when the value has one (to show the view is shared memory, not a
 * copy), encodes the value again right after it, and reports where.
 */
import { decode, Encoder } from "../../lib/codec/codec.ts";
import { parentPort } from "../../lib/runtime/thread.ts";

/** What the main thread sends: the payload buffer, the shared-buffer registry, and where the value is. */
export interface CodecEchoRequest {
  payload: SharedArrayBuffer;
  buffers: SharedArrayBuffer[];
  offset: number;
  length: number;
}

/** What the worker answers: where its encoding is, or why it failed. */
export type CodecEchoReply = { ok: true; offset: number; length: number } | { ok: false; message: string };

const port = parentPort();
port.onMessage((message) => {
  const { payload, buffers, offset, length } = message as CodecEchoRequest;
  // The buffers arrive as this thread's own SharedArrayBuffer objects for the same memory; ids are indexes.
  const encoder = new Encoder({ shareBuffer: (sab) => buffers.indexOf(sab) });
  try {
    const bytes = new Uint8Array(payload);
    const value = decode(bytes, offset, length, (id) => buffers[id]) as { shared?: unknown };
    if (value.shared instanceof Int32Array) value.shared[0] += 1;
    const n = encoder.encode(value, "result");
    encoder.copyTo(bytes, offset + length);
    port.post({ ok: true, offset: offset + length, length: n } satisfies CodecEchoReply);
  } catch (error) {
    port.post({ ok: false, message: String((error as Error).stack ?? error) } satisfies CodecEchoReply);
  }
});
