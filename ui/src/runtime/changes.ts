// Change notification for React's useSyncExternalStore: a version that grows with every change,
// and the listeners told of it.
export class Changes {
  private readonly listeners = new Set<() => void>();
  private version = 0;

  subscribe = (listener: () => void): (() => void) => {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  };

  getVersion = (): number => this.version;

  protected emit(): void {
    this.version++;
    for (const listener of [...this.listeners]) listener();
  }
}
