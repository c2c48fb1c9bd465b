// The panel's own settings (not the provider's, which live on the server): the step limit per
// user message and the context debug switch. Kept in localStorage — nothing secret goes here.

export interface PanelSettings {
  /** Model steps allowed per user message before the automatic resubmits stop. */
  maxSteps: number;
  /** POST /api/assistant/chat?debug=context: the exact request of each step reaches the panel. */
  debugContext: boolean;
  /** A new thread asks before the assistant removes nodes (a thread's card can stop asking);
   * unset: it asks. */
  askBeforeEdits?: boolean;
}

export const DEFAULT_SETTINGS: PanelSettings = { maxSteps: 25, debugContext: false, askBeforeEdits: true };
export const MAX_STEPS_RANGE = { min: 1, max: 200 } as const;
const KEY = "comfyui-assistant.panel";

export function clampSteps(value: unknown): number {
  const n = typeof value === "number" ? value : Number(value);
  if (!Number.isFinite(n)) return DEFAULT_SETTINGS.maxSteps;
  return Math.min(MAX_STEPS_RANGE.max, Math.max(MAX_STEPS_RANGE.min, Math.round(n)));
}

export function loadSettings(): PanelSettings {
  try {
    const raw = globalThis.localStorage?.getItem(KEY);
    if (!raw) return { ...DEFAULT_SETTINGS };
    const parsed = JSON.parse(raw) as Partial<PanelSettings>;
    return {
      maxSteps: parsed.maxSteps === undefined ? DEFAULT_SETTINGS.maxSteps : clampSteps(parsed.maxSteps),
      debugContext: parsed.debugContext === true,
      askBeforeEdits: parsed.askBeforeEdits !== false,
    };
  } catch {
    return { ...DEFAULT_SETTINGS };
  }
}

export function saveSettings(settings: PanelSettings): void {
  try {
    globalThis.localStorage?.setItem(KEY, JSON.stringify(settings));
  } catch {
    // storage may be disabled; the settings then last for this page
  }
}
