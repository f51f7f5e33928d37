/**
 * Unit tests of the owner (lib/owner/owner.ts): placeholder, filled with the tests that kill StrykerJS's
 * survivors.
 *
 * @module
 */
