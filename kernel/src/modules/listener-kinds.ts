/**
 * Listener kinds that running modules serve (service_xmlrpc…), each with what opens it. When the module
 * stops, the server closes the listeners of its kinds (they hold the stopped module's handler) and opens them
 * again once a module serves the kind again.
 */
import type { ListenerStarter } from '@service/plugin-api';

export class ListenerKinds {
  readonly #kinds = new Map<string, { start: ListenerStarter; owner: string }>();
  #closeKind: (kind: string) => Promise<void> = async () => {};

  register(kind: string, start: ListenerStarter, owner: string): void {
    const existing = this.#kinds.get(kind);
    if (existing) throw new Error(`the listener kind ${kind} is already served by ${existing.owner}`);
    this.#kinds.set(kind, { start, owner });
  }

  get(kind: string): ListenerStarter | undefined {
    return this.#kinds.get(kind)?.start;
  }

  /** What the server does with the open listeners of a kind whose module stops. */
  onRemoved(closeKind: (kind: string) => Promise<void>): void {
    this.#closeKind = closeKind;
  }

  /** The kinds `owner` served, gone: their listeners are closed before this resolves. */
  async removeOwner(owner: string): Promise<void> {
    for (const [kind, entry] of [...this.#kinds]) {
      if (entry.owner !== owner) continue;
      this.#kinds.delete(kind);
      await this.#closeKind(kind);
    }
  }
}
