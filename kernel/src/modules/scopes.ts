/**
 * OAuth scopes beyond the one-per-command scopes: sasl_auth, service:admin, service:user, and whatever
 * modules add. A scope disappears with the module that declared it.
 */
import type { ScopeDecl } from '@service/plugin-api';

export const KERNEL_SCOPES: readonly ScopeDecl[] = [
  { name: 'sasl_auth', desc: 'Log in to XMPP with the token in place of the password (SASL X-OAUTH2).' },
  { name: 'service:admin', desc: 'Run commands as an administrator, within what api_permissions grants the account.' },
  { name: 'service:user', desc: "Run commands on the token owner's own account." },
];

export class ScopeRegistry {
  readonly #scopes = new Map<string, { decl: ScopeDecl; owner: string }>(KERNEL_SCOPES.map((d) => [d.name, { decl: d, owner: 'kernel' }]));

  register(decl: ScopeDecl, owner: string): void {
    const existing = this.#scopes.get(decl.name);
    if (existing) throw new Error(`scope '${decl.name}' is already declared by ${existing.owner}`);
    this.#scopes.set(decl.name, { decl, owner });
  }

  removeOwner(owner: string): void {
    for (const [name, entry] of this.#scopes) if (entry.owner === owner) this.#scopes.delete(name);
  }

  has(name: string): boolean {
    return this.#scopes.has(name);
  }

  get(name: string): ScopeDecl | undefined {
    return this.#scopes.get(name)?.decl;
  }

  list(): ScopeDecl[] {
    return [...this.#scopes.values()].map((e) => e.decl);
  }
}
