// The panel follows ComfyUI's language setting (`Comfy.Locale`) live. Both frontends (1.27.10,
// 1.58.1) send every setting change as a `<id>.change` event on `app.ui.settings` (the settings
// dialog, an EventTarget; `detail.value` the new value); the playground does the same.
import type { ComfyApp } from "../host/comfy";
import { setLocale } from ".";

export const LOCALE_SETTING = "Comfy.Locale";

function browserLocale(): string {
  return typeof navigator === "undefined" ? "en" : (navigator.language ?? "en");
}

/** Take the panel's locale from ComfyUI's setting now and at every change; returns the stop. */
export function followComfyLocale(app: ComfyApp): () => void {
  const apply = (value: unknown) => setLocale(typeof value === "string" && value ? value : browserLocale());
  apply(app.extensionManager?.setting?.get(LOCALE_SETTING));
  const settings = app.ui?.settings;
  if (typeof settings?.addEventListener !== "function") return () => {};
  const onChange = (event: Event) => apply((event as CustomEvent<{ value?: unknown }>).detail?.value);
  settings.addEventListener(`${LOCALE_SETTING}.change`, onChange);
  return () => settings.removeEventListener(`${LOCALE_SETTING}.change`, onChange);
}
