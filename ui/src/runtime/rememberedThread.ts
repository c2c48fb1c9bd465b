// The thread shown last, kept in the browser so that a page reload reopens it (only its id: the
// thread is on the server).
const THREAD_KEY = "comfyui-assistant.thread";

export function rememberedThread(): string | undefined {
  try {
    return globalThis.localStorage?.getItem(THREAD_KEY) ?? undefined;
  } catch {
    return undefined;
  }
}

export function rememberThread(id: string | undefined): void {
  try {
    if (id) globalThis.localStorage?.setItem(THREAD_KEY, id);
    else globalThis.localStorage?.removeItem(THREAD_KEY);
  } catch {
    // storage may be unavailable (private mode): the thread list still has every thread
  }
}
