// `app.api` for the playground: ComfyUI's ComfyApi surface (fetchApi under /api, events,
// clientId, queuePrompt). The executor's routes are answered by the queue simulator; the user's
// files (/userdata, /v2/userdata: saved workflows) by an empty folder: the playground saves none.
import type { ComfyApi, ComfyPrompt } from "../host/comfy";
import type { QueueSimulator } from "./simulator";

type Listener = (event: CustomEvent) => void;

export class PlaygroundApi extends EventTarget implements ComfyApi {
  readonly api_base = "";
  readonly clientId = crypto.randomUUID();
  simulator: QueueSimulator | null = null;

  apiURL(route: string): string {
    return `${this.api_base}/api${route}`;
  }

  fileURL(route: string): string {
    return this.api_base + route;
  }

  fetchApi(route: string, init?: RequestInit): Promise<Response> {
    const simulated = this.simulator?.handle(route, init);
    if (simulated) return simulated;
    if (route.startsWith("/userdata?") || route === "/v2/userdata") return Promise.resolve(Response.json([]));
    return fetch(this.apiURL(route), { cache: "no-cache", ...init });
  }

  override addEventListener(type: string, listener: Listener | EventListenerOrEventListenerObject | null, options?: AddEventListenerOptions | boolean): void {
    super.addEventListener(type, listener as EventListenerOrEventListenerObject | null, options);
  }

  override removeEventListener(type: string, listener: Listener | EventListenerOrEventListenerObject | null, options?: EventListenerOptions | boolean): void {
    super.removeEventListener(type, listener as EventListenerOrEventListenerObject | null, options);
  }

  /** Send an event as ComfyUI's websocket messages arrive: a CustomEvent with the data as detail. */
  dispatchCustomEvent(type: string, detail: unknown): boolean {
    return super.dispatchEvent(new CustomEvent(type, { detail }));
  }

  /** ComfyUI's api.queuePrompt: POST /prompt; a refusal throws {response: <the error body>}. */
  async queuePrompt(number: number, { output, workflow }: ComfyPrompt): Promise<unknown> {
    const body: Record<string, unknown> = {
      client_id: this.clientId,
      prompt: output,
      extra_data: { extra_pnginfo: { workflow } },
    };
    if (number === -1) body.front = true;
    else if (number !== 0) body.number = number;
    const res = await this.fetchApi("/prompt", {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify(body),
    });
    if (res.status !== 200) throw { response: await res.json() };
    return res.json();
  }

  async interrupt(): Promise<void> {
    await this.fetchApi("/interrupt", { method: "POST" });
  }
}
