// An MCP client edits the graph the user has open (issue 41): the official Python SDK's client
// (tests/mcp_e2e_client.py) calls our Streamable HTTP endpoint; the panel, inside the real ComfyUI
// frontend of every version in frontends.txt (the stand-in), runs the call with the graph tools:
// `addNode` puts the node in the graph, under the "external agent" line with the client's name,
// and Ctrl+Z on the canvas takes it out again; a removal asks first with the approval card marked
// with the client's name: Deny (with the user's words) leaves the node and the client reads the
// words, Allow removes it. And Settings' "MCP clients": the endpoint's URL; a token made there
// (shown once, copied) lets the client in from this machine's network address (not loopback: the
// stand-in listens there too, as ComfyUI's --listen), the list then says when it was last used;
// revoked after ComfyUI's confirmation dialog, the token is refused. The line appears when a
// client connects (before any call), and its Disconnect ends the client: its next call fails, a
// new connection is refused, until "Allow again". With the Assistant tab closed, a question
// shows ComfyUI's toast.
import assert from "node:assert/strict";
import { heldClient, mcpCall, relayOpen } from "./mcpClient.mjs";
import { after, before, describe, test } from "./support.mjs"; // node:test's, see support.mjs
import { focusCanvas, frontendVersions, graphState, launchBrowser, openAssistant, openTarget, panel, screenshot, standinSkip, startHarness, toggleAssistant, watchPage } from "./support.mjs";

/** What the endpoint answers an `initialize` from `base` (with `token`, as a Bearer token). */
async function initialize(base, token = null) {
  const headers = { "content-type": "application/json", accept: "application/json, text/event-stream", ...(token ? { authorization: `Bearer ${token}` } : {}) };
  const params = { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "e2e", version: "1" } };
  const response = await fetch(`${base}/api/assistant/mcp`, { method: "POST", headers, body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "initialize", params }) });
  return { status: response.status, error: response.status === 401 ? (await response.json()).error : null };
}

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
      harness = await startHarness({ comfyFrontend: version, listenNetwork: true });
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

    test("a question while the Assistant tab is closed shows ComfyUI's toast; the card waits in the tab", { timeout: 120_000 }, async () => {
      const id = await addByMcp("EmptyImage");
      await toggleAssistant(page);
      await panel(page).waitFor({ state: "detached" });
      const asked = mcpCall(harness.app, "removeNodes", { nodeIds: [String(id)] });
      await page.getByText("e2e-agent (an MCP client) asks you in the Assistant panel").first().waitFor({ timeout: 30_000 });
      await page.getByText("Remove a node from the workflow, with the links that touch it.").first().waitFor();
      await screenshot(page, step("toast"), "toast");
      await openAssistant(page);
      await card().getByRole("button", { name: "Deny" }).click();
      const no = await asked;
      assert.equal(no.isError, true, no.text);
      assert.equal(await nodeExists(page, id), true, "Deny removed nothing");
    });

    test("the line appears when a client connects; Disconnect ends it (its next call fails, a new connection is refused) until Allow again", { timeout: 120_000 }, async () => {
      const held = heldClient(harness.app);
      try {
        assert.deepEqual(await held.connected, { connected: true });
        // (before any call of it)
        await line().getByText("External agent (MCP): e2e-agent 0.9").waitFor({ timeout: 30_000 });
        await line().getByText(/^e2e-agent 0\.9, connected at /).waitFor();
        await screenshot(page, step("connected"), "external-agent");
        await line().getByRole("button", { name: "Disconnect" }).click();
        await line().getByText("e2e-agent: disconnected by you; it cannot connect until you allow it").waitFor();
        await line().getByText("External agent (MCP): no client connected now").waitFor();
        assert.deepEqual(await held.call("getWorkflow", {}), { error: "Session not found" });
      } finally {
        held.close();
      }
      const refused = "The user disconnected e2e-agent in ComfyUI's Assistant panel: it takes no requests from e2e-agent until the user allows it again there.";
      assert.deepEqual(await mcpCall(harness.app, "getWorkflow", {}), { error: refused });

      await line().getByRole("button", { name: "Allow again" }).click();
      await line().getByText("e2e-agent: disconnected by you; it cannot connect until you allow it").waitFor({ state: "detached" });
      const back = await mcpCall(harness.app, "getWorkflow", {});
      assert.equal(back.isError, false, back.text);
      assert.deepEqual(ourErrors, []);
    });

    test("Settings' MCP clients: a token shown once lets a client in from the network address; revoked, it is refused", { timeout: 120_000 }, async () => {
      const search = (token) => mcpCall(harness.network, "searchInstalledNodes", { query: "EmptyImage" }, { token });
      const refusal = await initialize(harness.network);
      assert.equal(refusal.status, 401);
      assert.match(refusal.error, /^MCP connections from another machine need a token: create one in the assistant's Settings/);
      const openSettings = async () => {
        await panel(page).getByRole("button", { name: "Open the settings" }).click();
        const section = panel(page).getByRole("region", { name: "MCP clients" });
        await section.waitFor();
        return section;
      };
      let section = await openSettings();
      assert.equal(await section.getByRole("textbox", { name: "MCP endpoint (Streamable HTTP)" }).inputValue(), `${harness.app}/api/assistant/mcp`);
      await section.getByText("No tokens yet.").waitFor();
      await section.getByRole("textbox", { name: "New token name" }).fill("laptop");
      await section.getByRole("button", { name: "Create token" }).click();
      const shown = section.getByRole("group", { name: "New token “laptop”" });
      await shown.getByText("Copy it now: you will not see it again. Only its hash is kept.").waitFor();
      const token = await shown.getByRole("textbox", { name: "The token" }).inputValue();
      assert.match(token, /^cuamcp_\S{40,}$/);
      await browser.context.grantPermissions(["clipboard-read", "clipboard-write"], { origin: harness.app });
      await shown.getByRole("button", { name: "Copy: The token" }).click();
      await shown.getByText("copied").waitFor();
      assert.equal(await page.evaluate(() => navigator.clipboard.readText()), token);
      await screenshot(page, step("token"), "shown-once");

      const found = await search(token);
      assert.equal(found.isError, false, found.text);
      assert.match(found.text, /EmptyImage/);

      await shown.getByRole("button", { name: "Done" }).click();
      await shown.waitFor({ state: "detached" });
      const kept = await page.evaluate(() => JSON.stringify({ ...localStorage, ...sessionStorage }) + document.body.innerHTML);
      assert.equal(kept.includes(token), false, "the token stays nowhere in the page");
      await panel(page).getByRole("button", { name: "Back to the chat" }).click();
      section = await openSettings(); // (the list read again: it says when the token was last used)
      const item = section.getByRole("listitem").filter({ hasText: "laptop" });
      await item.waitFor();
      assert.doesNotMatch(await item.innerText(), /last used never/);

      await item.getByRole("button", { name: "Revoke “laptop”" }).click();
      const dialog = page.getByRole("dialog", { name: "Revoke the token “laptop”?" });
      await dialog.waitFor();
      await dialog.getByRole("button").filter({ hasText: /\b(Delete|Confirm)\b/ }).click(); // (ComfyUI's confirmation: "Delete" on 1.58)
      await section.getByText("No tokens yet.").waitFor();
      const revoked = await initialize(harness.network, token);
      assert.equal(revoked.status, 401);
      assert.match(revoked.error, /^this MCP token is not valid \(revoked, or mistyped\)/);
      await panel(page).getByRole("button", { name: "Back to the chat" }).click();
    });
  });
}
