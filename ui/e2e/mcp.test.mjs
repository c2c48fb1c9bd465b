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
// shows ComfyUI's toast. getWorkflow gives the client the open graph as the panel reads it (a
// node the user added by hand in it); two clients at once each get their own card and answer;
// a client killed while its call waits on a card leaves the panel clean (the card goes, the call
// is marked cancelled, the graph as it was) and the next client's call works.
// In a real ComfyUI (COMFYUI_URL set): addNode and Ctrl+Z, a removal denied, getWorkflow; a
// ComfyUI whose Python has no `mcp` package (the endpoint answers 503) fails them, saying so.
import assert from "node:assert/strict";
import { heldClient, mcpCall, mcpCallProcess, panelId, relayOpen } from "./mcpClient.mjs";
import { after, before, describe, test } from "./support.mjs"; // node:test's, see support.mjs
import { COMFYUI_SKIP, COMFYUI_URL, clickEmptyCanvas, focusCanvas, frontendVersions, graphState, launchBrowser, openAssistant, openTarget, panel, screenshot, standinSkip, startHarness, toggleAssistant, watchPage } from "./support.mjs";

/** What the endpoint answers an `initialize` from `base` (with `token`, as a Bearer token). */
async function initialize(base, token = null) {
  const headers = { "content-type": "application/json", accept: "application/json, text/event-stream", ...(token ? { authorization: `Bearer ${token}` } : {}) };
  const params = { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "e2e", version: "1" } };
  const response = await fetch(`${base}/api/assistant/mcp`, { method: "POST", headers, body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "initialize", params }) });
  return { status: response.status, error: response.status === 401 ? (await response.json()).error : null };
}

const nodeExists = (page, id) => page.evaluate((id) => !!(window.app.rootGraph ?? window.app.graph).getNodeById(id), id);
const agentLine = (page) => panel(page).getByRole("region", { name: "External agent" });
const approvalCard = (page) => agentLine(page).getByRole("group", { name: "The assistant asks before it acts" });

/** A page with the panel open in the ComfyUI at `base`, its relay stream open; `ourErrors` gets
 * the page errors and console errors of our bundle (the frontend's own errors at load, e.g.
 * 1.27.10's settings, are not these tests'). */
async function openPanel(browser, base) {
  const page = await browser.context.newPage();
  watchPage(page);
  const ourErrors = [];
  page.on("pageerror", (error) => {
    if (/comfyui-assistant/.test(error.stack ?? "")) ourErrors.push(error.stack);
  });
  page.on("console", (message) => {
    if (message.type() === "error" && /comfyui-assistant/.test(`${message.text()} ${message.location()?.url ?? ""}`)) ourErrors.push(message.text());
  });
  await openTarget(page, base, { comfyui: true });
  await openAssistant(page);
  await relayOpen(page);
  return { page, ourErrors };
}

/** addNode through MCP (`options`: mcpCall's): the id of the node it added (the client read the
 * tool's output). */
async function addByMcp(page, base, nodeType, options = {}) {
  const before = new Set((await graphState(page)).nodes.map((n) => n.id));
  const result = await mcpCall(base, "addNode", { nodeType }, options);
  assert.equal(result.isError, false, result.text);
  const added = (await graphState(page)).nodes.filter((n) => !before.has(n.id));
  assert.deepEqual(added.map((n) => n.type), [nodeType]);
  assert.equal(String(JSON.parse(result.text).nodeId), String(added[0].id), result.text);
  return added[0].id;
}

/** The active tab's undo history as node ids per state, and where the focus is: what a failed
 * Ctrl+Z leaves to read. */
function undoHistory(page) {
  return page.evaluate(() => {
    const tracker = window.app.extensionManager?.workflow?.activeWorkflow?.changeTracker;
    const ids = (state) => (state?.nodes ?? []).map((n) => n.id).join(",");
    return {
      focus: document.activeElement?.id || document.activeElement?.tagName,
      graph: ((window.app.rootGraph ?? window.app.graph).nodes ?? []).map((n) => n.id).join(","),
      active: ids(tracker?.activeState),
      undo: (tracker?.undoQueue ?? []).slice(-4).map(ids),
      redo: (tracker?.redoQueue ?? []).map(ids),
      changeCount: tracker?.changeCount,
    };
  });
}

/** The calls listed under the line, opened (the toggle's name says how many). */
async function openCalls(page) {
  const list = agentLine(page).locator(".cua-mcp-calls");
  if (!(await list.isVisible())) await agentLine(page).getByRole("button", { name: /^Calls: \d+$/ }).click();
  return list;
}

/** A call's row in that list, by tool name, state and client. */
const callRow = (list, name, state, client) => list.locator(`.cua-mcp-call[data-state=${state}]`).filter({ hasText: name }).filter({ has: list.page().locator(".cua-mcp-call-client", { hasText: new RegExp(`^${client}$`) }) });

// ---- What every target runs (the stand-in's frontends, a real ComfyUI) ----

/** addNode from the client appears in the graph, listed under the client's name; Ctrl+Z on the
 * canvas takes it out. */
async function addedThenUndone(page, base, options = {}) {
  const id = await addByMcp(page, base, "EmptyImage", options);
  await callRow(await openCalls(page), "addNode", "done", "e2e-agent").waitFor();
  await focusCanvas(page);
  await page.keyboard.press("Control+z");
  await page.waitForFunction((id) => !(window.app.rootGraph ?? window.app.graph).getNodeById(id), id, { timeout: 5_000 });
  assert.equal(await nodeExists(page, id), false);
}

/** A removal asks on the card marked with the client; Deny with words keeps the node and the
 * client reads the words. Returns the node's id. */
async function removalDenied(page, base, options = {}) {
  const id = await addByMcp(page, base, "EmptyImage", options);
  const denied = mcpCall(base, "removeNodes", { nodeIds: [String(id)] }, options);
  await approvalCard(page).waitFor({ timeout: 30_000 });
  await agentLine(page).getByText("e2e-agent (an MCP client) asks:").waitFor();
  await approvalCard(page).getByRole("textbox", { name: "Why not? (optional, sent with Deny)" }).fill("keep the blank image");
  await approvalCard(page).getByRole("button", { name: "Deny" }).click();
  const no = await denied;
  assert.equal(no.isError, true, no.text);
  assert.match(no.text, /keep the blank image/);
  assert.equal(await nodeExists(page, id), true, "Deny removed nothing");
  await callRow(await openCalls(page), "removeNodes", "denied", "e2e-agent").waitFor();
  return id;
}

/** getWorkflow gives the client the open graph as the panel reads it: every node of the root
 * graph, with the one the user added by hand (renamed, a widget changed) as the compact text
 * shows such a node. */
async function handEditRead(page, base, options = {}) {
  const id = await page.evaluate(() => {
    const graph = window.app.rootGraph ?? window.app.graph;
    const node = window.LiteGraph.createNode("EmptyImage");
    node.pos = [40, 640];
    node.title = "Blank by hand";
    graph.add(node);
    node.widgets.find((w) => w.name === "width").value = 320;
    return node.id;
  });
  const result = await mcpCall(base, "getWorkflow", {}, options);
  assert.equal(result.isError, false, result.text);
  const read = JSON.parse(result.text);
  const ids = (await graphState(page)).nodes.map((n) => String(n.id)).sort();
  assert.deepEqual(read.nodes.map((n) => String(n.id)).sort(), ids, result.text);
  const mine = read.nodes.find((n) => String(n.id) === String(id));
  // (1.58.1 keeps string ids in the graph; the model reads numbers, as the panel gives them)
  assert.deepEqual({ ...mine, id: String(mine.id) }, { id: String(id), type: "EmptyImage", title: "Blank by hand", widgets: { width: 320 } }, result.text);
  return result.text;
}

for (const version of frontendVersions()) {
  describe(`an MCP client edits the open graph in ComfyUI frontend ${version} (stand-in)`, { skip: standinSkip(version) }, () => {
    let harness;
    let browser;
    let page;
    let ourErrors;
    const step = (name) => `mcp-${version}-${name}`;
    const line = () => agentLine(page);
    const card = () => approvalCard(page);

    before(async () => {
      harness = await startHarness({ comfyFrontend: version, listenNetwork: true });
      browser = await launchBrowser();
      ({ page, ourErrors } = await openPanel(browser, harness.app));
    });

    after(async () => {
      await browser?.close();
      await harness?.stop();
    });

    test("addNode from the client appears in the graph, listed under the client's name; Ctrl+Z undoes it", { timeout: 90_000 }, async () => {
      await addedThenUndone(page, harness.app);
      await line().getByRole("button", { name: "Calls: 1" }).waitFor();
      await screenshot(page, step("added"), "external-agent");
    });

    test("'Put the graph back' restores the graph from before the client's calls, as one undo step", { timeout: 90_000 }, async () => {
      const before = (await graphState(page)).nodes.map((n) => n.id).sort();
      const first = await addByMcp(page, harness.app, "EmptyImage");
      const second = await addByMcp(page, harness.app, "PreviewImage");
      await line().getByRole("button", { name: "Put the graph back as it was before these calls" }).click();
      await line().getByText("The graph is back as it was before these calls (Ctrl+Z brings them back).").waitFor();
      assert.deepEqual((await graphState(page)).nodes.map((n) => n.id).sort(), before);
      // Back on the canvas by a click (ComfyUI records the graph on its mouse-up): the restore
      // left nothing to record, so the first Ctrl+Z brings the calls back.
      await clickEmptyCanvas(page);
      await focusCanvas(page);
      await page.keyboard.press("Control+z");
      await page.waitForFunction((ids) => ids.every((id) => !!(window.app.rootGraph ?? window.app.graph).getNodeById(id)), [first, second], { timeout: 5_000 }).catch(async (error) => {
        throw new Error(`${error.message}\nthe undo history then: ${JSON.stringify(await undoHistory(page))}`);
      });
    });

    test("a removal asks in the panel, marked with the client: Deny keeps the node and the client reads the user's words; Allow removes it", { timeout: 120_000 }, async () => {
      const id = await removalDenied(page, harness.app);
      await screenshot(page, step("denied"), "approval");

      const allowed = mcpCall(harness.app, "removeNodes", { nodeIds: [String(id)] });
      await card().waitFor({ timeout: 30_000 });
      await card().getByRole("button", { name: "Allow" }).click();
      const yes = await allowed;
      assert.equal(yes.isError, false, yes.text);
      assert.deepEqual(JSON.parse(yes.text).removed.map(String), [String(id)]);
      assert.equal(await nodeExists(page, id), false, "Allow removed it");
      assert.deepEqual(ourErrors, []);
    });

    test("getWorkflow from the client gives the open graph as the panel reads it, with a node the user added by hand", { timeout: 90_000 }, async () => {
      await handEditRead(page, harness.app);
      await callRow(await openCalls(page), "getWorkflow", "done", "e2e-agent").waitFor();
    });

    test("two MCP clients at once: both calls wait in the panel, each on a card and in the list under its own client; each gets its own answer", { timeout: 120_000 }, async () => {
      const id = await addByMcp(page, harness.app, "EmptyImage");
      const remove = (name) => mcpCall(harness.app, "removeNodes", { nodeIds: [String(id)] }, { name });
      const [one, two] = [remove("agent-one"), remove("agent-two")];
      const asking = (client) => line().locator(".cua-mcp-asking").filter({ hasText: `${client} (an MCP client) asks:` });
      await asking("agent-one").waitFor({ timeout: 30_000 });
      await asking("agent-two").waitFor({ timeout: 30_000 });
      for (const client of ["agent-one", "agent-two"]) await line().getByText(new RegExp(`^${client} 0\\.9, connected at `)).waitFor();
      const who = await line().locator(".cua-mcp-who").innerText();
      assert.match(who, /^External agent \(MCP\): (agent-one 0\.9, agent-two 0\.9|agent-two 0\.9, agent-one 0\.9)$/);
      await screenshot(page, step("two-clients"), "asking");

      const first = asking("agent-one").getByRole("group", { name: "The assistant asks before it acts" });
      await first.getByRole("textbox", { name: "Why not? (optional, sent with Deny)" }).fill("agent-two takes it");
      await first.getByRole("button", { name: "Deny" }).click();
      const no = await one;
      assert.equal(no.isError, true, no.text);
      assert.match(no.text, /agent-two takes it/);
      assert.equal(await nodeExists(page, id), true, "agent-one's Deny removed nothing");
      await asking("agent-two").getByRole("button", { name: "Allow" }).click();
      const yes = await two;
      assert.equal(yes.isError, false, yes.text);
      assert.deepEqual(JSON.parse(yes.text).removed.map(String), [String(id)]);
      assert.equal(await nodeExists(page, id), false, "agent-two's Allow removed it");

      const list = await openCalls(page);
      await callRow(list, "removeNodes", "denied", "agent-one").waitFor();
      await callRow(list, "removeNodes", "done", "agent-two").waitFor();
      // (each client's session ended with its process: the line lists neither)
      await line().getByText(/^agent-(one|two) 0\.9, connected at /).first().waitFor({ state: "detached" });
      assert.deepEqual(ourErrors, []);
    });

    test("a client killed while its call waits on the card: the card goes, the call is marked cancelled, the graph stays; the next client's call works", { timeout: 120_000 }, async () => {
      const id = await addByMcp(page, harness.app, "EmptyImage");
      const graph = await graphState(page);
      const leaving = mcpCallProcess(harness.app, "removeNodes", { nodeIds: [String(id)] }, { name: "leaver" });
      const asking = line().locator(".cua-mcp-asking").filter({ hasText: "leaver (an MCP client) asks:" });
      await asking.waitFor({ timeout: 30_000 });
      assert.equal(leaving.child.kill("SIGKILL"), true);
      await assert.rejects(leaving.answer, /the MCP client failed/);
      await asking.waitFor({ state: "detached", timeout: 15_000 });
      await callRow(await openCalls(page), "removeNodes", "cancelled", "leaver").waitFor();
      assert.deepEqual(await graphState(page), graph, "the graph as it was");
      assert.equal(await nodeExists(page, id), true);

      const next = await addByMcp(page, harness.app, "PreviewImage", { name: "next-agent" });
      await callRow(await openCalls(page), "addNode", "done", "next-agent").waitFor();
      assert.equal(await nodeExists(page, next), true);
      // (its session stays on the server, idle, until the SDK's idle timeout: the user can end
      // it with Disconnect, then let the name in again)
      const held = line().locator(".cua-mcp-client").filter({ hasText: /^leaver 0\.9, connected at / });
      await held.getByRole("button", { name: "Disconnect" }).click();
      const refused = line().locator(".cua-mcp-client[data-disconnected]").filter({ hasText: "leaver: disconnected by you; it cannot connect until you allow it" });
      await refused.getByRole("button", { name: "Allow again" }).click();
      await refused.waitFor({ state: "detached" });
      await held.waitFor({ state: "detached" });
      assert.deepEqual(ourErrors, []);
    });

    test("a question while the Assistant tab is closed shows ComfyUI's toast; the card waits in the tab", { timeout: 120_000 }, async () => {
      const id = await addByMcp(page, harness.app, "EmptyImage");
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

/** Throws, saying what to do, when the MCP endpoint at `base` cannot serve: 503 when ComfyUI's
 * Python has no `mcp` package (mcp_server/unavailable.py), 404 when the assistant there has no
 * MCP endpoint. */
async function requireMcp(base) {
  const response = await fetch(`${base}/api/assistant/mcp`, { headers: { accept: "text/event-stream" } });
  if (response.status === 503) {
    const said = await response.text();
    throw new Error(`the ComfyUI at ${base} answers 503 on /api/assistant/mcp: its Python has no \`mcp\` package. Run \`pip install mcp\` (or \`pip install -r requirements.txt\` in the assistant's folder) in ComfyUI's Python environment, then restart ComfyUI. (It said: ${said})`);
  }
  if (response.status === 404) throw new Error(`the ComfyUI at ${base} has no /api/assistant/mcp (404): install this checkout of the assistant there and restart it`);
}

describe("an MCP client edits the open graph in a real ComfyUI (COMFYUI_URL)", { skip: COMFYUI_SKIP }, () => {
  let browser;
  let page;
  let ourErrors;
  let options; // (each call names this page's panel: other pages may be open on that ComfyUI)

  before(async () => {
    await requireMcp(COMFYUI_URL);
    browser = await launchBrowser();
    ({ page, ourErrors } = await openPanel(browser, COMFYUI_URL));
    options = { panel: await panelId(page) };
  });

  after(async () => {
    await browser?.close();
  });

  test("addNode from the client appears in the graph, listed under the client's name; Ctrl+Z undoes it (real ComfyUI)", { timeout: 90_000 }, async () => {
    await addedThenUndone(page, COMFYUI_URL, options);
    await screenshot(page, "mcp-real-added", "external-agent");
  });

  test("a removal asks in the panel, marked with the client; Deny keeps the node and the client reads the user's words (real ComfyUI)", { timeout: 120_000 }, async () => {
    await removalDenied(page, COMFYUI_URL, options);
    await screenshot(page, "mcp-real-denied", "approval");
  });

  test("getWorkflow from the client gives the open graph as the panel reads it, with a node the user added by hand (real ComfyUI)", { timeout: 90_000 }, async () => {
    await handEditRead(page, COMFYUI_URL, options);
    assert.deepEqual(ourErrors, []);
  });
});
