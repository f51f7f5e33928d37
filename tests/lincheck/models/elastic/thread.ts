/**
 * A simulated thread of the elastic model (`model.ts`): one program per run over the shipped
 * `lib/protocol/sleep.ts` (`Sleep.idle`, `sleepOrRetire`, `newWork`, `wakeAll`) and `lib/protocol/slots.ts`
 * (`retireReserve`, `retireUnreserve`, `retireStoreAbsent`, `claimMail`, `growStoreStarting`, `growReserve`,
 * `bootStoreAwake`), imported statically (no variants: the mutation run patches the shipped files).
 *
 * Programs (the role in the thread block):
 * - WORKER: `lib/worker/search.ts`'s idle path of an elastic pool without tasks: search (a message first, then
 *   the injector), `Sleep.idle`, then `sleepOrRetire` with search.ts's retirement (`retireReserve(min)`,
 *   `retireUnreserve`, the mail word's load as `Mail.waiting`); on SLEPT_RETIRED `retireStoreAbsent`, as
 *   `WorkerLoop` does after its teardown, and the thread ends. A search takes a message (the test's
 *   MSG word) and then takes its mail word down, as the worker's event loop does once it handled one.
 * - POSTER: items pushed to the injector, each followed by `newWork`; `onNobodyWoken` noted (the growth told).
 * - DIRECTOR: the owner's directed post (`Owner.pickWorker`: `claimMail` on each slot in turn, then the
 *   message counted; `submission.ts` then calls `wakeAll`). A message no slot takes (every one retired, at
 *   a minimum of 0) goes to the injector, with `newWork`.
 * - GROWER: `Growth.check`'s shared-memory steps for one slot (growStoreStarting, growReserve); if reserved,
 *   the thread's start (the test's START word stored and notified, standing in for `new Worker`).
 * - GROWN: that thread: waits for START, `bootStoreAwake` (as `WorkerLoop` on load), then as WORKER.
 *
 * The idle timeout is a timed wait that times out only when the schedule says so.
 *
 * @module
 */

import { mem } from "../../../../lib/protocol/atomics.ts";
import { StatusWords } from "../../../../lib/protocol/layout.ts";
import { IDLE_POSTED, Sleep, SLEPT_RETIRED } from "../../../../lib/protocol/sleep.ts";
import { Slots } from "../../../../lib/protocol/slots.ts";
import { serveModel, type ThreadRun } from "../../kernel/gate.ts";
import {
  EBlock,
  ECONTROL_BYTES,
  ECONTROL_WORDS,
  EGlobal,
  ERole,
  ESLEEP_BYTES,
  ESTATUS_BYTES,
  EWork,
  EWORK_BYTES,
  EWORK_WORDS,
} from "./layout.ts";

/** The idle timeout (the gate ignores its length: it times out when the schedule says so). */
const IDLE_TIMEOUT_MS = 1;

await serveModel({ program });

function program({ buffer, ctl, base, role, p1 }: ThreadRun): void {
  if (role === ERole.NONE) return;
  const slotCount = Atomics.load(ctl, EGlobal.SLOTS);
  const min = Atomics.load(ctl, EGlobal.MIN);
  const sleep = new Sleep(buffer, ESLEEP_BYTES, slotCount);
  const status = new Int32Array(buffer, ESTATUS_BYTES, slotCount * StatusWords.count);
  const slots = new Slots(new Int32Array(buffer, ECONTROL_BYTES, ECONTROL_WORDS), sleep.words, status, slotCount);
  const work = new Int32Array(buffer, EWORK_BYTES, EWORK_WORDS);
  let nobody = false;
  // An elastic pool's newWork that found nobody to wake tells the growth (search.ts, owner.ts): noted.
  sleep.onNobodyWoken = () => {
    nobody = true;
    Atomics.add(ctl, base + EBlock.NOBODY, 1);
  };
  if (role === ERole.POSTER) {
    for (let i = 0; i < p1; i++) {
      nobody = false;
      mem.add(work, EWork.AVAIL, 1); // an injector push …
      sleep.newWork(); // … then tell a sleeper
      Atomics.store(ctl, base + EBlock.LAST_NOBODY, nobody ? 1 : 0);
    }
    return;
  }
  if (role === ERole.DIRECTOR) {
    for (let m = 0; m < p1; m++) {
      let target = -1;
      for (let i = 0; i < slotCount && target < 0; i++) if (slots.claimMail(i)) target = i;
      if (target < 0) {
        Atomics.add(ctl, base + EBlock.UNCLAIMED, 1);
        mem.add(work, EWork.AVAIL, 1);
        sleep.newWork();
        continue;
      }
      // The message is posted (claimMail counted it in the mail word); the worker reads it before it sleeps
      // again: submission.ts wakes every sleeper.
      mem.add(work, EWork.MSG + target, 1);
      sleep.wakeAll();
    }
    return;
  }
  if (role === ERole.GROWER) {
    if (!slots.growStoreStarting(p1)) return; // not ABSENT (a retirement not yet at its end)
    if (!slots.growReserve(p1, slotCount)) return;
    Atomics.store(ctl, base + EBlock.STARTED, 1);
    mem.store(work, EWork.START, 1); // new Worker(…)
    mem.notify(work, EWork.START, 1);
    return;
  }
  if (role === ERole.GROWN) {
    while (mem.load(work, EWork.START) === 0) mem.wait(work, EWork.START, 0);
    slots.bootStoreAwake(p1);
  } else if (role !== ERole.WORKER) throw new Error(`unknown role ${role}`);
  runWorker(p1, min, sleep, slots, status, work, ctl, base);
}

/** The worker loop's idle path (see the module doc) until it retires; blocked in its sleep otherwise. */
function runWorker(
  index: number,
  min: number,
  sleep: Sleep,
  slots: Slots,
  status: Int32Array,
  work: Int32Array,
  ctl: Int32Array,
  base: number,
): void {
  const mailAt = index * StatusWords.count + StatusWords.mail;
  const retirement = {
    reserve: () => slots.retireReserve(min),
    unreserve: () => slots.retireUnreserve(),
    mail: () => mem.load(status, mailAt) !== 0,
  };
  const takeFrom = (words: Int32Array, at: number): boolean => {
    for (;;) {
      const n = mem.load(words, at);
      if (n <= 0) return false;
      if (mem.compareExchange(words, at, n, n - 1) === n) return true;
    }
  };
  // A message first (lastSearch: mail must not wait for a wake), its count down once handled; then the injector.
  const takeMessage = (): boolean => {
    if (!takeFrom(work, EWork.MSG + index)) return false;
    mem.sub(status, mailAt, 1);
    return true;
  };
  const search = (): number => (takeMessage() || takeFrom(work, EWork.AVAIL) ? 1 : -1);
  for (;;) {
    if (search() >= 0) {
      Atomics.add(ctl, base + EBlock.TAKEN, 1);
      continue;
    }
    const late = sleep.idle(index, search, () => false);
    if (late >= 0) {
      Atomics.add(ctl, base + EBlock.TAKEN, 1);
      continue;
    }
    if (late === IDLE_POSTED) continue;
    if (sleep.sleepOrRetire(index, IDLE_TIMEOUT_MS, retirement) === SLEPT_RETIRED) {
      slots.retireStoreAbsent(index); // after the teardown (none here)
      Atomics.store(ctl, base + EBlock.RETIRED, 1);
      return;
    }
  }
}
