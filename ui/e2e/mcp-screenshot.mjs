// Retake the README's picture of an MCP client's edit waiting for the user, docs/images/mcp-approval.png:
// the real ComfyUI frontend (the stand-in, tests/comfy_standin) with the panel open; the official
// Python MCP client (tests/mcp_e2e_client.py, as mcp.test.mjs calls it) adds an EmptyImage, then
// asks to remove it; the picture is the panel (cropped to it) with the "External agent (MCP)" line
// and the approval card. Deny then ends the client's call.
//
//   node e2e/mcp-screenshot.mjs [--frontend 1.58.1] [--out ../docs/images/mcp-approval.png]   (from ui/)
//
// Needs what the e2e suite needs (README.md in this folder): Chromium, ../.venv, the built ui/dist.
import assert from "node:assert/strict";
import { mkdirSync, statSync } from "node:fs";
import { dirname, join } from "node:path";
import { parseArgs } from "node:util";
import { mcpCall, relayOpen } from "./mcpClient.mjs";
import { RETURNING_USER_SETTINGS, ROOT, launchBrowser, openAssistant, openTarget, panel, startHarness, storeSettings } from "./support.mjs";

const LIMIT_KB = 150; // (the README's pictures stay small)

const { values: options } = parseArgs({
  options: {
    frontend: { type: "string", default: "1.58.1" },
    out: { type: "string", default: join(ROOT, "docs", "images", "mcp-approval.png") },
  },
});

const harness = await startHarness({ comfyFrontend: options.frontend });
const browser = await launchBrowser({ width: 960, height: 1500 }); // (the bottom panel takes a share of the height)
try {
  await storeSettings(harness.app, { ...RETURNING_USER_SETTINGS, "Comfy.Minimap.Visible": false });
  const page = await browser.context.newPage();
  await openTarget(page, harness.app, { comfyui: true });
  await openAssistant(page);
  await relayOpen(page);
  const added = await mcpCall(harness.app, "addNode", { nodeType: "EmptyImage" });
  assert.equal(added.isError, false, added.text);
  const nodeId = String(JSON.parse(added.text).nodeId);
  const line = panel(page).getByRole("region", { name: "External agent" });
  const removal = mcpCall(harness.app, "removeNodes", { nodeIds: [nodeId] });
  const card = line.getByRole("group", { name: "The assistant asks before it acts" });
  await card.waitFor({ timeout: 30_000 });
  await line.getByRole("button", { name: "Calls: 2" }).click(); // (the calls: the one done, the one waiting)
  await page.keyboard.press("Escape"); // a toast or popup of the frontend's
  await page.evaluate(() => document.activeElement?.blur?.()); // no focus ring in the picture
  await page.mouse.move(10, 10);
  await page.waitForTimeout(500);
  mkdirSync(dirname(options.out), { recursive: true });
  await panel(page).screenshot({ path: options.out });
  await card.getByRole("button", { name: "Deny" }).click();
  const denied = await removal;
  assert.equal(denied.isError, true, denied.text);
  const kb = Math.round(statSync(options.out).size / 1024);
  console.log(`${options.out}: ${kb} KB`);
  assert.ok(kb <= LIMIT_KB, `the picture is ${kb} KB, over ${LIMIT_KB} KB`);
} finally {
  await browser.close();
  await harness.stop();
}
