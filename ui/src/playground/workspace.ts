// `app.extensionManager` for the playground: toasts, a confirm dialog, settings kept in memory
// (never persisted: a provider key typed here must not land in localStorage), a command registry,
// and the workflow tabs (workflows.ts).
import type { ComfyCommand, ComfyExtensionManager } from "../host/comfy";
import type { PlaygroundWorkflows } from "./workflows";

export interface ToastMessage {
  severity: string;
  summary: string;
  detail?: string;
  life?: number;
}

export class Toasts {
  constructor(private readonly container: HTMLElement) {}

  add({ severity, summary, detail, life }: ToastMessage): void {
    const toast = document.createElement("div");
    toast.className = `pg-toast pg-toast-${severity}`;
    toast.setAttribute("role", severity === "error" ? "alert" : "status");
    const title = toast.appendChild(document.createElement("strong"));
    title.textContent = summary;
    if (detail) toast.appendChild(document.createElement("div")).textContent = detail;
    const close = toast.appendChild(document.createElement("button"));
    close.textContent = "×";
    close.setAttribute("aria-label", "Dismiss");
    close.addEventListener("click", () => toast.remove());
    this.container.appendChild(toast);
    if (life) setTimeout(() => toast.remove(), life);
  }

  addAlert(message: string): void {
    this.add({ severity: "warn", summary: "Alert", detail: message });
  }

  removeAll(): void {
    this.container.replaceChildren();
  }
}

export interface ConfirmOptions {
  title: string;
  message: string;
  type?: string;
  itemList?: string[];
}

const CONFIRM_LABELS: Record<string, string> = { delete: "Delete", overwrite: "Overwrite", dirtyClose: "Save", reinstall: "Reinstall" };

/** An in-page modal: Confirm → true, Cancel → false, Escape or a click outside → null. */
export function confirmDialog({ title, message, type, itemList }: ConfirmOptions): Promise<boolean | null> {
  return new Promise((resolve) => {
    const backdrop = document.createElement("div");
    backdrop.className = "pg-dialog-backdrop";
    const dialog = backdrop.appendChild(document.createElement("div"));
    dialog.className = "pg-dialog";
    dialog.setAttribute("role", "dialog");
    dialog.setAttribute("aria-modal", "true");
    dialog.setAttribute("aria-label", title);
    dialog.appendChild(document.createElement("h2")).textContent = title;
    const text = dialog.appendChild(document.createElement("p"));
    text.textContent = message;
    text.style.whiteSpace = "pre-wrap";
    if (itemList?.length) {
      const list = dialog.appendChild(document.createElement("ul"));
      for (const item of itemList) list.appendChild(document.createElement("li")).textContent = item;
    }
    const buttons = dialog.appendChild(document.createElement("div"));
    buttons.className = "pg-dialog-buttons";
    const cancel = buttons.appendChild(document.createElement("button"));
    cancel.textContent = "Cancel";
    const confirm = buttons.appendChild(document.createElement("button"));
    confirm.textContent = CONFIRM_LABELS[type ?? ""] ?? "Confirm";
    confirm.className = type === "delete" ? "pg-danger" : "pg-primary";
    const done = (answer: boolean | null) => {
      document.removeEventListener("keydown", onKey, true);
      backdrop.remove();
      resolve(answer);
    };
    const onKey = (event: KeyboardEvent) => {
      if (event.key === "Escape") {
        event.stopPropagation();
        done(null);
      }
    };
    cancel.addEventListener("click", () => done(false));
    confirm.addEventListener("click", () => done(true));
    backdrop.addEventListener("click", (event) => {
      if (event.target === backdrop) done(null);
    });
    document.addEventListener("keydown", onKey, true);
    document.body.appendChild(backdrop);
    confirm.focus();
  });
}

/** In memory only. `Comfy.TutorialCompleted` is true, as for a returning ComfyUI user. */
/** The settings, kept in memory; a change is sent as `<id>.change` ({value, oldValue}) as
 * ComfyUI's settings dialog (`app.ui.settings`) sends it. */
export class Settings extends EventTarget {
  private values = new Map<string, unknown>([["Comfy.TutorialCompleted", true]]);
  private defaults = new Map<string, unknown>();

  get(id: string): unknown {
    return this.values.has(id) ? this.values.get(id) : this.defaults.get(id);
  }

  set(id: string, value: unknown): void {
    const oldValue = this.get(id);
    this.values.set(id, value);
    if (oldValue !== value) this.dispatchEvent(new CustomEvent(`${id}.change`, { detail: { value, oldValue } }));
  }

  addDefault(id: string, value: unknown): void {
    this.defaults.set(id, value);
  }
}

export class Commands {
  private readonly byId = new Map<string, ComfyCommand>();

  /** Every registered command (an array, as ComfyUI's command store offers it). */
  get commands(): ComfyCommand[] {
    return [...this.byId.values()];
  }

  register(command: ComfyCommand): void {
    this.byId.set(command.id, command);
  }

  async execute(id: string): Promise<void> {
    const command = this.byId.get(id);
    if (!command) throw new Error(`Command ${id} not found`);
    await command.function();
  }
}

export function extensionManager(parts: {
  toast: Toasts;
  setting: Settings;
  command: Commands;
  workflow: PlaygroundWorkflows;
}): ComfyExtensionManager & { toast: Toasts; setting: Settings; command: Commands; workflow: PlaygroundWorkflows } {
  return {
    toast: parts.toast,
    dialog: { confirm: confirmDialog },
    setting: parts.setting,
    command: parts.command,
    workflow: parts.workflow,
  };
}
