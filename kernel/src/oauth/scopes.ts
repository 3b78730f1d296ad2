/**
 * Which scopes a token may carry: sasl_auth, service:admin, service:user, a scope a module declares, or the
 * name of a command that is loaded now. Anything else — including a command of a module that is not
 * enabled — is an `invalid_scope` error, wherever a token is requested.
 */
import type { CommandRegistry } from '../commands/registry.js';
import type { ScopeRegistry } from '../modules/scopes.js';

export class InvalidScope extends Error {
  constructor(readonly scopes: readonly string[]) {
    super(`invalid_scope: ${scopes.map((s) => `'${s}'`).join(', ')} ${scopes.length === 1 ? 'is' : 'are'} not a scope of this server (scopes are sasl_auth, service:admin, service:user, or the name of a loaded command)`);
    this.name = 'InvalidScope';
  }
}

/** Splits a scope parameter: OAuth separates with spaces; the authorization endpoint's URLs with '+'. */
export function splitScopes(text: string): string[] {
  return [...new Set(text.split(/[\s+]+/).filter(Boolean))];
}

export function checkScopes(scopes: readonly string[], declared: ScopeRegistry, commands: CommandRegistry): string[] {
  if (scopes.length === 0) throw new InvalidScope(['(none)']);
  const bad = scopes.filter((s) => !declared.has(s) && !commands.has(s));
  if (bad.length) throw new InvalidScope(bad);
  return [...scopes];
}
