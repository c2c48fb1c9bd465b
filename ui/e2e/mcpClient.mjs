// What the MCP browser tests and the README's approval picture share: one tool call by the
// official MCP client (tests/mcp_e2e_client.py, a process of its own), a client that stays
// connected, and waiting until the page's relay stream is open (the server lists the panel).
import { execFile, spawn } from "node:child_process";
import { join } from "node:path";
import { ROOT, python } from "./support.mjs";

/** One tool call by the official MCP client: `{isError, text}` (`token`: sent as a Bearer token;
 * `name`: the client's name in its `initialize`; `panel`: the panel the call names, else the
 * server picks the user's last active one; a refused connection rejects, with the client's
 * error). */
export function mcpCall(base, tool, args, options = {}) {
  return mcpCallProcess(base, tool, args, options).answer;
}

/** The same call, and its process (`child`: kill it to leave mid-call). */
export function mcpCallProcess(base, tool, args, { token = null, name = null, panel = null } = {}) {
  const options = Object.entries({ token, name, panel }).flatMap(([key, value]) => (value ? [`--${key}`, value] : []));
  const argv = [join(ROOT, "tests", "mcp_e2e_client.py"), base, tool, JSON.stringify(args), ...options];
  let child;
  const answer = new Promise((resolve, reject) => {
    child = execFile(python(), argv, { cwd: ROOT, timeout: 60_000 }, (error, stdout, stderr) => {
      if (error) reject(new Error(`the MCP client failed: ${error.message}\n${stderr}`));
      else resolve(JSON.parse(stdout.trim().split("\n").at(-1)));
    });
  });
  return { child, answer };
}

/** An MCP client that stays connected (the official client, `--hold`): `connected` resolves once
 * its handshake is done; `call(tool, args)` makes one call and resolves to its answer line. */
export function heldClient(base) {
  const child = spawn(python(), [join(ROOT, "tests", "mcp_e2e_client.py"), base, "--hold"], { cwd: ROOT, stdio: ["pipe", "pipe", "inherit"] });
  const waiting = [];
  let buffer = "";
  child.stdout.on("data", (chunk) => {
    buffer += chunk;
    let end;
    while ((end = buffer.indexOf("\n")) >= 0) {
      const line = buffer.slice(0, end);
      buffer = buffer.slice(end + 1);
      waiting.shift()?.(JSON.parse(line));
    }
  });
  const next = () => new Promise((resolve) => waiting.push(resolve));
  return {
    connected: next(),
    call: (tool, args) => {
      const answer = next();
      child.stdin.write(`${tool} ${JSON.stringify(args)}\n`);
      return answer;
    },
    close: () => child.stdin.end(),
  };
}

/** The id the page's panel has on the server (what a call names to reach it). */
export function panelId(page) {
  return page.evaluate(() => sessionStorage.getItem("comfyui-assistant.mcpPanel"));
}

/** Wait until the page's relay stream is open: the server knows the panel. */
export async function relayOpen(page) {
  await page.waitForFunction(
    async () => {
      const response = await fetch("/api/assistant/mcp/panel/state", { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ panel: sessionStorage.getItem("comfyui-assistant.mcpPanel") ?? "", workflow: "", active: true }) });
      return response.ok;
    },
    null,
    { timeout: 30_000, polling: 500 },
  );
}
