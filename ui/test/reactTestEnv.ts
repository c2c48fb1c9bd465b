// Imported first by the panel's React tests, before React loads: vite.config.ts defines
// NODE_ENV as "production" for the bundle, and vitest applies that to process.env too; React's
// test helpers (act) exist only in its development build. Restored after the file's tests.
import { afterAll } from "vitest";

const before = process.env["NODE_ENV"];
process.env["NODE_ENV"] = "test";
afterAll(() => {
  process.env["NODE_ENV"] = before;
});
