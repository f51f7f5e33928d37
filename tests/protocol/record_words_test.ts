/**
 * The task record's vocabulary (lib/record/fields.ts): every flag of a record's flags word is a bit of its
 * own, and every task state a value of its own. Two features that each add a flag in the same wave can
 * pick the same bit (progress's PROGRESS and the graph's GRAPH were both 32 when their branches met), and
 * then each reads the other's tasks as its own; this test fails on any such pair. The same for the words of
 * the control region and of a producer's channel line, which this wave's progress, stats and record-wait
 * work each grew.
 */
import { TaskFlags, TaskState } from "../../lib/record/fields.ts";
import { ControlWords, ProducerWords } from "../../lib/protocol/layout.ts";
import { assert, assertEquals, test } from "../_test.ts";

test("every TaskFlags flag is a single bit that no other flag uses", () => {
  let seen = 0;
  for (const [name, bit] of Object.entries(TaskFlags)) {
    assert(bit > 0 && (bit & (bit - 1)) === 0, `TaskFlags.${name} = ${bit} is not a single bit`);
    assertEquals(seen & bit, 0, `TaskFlags.${name} = ${bit} shares its bit with another flag`);
    seen |= bit;
  }
});

test("every TaskState value names one state", () => {
  const values = Object.values(TaskState);
  assertEquals(new Set(values).size, values.length, `two task states share a value: ${JSON.stringify(TaskState)}`);
});

for (const [name, words] of [["ControlWords", ControlWords], ["ProducerWords", ProducerWords]] as const) {
  test(`every ${name} word has an offset of its own`, () => {
    const byOffset = new Map<number, string>();
    for (const [word, offset] of Object.entries(words)) {
      const other = byOffset.get(offset);
      assertEquals(other, undefined, `${name}.${word} and ${name}.${other} share offset ${offset}`);
      byOffset.set(offset, word);
    }
  });
}
