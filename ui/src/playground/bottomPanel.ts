// The bottom panel, with ComfyUI's lifecycle: opening a tab calls render(el) on a fresh element;
// closing it (or switching tabs) calls destroy() and drops the element. A tab's state must live
// outside the element to survive, exactly as in ComfyUI.
import type { BottomPanelTab } from "../host/comfy";

export class BottomPanel {
  private tabs: BottomPanelTab[] = [];
  private active: { tab: BottomPanelTab; element: HTMLElement } | null = null;
  private buttons = new Map<string, HTMLButtonElement>();
  private readonly tablist: HTMLElement;
  private readonly body: HTMLElement;
  private readonly closeButton: HTMLButtonElement;
  onLayout: () => void = () => {};

  constructor(private readonly root: HTMLElement) {
    this.tablist = root.querySelector<HTMLElement>("[role=tablist]") ?? root.appendChild(document.createElement("div"));
    this.tablist.setAttribute("role", "tablist");
    this.body = root.querySelector<HTMLElement>(".pg-bottom-body") ?? root.appendChild(document.createElement("div"));
    this.closeButton = document.createElement("button");
    this.closeButton.className = "pg-bottom-close";
    this.closeButton.textContent = "×";
    this.closeButton.setAttribute("aria-label", "Close panel");
    this.closeButton.title = "Close the bottom panel";
    this.closeButton.addEventListener("click", () => this.close());
    this.tablist.after(this.closeButton);
    this.update();
  }

  get activeTabId(): string | null {
    return this.active?.tab.id ?? null;
  }

  add(tab: BottomPanelTab): void {
    this.tabs.push(tab);
    const button = document.createElement("button");
    button.className = "pg-tab";
    button.setAttribute("role", "tab");
    button.dataset.tabId = tab.id;
    button.textContent = tab.title;
    button.title = `Show or hide ${tab.title}`;
    button.addEventListener("click", () => this.toggle(tab.id));
    this.tablist.appendChild(button);
    this.buttons.set(tab.id, button);
    this.update();
  }

  /** Workspace.ToggleBottomPanelTab.<id>: open the tab, or close the panel if it is showing. */
  toggle(id: string): void {
    if (this.active?.tab.id === id) this.close();
    else this.open(id);
  }

  open(id: string): void {
    const tab = this.tabs.find((t) => t.id === id);
    if (!tab || this.active?.tab.id === id) return;
    this.close();
    const frame = document.createElement("div");
    frame.className = "pg-tab-frame";
    const element = document.createElement("div"); // plain, automatic height: as ComfyUI
    element.className = "pg-tab-content";
    element.dataset.tabId = id;
    frame.appendChild(element);
    this.body.appendChild(frame);
    this.active = { tab, element: frame };
    this.update();
    tab.render(element);
  }

  close(): void {
    const current = this.active;
    if (!current) return;
    this.active = null;
    try {
      current.tab.destroy?.();
    } finally {
      current.element.remove();
      this.update();
    }
  }

  openFirst(): void {
    if (!this.active && this.tabs[0]) this.open(this.tabs[0].id);
  }

  /** Workspace.ToggleBottomPanel: close, or reopen the first tab. */
  togglePanel(): void {
    if (this.active) this.close();
    else if (this.tabs[0]) this.open(this.tabs[0].id);
  }

  private update(): void {
    const open = this.active !== null;
    this.root.classList.toggle("pg-bottom-open", open);
    this.closeButton.hidden = !open;
    for (const [id, button] of this.buttons) {
      const selected = this.active?.tab.id === id;
      button.setAttribute("aria-selected", String(selected));
      button.classList.toggle("pg-tab-active", selected);
    }
    this.onLayout();
  }
}
