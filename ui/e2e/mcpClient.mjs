// What the MCP browser tests and the README's approval picture share: one tool call by the
// official MCP client (tests/mcp_e2e_client.py, a process of its own), and waiting until the page's
// relay stream is open (the server lists the panel).
import { execFile } from "node:child_process";
import { join } from "node:path";
import { ROOT, python } from "./support.mjs";

/** One tool call by the official MCP client: `{isError, text}` (`token`: sent as a Bearer token;
 * a refused connection rejects, with the client's error). */
export function mcpCall(base, tool, args, { token = null } = {}) {
  const argv = [join(ROOT, "tests", "mcp_e2e_client.py"), base, tool, JSON.stringify(args), ...(token ? ["--token", token] : [])];
  return new Promise((resolve, reject) => {
    execFile(python(), argv, { cwd: ROOT, timeout: 60_000 }, (error, stdout, stderr) => {
      if (error) reject(new Error(`the MCP client failed: ${error.message}\n${stderr}`));
      else resolve(JSON.parse(stdout.trim().split("\n").at(-1)));
    });
  });
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
