// What the browser end-to-end tests share: the servers (tests/e2e_harness.py: the scripted
// provider and the standalone app), headless Chromium (the Debian package, never a downloaded
// browser), the scripted provider's control routes, and the panel's selectors.
//
// Target: the playground served by the standalone app; the real ComfyUI frontend (each version
// in tests/comfy_standin/frontends.txt) served by the ComfyUI stand-in (tests/comfy_standin);
// or a real ComfyUI with this extension installed when COMFYUI_URL is set (its assistant is
// pointed at the scripted provider for the run and restored afterwards).
import { spawn } from "node:child_process";
import { randomUUID } from "node:crypto";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import readline from "node:readline";
import zlib from "node:zlib";
import { fileURLToPath } from "node:url";
import * as nodeTest from "node:test";
import { chromium } from "playwright-core";

const HERE = dirname(fileURLToPath(import.meta.url));
export const ROOT = resolve(HERE, "..", "..");
export const SCREENSHOTS = join(HERE, "screenshots");
export const CHROMIUM = process.env.CHROMIUM_PATH || "/usr/bin/chromium";
export const COMFYUI_URL = (process.env.COMFYUI_URL || "").replace(/\/+$/, "") || null;
export const COMFYUI_SKIP = COMFYUI_URL
  ? false
  : "COMFYUI_URL is not set: set it to a running ComfyUI with this extension installed to run these tests against it";

/** The ComfyUI frontend versions the stand-in serves (tests/comfy_standin/frontends.txt). */
export function frontendVersions() {
  const text = readFileSync(join(ROOT, "tests", "comfy_standin", "frontends.txt"), "utf8");
  return text.split("\n").map((line) => line.trim()).filter((line) => line && !line.startsWith("#"));
}

/** Why the stand-in cannot serve frontend `version` here (not installed), or false. */
export function standinSkip(version) {
  const index = join(ROOT, ".frontends", version, "comfyui_frontend_package", "static", "index.html");
  return existsSync(index) ? false : `ComfyUI frontend ${version} is not installed for the stand-in (${index}): scripts/setup installs it`;
}

// ---- Suites that set up only when one of their tests runs ----
// node runs a suite's `before` even when --test-name-pattern filters out every test in it: each
// target's suite would start its servers and a browser for nothing (and fail where the stand-in's
// frontends are not installed). The e2e files import describe/test/before/after from here: a
// suite none of whose names matches the pattern is skipped whole, before anything starts.

/** The --test-name-pattern values this file's process was given, as node reads them. */
const NAME_PATTERNS = process.execArgv
  .flatMap((arg, i, all) => (arg === "--test-name-pattern" ? [all[i + 1]] : arg.startsWith("--test-name-pattern=") ? [arg.slice(20)] : []))
  .filter((text) => text !== undefined)
  .map((text) => {
    const literal = /^\/(.*)\/([a-z]*)$/s.exec(text);
    return literal ? new RegExp(literal[1], literal[2]) : new RegExp(text);
  });

let collecting = null; // the test names of the suite being looked at

export function test(...args) {
  if (collecting) collecting.push(String(args[0]));
  else nodeTest.test(...args);
}

export function before(...args) {
  if (!collecting) nodeTest.before(...args);
}

export function after(...args) {
  if (!collecting) nodeTest.after(...args);
}

/** Only the suites whose name matches E2E_SUITES (a regular expression), when it is set: with a
 * test-level --test-name-pattern, `E2E_SUITES="real ComfyUI"` runs those tests in a real ComfyUI only. */
const SUITES = process.env.E2E_SUITES ? new RegExp(process.env.E2E_SUITES) : null;

/** node's describe, skipped whole (with the reason) when no name in it matches the name pattern,
 * or its own name not E2E_SUITES. */
export function describe(name, options, fn) {
  if (typeof options === "function") [options, fn] = [{}, options];
  let skip = options.skip ?? false;
  if (!skip && SUITES && !SUITES.test(name)) skip = `E2E_SUITES=${process.env.E2E_SUITES} leaves this suite out`;
  if (!skip && NAME_PATTERNS.length) {
    collecting = [];
    try {
      fn();
    } finally {
      const names = [name, ...collecting];
      collecting = null;
      if (!NAME_PATTERNS.some((pattern) => names.some((n) => pattern.test(n)))) skip = "no test of this suite matches --test-name-pattern";
    }
  }
  return nodeTest.describe(name, { ...options, skip }, fn);
}

/**
 * The settings of a user who has used ComfyUI before, stored through the stand-in's
 * POST /api/settings before the page loads, as the frontend would have stored them: no
 * template dialog (and the default workflow on the canvas), no first-run migration; and the
 * canvas navigation pair that frontend 1.27 otherwise sets during start-up, where setting it
 * throws (its onChange runs before the setting is registered).
 */
export const RETURNING_USER_SETTINGS = {
  "Comfy.TutorialCompleted": true,
  "Comfy.Canvas.NavigationMode": "legacy",
  "Comfy.Canvas.LeftMouseClickBehavior": "panning",
  "Comfy.Canvas.MouseWheelScroll": "zoom",
};

/**
 * Bind the last session's thread as a version before thread keys did: to its tab's graph id
 * ("unsaved:<graph id>"), which templates share. The panel moves it to the tab's thread key
 * (ui/src/runtime/workflowThreads.ts adoptLegacy).
 */
export async function bindAsEarlierVersion(baseUrl, { graphId, threadKey }) {
  const res = await fetch(`${baseUrl}/api/assistant/threads/rebind`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ from: `unsaved:${threadKey}`, to: `unsaved:${graphId}` }),
  });
  const moved = res.ok ? (await res.json()).moved : undefined;
  if (moved !== 1) throw new Error(`rebinding the last session's thread to its graph id: ${res.status}, moved ${moved}`);
}

export async function storeSettings(baseUrl, settings) {
  const res = await fetch(`${baseUrl}/api/settings`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(settings),
  });
  if (!res.ok) throw new Error(`POST ${baseUrl}/api/settings: ${res.status} ${await res.text()}`);
}

export function python() {
  if (process.env.PYTHON) return process.env.PYTHON;
  const venv = join(ROOT, ".venv", "bin", "python");
  return existsSync(venv) ? venv : "python3";
}

/** Start tests/e2e_harness.py and read the URLs it prints (`returningUser`: a data directory
 * earlier sessions used, tests/comfy_standin/returning.py; `manager`: ComfyUI-Manager's stand-in
 * on the ComfyUI one, "v4" etc., at `managerSecurity` (`managerGitUrl`: allow_git_url_install); `modelHost`: a
 * model host downloads may use, on `modelHostPort` if given). */
export async function startHarness({ providerOnly = false, comfyFrontend = null, returningUser = false, manager = null, managerSecurity = null, managerGitUrl = false, modelHost = false, modelHostPort = 0, multiUser = false, listenNetwork = false } = {}) {
  const args = [
    join(ROOT, "tests", "e2e_harness.py"),
    ...(providerOnly ? ["--provider-only"] : []),
    ...(comfyFrontend ? ["--comfy-frontend", comfyFrontend] : []),
    ...(returningUser ? ["--returning-user"] : []),
    ...(manager ? ["--manager", manager] : []),
    ...(managerSecurity ? ["--manager-security", managerSecurity] : []),
    ...(managerGitUrl ? ["--manager-git-url"] : []),
    ...(modelHost ? ["--model-host"] : []),
    ...(modelHostPort ? ["--model-host-port", String(modelHostPort)] : []),
    ...(multiUser ? ["--multi-user"] : []), // as ComfyUI's --multi-user (tests/comfy_standin/userdata.py)
    ...(listenNetwork ? ["--listen-network"] : []), // also on the network address, as ComfyUI's --listen
  ];
  const child = spawn(python(), args, { stdio: ["pipe", "pipe", "pipe"], cwd: ROOT });
  let stderr = "";
  child.stderr.on("data", (data) => {
    stderr += data;
    if (process.env.E2E_VERBOSE) process.stderr.write(data);
  });
  const line = await new Promise((resolveLine, reject) => {
    const timer = setTimeout(() => reject(new Error(`the e2e harness printed no URLs within 30 s\n${stderr}`)), 30_000);
    readline.createInterface({ input: child.stdout }).once("line", (text) => {
      clearTimeout(timer);
      resolveLine(text);
    });
    child.once("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`the e2e harness exited (${code}) before it was ready:\n${stderr}`));
    });
  });
  const urls = JSON.parse(line);
  return {
    app: urls.app,
    provider: new Provider(urls.provider),
    /** With `modelHost`: the model host's {origin, sha256, size}, and the app's data directory. */
    modelHost: urls.modelHost,
    dataDir: urls.dataDir,
    /** With `listenNetwork`: the app at this machine's network address (a request there is not loopback). */
    network: urls.network,
    stderr: () => stderr,
    async stop() {
      if (child.exitCode !== null) return;
      const exited = new Promise((done) => child.once("exit", done));
      child.stdin.end(); // the harness stops when its stdin closes
      const timer = setTimeout(() => child.kill("SIGTERM"), 5_000);
      await exited;
      clearTimeout(timer);
    },
  };
}

/** The scripted provider, through the control routes the harness adds. */
export class Provider {
  constructor(origin) {
    this.origin = origin;
    this.baseUrl = `${origin}/v1`;
  }

  async #call(path, init) {
    const res = await fetch(this.origin + path, init);
    const body = await res.json();
    if (!res.ok) throw new Error(`${path}: ${res.status} ${JSON.stringify(body)}`);
    return body;
  }

  /** Replace the queued replies: each /v1/chat/completions request takes the next one. */
  script(...replies) {
    return this.#call("/_script", { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(replies) });
  }

  reset() {
    return this.#call("/_reset", { method: "POST" });
  }

  /** {requests: [request bodies], disconnects, finished, pending} */
  state() {
    return this.#call("/_requests");
  }

  async requests() {
    return (await this.state()).requests;
  }

  /** Poll until `check(state)` returns a truthy value, which is returned. */
  async waitFor(check, what, timeout = 10_000) {
    const end = Date.now() + timeout;
    let state;
    while (Date.now() < end) {
      state = await this.state();
      const found = check(state);
      if (found) return found;
      await new Promise((r) => setTimeout(r, 100));
    }
    throw new Error(`the provider never saw ${what}; its state: ${JSON.stringify({ ...state, requests: state?.requests.length })}`);
  }
}

/** Replies, as the harness's POST /_script describes them. */
export const reply = {
  text: (text) => ({ type: "text", text }),
  toolCalls: (...calls) => ({ type: "tool_calls", calls }),
  stream: (...chunks) => ({ type: "stream", chunks }),
  status: (status, message) => ({ type: "status", status, body: { error: { message, type: "server_error", code: null } } }),
};

/** The last user message the provider received, as text. */
export function lastUserText(request) {
  const users = request.messages.filter((m) => m.role === "user");
  const content = users.at(-1)?.content;
  return typeof content === "string" ? content : (content ?? []).map((p) => p.text ?? "").join("");
}

/** A browser profile directory that outlives one browser (see previousSession); remove it with rmSync. */
export function newProfile() {
  return mkdtempSync(join(tmpdir(), "cua-e2e-chromium-"));
}

/** Headless Chromium from the Debian package, with a fresh profile (or `profile`, kept at close). */
export async function launchBrowser(viewport = { width: 1400, height: 900 }, { profile: kept = null } = {}) {
  if (!existsSync(CHROMIUM)) {
    throw new Error(`no Chromium at ${CHROMIUM}: install chromium: apt-get install -y chromium`);
  }
  const profile = kept ?? newProfile();
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    viewport,
    args: [
      "--headless",
      "--no-sandbox",
      "--disable-gpu",
      "--disable-background-networking",
      "--disable-quic",
      "--no-first-run",
      "--disable-component-update",
      "--disable-sync",
    ],
  });
  context.setDefaultTimeout(15_000);
  return {
    context,
    async close() {
      await context.close();
      if (!kept) rmSync(profile, { recursive: true, force: true });
    },
  };
}

/** Collect the page's errors so a test can show them when it fails. */
export function watchPage(page) {
  const problems = [];
  page.on("pageerror", (error) => problems.push(`pageerror: ${error.message}`));
  page.on("console", (message) => {
    if (message.type() === "error") problems.push(`console: ${message.text()}`);
  });
  return problems;
}

/** A screenshot of the page (or of `clip`, a region of it) into e2e/screenshots/. */
export async function screenshot(page, test, step, clip = undefined) {
  mkdirSync(SCREENSHOTS, { recursive: true });
  const slug = (s) => s.toLowerCase().replace(/[^a-z0-9]+/g, "-").replace(/^-|-$/g, "");
  const path = join(SCREENSHOTS, `${slug(test)}-${slug(step)}.png`);
  await page.screenshot(clip ? { path, clip } : { path });
  return path;
}

// ---- The target: the playground or a real ComfyUI ----

/** Load the page and wait until the app and the extensions are up. */
export async function openTarget(page, baseUrl, { comfyui = false } = {}) {
  await page.goto(`${baseUrl}/`);
  await waitReady(page, { comfyui });
}

export async function waitReady(page, { comfyui = false } = {}) {
  if (comfyui) {
    await page.waitForFunction(() => Boolean((window.app?.rootGraph ?? window.app?.graph) && window.app?.extensionManager), null, { timeout: 60_000 });
    // (1.49.6 has its workflow store up a moment later: no active workflow yet)
    await page.waitForFunction(() => Boolean(window.app.extensionManager.workflow?.activeWorkflow), null, { timeout: 30_000 });
    // A new user's template dialog would cover the page.
    await page.evaluate(() => window.app.extensionManager.setting.set("Comfy.TutorialCompleted", true));
    await page.keyboard.press("Escape");
  } else {
    await page.waitForFunction(() => window.playgroundReady !== undefined);
    await page.evaluate(() => window.playgroundReady);
  }
}

/** The assistant's bottom panel tab id, once its extension is loaded (null after 30 s). */
export async function assistantTabId(page) {
  const find = () => {
    const tabs = (window.app.extensions ?? []).flatMap((e) => e.bottomPanelTabs ?? []);
    const tab = tabs.find((t) => /assistant/i.test(`${t.id} ${t.title}`));
    if (tab) return tab.id;
    // ComfyUI: app.extensions may be absent; every bottom tab has a toggle command.
    const registry = window.app.extensionManager?.command?.commands ?? [];
    const commands = Array.isArray(registry) ? registry : [...(registry.values?.() ?? [])];
    const prefix = "Workspace.ToggleBottomPanelTab.";
    const toggle = commands.map((c) => c.id).find((id) => id?.startsWith(prefix) && /assistant/i.test(id));
    return toggle ? toggle.slice(prefix.length) : null;
  };
  try {
    return await (await page.waitForFunction(find, null, { timeout: 30_000 })).jsonValue();
  } catch {
    return null;
  }
}

/** Run Workspace.ToggleBottomPanelTab.<assistant> (ComfyUI's command; the playground has it too). */
export async function toggleAssistant(page) {
  const id = await assistantTabId(page);
  if (!id) throw new Error("no bottom panel tab of the assistant is registered: the panel extension did not load");
  await page.evaluate((tabId) => window.app.extensionManager.command.execute(`Workspace.ToggleBottomPanelTab.${tabId}`), id);
}

// ---- The panel's DOM: the selectors these tests rely on ----
// .cua-root                                    the panel's root element
// role=textbox name "Message"                  the composer
// role=button name "Send…" / "Stop…"           send; stop a running answer ("Stop the answer")

export function panel(page) {
  return page.locator(".cua-root");
}

export function composer(page) {
  return panel(page).getByRole("textbox", { name: "Message" });
}

export function sendButton(page) {
  return panel(page).getByRole("button", { name: /^Send\b/ });
}

export function stopButton(page) {
  return panel(page).getByRole("button", { name: /^Stop\b/ });
}

/** Show the assistant's tab (it may be opening by itself: the playground opens it at start). */
export async function openAssistant(page) {
  for (let attempt = 0; attempt < 3; attempt++) {
    try {
      await composer(page).waitFor({ state: "visible", timeout: 2_000 });
      return;
    } catch {
      if (!(await panel(page).isVisible())) await toggleAssistant(page);
    }
  }
  await composer(page).waitFor({ state: "visible" });
}

/** Leave the panel idle (an earlier failed test may have left an answer running). */
export async function settle(page) {
  // The answer may end between seeing Stop and clicking it: a Stop that is gone is not an error.
  if (await stopButton(page).isVisible()) await stopButton(page).click({ timeout: 2_000 }).catch(() => {});
  await sendButton(page).waitFor();
}

/** Type a message in the composer and press Enter. */
export async function send(page, text) {
  const box = composer(page);
  await box.click();
  await box.fill(text);
  await box.press("Enter");
}

/** Move the keyboard focus to the graph (a click could open LiteGraph's search on a double click). */
export async function focusCanvas(page) {
  await page.evaluate(() => {
    document.activeElement?.blur?.();
    document.getElementById("graph-canvas")?.focus?.();
  });
}

/** Click the graph where nothing stands (no node, no menu over it), as a user clicking the
 * canvas to come back to it: ComfyUI records the graph on the mouse-up (1.27's checkState). */
export async function clickEmptyCanvas(page) {
  const point = await page.evaluate(() => {
    const canvas = document.getElementById("graph-canvas");
    const graph = window.app.rootGraph ?? window.app.graph;
    const box = canvas.getBoundingClientRect();
    for (let y = box.top + 40; y < box.bottom - 40; y += 23) {
      for (let x = box.left + 40; x < box.right - 40; x += 37) {
        if (document.elementFromPoint(x, y) !== canvas) continue;
        const [gx, gy] = window.app.canvas.convertEventToCanvasOffset({ clientX: x, clientY: y });
        if (!graph.getNodeOnPos(gx, gy)) return { x, y };
      }
    }
    return null;
  });
  if (!point) throw new Error("no empty, uncovered point on the canvas to click");
  await page.mouse.click(point.x, point.y);
}

/** The id (or else the class) of the element with the keyboard focus. */
export function focusedId(page) {
  return page.evaluate(() => document.activeElement?.id || document.activeElement?.className || null);
}

/** Graph facts from window.app (the same in the playground and in ComfyUI). */
export function graphState(page) {
  return page.evaluate(() => {
    const graph = window.app.rootGraph ?? window.app.graph; // rootGraph: frontends ≥ 1.2x
    const links = [...(graph.links instanceof Map ? graph.links.values() : Object.values(graph.links ?? {}))].filter(Boolean);
    return {
      nodes: graph.nodes.map((n) => ({ id: n.id, type: n.type, inputs: (n.inputs ?? []).map((i) => ({ name: i.name, link: i.link })) })),
      links: links.map((l) => ({ id: l.id, from: l.origin_id, fromSlot: l.origin_slot, to: l.target_id, toSlot: l.target_slot, type: l.type })),
      lastNodeId: graph.last_node_id ?? Math.max(0, ...graph.nodes.map((n) => Number(n.id))),
    };
  });
}

const PROVIDER_KEYS = ["baseUrl", "model", "contextWindow"];

/** Point a real ComfyUI's assistant at the scripted provider; returns what to restore. */
export async function pointComfyUIAt(provider) {
  const url = `${COMFYUI_URL}/api/assistant/provider`;
  const saved = await (await fetch(url)).json();
  const res = await fetch(url, {
    method: "PUT",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ baseUrl: provider.baseUrl, model: "scripted-model", contextWindow: 32768 }),
  });
  if (res.status !== 200) throw new Error(`PUT ${url}: ${res.status} ${await res.text()}`);
  return saved;
}

export async function restoreComfyUIProvider(saved) {
  const body = Object.fromEntries(PROVIDER_KEYS.map((key) => [key, saved.sources?.[key] === "settings" ? saved[key] : null]));
  await fetch(`${COMFYUI_URL}/api/assistant/provider`, {
    method: "PUT",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
  });
}

const CRC_TABLE = Array.from({ length: 256 }, (_, n) => {
  let c = n;
  for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
  return c >>> 0;
});

function crc32(bytes) {
  let c = 0xffffffff;
  for (const b of bytes) c = CRC_TABLE[(c ^ b) & 0xff] ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}

function pngChunk(type, data) {
  const body = Buffer.concat([Buffer.from(type, "latin1"), data]);
  const length = Buffer.alloc(4);
  length.writeUInt32BE(data.length);
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(body));
  return Buffer.concat([length, body, crc]);
}

/**
 * A small PNG as ComfyUI's SaveImage writes it: `tEXt` chunks holding the prompt and the
 * workflow as JSON (pass none for a plain image).
 */
export function comfyPng({ width = 32, height = 24, prompt, workflow } = {}) {
  const header = Buffer.alloc(13);
  header.writeUInt32BE(width, 0);
  header.writeUInt32BE(height, 4);
  header.set([8, 2, 0, 0, 0], 8); // 8-bit RGB
  const row = Buffer.concat([Buffer.from([0]), Buffer.alloc(width * 3, 0x7f)]);
  const pixels = zlib.deflateSync(Buffer.concat(Array.from({ length: height }, () => row)));
  const texts = Object.entries({ prompt, workflow })
    .filter(([, value]) => value !== undefined)
    .map(([key, value]) => pngChunk("tEXt", Buffer.from(`${key}\0${JSON.stringify(value)}`, "latin1")));
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    pngChunk("IHDR", header),
    ...texts,
    pngChunk("IDAT", pixels),
    pngChunk("IEND", Buffer.alloc(0)),
  ]);
}

// ---- Templates (ComfyUI's, tests/fixtures/workflows; the stand-in serves them as ComfyUI does) ----

/** Two real templates (comfyui-workflow-templates 0.1.95) that carry the same workflow id. */
export const SHARED_ID_TEMPLATES = { dalle: "api_openai_dall_e_2_t2i", kling: "api_kling_i2v", id: "3ba6fcae-c49e-40dc-8725-12d4cd833fcb" };

/**
 * Open a template as ComfyUI's template browser does (useTemplateWorkflows in 1.27.10 and 1.58.1):
 * `fetch("/templates/<name>.json")` from the server (ComfyUI, or the stand-in), then
 * `app.loadGraphData(json, true, true, name)`, a new tab named after it. The playground has no
 * /templates, nor has a ComfyUI whose templates package lacks it: the copy in tests/fixtures is
 * loaded the same way.
 */
export async function openTemplate(page, name, { comfyui }) {
  const before = await page.evaluate(() => window.app.extensionManager.workflow.activeWorkflow?.key ?? null);
  const copy = JSON.parse(readFileSync(join(ROOT, "tests", "fixtures", "workflows", `${name}.json`), "utf8"));
  await page.evaluate(
    async ([name, copy, comfyui]) => {
      // A ComfyUI whose templates package lacks this one (0.33.0's pin) answers 404: the
      // package's file, copied into tests/fixtures, is loaded the same way.
      const served = comfyui ? await fetch(`templates/${name}.json`) : null;
      const workflow = served?.ok ? await served.json() : copy;
      await window.app.loadGraphData(workflow, true, true, name);
    },
    [name, copy, comfyui],
  );
  await page.waitForFunction((key) => (window.app.extensionManager.workflow.activeWorkflow?.key ?? null) !== key, before);
}

// ---- A returning user (the real frontends through the stand-in) ----

/** The saved workflow the returning user's data directory holds (tests/comfy_standin/returning.py). */
export const SAVED_WORKFLOW = "portrait.json";

/** Open a saved workflow as a user does: the Workflows sidebar, a click on its name. */
export async function openSavedWorkflow(page, key) {
  const name = key.replace(/\.json$/, "");
  await page.evaluate(() => window.app.extensionManager.command.execute("Workspace.ToggleSidebarTab.workflows"));
  await page.getByText(new RegExp(`^${name}(\\.json)?$`)).filter({ visible: true }).first().click();
  await page.waitForFunction((k) => window.app.extensionManager.workflow.activeWorkflow?.key === k, key);
  await page.evaluate(() => window.app.extensionManager.command.execute("Workspace.ToggleSidebarTab.workflows"));
}

/** The saved workflow's thread of an earlier session (the stand-in's data directory holds it;
 * in a real ComfyUI `previousSession` holds it with `savedChat`). */
export const SAVED_CHAT = { question: "What does the portrait workflow do?", answer: "It makes an empty 512×768 image and previews it." };

/**
 * A saved workflow in a real ComfyUI's user folder, as the stand-in's returning user has one
 * (EmptyImage 512×768 → PreviewImage: it runs without models), under a name of this run;
 * `remove()` deletes it again. Returns its key (`workflows/` relative), as the frontend names it.
 */
export async function saveRealWorkflow(baseUrl) {
  const key = `e2e-portrait-${Date.now()}.json`;
  const workflow = {
    id: randomUUID(),
    revision: 0,
    last_node_id: 2,
    last_link_id: 1,
    nodes: [
      { id: 1, type: "EmptyImage", pos: [100, 100], size: [315, 130], flags: {}, order: 0, mode: 0, inputs: [], outputs: [{ name: "IMAGE", type: "IMAGE", links: [1] }], properties: {}, widgets_values: [512, 768, 1, 0] },
      { id: 2, type: "PreviewImage", pos: [500, 100], size: [210, 246], flags: {}, order: 1, mode: 0, inputs: [{ name: "images", type: "IMAGE", link: 1 }], outputs: [], properties: {}, widgets_values: [] },
    ],
    links: [[1, 1, 0, 2, 0, "IMAGE"]],
    groups: [],
    config: {},
    extra: { ds: { scale: 1, offset: [0, 0] } },
    version: 0.4,
  };
  const url = `${baseUrl}/api/userdata/${encodeURIComponent(`workflows/${key}`)}`;
  const res = await fetch(`${url}?overwrite=false`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(workflow) });
  if (!res.ok) throw new Error(`POST ${url}: ${res.status} ${await res.text()}`);
  return { key, remove: () => fetch(url, { method: "DELETE" }) };
}

/**
 * An earlier session of a returning user, in a browser profile the tests' browser reuses: the
 * page opens, the saved workflow `saved` is opened in a second tab (with `savedChat`, a chat
 * held there: SAVED_CHAT), the first one shown again and a chat held there, the browser closed.
 * The frontend keeps its tabs and its graphs in the profile's storage as after any session.
 * Returns the chat's question (of this run), the graph id of its tab and the tab's thread key
 * (ui/src/host/threadKeys.ts).
 */
export async function previousSession(baseUrl, provider, profile, { saved = SAVED_WORKFLOW, savedChat = false } = {}) {
  const browser = await launchBrowser(undefined, { profile });
  try {
    const page = await browser.context.newPage();
    await openTarget(page, baseUrl, { comfyui: true });
    const first = await page.evaluate(() => window.app.extensionManager.workflow.activeWorkflow.key);
    await openSavedWorkflow(page, saved);
    if (savedChat) {
      await openAssistant(page);
      await panel(page).getByRole("button", { name: "New thread" }).first().click();
      await provider.reset();
      await provider.script(reply.text(SAVED_CHAT.answer));
      await send(page, SAVED_CHAT.question);
      await panel(page).getByText(SAVED_CHAT.answer).waitFor({ timeout: 20_000 });
    }
    await page.evaluate(() => window.app.extensionManager.command.execute("Workspace.PreviousOpenedWorkflow"));
    await page.waitForFunction((k) => window.app.extensionManager.workflow.activeWorkflow?.key === k, first);
    await openAssistant(page);
    await provider.reset();
    await provider.script(reply.text("Hello again, from the last session."));
    const question = `hello from the last session ${Date.now()}`;
    await send(page, question);
    await panel(page).getByText("Hello again, from the last session.").waitFor({ timeout: 20_000 });
    await page.waitForTimeout(1_500); // the frontend writes its tabs to storage as they change
    const { graphId, threadKey } = await page.evaluate(() => {
      const workflow = window.app.extensionManager.workflow.activeWorkflow;
      const state = workflow.activeState ?? workflow.initialState;
      return { graphId: state.id, threadKey: state.extra?.comfyui_assistant_thread_key };
    });
    return { question, graphId, threadKey };
  } finally {
    await browser.close();
  }
}
