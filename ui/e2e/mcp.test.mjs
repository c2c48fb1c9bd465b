// An MCP client edits the graph the user has open (issue 41): the official Python SDK's client
// (tests/mcp_e2e_client.py) calls our Streamable HTTP endpoint; the panel, inside the real ComfyUI
// frontend of every version in frontends.txt (the stand-in), runs the call with the graph tools:
// `addNode` puts the node in the graph, under the "external agent" line with the client's name,
// and Ctrl+Z on the canvas takes it out again; a removal asks first with the approval card marked
// with the client's name: Deny (with the user's words) leaves the node and the client reads the
// words, Allow removes it.
import assert from "node:assert/strict";
import { mcpCall, relayOpen } from "./mcpClient.mjs";
import { after, before, describe, test } from "./support.mjs"; // node:test's, see support.mjs
import { focusCanvas, frontendVersions, graphState, launchBrowser, openAssistant, openTarget, panel, screenshot, standinSkip, startHarness, watchPage } from "./support.mjs";

const nodeExists = (page, id) => page.evaluate((id) => !!(window.app.rootGraph ?? window.app.graph).getNodeById(id), id);

for (const version of frontendVersions()) {
  describe(`an MCP client edits the open graph in ComfyUI frontend ${version} (stand-in)`, { skip: standinSkip(version) }, () => {
    let harness;
    let browser;
    let page;
    let ourErrors;
    const step = (name) => `mcp-${version}-${name}`;
    const line = () => panel(page).getByRole("region", { name: "External agent" });
    const card = () => line().getByRole("group", { name: "The assistant asks before it acts" });

    /** addNode through MCP: the id of the node it added (the client read the tool's output). */
    const addByMcp = async (nodeType) => {
      const before = new Set((await graphState(page)).nodes.map((n) => n.id));
      const result = await mcpCall(harness.app, "addNode", { nodeType });
      assert.equal(result.isError, false, result.text);
      const added = (await graphState(page)).nodes.filter((n) => !before.has(n.id));
      assert.deepEqual(added.map((n) => n.type), [nodeType]);
      assert.equal(String(JSON.parse(result.text).nodeId), String(added[0].id), result.text);
      return added[0].id;
    };

    before(async () => {
      harness = await startHarness({ comfyFrontend: version });
      browser = await launchBrowser();
      page = await browser.context.newPage();
      watchPage(page);
      // (the frontend's own errors at load, e.g. 1.27.10's settings, are not this test's)
      ourErrors = [];
      page.on("pageerror", (error) => {
        if (/comfyui-assistant/.test(error.stack ?? "")) ourErrors.push(error.stack);
      });
      await openTarget(page, harness.app, { comfyui: true });
      await openAssistant(page);
      await relayOpen(page);
    });

    after(async () => {
      await browser?.close();
      await harness?.stop();
    });

    test("addNode from the client appears in the graph, listed under the client's name; Ctrl+Z undoes it", { timeout: 90_000 }, async () => {
      const id = await addByMcp("EmptyImage");
      await line().getByText("External agent (MCP): e2e-agent 0.9").waitFor();
      await line().getByRole("button", { name: "Calls: 1" }).click();
      await line().locator(".cua-mcp-call[data-state=done]").getByText("addNode").waitFor();
      await screenshot(page, step("added"), "external-agent");
      await focusCanvas(page);
      await page.keyboard.press("Control+z");
      await page.waitForFunction((id) => !(window.app.rootGraph ?? window.app.graph).getNodeById(id), id, { timeout: 5_000 });
      assert.equal(await nodeExists(page, id), false);
    });

    test("'Put the graph back' restores the graph from before the client's calls, as one undo step", { timeout: 90_000 }, async () => {
      const before = (await graphState(page)).nodes.map((n) => n.id).sort();
      const first = await addByMcp("EmptyImage");
      const second = await addByMcp("PreviewImage");
      await line().getByRole("button", { name: "Put the graph back as it was before these calls" }).click();
      await line().getByText("The graph is back as it was before these calls (Ctrl+Z brings them back).").waitFor();
      assert.deepEqual((await graphState(page)).nodes.map((n) => n.id).sort(), before);
      await focusCanvas(page);
      await page.keyboard.press("Control+z");
      await page.waitForFunction((ids) => ids.every((id) => !!(window.app.rootGraph ?? window.app.graph).getNodeById(id)), [first, second], { timeout: 5_000 });
    });

    test("a removal asks in the panel, marked with the client: Deny keeps the node and the client reads the user's words; Allow removes it", { timeout: 120_000 }, async () => {
      const id = await addByMcp("EmptyImage");
      const denied = mcpCall(harness.app, "removeNodes", { nodeIds: [String(id)] });
      await card().waitFor({ timeout: 30_000 });
      await line().getByText("e2e-agent (an MCP client) asks:").waitFor();
      await screenshot(page, step("asks"), "approval");
      await card().getByRole("textbox", { name: "Why not? (optional, sent with Deny)" }).fill("keep the blank image");
      await card().getByRole("button", { name: "Deny" }).click();
      const no = await denied;
      assert.equal(no.isError, true, no.text);
      assert.match(no.text, /keep the blank image/);
      assert.equal(await nodeExists(page, id), true, "Deny removed nothing");
      await line().locator(".cua-mcp-call[data-state=denied]").getByText("removeNodes").waitFor();

      const allowed = mcpCall(harness.app, "removeNodes", { nodeIds: [String(id)] });
      await card().waitFor({ timeout: 30_000 });
      await card().getByRole("button", { name: "Allow" }).click();
      const yes = await allowed;
      assert.equal(yes.isError, false, yes.text);
      assert.deepEqual(JSON.parse(yes.text).removed.map(String), [String(id)]);
      assert.equal(await nodeExists(page, id), false, "Allow removed it");
      assert.deepEqual(ourErrors, []);
    });
  });
}
